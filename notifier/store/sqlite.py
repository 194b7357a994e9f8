"""The state in SQLite (``--state something.sqlite`` or ``.db``), for the largest sites.

Same contract as the JSON file: the same lock, the same version rule (a newer version is
refused and left untouched), a whole save in one transaction, and each acknowledged batch
committed in a transaction of its own (no journal needed: SQLite's own is durable).
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import json
import sqlite3
import urllib.parse
import weakref
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import cast

import orjson

from notifier.errors import LOCK_TIMEOUT, StateError
from notifier.paths import NotRegularFile, refuse_irregular
from notifier.store.checks import check_pending_group, check_run, damaged, json_column, restore_hint
from notifier.store.durable import DeliveryNotRecorded, SaveFailed, StateStore
from notifier.store.jsonfile import encoded_parts
from notifier.store.ledger import LedgerEntry
from notifier.store.migrate import FORMAT_VERSION, check_version, sqlite_parts_from_v1
from notifier.store.model import MAX_RUNS_KEPT, PendingItem, RecordedPart, RunRecord, State, apply_delivery, grouped_pending
from notifier.store.rows import Blob, ledger_rows, state_from_rows

# The parts column ``fingerprints`` holds the part's URL hashes (the index a lookup bisects),
# not page fingerprints: an older name, kept on disk because renaming a
# column is a migration of every user's state file for a word (state/README.md documents it).
_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS parts (
    id INTEGER PRIMARY KEY, name TEXT NOT NULL, digest TEXT NOT NULL, count INTEGER NOT NULL,
    missing INTEGER NOT NULL, origins TEXT NOT NULL, fingerprints BLOB NOT NULL, urls BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS pending (
    id INTEGER PRIMARY KEY, endpoint TEXT NOT NULL, reason TEXT NOT NULL, since TEXT NOT NULL, urls TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS delivered (id INTEGER PRIMARY KEY, endpoint TEXT NOT NULL, at TEXT NOT NULL, urls TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS runs (id INTEGER PRIMARY KEY, record TEXT NOT NULL);
"""


# A new file's pages: 16 KiB, not SQLite's 4 KiB. A part's records are one row of megabytes, and
# SQLite writes a page a call: a first run of a million URLs (two saves of 134 MB of records,
# a hundred batches) made 312,000 writes with 4 KiB pages and 80,000 with 16 KiB, the same bytes.
# A small state's file is a few pages larger (a page a table: about 130 KB).
PAGE_SIZE = 16384
BUSY_TIMEOUT = LOCK_TIMEOUT  # how long SQLite waits for another program's lock on the file (an SQL client reading it)


@contextlib.contextmanager
def _connect(path: Path, *, mode: str, busy_timeout: float = BUSY_TIMEOUT) -> Iterator[sqlite3.Connection]:
    """A connection in ``mode`` (ro, rw or rwc). A damaged file is a StateError that says to
    restore it; an operational error (busy, full, read-only) reaches the caller as it is,
    who knows what was at stake: ``operational`` words it."""
    # a URI, so that the read-only mode can be asked for: its path percent-encoded, or a
    # name holding "?" or "#" would be cut there and the database written somewhere else
    uri = f"file:{urllib.parse.quote(str(path))}?mode={mode}"
    try:
        refuse_irregular(path)  # SQLite would open a FIFO and wait on it for ever
    except NotRegularFile as error:
        raise StateError(f"{path}: {error.strerror}; pass --state with the path of a state file") from None
    try:
        connection = sqlite3.connect(uri, uri=True, isolation_level=None, timeout=busy_timeout)
    except sqlite3.OperationalError as error:
        raise StateError(f"{path}: cannot open the SQLite state ({operational(error)})") from None
    except sqlite3.Error as error:
        raise StateError(f"{path}: cannot open the SQLite state ({error}); {restore_hint(str(path))}") from None
    try:
        connection.execute("PRAGMA synchronous = FULL")  # a committed batch survives a power cut
        yield connection
    except sqlite3.OperationalError:
        raise
    except sqlite3.DatabaseError as error:  # "file is not a database", "database disk image is malformed"
        raise StateError(f"{path}: not a readable notify-changes SQLite state ({error}); {restore_hint(str(path))}") from None
    finally:
        connection.close()


