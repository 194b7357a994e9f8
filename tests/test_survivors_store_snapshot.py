"""A PostgreSQL check's snapshot, read from a worker (store/postgres_snapshot.py): the code a
worker runs, called here in the test's own process (a forked worker is not traced, so the
mutation map never gave these lines a test). ``loader`` is the pid of the process that read
the state; any other pid makes this process the worker. Each test names the edit it fails with."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest

from notifier.database import DatabaseURL
from notifier.store import RecordedPart, State, postgres_snapshot
from notifier.store.postgres import PostgresStore
from notifier.store.postgres_snapshot import exported, read_again
from notifier.store.server import connect
from tests.conftest import BASE

psycopg = pytest.importorskip("psycopg")

ELSEWHERE = -1  # no process's pid: the caller is a worker, not the process that read the state


@pytest.fixture
def location(pg_url: str) -> Iterator[DatabaseURL]:
    yield DatabaseURL(pg_url, site="shop")
    for connection in postgres_snapshot._WORKER.values():  # a worker's kept connection ends with the test
        connection.close()
    postgres_snapshot._WORKER.clear()


def _saved(location: DatabaseURL, lastmod: str) -> dict[str, list[Any]]:
    records: dict[str, list[Any]] = {f"{BASE}/{n}/": [lastmod, None, None] for n in range(3)}
    state = State(updated=f"{lastmod}T00:00:00Z")
    state.parts.append(RecordedPart("part.xml", "0" * 32, dict(records)))
    with PostgresStore(location) as store:
        store.save(state)
    return records


def _row(location: DatabaseURL) -> int:
    connection = connect(location)
    try:
        return int(connection.execute("SELECT n FROM notify_changes_parts WHERE site = %s", (location.site,)).fetchone()[0])
    finally:
        connection.close()


def _snapshot(location: DatabaseURL) -> tuple[Any, str]:
    """A connection holding a transaction open, as the main process of a check does, and its exported snapshot."""
    connection = connect(location)
    connection.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
    snapshot = exported(connection)
    assert snapshot is not None
    return connection, snapshot


def _decoded(data: bytes | None) -> Any:
    import orjson

    assert data is not None
    return orjson.loads(data)


def test_a_worker_reads_the_row_as_it_was_when_the_state_was_read(location: DatabaseURL) -> None:
    """A save after the snapshot is not seen by the worker (edits: leaving out the
    ``SET TRANSACTION SNAPSHOT`` or the ``BEGIN ... REPEATABLE READ``, or reading ``found[1]``)."""
    before = _saved(location, "2024-05-01")
    row = _row(location)
    holder, snapshot = _snapshot(location)
    try:
        _saved(location, "2024-05-02")  # the same part's row, other records
        assert _decoded(read_again(location, snapshot, ELSEWHERE, row)) == before
        assert _decoded(read_again(location, snapshot, ELSEWHERE, row)) == before  # and again, on the kept connection
    finally:
        holder.close()


def test_the_process_that_read_the_state_reads_the_row_itself(location: DatabaseURL) -> None:
    """None in the loader's own process: its workers died and it reads over its own connection
    (edit: the pid test left out, or inverted)."""
    _saved(location, "2024-05-01")
    holder, snapshot = _snapshot(location)
    try:
        assert read_again(location, snapshot, os.getpid(), _row(location)) is None
        assert postgres_snapshot._WORKER == {}
    finally:
        holder.close()


def test_a_worker_keeps_one_connection_for_its_snapshot_and_closes_an_earlier_ones(location: DatabaseURL) -> None:
    """One connection a snapshot, kept for the next part (edits: the assignment into ``_WORKER``
    removed, ``is None`` inverted); a later check's snapshot closes the earlier one's (edits:
    ``old.close()`` or ``_WORKER.clear()`` left out)."""
    _saved(location, "2024-05-01")
    row = _row(location)
    first, snapshot = _snapshot(location)
    try:
        assert read_again(location, snapshot, ELSEWHERE, row) is not None
        (kept,) = postgres_snapshot._WORKER.values()
        assert read_again(location, snapshot, ELSEWHERE, row) is not None
        assert list(postgres_snapshot._WORKER.values()) == [kept]
    finally:
        first.close()
    second, later = _snapshot(location)
    try:
        assert read_again(location, later, ELSEWHERE, row) is not None
        assert kept.closed
        assert list(postgres_snapshot._WORKER) == [(location.dsn, later)]
    finally:
        second.close()


def test_a_snapshot_that_cannot_be_used_is_none_and_its_connection_closed(location: DatabaseURL) -> None:
    """A snapshot that has ended (its check's transaction closed): None, so that the main
    process reads the row, and the worker keeps no connection in a failed transaction
    (edits: the pop, ``is not None`` or ``close`` of the kept connection)."""
    _saved(location, "2024-05-01")
    row = _row(location)
    holder, snapshot = _snapshot(location)
    holder.close()  # the snapshot ends with the transaction that exported it
    assert read_again(location, snapshot, ELSEWHERE, row) is None
    assert postgres_snapshot._WORKER == {}


def test_a_row_gone_from_the_snapshot_is_none(location: DatabaseURL) -> None:
    """A row number the snapshot does not hold: None (edit: ``found is not None`` inverted)."""
    _saved(location, "2024-05-01")
    holder, snapshot = _snapshot(location)
    try:
        assert read_again(location, snapshot, ELSEWHERE, _row(location) + 1) is None
    finally:
        holder.close()


def test_a_server_that_exports_no_snapshot_leaves_the_transaction_usable(location: DatabaseURL) -> None:
    """Where ``pg_export_snapshot`` fails (a standby; here a transaction that already failed),
    None, and the transaction is rolled back so that the next statement runs (edit: the
    ``rollback()`` left out)."""
    connection = connect(location)
    try:
        connection.execute("BEGIN")
        with pytest.raises(psycopg.Error):
            connection.execute("SELECT no_such_column FROM no_such_table")
        assert exported(connection) is None
        assert connection.execute("SELECT 1").fetchone()[0] == 1
    finally:
        connection.close()
