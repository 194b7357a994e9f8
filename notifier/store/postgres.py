"""The state in PostgreSQL (``--state postgresql://…`` with ``--site-name NAME``): one state
that every runner reaches, for many sites at once.

The same contract as the file stores: the documented structure checked on load (a wrong
column, a newer schema: exit 2, nothing touched), the sitemap's new truth and each
endpoint's pending URLs committed before the first request, each acknowledged batch
committed in a transaction of its own, and the same layout as the SQLite store (one row per
sitemap file holding its URLs' records, so an unchanged part is neither parsed nor decoded).
Every row carries its site's name; the tables are made on first use.

The lock is a PostgreSQL advisory lock on the site's name, held by the run's connection
for as long as it reads, submits and records: a second run of the same site, from any
machine, waits ``--lock-timeout`` and exits 4; other sites go on. A runner that dies
releases it with its connection.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import functools
import json
import os
import time
import weakref
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import orjson

from notifier.database import DatabaseURL
from notifier.dates import format_utc
from notifier.errors import LOCK_TIMEOUT, LockTimeout, StateError
from notifier.store.checks import damaged
from notifier.store.durable import DeliveryNotRecorded, SaveFailed, waiting_for_lock
from notifier.store.jsonfile import encoded_parts
from notifier.store.ledger import LedgerEntry
from notifier.store.migrate import FORMAT_VERSION, check_version
from notifier.store.model import MAX_RUNS_KEPT, Part, RecordedPart, State, apply_delivery, grouped_pending
from notifier.store.postgres_snapshot import exported, read_again
from notifier.store.rows import Blob, ledger_rows, state_from_rows
from notifier.store.server import connected, driver, failure, said
from notifier.waits import MAX_WAIT

if TYPE_CHECKING:
    import psycopg

SCHEMA_VERSION = 1  # of these tables; a newer one is refused, as a newer state file is
TABLES: dict[str, tuple[str, ...]] = {
    "notify_changes_schema": ("version",),
    "notify_changes_meta": ("site", "key", "value"),
    "notify_changes_parts": ("site", "n", "name", "digest", "count", "missing", "origins", "fingerprints", "urls"),
    "notify_changes_pending": ("site", "id", "endpoint", "reason", "since", "urls"),
    "notify_changes_delivered": ("site", "id", "endpoint", "at", "urls"),
    "notify_changes_runs": ("site", "id", "record"),
    "notify_changes_backoff": ("endpoint", "not_before"),
    "notify_changes_ledger": ("site", "id", "entry"),
}
_SCHEMA = """
CREATE TABLE IF NOT EXISTS notify_changes_schema (version integer NOT NULL);
CREATE TABLE IF NOT EXISTS notify_changes_meta (site text NOT NULL, key text NOT NULL, value text NOT NULL, PRIMARY KEY (site, key));
CREATE TABLE IF NOT EXISTS notify_changes_parts (
    site text NOT NULL, n integer NOT NULL, name text NOT NULL, digest text NOT NULL, count integer NOT NULL,
    missing integer NOT NULL, origins text NOT NULL, fingerprints bytea NOT NULL, urls bytea NOT NULL, PRIMARY KEY (site, n)
);
CREATE TABLE IF NOT EXISTS notify_changes_pending (
    site text NOT NULL, id bigserial PRIMARY KEY, endpoint text NOT NULL, reason text NOT NULL, since text NOT NULL, urls text NOT NULL
);
CREATE INDEX IF NOT EXISTS notify_changes_pending_site ON notify_changes_pending (site, id);
CREATE TABLE IF NOT EXISTS notify_changes_delivered (
    site text NOT NULL, id bigserial PRIMARY KEY, endpoint text NOT NULL, at text NOT NULL, urls text NOT NULL
);
CREATE INDEX IF NOT EXISTS notify_changes_delivered_site ON notify_changes_delivered (site, id);
CREATE TABLE IF NOT EXISTS notify_changes_runs (site text NOT NULL, id bigserial PRIMARY KEY, record text NOT NULL);
CREATE INDEX IF NOT EXISTS notify_changes_runs_site ON notify_changes_runs (site, id);
CREATE TABLE IF NOT EXISTS notify_changes_backoff (endpoint text PRIMARY KEY, not_before text NOT NULL);
CREATE TABLE IF NOT EXISTS notify_changes_ledger (site text NOT NULL, id bigserial PRIMARY KEY, entry text NOT NULL);
CREATE INDEX IF NOT EXISTS notify_changes_ledger_site ON notify_changes_ledger (site, id)
"""
_LEDGER = "notify_changes_ledger"
_CREATING = 7_140_311_202  # an advisory lock key: one run at a time creates the tables


def _schema(connection: psycopg.Connection[Any], location: DatabaseURL) -> frozenset[str]:
    """The tables there are (none: a new database), checked: each with its documented columns,
    the schema not newer. Only the ledger may be missing: nothing depends on it, and the next
    run that takes the lock makes it again (``_create``)."""
    found: dict[str, set[str]] = {}
    for table, column in connection.execute(
        "SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = ANY(%s)",
        (list(TABLES),),
    ):
        found.setdefault(table, set()).add(column)
    if not found:
        return frozenset()
    for table, columns in TABLES.items():
        if found.get(table) != set(columns) and not (table == _LEDGER and table not in found):
            raise damaged(str(location), f"table {table} has the columns {sorted(found.get(table, ()))}, not {list(columns)}")
    row = connection.execute("SELECT max(version) FROM notify_changes_schema").fetchone()
    version = row[0] if row else None
    if version is not None and version > SCHEMA_VERSION:
        raise StateError(
            f"{location}: the tables are of schema version {version}, newer than this notify-changes knows ({SCHEMA_VERSION}); "
            "upgrade notify-changes (nothing was changed)"
        )
    return frozenset(found)


def _create(connection: psycopg.Connection[Any], location: DatabaseURL) -> None:
    with connection.transaction():
        connection.execute("SELECT pg_advisory_xact_lock(%s)", (_CREATING,))
        found = _schema(connection, location)
        if _LEDGER in found:
            return
        for statement in filter(str.strip, _SCHEMA.split(";")):  # a new database's every table, or the ledger alone
            if not found or _LEDGER in statement:
                connection.execute(statement)  # fixed text, no user input
        if not found:
            connection.execute("INSERT INTO notify_changes_schema (version) VALUES (%s)", (SCHEMA_VERSION,))


def _blob(connection: psycopg.Connection[Any], location: DatabaseURL) -> Callable[[int], bytes]:
    """Read one part's records when the run first needs them: an unchanged part of twenty is
    never sent over the wire (nor, with an untouched save, back)."""

    def fetch(row: int) -> bytes:
        try:
            query = "SELECT urls FROM notify_changes_parts WHERE site = %s AND n = %s"
            found = connection.execute(query, (location.site, row), binary=True).fetchone()  # bytes, not their hex
        except driver().Error as error:  # read while the diff runs: a dropped connection is a state error there too
            raise failure(error, connection, location) from None
        if found is None:
            raise damaged(str(location), f"parts row {row} went missing while the run read it")
        return bytes(found[0])

    return fetch


def _read(connection: psycopg.Connection[Any], location: DatabaseURL, snapshot: str | None = None) -> tuple[State | None, bool]:
    """The site's state; ``snapshot``: the exported snapshot it is read in, from which a worker
    reads a part's records over a connection of its own (``read_again``)."""
    if not _schema(connection, location):
        return None, False
    site, name, fetch = location.site, str(location), _blob(connection, location)
    again = functools.partial(read_again, location, snapshot, os.getpid()) if snapshot is not None else None
    meta = dict(connection.execute("SELECT key, value FROM notify_changes_meta WHERE site = %s", (site,)).fetchall())
    if not meta:
        return None, False  # this site has recorded nothing yet
    try:
        check_version(int(meta.get("version", "")), name)
    except (TypeError, ValueError):
        raise damaged(name, "no valid format version") from None
    # every site's waits: one egress, one wait; believed or dropped by the reader (waits.bounded)
    meta = {**meta, "backoff": json.dumps(dict(connection.execute("SELECT endpoint, not_before FROM notify_changes_backoff").fetchall()))}
    return state_from_rows(
        meta,
        (
            (part_name, digest, count, missing, origins, prints, Blob(n, fetch, functools.partial(again, n) if again else None))
            for n, part_name, digest, count, missing, origins, prints in connection.execute(
                "SELECT n, name, digest, count, missing, origins, fingerprints FROM notify_changes_parts WHERE site = %s ORDER BY n",
                (site,),
                binary=True,  # the URL-hash indexes as bytes, not their hex
            )
        ),
        connection.execute("SELECT endpoint, reason, since, urls FROM notify_changes_pending WHERE site = %s ORDER BY id", (site,)),
        connection.execute("SELECT endpoint, at, urls FROM notify_changes_delivered WHERE site = %s ORDER BY id", (site,)).fetchall(),
        (record for (record,) in connection.execute("SELECT record FROM notify_changes_runs WHERE site = %s ORDER BY id", (site,))),
        name,
    )


