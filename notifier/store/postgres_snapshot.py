"""A PostgreSQL check's snapshot, shared with its workers: the main process exports the
transaction's snapshot when it reads the state, and each worker that compares a part reads
that part's row over a connection of its own in the same snapshot (``read_again``), so a
save running meanwhile never mixes in and the main process decodes no row it hands on."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from notifier.database import DatabaseURL
from notifier.errors import StateError
from notifier.store.server import connect, driver

if TYPE_CHECKING:
    import psycopg


def exported(connection: psycopg.Connection[Any]) -> str | None:
    """The transaction's snapshot, exported for the workers that compare parts (None where the
    server exports none, a standby: the parts are then read here)."""
    try:
        return str(connection.execute("SELECT pg_export_snapshot()").fetchone()[0])  # type: ignore[index]
    except driver().Error:
        connection.rollback()  # the transaction begins again, at the next statement
        return None


_WORKER: dict[tuple[str, str], Any] = {}  # (dsn, snapshot) -> a worker's connection in that snapshot


def read_again(location: DatabaseURL, snapshot: str, loader: int, row: int) -> bytes | None:
    """A part's records read by another process (a worker comparing the part), over a
    connection of its own in the snapshot the state was read in: the bytes the main process
    would have read, sent once and decoded there. A worker keeps its connection for the next
    part. None in the process that loaded the state (its workers died: it reads the row over
    its own connection) and on any trouble (the main process then reads the row, and says
    what is wrong)."""
    if os.getpid() == loader:
        return None
    psycopg, key = driver(), (location.dsn, snapshot)
    try:
        connection = _WORKER.get(key)
        if connection is None:
            for old in _WORKER.values():  # an earlier check's snapshot
                old.close()
            _WORKER.clear()
            connection = _WORKER[key] = connect(location)
            connection.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
            connection.execute(psycopg.sql.SQL("SET TRANSACTION SNAPSHOT {}").format(snapshot))
        query = "SELECT urls FROM notify_changes_parts WHERE site = %s AND n = %s"
        found = connection.execute(query, (location.site, row), binary=True).fetchone()
    except (psycopg.Error, StateError):
        kept = _WORKER.pop(key, None)
        if kept is not None:
            kept.close()
        return None
    return bytes(found[0]) if found is not None else None