def operational(error: sqlite3.OperationalError) -> str:
    """What a busy, full or read-only database means for the user, in words that say what to do."""
    text = str(error)
    if "locked" in text or "busy" in text:
        return f"{text}: another program holds the database (an SQL client, a backup); close it and run again"
    if "full" in text:
        return f"{text}: the disk is full; free space and run again"
    if "readonly" in text or "read-only" in text:
        return f"{text}: the file or its folder is not writable; make them writable and run again"
    if "unable to open" in text:  # SQLITE_CANTOPEN: the file or its folder refused this user, or a folder is missing
        return f"{text}: the file or its folder cannot be opened by the user this runs as; give it access to both and run again"
    return text


def _hot_journal(path: Path) -> bool:
    """A rollback journal left by a run killed mid-save: the first open must roll it back,
    which a read-only connection cannot do (SQLite would refuse every read until then)."""
    journal = path.with_name(path.name + "-journal")
    try:
        return journal.stat().st_size > 0
    except OSError:
        return False


def sqlite_ledger_entries(path: Path, damaged: Callable[[], None] | None = None) -> Iterator[LedgerEntry]:
    """The ledger of an SQLite state, oldest first (none before its first batch), a row at a
    time: the rows are read as they are walked, never all at once."""
    if not path.exists():
        return
    try:
        with _connect(path, mode="ro") as connection:
            if not connection.execute("SELECT 1 FROM sqlite_master WHERE name = 'ledger'").fetchone():
                return
            yield from ledger_rows((row[0] for row in connection.execute("SELECT entry FROM ledger ORDER BY id")), damaged)
    except sqlite3.OperationalError as error:
        raise StateError(f"{path}: cannot read the ledger ({operational(error)})") from None


def read_sqlite_state(path: Path) -> State | None:
    """The recorded state, or None when there is none yet; never writes."""
    return _read_file(path)[0]


def _read_file(path: Path) -> tuple[State | None, bool]:
    """The recorded state, and whether it had acknowledged batches not yet folded in. Its
    parts' records stay in the file until first needed, read through a connection kept open
    (holding no lock between reads) while the state lives."""
    if not path.exists():
        return None, False
    if path.is_dir():
        raise StateError(f"{path}: is a folder; pass --state with a file path")
    try:
        with contextlib.ExitStack() as stack:
            connection = stack.enter_context(_connect(path, mode="rw" if _hot_journal(path) else "ro"))
            state, folded = _read(connection, path)
            if state is not None and state.parts:
                weakref.finalize(state, stack.pop_all().close)
            return state, folded
    except sqlite3.OperationalError as error:
        raise StateError(f"{path}: cannot read the SQLite state ({operational(error)})") from None