def postgres_ledger_entries(location: DatabaseURL, damaged: Callable[[], None] | None = None) -> Iterator[LedgerEntry]:
    """The site's ledger, oldest first, a row at a time (``stream``: the rows arrive as they
    are walked, never all at once)."""
    with connected(location) as connection:
        if _LEDGER not in _schema(connection, location):
            return
        rows = connection.cursor().stream("SELECT entry FROM notify_changes_ledger WHERE site = %s ORDER BY id", (location.site,))
        yield from ledger_rows((row[0] for row in rows), damaged)


def read_postgres_state(location: DatabaseURL) -> State | None:
    """This site's recorded state, or None when it has none yet; takes no lock, writes nothing.
    Its parts' records are read when first needed, from one snapshot (a repeatable-read
    transaction kept open while the state lives): a run saving meanwhile does not mix in."""
    with contextlib.ExitStack() as stack:
        connection = stack.enter_context(connected(location))
        connection.autocommit = False
        connection.isolation_level = driver().IsolationLevel.REPEATABLE_READ
        state = _read(connection, location, exported(connection))[0]
        if state is not None and state.parts:  # its parts' records are read later: the snapshot stays open
            weakref.finalize(state, stack.pop_all().close)
    return state


class PostgresStore:
    """The site's state in PostgreSQL under its advisory lock, held by this store's connection:
    a ``store.contract.Store`` of its own, with none of the file stores' members (a path, a
    lock file, leftovers to clean)."""

    def __init__(
        self,
        location: DatabaseURL,
        *,
        lock_timeout: float = LOCK_TIMEOUT,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
        notice: Callable[[str], None] | None = None,
    ) -> None:
        self.location = location
        self.lock_timeout, self._clock, self._sleep, self._notice = lock_timeout, clock, sleep, notice
        self._connection: psycopg.Connection[Any] | None = None
        self._held: contextlib.ExitStack | None = None  # the connection, and with it the lock

    def __enter__(self) -> PostgresStore:
        self.acquire()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.release()

    @property
    def delivery_log(self) -> str:
        return f"the notify_changes_delivered table of {self.location}"

    def acquire(self) -> None:
        """Connect, make the tables on first use, and take the site's lock, waiting up to ``lock_timeout``."""
        with contextlib.ExitStack() as stack:
            connection = stack.enter_context(connected(self.location))
            _create(connection, self.location)
            deadline, waiting = self._clock() + self.lock_timeout, False
            while not connection.execute("SELECT pg_try_advisory_lock(hashtextextended(%s, 0))", (self._lock_name,)).fetchone()[0]:
                if self._clock() >= deadline:
                    raise LockTimeout(
                        f"{self.location}: another notify-changes run of this site holds its lock after waiting "
                        f"{self.lock_timeout:g} s; let it finish (or raise --lock-timeout) and run again"
                    )
                if self._notice is not None and not waiting:  # once, as the wait starts
                    self._notice(waiting_for_lock(f"the lock of {self.location}", self.lock_timeout))
                waiting = True
                self._sleep(0.05)
            self._connection, self._held = connection, stack.pop_all()

    @property
    def _lock_name(self) -> str:
        return f"notify-changes:{self.location.site}"

    def release(self) -> None:
        held, self._held, self._connection = self._held, None, None
        if held is not None:
            held.close()  # closing the connection drops the lock

    @property
    def connection(self) -> psycopg.Connection[Any]:
        assert self._connection is not None, "use the store in a with block"
        return self._connection

    def shared_waits(self) -> dict[str, str]:
        """The waits endpoints asked any site of this database for: one egress, one wait."""
        with self._said():
            return dict(self.connection.execute("SELECT endpoint, not_before FROM notify_changes_backoff").fetchall())

    @contextmanager
    def _said(self) -> Iterator[None]:
        """A driver error here as the one line a user reads (``server.failure``)."""
        try:
            yield
        except driver().Error as error:
            raise failure(error, self.connection, self.location) from None

    def clear_waits(self, state: State, endpoints: Iterable[str]) -> None:
        """The waits are every site's (one egress, one wait): their rows go, for all of them."""
        endpoints = list(endpoints)
        for endpoint in endpoints:
            state.backoff.pop(endpoint, None)
        with self._said():
            self.connection.execute("DELETE FROM notify_changes_backoff WHERE endpoint = ANY(%s)", (endpoints,))

    def load(self) -> State | None:
        """The site's state; batches a killed run acknowledged are folded in and saved."""
        with self._said():
            state, folded = _read(self.connection, self.location)
        if state is not None and folded:
            self.save(state)
        return state

    def save(self, state: State) -> None:
        """Replace the site's rows in one transaction: a crash leaves the old state or the new one."""
        state.settle()
        site, psycopg = self.location.site, driver()
        try:
            with self.connection.transaction():
                for table in ("meta", "pending", "delivered", "runs"):
                    self.connection.execute(f"DELETE FROM notify_changes_{table} WHERE site = %s", (site,))
                kept = self._save_parts(state)
                with self.connection.cursor() as cursor:
                    cursor.executemany(
                        "INSERT INTO notify_changes_meta VALUES (%s, %s, %s)",
                        [(site, "version", str(FORMAT_VERSION)), (site, "created", state.created), (site, "updated", state.updated)]
                        + ([(site, "sent_today", json.dumps(dict(sorted(state.sent_today.items()))))] if state.sent_today else [])
                        + ([(site, "key_checks", json.dumps(dict(sorted(state.key_checks.items()))))] if state.key_checks else []),
                    )
                    self.connection.execute(  # over, or never to be believed (not a time, beyond a week: waits.bounded)
                        "DELETE FROM notify_changes_backoff WHERE not_before <= %s OR not_before > %s OR not_before !~ %s",
                        (state.updated, _week_after(state.updated), _A_TIME),
                    )
                    cursor.executemany(  # every site's runs share an endpoint's wait: the latest time wins
                        "INSERT INTO notify_changes_backoff VALUES (%s, %s) ON CONFLICT (endpoint) "
                        "DO UPDATE SET not_before = greatest(notify_changes_backoff.not_before, excluded.not_before)",
                        list(state.backoff.items()),
                    )
                    cursor.executemany(
                        "INSERT INTO notify_changes_pending (site, endpoint, reason, since, urls) VALUES (%s, %s, %s, %s, %s)",
                        list(_pending_rows(site, state)),
                    )
                    cursor.executemany(
                        "INSERT INTO notify_changes_runs (site, record) VALUES (%s, %s)",
                        [(site, json.dumps(run)) for run in state.runs[-MAX_RUNS_KEPT:]],
                    )
        except psycopg.Error as error:
            raise SaveFailed(self.location, said(error, self.connection, self.location)) from None
        for part, n in kept:  # committed: each kept row is where the save moved it
            part.row = n

    def _save_parts(self, state: State) -> list[tuple[RecordedPart, int]]:
        """The parts' rows, in the save's transaction: a part read from here and left untouched
        keeps its row (only renumbered, its records never sent back); the others are written.
        A run that changed one part of twenty writes one part's records."""
        site, connection = self.location.site, self.connection
        connection.execute("UPDATE notify_changes_parts SET n = -1 - n WHERE site = %s", (site,))  # out of the new numbers' way
        kept: list[tuple[RecordedPart, int]] = []
        written = []
        for n, (part, encoded) in enumerate(encoded_parts(state, keep=_stored)):
            meta = (part.name, part.digest, part.count, part.missing, json.dumps(part.origins), part.url_hash_index)
            if encoded is None:
                assert isinstance(part, RecordedPart) and part.row is not None
                connection.execute(
                    "UPDATE notify_changes_parts SET n = %s, name = %s, digest = %s, count = %s, missing = %s, origins = %s, "
                    "fingerprints = %s WHERE site = %s AND n = %s",
                    (n, *meta, site, -1 - part.row),
                )
                kept.append((part, n))
            else:
                written.append((site, n, *meta, encoded))
        connection.execute("DELETE FROM notify_changes_parts WHERE site = %s AND n < 0", (site,))  # the rows no part kept
        with connection.cursor() as cursor:
            cursor.executemany("INSERT INTO notify_changes_parts VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)", written)
        return kept

    def record_ledger(self, entries: list[LedgerEntry], keep: int) -> None:
        """The batches sent, a row each, in one transaction; the site's newest ``keep`` stay."""
        site, psycopg = self.location.site, driver()
        try:
            with self.connection.transaction(), self.connection.cursor() as cursor:
                cursor.executemany(
                    "INSERT INTO notify_changes_ledger (site, entry) VALUES (%s, %s)",
                    [(site, orjson.dumps(each).decode()) for each in entries],
                )
                cursor.execute(
                    "DELETE FROM notify_changes_ledger WHERE site = %s AND id NOT IN "
                    "(SELECT id FROM notify_changes_ledger WHERE site = %s ORDER BY id DESC LIMIT %s)",
                    (site, site, keep),
                )
        except psycopg.Error as error:
            raise StateError(f"{self.location}: cannot add to the ledger ({said(error, self.connection, self.location)})") from None

    def record_delivered(
        self, state: State, endpoint: str, urls: Iterable[str], at: str, ledger: Sequence[LedgerEntry] = (), keep: int = 0
    ) -> bool:
        """One transaction per acknowledged batch: a delivered row, which takes the batch out of
        the pending set for every later reader (the next full save folds it in). False: the
        ``ledger`` is left to ``record_ledger``, at the end."""
        urls = list(urls)
        apply_delivery(state, endpoint, urls, at, live=True)
        site, psycopg = self.location.site, driver()
        try:
            with self.connection.transaction():
                self.connection.execute(
                    "INSERT INTO notify_changes_delivered (site, endpoint, at, urls) VALUES (%s, %s, %s, %s)",
                    (site, endpoint, at, orjson.dumps(urls).decode()),
                )
                self.connection.execute(
                    "UPDATE notify_changes_meta SET value = %s WHERE site = %s AND key = 'updated' AND value < %s", (at, site, at)
                )
        except psycopg.Error as error:
            raise DeliveryNotRecorded(self.location, endpoint, len(urls), said(error, self.connection, self.location)) from None
        return False


_A_TIME = r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$"  # a wait as notify-changes writes it (PostgreSQL's regex)


def _week_after(stamp: str) -> str:
    """The latest wait a save keeps: a week after ``stamp`` (the run's time), as the reader bounds it."""
    try:
        instant = dt.datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=dt.UTC)
    except ValueError:
        return "9999"  # no time to measure from (a state saved by hand): nothing is dropped for being far
    return format_utc(instant + MAX_WAIT)


def _stored(part: Part) -> bool:
    """Whether the part's records are in its row already: read from there, never touched."""
    return isinstance(part, RecordedPart) and part.row is not None


def _pending_rows(site: str | None, state: State) -> Iterator[tuple[str | None, str, str, str, str]]:
    """A group's URLs in rows of at most 50,000: a first run has a million."""
    for endpoint, items in state.pending.items():
        for group in grouped_pending(items):
            for start in range(0, len(group["urls"]), 50_000):
                yield site, endpoint, group["reason"], group["since"], orjson.dumps(group["urls"][start : start + 50_000]).decode()
