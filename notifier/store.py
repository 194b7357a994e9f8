"""The state file: what every URL's lastmod was at the last deploy, and what is pending.

Written atomically (a temporary file in the same folder, fsync, rename, fsync of the
folder) under an exclusive ``flock`` that the kernel releases if the process dies, so a
crash or a second concurrent run never leaves a torn or mixed file. The format is
documented in ``state/README.md`` and ``state/schema.json``.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import os
import tempfile
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypedDict, cast

import orjson

from notifier.errors import LockTimeout, StateError

FORMAT_VERSION = 1
MAX_RUNS_KEPT = 20
_TMP_SUFFIX = ".tmp"


class UrlRecord(TypedDict, total=False):
    lastmod: str | None  # as written in the sitemap
    fingerprint: str  # of the built page file, when --site-dir is used
    first_seen: str
    last_submitted: str
    part: int  # index into State.parts: the sitemap file that listed it


class PendingItem(TypedDict):
    reason: str  # added | changed | removed | initial
    since: str


class PartRecord(TypedDict):
    name: str  # the file's path under the site dir, or its URL
    digest: str  # BLAKE2b-128 of its raw bytes


class RunRecord(TypedDict, total=False):
    at: str
    command: str
    added: int
    changed: int
    removed: int
    submitted: int
    pending: int
    exit_code: int


@dataclass
class State:
    """The whole recorded state. ``pending`` is per endpoint: endpoint -> url -> why."""

    urls: dict[str, UrlRecord] = field(default_factory=dict)
    pending: dict[str, dict[str, PendingItem]] = field(default_factory=dict)
    runs: list[RunRecord] = field(default_factory=list)
    parts: list[PartRecord] = field(default_factory=list)  # the sitemap files read last deploy
    created: str = ""
    updated: str = ""

    def to_json(self) -> dict[str, Any]:
        document: dict[str, Any] = {"version": FORMAT_VERSION}
        if self.created:
            document["created"] = self.created
        if self.updated:
            document["updated"] = self.updated
        return document | {
            "parts": self.parts,
            "urls": self.urls,
            "pending": {endpoint: items for endpoint, items in self.pending.items() if items},
            "runs": self.runs[-MAX_RUNS_KEPT:],
        }


def encode_state(state: State) -> bytes:
    """The exact bytes written for ``state``: compact JSON, UTF-8, one line.

    orjson writes the same bytes as ``json.dumps(..., ensure_ascii=False,
    separators=(",", ":"))``, ten times faster: a state can hold a million URLs.
    """
    return orjson.dumps(state.to_json()) + b"\n"


def state_digest(state: State) -> bytes:
    """A fingerprint of the encoded state: what a run compares to leave unchanged files alone,
    without holding a second copy of a state that may take a hundred megabytes."""
    return _digest(encode_state(state))


def _digest(data: bytes) -> bytes:
    return hashlib.blake2b(data, digest_size=32).digest()


def decode_state(data: bytes, name: str) -> State:
    """Parse and check a state file's bytes; anything unexpected is a StateError, never a crash."""
    hint = f"restore {name} from a backup, or move it away to record a new baseline"
    try:
        document = orjson.loads(data)
    except (ValueError, RecursionError):
        raise StateError(f"{name}: not valid JSON (a truncated or corrupt state file); {hint}") from None
    if not isinstance(document, dict) or "version" not in document:
        raise StateError(f'{name}: not a notify-changes state file (no "version"); {hint}')
    version = document["version"]
    if type(version) is not int:
        raise StateError(f'{name}: "version" is not an integer; {hint}')
    if version > FORMAT_VERSION:
        raise StateError(
            f"{name}: state format version {version} is newer than this notify-changes knows ({FORMAT_VERSION}); "
            "upgrade notify-changes (the file was left untouched)"
        )
    if version < 1:
        raise StateError(f"{name}: unknown state format version {version}; {hint}")
    urls = document.get("urls", {})
    pending = document.get("pending", {})
    runs = document.get("runs", [])
    if not isinstance(urls, dict) or not isinstance(pending, dict) or not isinstance(runs, list):
        raise StateError(f'{name}: "urls", "pending" or "runs" has the wrong type; {hint}')
    # Checked record by record, and the timestamps that thousands of records share are made
    # one object again (JSON gives each its own copy: a hundred megabytes at a million URLs).
    shared: dict[str, str] = {}
    for url, record in urls.items():
        if type(record) is not dict or not isinstance(record.get("lastmod"), (str, type(None))):
            raise StateError(f"{name}: the record of {url} is malformed; {hint}")
        for stamp in ("first_seen", "last_submitted"):
            value = record.get(stamp)
            if value is not None:
                record[stamp] = shared.setdefault(value, value)
    shared_items: dict[tuple[str, str], dict[str, str]] = {}
    for endpoint, items in pending.items():
        if type(items) is not dict:
            raise StateError(f"{name}: pending[{endpoint}] is malformed; {hint}")
        for url, item in items.items():
            if type(item) is not dict or not isinstance(item.get("reason"), str) or not isinstance(item.get("since"), str):
                raise StateError(f"{name}: pending item {url} for {endpoint} is malformed; {hint}")
            items[url] = shared_items.setdefault((item["reason"], item["since"]), item)
    parts = document.get("parts", [])
    if not isinstance(parts, list) or not all(
        isinstance(part, dict) and isinstance(part.get("name"), str) and isinstance(part.get("digest"), str) for part in parts
    ):
        raise StateError(f'{name}: "parts" is malformed; {hint}')
    created, updated = document.get("created", ""), document.get("updated", "")
    return State(
        urls=urls,
        pending=pending,
        runs=cast(list[RunRecord], [run for run in runs if isinstance(run, dict)]),
        parts=cast(list[PartRecord], parts),
        created=created if isinstance(created, str) else "",
        updated=updated if isinstance(updated, str) else "",
    )