def _read(connection: sqlite3.Connection, path: Path) -> tuple[State | None, bool]:
    tables = {row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if not tables:
        return None, False  # an empty file: nothing was ever recorded
    name = str(path)
    if "meta" not in tables:
        raise damaged(name, "not a notify-changes state (no meta table)")
    meta = dict(connection.execute("SELECT key, value FROM meta").fetchall())
    if _version(meta, name) >= 2:
        rows = connection.execute("SELECT id, name, digest, count, missing, origins, fingerprints FROM parts ORDER BY id").fetchall()
        fetch = _blob(connection, path, {row[0]: (row[1], row[2]) for row in rows})
        return state_from_rows(
            meta,
            (
                (
                    part_name,
                    digest,
                    count,
                    missing,
                    origins,
                    prints,
                    Blob(n, fetch, functools.partial(read_again, path, n, (part_name, digest))),
                )
                for n, part_name, digest, count, missing, origins, prints in rows
            ),
            connection.execute("SELECT endpoint, reason, since, urls FROM pending ORDER BY id"),
            connection.execute("SELECT endpoint, at, urls FROM delivered ORDER BY id").fetchall(),
            (record for (record,) in connection.execute("SELECT record FROM runs ORDER BY id")),
            name,
        )
    state = State(created=meta.get("created", ""), updated=meta.get("updated", ""))
    state.parts = sqlite_parts_from_v1(connection, name)
    items: dict[tuple[str, str], PendingItem] = {}
    for endpoint, loc, reason, since in connection.execute("SELECT endpoint, loc, reason, since FROM pending ORDER BY rowid"):
        if type(endpoint) is not str:  # format 1: a row per endpoint and URL
            raise damaged(name, "a pending row has no endpoint")
        reason, since, locs = check_pending_group({"reason": reason, "since": since, "urls": [loc]}, name, endpoint)
        item = items.setdefault((reason, since), PendingItem(reason=reason, since=since))
        state.pending.setdefault(endpoint, {}).update(dict.fromkeys(locs, item))
    state.runs = [
        cast(RunRecord, check_run(json_column(record, name, "a runs row"), name))
        for (record,) in connection.execute("SELECT record FROM runs ORDER BY id")
    ]
    state.settle()
    return state, False


def _blob(connection: sqlite3.Connection, path: Path, parts: dict[int, tuple[str, str]]) -> Callable[[int], bytes]:
    """Read one part's records when the run first needs them (an unchanged part of two hundred
    is never read). A row is read only while it is still the part that was loaded: a run
    that saved meanwhile (``check`` takes no lock) is said, not mixed in."""

    def fetch(row: int) -> bytes:
        part_name, digest = parts[row]
        try:
            query = "SELECT urls FROM parts WHERE id = ? AND name = ? AND digest = ?"
            found = connection.execute(query, (row, part_name, digest)).fetchall()
        except sqlite3.OperationalError as error:
            raise StateError(f"{path}: cannot read the SQLite state ({operational(error)})") from None
        except sqlite3.DatabaseError as error:
            raise StateError(f"{path}: not a readable notify-changes SQLite state ({error}); {restore_hint(str(path))}") from None
        if not found:
            raise StateError(f"{path}: another run saved the state while this one read it; run again")
        urls = found[0][0]
        if not isinstance(urls, (bytes, str)):
            raise damaged(str(path), f"parts row {part_name!r}: urls is not JSON text")
        return urls.encode() if isinstance(urls, str) else urls

    return fetch


def read_again(path: Path, row: int, loaded: tuple[str, str]) -> bytes | None:
    """A part's records read by another process (a worker comparing the part), over a
    connection of its own: None unless the row still holds the part that was loaded (its
    name and digest, ``loaded``), or on any trouble (the main process then reads it, and
    says what is wrong)."""
    try:
        with _connect(path, mode="ro", busy_timeout=0.0) as connection:  # busy: the main process waits for it instead
            found = connection.execute("SELECT urls FROM parts WHERE id = ? AND name = ? AND digest = ?", (row, *loaded)).fetchall()
    except (sqlite3.Error, StateError):
        return None
    urls = found[0][0] if found else None
    return urls.encode() if isinstance(urls, str) else urls if isinstance(urls, bytes) else None


def _version(meta: dict[str, str], name: str) -> int:
    try:
        return check_version(int(meta.get("version", "")), name)
    except (TypeError, ValueError):
        raise damaged(name, "no valid format version") from None


class SqliteStore(StateStore):
    """The state as an SQLite database, under the same lock as the JSON file.

    One row per sitemap file holds its URLs' records (the JSON of the file format, so
    ``json_each`` reads them); pending URLs in groups as the JSON file keeps them, and each
    acknowledged batch is one small transaction.
    """

    @property
    def delivery_log(self) -> str:
        return f"the delivered table of {self.path}"

    def load(self) -> State | None:
        """The recorded state; batches a killed run acknowledged are folded in and saved."""
        state, folded = _read_file(self.path)
        if state is not None and folded:
            self.save(state)
        return state

    def save(self, state: State) -> None:
        """Replace everything in one transaction: a crash leaves the old state or the new one."""
        state.settle()
        try:
            with _connect(self.path, mode="rwc", busy_timeout=max(self.lock_timeout, 1.0)) as connection:
                connection.execute(f"PRAGMA page_size = {PAGE_SIZE}")  # a new file's; a file made already keeps its own
                connection.execute("BEGIN IMMEDIATE")  # schema changes too: all or nothing
                columns = {row[1] for row in connection.execute("PRAGMA table_info(parts)")}
                if columns and "urls" not in columns:  # format 1 tables: this save writes format 2
                    for table in ("parts", "urls", "pending", "delivered"):
                        connection.execute(f"DROP TABLE IF EXISTS {table}")
                for statement in filter(str.strip, _SCHEMA.split(";")):
                    connection.execute(statement)
                for table in ("meta", "pending", "delivered", "runs"):
                    connection.execute(f"DELETE FROM {table}")
                _save_parts(connection, state)
                connection.executemany(
                    "INSERT INTO meta VALUES (?, ?)",
                    [("version", str(FORMAT_VERSION)), ("created", state.created), ("updated", state.updated)]
                    + ([("backoff", json.dumps(dict(sorted(state.backoff.items()))))] if state.backoff else [])
                    + ([("sent_today", json.dumps(dict(sorted(state.sent_today.items()))))] if state.sent_today else [])
                    + ([("key_checks", json.dumps(dict(sorted(state.key_checks.items()))))] if state.key_checks else []),
                )
                connection.executemany(
                    "INSERT INTO pending (endpoint, reason, since, urls) VALUES (?, ?, ?, ?)",
                    (  # a group's URLs in rows of at most 50,000: a first run has a million
                        (endpoint, group["reason"], group["since"], orjson.dumps(group["urls"][start : start + 50_000]).decode())
                        for endpoint, items in state.pending.items()
                        for group in grouped_pending(items)
                        for start in range(0, len(group["urls"]), 50_000)
                    ),
                )
                connection.executemany("INSERT INTO runs (record) VALUES (?)", [(json.dumps(run),) for run in state.runs[-MAX_RUNS_KEPT:]])
                connection.execute("COMMIT")
        except sqlite3.OperationalError as error:
            raise SaveFailed(self.path, operational(error)) from None

    def record_ledger(self, entries: list[LedgerEntry], keep: int) -> None:
        """The batches sent, one ``ledger`` row each, in one transaction; the newest ``keep`` stay."""
        try:
            with _connect(self.path, mode="rw", busy_timeout=max(self.lock_timeout, 1.0)) as connection:
                connection.execute("BEGIN IMMEDIATE")
                try:
                    _add_to_ledger(connection, entries, keep)
                except sqlite3.IntegrityError as error:  # a ledger table someone changed: the state itself is whole
                    raise StateError(
                        f"{self.path}: cannot add to the ledger ({error}): its table is not as notify-changes made it; "
                        "drop the ledger table (a record only) and the next run makes it again"
                    ) from None
                connection.execute("COMMIT")
        except sqlite3.OperationalError as error:
            raise StateError(f"{self.path}: cannot add to the ledger ({operational(error)})") from None

    def record_delivered(
        self, state: State, endpoint: str, urls: Iterable[str], at: str, ledger: Sequence[LedgerEntry] = (), keep: int = 0
    ) -> bool:
        """One transaction per acknowledged batch: a ``delivered`` row, which takes the batch
        out of the pending set for every later reader (the next full save folds it in), and
        the ``ledger`` rows of the batches sent since the last one (the newest ``keep`` kept):
        one commit, where a ledger apart was a second transaction at the end (each commit is
        six fsyncs). Whether the ledger rows went in: a ledger that takes none (a table someone
        changed) leaves them to ``record_ledger``, which says so, and the batch is recorded."""
        urls = list(urls)
        apply_delivery(state, endpoint, urls, at, live=True)
        added = False
        try:
            with _connect(self.path, mode="rw", busy_timeout=max(self.lock_timeout, 1.0)) as connection:
                connection.execute("BEGIN IMMEDIATE")
                connection.execute(
                    "INSERT INTO delivered (endpoint, at, urls) VALUES (?, ?, ?)", (endpoint, at, orjson.dumps(urls).decode())
                )
                connection.execute("UPDATE meta SET value = ? WHERE key = 'updated' AND value < ?", (at, at))
                if ledger:
                    connection.execute("SAVEPOINT ledger")
                    try:
                        _add_to_ledger(connection, ledger, keep)
                        added = True
                    except (sqlite3.OperationalError, sqlite3.IntegrityError):  # a ledger table someone changed, too
                        connection.execute("ROLLBACK TO ledger")
                    connection.execute("RELEASE ledger")
                connection.execute("COMMIT")
        except sqlite3.OperationalError as error:
            raise DeliveryNotRecorded(self.path, endpoint, len(urls), operational(error)) from None
        return added


def _add_to_ledger(connection: sqlite3.Connection, entries: Sequence[LedgerEntry], keep: int) -> None:
    """``entries`` as ``ledger`` rows, in the caller's transaction; the newest ``keep`` stay."""
    connection.execute("CREATE TABLE IF NOT EXISTS ledger (id INTEGER PRIMARY KEY, entry TEXT NOT NULL)")
    connection.executemany("INSERT INTO ledger (entry) VALUES (?)", [(orjson.dumps(each).decode(),) for each in entries])
    connection.execute("DELETE FROM ledger WHERE id <= (SELECT max(id) FROM ledger) - ?", (keep,))


# A part's row id is its place: rows are written this far apart, so that a part new between
# two others fits between their rows, which stay where they are.
ROW_SPACING = 1 << 20


def _save_parts(connection: sqlite3.Connection, state: State) -> None:
    """The parts' rows, in the save's transaction: a part read from this file and left
    untouched keeps its row, its records neither read nor written (at ten million URLs, 199
    parts of 200 are a gigabyte); the others are written in rows between their neighbours'.
    When the order leaves no room (parts reordered), every row is written again."""
    present = {row for (row,) in connection.execute("SELECT id FROM parts").fetchall()}
    rows = [part.row if isinstance(part, RecordedPart) and part.row in present else None for part in state.parts]
    places = _places(rows)
    if places is None:
        rows, places = [None] * len(rows), [n * ROW_SPACING for n in range(len(rows))]
        for part in state.parts:
            if isinstance(part, RecordedPart) and part.row is not None:
                part.hold()  # every row moves: its bytes are read now, before this transaction changes them
    kept = {row for row in rows if row is not None}
    connection.executemany("DELETE FROM parts WHERE id = ?", [(row,) for row in sorted(present - kept)])
    connection.executemany(
        "INSERT INTO parts VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (
            (place, part.name, part.digest, part.count, part.missing, json.dumps(part.origins), part.url_hash_index, encoded)
            for place, (part, encoded) in zip(
                places, encoded_parts(state, keep=lambda part: isinstance(part, RecordedPart) and part.row in kept), strict=True
            )
            if encoded is not None
        ),
    )


def _places(rows: list[int | None]) -> list[int] | None:
    """Each part's row, in order: its own for a part that keeps its row (``rows``), rows
    between its neighbours' for the others; None when the kept rows are out of order or
    too close together for what goes between them."""
    kept = [row for row in rows if row is not None]
    if any(later <= earlier for earlier, later in itertools.pairwise(kept)):
        return None
    places: list[int] = []
    start = 0
    while start < len(rows):
        own = rows[start]
        if own is not None:
            places.append(own)
            start += 1
            continue
        end = start
        while end < len(rows) and rows[end] is None:
            end += 1
        low, high, count = places[-1] if places else None, rows[end] if end < len(rows) else None, end - start
        if low is not None and high is not None and high - low <= count:
            return None
        if low is None and high is None:
            places.extend(k * ROW_SPACING for k in range(count))
        elif high is None:
            places.extend(low + (k + 1) * ROW_SPACING for k in range(count))  # type: ignore[operator]
        elif low is None:
            places.extend(high - (count - k) * ROW_SPACING for k in range(count))
        else:
            places.extend(low + (high - low) * (k + 1) // (count + 1) for k in range(count))
        start = end
    return places
