"""The recorded state: what every URL's lastmod was at the last deploy, and what is pending.

A package of one-way layers: ``checks`` (the documented structure, checked on load) <-
``model`` (records, parts, the state and its settling) <- ``migrate`` (older formats, the
version rule) and ``durable`` (lock, atomic write, fsync) <- ``jsonfile`` (the default
store) <- ``sqlite``; ``rows`` <- ``postgres``. ``contract.Store`` is what each of them is to a run;
this module decides which one a location is (``backend``), once.
"""

from __future__ import annotations

import collections
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Literal, NamedTuple

from notifier.database import DatabaseURL, database_identity, is_database_url
from notifier.store.contract import Store
from notifier.store.durable import SaveFailed, StateStore, follow_link, write_atomic
from notifier.store.jsonfile import (
    JsonStore,
    decode_state,
    encode_chunks,
    encode_state,
    encoded_parts,
    journal_path,
    ledger_path,
    load_state,
)
from notifier.store.ledger import LedgerEntry
from notifier.store.ledgerfile import json_ledger_entries
from notifier.store.migrate import FORMAT_VERSION
from notifier.store.model import (
    MAX_RUNS_KEPT,
    NewPart,
    Part,
    PartReader,
    PendingItem,
    RecordedPart,
    RunRecord,
    State,
    apply_delivery,
    grouped_pending,
)
from notifier.store.records import (
    FIELDS,
    FINGERPRINT,
    FIRST_SEEN,
    LAST_SUBMITTED,
    LASTMOD,
    Record,
    fingerprint_of,
    lastmod_of,
    new_record,
    recorded_lastmods,
    recorded_on,
    renew,
    stamp_submitted,
)

__all__ = [
    "FIELDS",
    "FINGERPRINT",
    "FIRST_SEEN",
    "FORMAT_VERSION",
    "LASTMOD",
    "LAST_SUBMITTED",
    "MAX_RUNS_KEPT",
    "SQLITE_SUFFIXES",
    "DatabaseURL",
    "JsonStore",
    "LedgerEntry",
    "NewPart",
    "Part",
    "PartReader",
    "PendingItem",
    "Record",
    "RecordedPart",
    "RunRecord",
    "SaveFailed",
    "State",
    "StateStore",
    "Store",
    "apply_delivery",
    "backend",
    "decode_state",
    "encode_chunks",
    "encode_state",
    "encoded_parts",
    "fingerprint_of",
    "follow_link",
    "grouped_pending",
    "is_database_url",
    "journal_path",
    "last_batches",
    "lastmod_of",
    "ledger_entries",
    "load_state",
    "new_record",
    "open_store",
    "read_ledger",
    "read_state",
    "recorded_lastmods",
    "recorded_on",
    "renew",
    "stamp_submitted",
    "write_atomic",
]


class Backend(NamedTuple):
    """Which store a location is, decided once (``backend``), and what it opens and reads."""

    kind: Literal["JSON", "SQLite", "PostgreSQL"]
    location: Path | DatabaseURL  # as the user gave it: a file's link is followed when opened

    @property
    def site(self) -> str | None:
        """A PostgreSQL state's site name (``--site-name``): a file holds one site, and names none."""
        return self.location.site if isinstance(self.location, DatabaseURL) else None

    def identity(self) -> object:
        """What makes two states one: a file's device and inode when it exists (a hard link is
        one file under two names), else its resolved path; a database's server, port, database
        and user as libpq reads the URI, with the site name."""
        location = self.location
        if isinstance(location, DatabaseURL):
            return (database_identity(location.dsn), location.site)
        try:
            found = os.stat(location)
        except OSError:
            return location.resolve()
        return (found.st_dev, found.st_ino)

    def open(self, **options: Any) -> Store:
        """The store, to lock and use around a run."""
        location = self.location
        if isinstance(location, DatabaseURL):
            from notifier.store.postgres import PostgresStore

            return PostgresStore(location, **options)
        if self.kind == "SQLite":
            from notifier.store.sqlite import SqliteStore

            return SqliteStore(follow_link(location), **options)
        return JsonStore(follow_link(location), **options)

    def read(self) -> State | None:
        """The recorded state without locking or writing (``check``, ``--dry-run``)."""
        location = self.location
        if isinstance(location, DatabaseURL):
            from notifier.store.postgres import read_postgres_state

            return read_postgres_state(location)
        if self.kind == "SQLite":
            from notifier.store.sqlite import read_sqlite_state

            return read_sqlite_state(follow_link(location))
        return load_state(follow_link(location))

    def ledger(self, damaged: Callable[[], None] | None = None) -> Iterator[LedgerEntry]:
        """The ledger's entries, oldest first, one at a time (see ``ledger_entries``)."""
        location = self.location
        if isinstance(location, DatabaseURL):
            from notifier.store.postgres import postgres_ledger_entries

            return postgres_ledger_entries(location, damaged)
        if self.kind == "SQLite":
            from notifier.store.sqlite import sqlite_ledger_entries

            return sqlite_ledger_entries(follow_link(location), damaged)
        return json_ledger_entries(ledger_path(follow_link(location)), damaged)


def backend(location: Path | DatabaseURL) -> Backend:
    """The one place that says which store a location is: PostgreSQL for a database URL,
    SQLite for a ``.sqlite`` or ``.db`` name (the name the user gave, not a link's target),
    else the JSON file. Imports no driver: a backend's module loads when it is opened."""
    if isinstance(location, DatabaseURL):
        return Backend("PostgreSQL", location)
    return Backend("SQLite" if location.suffix in SQLITE_SUFFIXES else "JSON", location)


def open_store(path: Path | DatabaseURL, **options: Any) -> Store:
    """The store for ``path`` (see ``backend``)."""
    return backend(path).open(**options)


def read_state(path: Path | DatabaseURL) -> State | None:
    """The recorded state without locking or writing (``check``, ``--dry-run``), any store."""
    return backend(path).read()


def ledger_entries(path: Path | DatabaseURL, damaged: Callable[[], None] | None = None) -> Iterator[LedgerEntry]:
    """What every endpoint said to every batch sent (the newest ``keep-batches``), oldest
    first, one entry at a time: a ledger of big batches is hundreds of megabytes. A damaged
    line or row is skipped, ``damaged`` called for each."""
    return backend(path).ledger(damaged)


def read_ledger(path: Path | DatabaseURL) -> list[LedgerEntry]:
    """The whole ledger, oldest first (see ``ledger_entries`` to walk it instead)."""
    return list(ledger_entries(path))


def last_batches(path: Path | DatabaseURL, url: str | None, count: int) -> list[LedgerEntry]:
    """The newest ``count`` entries of the ledger (those that carried ``url``, when given),
    oldest first: only they are kept while the ledger is walked."""
    kept: collections.deque[LedgerEntry] = collections.deque(maxlen=count)
    kept.extend(entry for entry in ledger_entries(path) if url is None or url in entry["urls"])
    return list(kept)


SQLITE_SUFFIXES = (".sqlite", ".db")