def open_store(path: Path, **options: Any) -> StateStore:
    """The store for ``path``: SQLite for a ``.sqlite`` or ``.db`` name, else the JSON file."""
    if path.suffix in SQLITE_SUFFIXES:
        from notifier.sqlite_store import SqliteStore

        return SqliteStore(path, **options)
    return JsonStore(path, **options)


def read_state(path: Path) -> State | None:
    """The recorded state without locking or writing (``check``, ``--dry-run``), either store."""
    if path.suffix in SQLITE_SUFFIXES:
        from notifier.sqlite_store import read_sqlite_state

        return read_sqlite_state(path)
    return load_state(path)


SQLITE_SUFFIXES = (".sqlite", ".db")


class StateStore:
    """A state on disk with its lock: the part every store shares. Use around a run.

    A store loads the State, saves it whole, and records each acknowledged batch
    durably before the next is sent (``record_delivered``).
    """

    def __init__(
        self,
        path: Path,
        *,
        lock_timeout: float = 60.0,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.path = path
        self.lock_timeout = lock_timeout
        self._clock = clock
        self._sleep = sleep
        self._lock_fd: int | None = None

    # -- locking -------------------------------------------------------------------
    @property
    def lock_path(self) -> Path:
        return self.path.with_name(self.path.name + ".lock")

    def __enter__(self) -> StateStore:
        self.acquire()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.release()

    def acquire(self) -> None:
        """Take the exclusive lock, waiting up to ``lock_timeout``; then clean our leftovers."""
        folder = self.path.parent
        try:
            folder.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        except OSError as error:
            raise StateError(
                f"{folder}: cannot create the state folder or its lock ({error.strerror}); make it writable or pass --state elsewhere"
            ) from None
        deadline = self._clock() + self.lock_timeout
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError as error:
                if error.errno not in (errno.EAGAIN, errno.EACCES):
                    os.close(fd)
                    raise StateError(f"{self.lock_path}: cannot lock ({error.strerror})") from None
                if self._clock() >= deadline:
                    os.close(fd)
                    raise LockTimeout(
                        f"{self.path}: another notify-changes run holds the state lock after waiting "
                        f"{self.lock_timeout:g} s; let it finish (or raise --lock-timeout) and run again"
                    ) from None
                self._sleep(0.05)
        self._lock_fd = fd
        self._remove_leftovers()

    def release(self) -> None:
        if self._lock_fd is not None:
            os.close(self._lock_fd)  # closing the descriptor drops the flock
            self._lock_fd = None

    def _tmp_prefix(self) -> str:
        return f".{self.path.name}."

    def _remove_leftovers(self) -> None:
        """Temporary files a killed run left behind: only ours, only under the lock."""
        prefix = self._tmp_prefix()
        with contextlib.suppress(OSError):
            for entry in os.scandir(self.path.parent):
                if entry.name.startswith(prefix) and entry.name.endswith(_TMP_SUFFIX) and entry.is_file():
                    with contextlib.suppress(OSError):
                        os.unlink(entry.path)

    # -- the interface -------------------------------------------------------------
    def load(self) -> State | None:
        raise NotImplementedError

    def save(self, state: State) -> None:
        raise NotImplementedError

    def save_if_changed(self, state: State, original: bytes | None) -> bool:
        """Save unless the state's digest is ``original`` (a rerun leaves the file alone)."""
        if state_digest(state) == original:
            return False
        self.save(state)
        return True

    def record_delivered(self, state: State, endpoint: str, urls: Iterable[str], at: str) -> None:
        raise NotImplementedError


class JsonStore(StateStore):
    """The state as one JSON file (the default), with a delivery journal beside it."""

    @property
    def journal_path(self) -> Path:
        return journal_path(self.path)

    def load(self) -> State | None:
        """The recorded state, with the deliveries of a killed run's journal folded in."""
        state = load_state(self.path)
        if state is not None and self.journal_path.exists():
            self.save(state)  # load_state applied the journal: make it part of the file, then drop it
        return state

    def save_if_changed(self, state: State, original: bytes | None) -> bool:
        """Save unless the encoding has the digest ``original`` (a rerun leaves the file's bytes alone)."""
        data = encode_state(state)
        if _digest(data) == original and not self.journal_path.exists():
            return False
        self._write(data)
        return True

    def save(self, state: State) -> None:
        """Replace the state file atomically; on any failure the old file stays as it was.

        The delivery journal is folded into ``state`` by then, so it goes once the new
        file is in place.
        """
        self._write(encode_state(state))

    def _write(self, data: bytes) -> None:
        write_atomic(self.path, data, self._tmp_prefix())
        if self.journal_path.exists():
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.journal_path)
            _fsync_folder(self.path.parent)

    def record_delivered(self, state: State, endpoint: str, urls: Iterable[str], at: str) -> None:
        """An endpoint acknowledged these URLs: they leave its pending set, durably.

        Durably means one fsync'd line appended to the journal beside the state file,
        not a rewrite of a state that may hold a million URLs; the run's final save (or
        the next run's load) folds the journal in.
        """
        urls = list(urls)
        apply_delivery(state, endpoint, urls, at)
        line = orjson.dumps({"endpoint": endpoint, "at": at, "urls": urls})
        try:
            fd = os.open(self.journal_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, 0o644)
            try:
                os.write(fd, line + b"\n")
                os.fsync(fd)
            finally:
                os.close(fd)
        except OSError as error:
            raise StateError(f"{self.journal_path}: cannot record a delivery ({error.strerror}); the batch stays pending") from None


