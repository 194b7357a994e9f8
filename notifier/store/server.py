"""The connection to a PostgreSQL state: bounded in time, and said in one line when it fails.

Every exchange with the server is bounded, so that no lock and no unresponsive server holds
a deploy for good: connecting by ``connect_timeout`` (``--request-timeout``) and TCP
keepalives; each statement, on the server, by ``lock_timeout`` (``--lock-timeout``: a lock
on the state's tables another session holds) and ``statement_timeout`` (``--lock-timeout``
plus ``--request-timeout``); and by this process, which shuts the connection's socket when
the server has not answered even that long after (a stopped server answers nothing, and its
kernel still acknowledges keepalives). A cancel (SIGINT, SIGTERM) drops the connection at
once: the server rolls its transaction back and frees the site's lock with it, where the
driver would wait for an unresponsive server to confirm a cancel request.

Each failure is one line naming what did not answer, with the password of the connection
text never in it (``database.passwords``): libpq quotes a malformed password whole.
"""

from __future__ import annotations

import logging
import math
import os
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from typing import Any

from notifier.database import DatabaseURL, without_password
from notifier.errors import LockTimeout, NotifierError, StateError, UsageError
from notifier.extras import install_hint
from notifier.redaction import of_location

logging.getLogger("psycopg").addHandler(logging.NullHandler())  # its warnings are no line of ours


def driver() -> Any:
    try:
        import psycopg
    except ImportError:
        raise UsageError(
            f"a postgresql:// state needs the PostgreSQL driver (psycopg 3), which is not installed: {install_hint('postgres')}; "
            "in the GitHub Action, set its input extras: postgres"
        ) from None
    return psycopg


def statement_bound(location: DatabaseURL) -> float:
    """Seconds a statement may take on the server: a lock waited for, then its own work."""
    return location.lock_timeout + location.request_timeout


def answer_bound(location: DatabaseURL) -> float:
    """Seconds this process waits for any answer before it takes the server for gone."""
    return statement_bound(location) + location.request_timeout


@cache
def _bounded_class() -> Any:
    base: Any = driver().Connection
    from psycopg import waiting

    class Bounded(base):  # type: ignore[misc]
        """A connection whose every wait for the server ends by ``bound`` seconds, and at once on a cancel."""

        bound = 0.0
        timed_out = False
        _waiting = False

        def wait(self, gen: Any, *args: Any, **kwargs: Any) -> Any:
            guard = threading.Lock()
            timer = threading.Timer(self.bound, self._cut, (guard,)) if self.bound > 0 else None
            self._waiting = True
            if timer is not None:
                timer.daemon = True
                timer.start()
            try:
                return waiting.wait(gen, self.pgconn.socket, 0.1)  # positional: the interval's name changed in 3.2
            except (KeyboardInterrupt, SystemExit):
                self.pgconn.finish()  # no cancel request to a server that may never confirm it
                raise
            finally:
                with guard:
                    self._waiting = False
                if timer is not None:
                    timer.cancel()

        def _cut(self, guard: threading.Lock) -> None:
            with guard:
                if not self._waiting:
                    return
                self.timed_out = True
                try:
                    with socket.socket(fileno=os.dup(self.pgconn.socket)) as shared:
                        shared.shutdown(socket.SHUT_RDWR)  # the wait wakes up: "server closed the connection"
                except OSError:
                    pass

    return Bounded


def _connect_options(location: DatabaseURL) -> dict[str, Any]:
    """What bounds connecting and a connection that went quiet, unless the connection text says otherwise."""
    given = location.dsn
    seconds = max(2, math.ceil(location.request_timeout))  # libpq: whole seconds, at least 2
    options: dict[str, Any] = {
        "connect_timeout": seconds,
        "keepalives": 1,
        "keepalives_idle": max(1, seconds // 3),
        "keepalives_interval": max(1, seconds // 9),
        "keepalives_count": 3,
        "tcp_user_timeout": seconds * 1000,  # milliseconds data may stay unacknowledged
        "application_name": "notify-changes",
    }
    return {name: value for name, value in options.items() if name not in given}


def connect(location: DatabaseURL) -> Any:
    """A connection (autocommit: each change in a transaction of its own) with its bounds, or
    the one-line error that says why there is none."""
    psycopg = driver()
    try:
        connection = _bounded_class().connect(location.dsn, autocommit=True, **_connect_options(location))
    except psycopg.Error as error:
        raise StateError(f"{location}: cannot connect to the PostgreSQL state ({reason(error, location)})") from None
    connection.bound = answer_bound(location)
    try:
        connection.execute(
            "SELECT set_config('lock_timeout', %s, false), set_config('statement_timeout', %s, false)",
            (f"{location.lock_timeout * 1000:.0f}ms", f"{statement_bound(location) * 1000:.0f}ms"),
        )
    except psycopg.Error as error:
        connection.close()
        raise failure(error, connection, location) from None
    return connection


@contextmanager
def connected(location: DatabaseURL) -> Iterator[Any]:
    """A bounded connection for a ``with`` block; a driver error in it is one line (``failure``)."""
    psycopg = driver()
    connection = connect(location)
    try:
        yield connection
    except psycopg.Error as error:
        raise failure(error, connection, location) from None
    finally:
        connection.close()


def failure(error: Exception, connection: Any, location: DatabaseURL) -> NotifierError:
    """A driver error as the error a user reads: a lock another session held past
    ``--lock-timeout`` is exit 4 (as the site's own lock is), everything else exit 2."""
    if isinstance(error, driver().errors.LockNotAvailable):  # SQLSTATE 55P03: lock_timeout
        return LockTimeout(
            f"{location}: another PostgreSQL session holds a lock on the state's tables after waiting {location.lock_timeout:g} s; "
            "let it finish (or raise --lock-timeout) and run again"
        )
    return StateError(f"{location}: {said(error, connection, location)}")


def said(error: Exception, connection: Any, location: DatabaseURL) -> str:
    """What went wrong with the server, in a few words and one line, without the password."""
    if getattr(connection, "timed_out", False):
        return (
            f"the PostgreSQL server did not answer within {answer_bound(location):g} s (--lock-timeout + --request-timeout, "
            "and as long again); check that it is up and reachable, then run again"
        )
    psycopg = driver()
    if isinstance(error, psycopg.errors.QueryCanceled):  # SQLSTATE 57014: statement_timeout (nothing here cancels otherwise)
        return (
            f"a statement of the PostgreSQL state took longer than {statement_bound(location):g} s "
            "(--lock-timeout + --request-timeout); check the server's load, then run again"
        )
    if isinstance(error, (psycopg.OperationalError, psycopg.InterfaceError)) or getattr(connection, "closed", False):
        return f"the connection to the PostgreSQL state was lost ({reason(error, location)}); run again"
    return f"the PostgreSQL state failed ({reason(error, location)})"


def reason(error: BaseException, location: DatabaseURL) -> str:
    """The driver's first line, the password of the connection text cut from it."""
    lines = str(error).strip().splitlines()
    text = lines[0] if lines else type(error).__name__
    return of_location(location).redact(text.replace(location.dsn, without_password(location.dsn)))
