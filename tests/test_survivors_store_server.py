"""A PostgreSQL connection's bounded wait, in this process (store/server.py, #44): a server that
stops answering is cut off by the bound and said as such, a cut that comes after the answer does
nothing, and an interrupt while waiting drops the connection. The suite's tests that make a server
go quiet run the program in a process of its own, which the mutation map does not trace, so these
call the connection itself. Each test names the edit it fails with."""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Iterator

import pytest

from notifier.database import DatabaseURL
from notifier.store import server

psycopg = pytest.importorskip("psycopg")


@pytest.fixture
def connection(pg_url: str) -> Iterator[object]:
    location = DatabaseURL(pg_url, site="shop")
    opened = server.connect(location)
    try:
        yield opened
    finally:
        opened.close()


def _running(pg_url: str, marker: str) -> threading.Event:
    """Set once another session sees the query that carries ``marker`` running on the server."""
    seen = threading.Event()

    def watch() -> None:
        with psycopg.connect(pg_url, autocommit=True) as watcher:
            while not seen.is_set():
                rows = watcher.execute(
                    "SELECT 1 FROM pg_stat_activity WHERE state = 'active' AND query LIKE %s AND pid <> pg_backend_pid()",
                    (f"%{marker}%",),
                ).fetchall()
                if rows:
                    seen.set()

    threading.Thread(target=watch, daemon=True).start()
    return seen


def test_a_server_that_stops_answering_is_cut_off_by_the_bound_and_said_so(connection: object, pg_url: str) -> None:
    """The bound's timer shuts the socket, the wait ends with the driver's error, and the message
    says the server did not answer (edits: ``self.timed_out = True`` removed or made False, which
    says "the connection was lost"; ``shared.shutdown`` left out or made a raise, which leaves the
    query waiting for its 20 s)."""
    location = DatabaseURL(pg_url, site="shop")
    connection.bound = 0.3  # type: ignore[attr-defined]
    with pytest.raises(psycopg.OperationalError) as caught:
        connection.execute("SELECT pg_sleep(20)")  # type: ignore[attr-defined]
    assert connection.timed_out is True  # type: ignore[attr-defined]
    assert "did not answer within" in server.said(caught.value, connection, location)


def test_a_cut_after_the_answer_came_does_nothing(connection: object) -> None:
    """The timer may fire just after the wait ended: it must not mark the connection or shut its
    socket (edits: ``not self._waiting`` made ``self._waiting``; ``return`` made a raise)."""
    assert connection.execute("SELECT 1").fetchone() == (1,)  # type: ignore[attr-defined]
    connection._cut(threading.Lock())  # type: ignore[attr-defined]
    assert connection.timed_out is False  # type: ignore[attr-defined]
    assert connection.execute("SELECT 2").fetchone() == (2,)  # type: ignore[attr-defined]


def test_a_cut_of_a_socket_already_gone_is_no_error(connection: object, monkeypatch: pytest.MonkeyPatch) -> None:
    """The socket may be gone when the timer fires (the driver closed it as the answer came): the
    cut marks the connection and raises nothing in the timer's thread (edit: ``pass`` in ``except
    OSError`` made a raise)."""

    def gone(fd: int) -> int:
        raise OSError(9, "Bad file descriptor")

    connection._waiting = True  # type: ignore[attr-defined]
    monkeypatch.setattr(os, "dup", gone)
    connection._cut(threading.Lock())  # type: ignore[attr-defined]
    monkeypatch.undo()
    assert connection.timed_out is True  # type: ignore[attr-defined]


def test_an_interrupt_while_waiting_drops_the_connection_without_a_cancel(connection: object, pg_url: str) -> None:
    """Ctrl-C while the server works: the connection is finished at once (no cancel request to a
    server that may never confirm it) and the interrupt goes on (edits: ``self.pgconn.finish()``
    left out, which leaves the connection usable; made a raise, which turns Ctrl-C into a driver error)."""
    marker = "nc_interrupt_marker"
    # a process started in the background of a shell ignores SIGINT (the suite under a CI script, the
    # mutation worker): Python's own handler, as an interactive run has it
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    seen = _running(pg_url, marker)
    main = threading.get_ident()

    def interrupt() -> None:
        seen.wait()
        signal.pthread_kill(main, signal.SIGINT)

    threading.Thread(target=interrupt, daemon=True).start()
    try:
        with pytest.raises(KeyboardInterrupt):
            connection.execute(f"SELECT pg_sleep(20) /* {marker} */")  # type: ignore[attr-defined]
    finally:
        signal.signal(signal.SIGINT, previous)
    assert connection.pgconn.status != psycopg.pq.ConnStatus.OK  # type: ignore[attr-defined]


def test_a_wait_that_ended_takes_its_timer_with_it(connection: object) -> None:
    """A query's timer is cancelled as its answer comes: left running, it would cut the next
    query, which waits under a longer bound, when the first one's time is up (edits:
    ``timer.cancel()`` left out; ``timer is not None`` in ``finally`` made ``is None``)."""
    connection.bound = 0.2  # type: ignore[attr-defined]
    assert connection.execute("SELECT 1").fetchone() == (1,)  # type: ignore[attr-defined]
    connection.bound = 60.0  # type: ignore[attr-defined]
    assert connection.execute("SELECT pg_sleep(0.6), 2").fetchone()[1] == 2  # type: ignore[attr-defined]  # outlives the first timer
    assert connection.timed_out is False  # type: ignore[attr-defined]