def apply_delivery(state: State, endpoint: str, urls: Iterable[str], at: str) -> None:
    items = state.pending.get(endpoint, {})
    for url in urls:
        items.pop(url, None)
        record = state.urls.get(url)
        if record is not None:
            record["last_submitted"] = at
    if at > state.updated:
        state.updated = at


def journal_path(path: Path) -> Path:
    return path.with_name(path.name + ".journal")


def _replay_journal(state: State, path: Path) -> None:
    """Apply the deliveries a killed run recorded after its last full save."""
    try:
        data = journal_path(path).read_bytes()
    except FileNotFoundError:
        return
    except OSError as error:
        raise StateError(f"{journal_path(path)}: cannot read the delivery journal ({error.strerror})") from None
    for line in data.split(b"\n"):
        try:
            entry = orjson.loads(line)
            endpoint, at, urls = entry["endpoint"], entry["at"], entry["urls"]
        except (ValueError, TypeError, KeyError):
            continue  # a line torn by the crash: that batch was not recorded, so it is resent
        if isinstance(endpoint, str) and isinstance(at, str) and isinstance(urls, list):
            apply_delivery(state, endpoint, [url for url in urls if isinstance(url, str)], at)


def load_state(path: Path) -> State | None:
    """Read a state file (and its delivery journal) without locking, as ``check`` does."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    except IsADirectoryError:
        raise StateError(f"{path}: is a folder; pass --state with a file path") from None
    except OSError as error:
        raise StateError(f"{path}: cannot read the state file ({error.strerror})") from None
    state = decode_state(data, str(path))
    _replay_journal(state, path)
    return state


def write_atomic(path: Path, data: bytes, tmp_prefix: str) -> None:
    """Temporary file in the same folder, fsync, rename, fsync of the folder."""
    folder = path.parent
    try:
        fd, tmp_name = tempfile.mkstemp(prefix=tmp_prefix, suffix=_TMP_SUFFIX, dir=folder)
    except OSError as error:
        raise StateError(f"{folder}: cannot write the state file there ({error.strerror}); make it writable") from None
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp_name, path)
    except BaseException as error:
        with contextlib.suppress(OSError):
            os.unlink(tmp_name)
        if isinstance(error, OSError):
            raise StateError(f"{path}: cannot write the state file ({error.strerror}); nothing was changed") from None
        raise
    _fsync_folder(folder)


def _fsync_folder(folder: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
