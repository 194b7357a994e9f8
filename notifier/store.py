"""The state file: what every URL's lastmod was at the last deploy, and what is pending.

Written atomically (a temporary file in the same folder, fsync, rename, fsync of the
folder) under an exclusive ``flock`` that the kernel releases if the process dies, so a
crash or a second concurrent run never leaves a torn or mixed file. The format is
documented in ``state/README.md`` and ``state/schema.json``.
"""

from __future__ import annotations

import array
import base64
import bisect
import contextlib
import errno
import fcntl
import itertools
import os
import tempfile
import time
import zlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypedDict, cast

import orjson

from notifier.errors import LockTimeout, StateError
from notifier.state_checks import (
    FORMAT_VERSION,
    check_header,
    check_part_meta,
    check_pending_group,
    check_records,
    check_run,
    check_v1_record,
    check_version,
    damaged,
)
from notifier.urls import origins_of

MAX_RUNS_KEPT = 20
_TMP_SUFFIX = ".tmp"

# A URL's record is a list, not an object: a million of them must fit in memory and load
# fast. [lastmod as written (or None), first_seen, last_submitted (or None)], and the page
# file's fingerprint as a fourth item when --site-dir fingerprints are kept.
Record = list[Any]
LASTMOD, FIRST_SEEN, LAST_SUBMITTED, FINGERPRINT = 0, 1, 2, 3
FIELDS = ("lastmod", "first_seen", "last_submitted", "fingerprint")


def new_record(
    lastmod: str | None, first_seen: str | None = None, last_submitted: str | None = None, fingerprint: str | None = None
) -> Record:
    record: Record = [lastmod, first_seen, last_submitted]
    if fingerprint is not None:
        record.append(fingerprint)
    return record


def fingerprint_of(record: Record) -> str | None:
    return record[FINGERPRINT] if len(record) > FINGERPRINT else None


class PendingItem(TypedDict):
    reason: str  # added | changed | removed | initial
    since: str


class RunRecord(TypedDict, total=False):
    at: str
    command: str
    added: int
    changed: int
    removed: int
    submitted: int
    pending: int
    exit_code: int


def loc_hash(loc: str) -> int:
    """A 64-bit fingerprint of a URL, stable across runs and machines (``hash()`` is not)."""
    data = loc.encode("utf-8", "surrogatepass")
    return zlib.crc32(data) << 32 | zlib.adler32(data)


def make_index(locs: Iterable[str]) -> bytes:
    """The sorted fingerprints of ``locs``: whether a part may hold a URL, without decoding it."""
    return array.array("Q", sorted(map(loc_hash, locs))).tobytes()


class Part:
    """The URLs recorded from one sitemap file, and what is known of that file.

    A part read from the state keeps its records as the encoded bytes until something
    asks for them (``urls()``): a deploy that changed one file of twenty decodes one.
    ``count``, ``missing`` (URLs without a lastmod), ``origins`` (``scheme://host`` in order
    of first appearance) and ``index`` (``make_index`` of its URLs) answer the rest.

    Three forms: encoded (``raw``, read from the state), decoded (``urls``), or, for a part
    a run made, a view (its URLs in order, their records in the run's one dict of records).
    """

    __slots__ = ("_array", "_index", "_index_text", "_raw", "_source", "_urls", "_view", "count", "digest", "missing", "name", "origins")

    def __init__(
        self,
        name: str,
        digest: str,
        urls: dict[str, Record] | None = None,
        *,
        raw: bytes | memoryview | None = None,
        count: int = 0,
        missing: int = 0,
        origins: list[str] | None = None,
        index: bytes | None = None,
        source: str = "",
        view: tuple[list[str], dict[str, Record]] | None = None,
    ) -> None:
        self.name, self.digest = name, digest
        self._urls, self._raw, self._source = urls, raw, source
        # a part made by this run: its URLs in order, their records in one dict for all parts
        self._view = view
        self._index = index
        self._index_text: str | None = None  # its base64, kept for the next save
        self._array: array.array[int] | None = None
        if urls is not None:  # counted here; an encoded part or a view is told its counts
            count, missing = len(urls), sum(1 for record in urls.values() if record[LASTMOD] is None)
            origins = origins if origins is not None else origins_of(urls)
        self.count, self.missing, self.origins = count, missing, origins or []

    @property
    def is_view(self) -> bool:
        return self._view is not None

    @property
    def decoded(self) -> bool:
        return self._urls is not None or self._view is not None

    def urls(self) -> dict[str, Record]:
        """Its records, decoded (and checked) on first use."""
        if self._view is not None:  # a new dict each time, the same record objects
            locs, records = self._view
            return {loc: records[loc] for loc in locs}
        if self._urls is None:
            self._urls = _decode_records(self._raw or b"{}", self._source)
        return self._urls

    def unload(self) -> None:
        """Drop the decoded records if their encoding is at hand (memory for the next file)."""
        if self._raw is not None:
            self._urls = None

    def drop(self, locs: set[str]) -> None:
        """It no longer holds these URLs."""
        if self._view is not None:
            self._view = ([loc for loc in self._view[0] if loc not in locs], self._view[1])
        else:
            urls = self.urls()
            for loc in locs:
                urls.pop(loc, None)
        self.touch()

    def touch(self) -> None:
        """Its records were changed in place: encode them again at the next save."""
        urls = self.urls()
        self._raw = None
        self._index = self._array = self._index_text = None
        self.count = len(urls)
        self.missing = sum(1 for record in urls.values() if record[LASTMOD] is None)

    @property
    def index(self) -> bytes:
        if self._index is None:
            self._index = make_index(self.urls())
        return self._index

    def fingerprints(self) -> array.array[int]:
        """``index`` as numbers."""
        if self._array is None:
            self._array = array.array("Q")
            self._array.frombytes(self.index)
        return self._array

    def may_hold(self, loc: str) -> bool:
        """False when ``loc`` is surely not recorded here; True when it may be (then decode)."""
        index = self.fingerprints()
        value = loc_hash(loc)
        position = bisect.bisect_left(index, value)
        return position < len(index) and index[position] == value

    def take(self, walk: Iterator[tuple[str, Record]]) -> dict[str, Record] | None:
        """Its records as the next ``count`` items of a walk through the run's records, when
        they are exactly its URLs in order (see encode_chunks); else None (then ``urls()``)."""
        assert self._view is not None
        locs = self._view[0]
        taken = dict(itertools.islice(walk, len(locs)))
        return taken if list(taken) == locs else None  # the same objects: a pointer check each

    def encoded_urls(self) -> bytes | memoryview:
        if self._raw is not None:
            return self._raw
        if self._view is not None:
            return orjson.dumps(self.urls())
        return orjson.dumps(self._urls if self._urls is not None else {})

    def meta(self) -> dict[str, Any]:
        if self._index_text is None or self._index is None:
            self._index_text = base64.b64encode(self.index).decode("ascii")
        return {
            "name": self.name,
            "digest": self.digest,
            "count": self.count,
            "missing": self.missing,
            "origins": self.origins,
            "index": self._index_text,
        }


@dataclass
class State:
    """The whole recorded state. ``pending`` is per endpoint: endpoint -> url -> why."""

    parts: list[Part] = field(default_factory=list)  # the sitemap files read last deploy, with their URLs
    pending: dict[str, dict[str, PendingItem]] = field(default_factory=dict)
    runs: list[RunRecord] = field(default_factory=list)
    created: str = ""
    updated: str = ""
    # loc -> when an endpoint acknowledged it, not yet written into its part's record
    submitted: dict[str, str] = field(default_factory=dict)
    # batches acknowledged, not yet folded in (see settle): (endpoint, urls, at, sent by this run)
    deliveries: list[tuple[str, list[str], str, bool]] = field(default_factory=list)
    # loc -> record of every URL in the parts this run made (see Part's view)
    records: dict[str, Record] | None = None

    @classmethod
    def from_urls(cls, urls: dict[str, Record], **fields: Any) -> State:
        """A state whose URLs all belong to one part with no file behind it (tests, conversions)."""
        return cls(parts=[Part("", "", dict(urls))] if urls else [], **fields)

    def url_count(self) -> int:
        return sum(part.count for part in self.parts)

    def all_urls(self) -> dict[str, Record]:
        """Every recorded URL, decoding every part (small states, tests, full checks)."""
        merged: dict[str, Record] = {}
        for part in self.parts:
            for loc, record in part.urls().items():
                merged.setdefault(loc, record)
        return merged

    def check_parts_holding(self, locs: Iterable[str]) -> None:
        """Decode, and so check, every recorded part that may hold one of ``locs``: a damaged
        record must stop a run before its first request, not once an answer is recorded."""
        unread = [part for part in self.parts if not part.decoded]
        if not unread:
            return
        wanted = set(map(loc_hash, locs))
        for part in unread:
            if not wanted.isdisjoint(part.fingerprints()):
                part.urls()

    def settle(self) -> None:
        """Fold in the acknowledged batches: they leave their endpoint's pending set, and their
        URLs' records get ``last_submitted``. Batches come in pending order, which for what
        this run announced is the order of ``records``: one walk through both, in step,
        finds each record with no lookup by URL (at a million, each lookup is a cache miss)."""
        by_endpoint: dict[str, list[tuple[list[str], str]]] = {}
        replayed: set[str] = set()
        for endpoint, urls, at, live in self.deliveries:
            by_endpoint.setdefault(endpoint, []).append((urls, at))
            if not live:
                replayed.add(endpoint)
        self.deliveries = []
        for endpoint, batches in by_endpoint.items():
            items = self.pending.get(endpoint)
            if items:
                if endpoint not in replayed and sum(len(urls) for urls, _ in batches) == len(items):
                    items.clear()  # this run's batches are disjoint slices of the pending set: all went
                else:
                    for urls, _ in batches:
                        for url in urls:
                            items.pop(url, None)
            self._stamp(batches)
        self.settle_submitted()

    def _stamp(self, batches: list[tuple[list[str], str]]) -> None:
        """last_submitted for one endpoint's acknowledged batches (the latest time wins)."""
        records = self.records or {}
        walk: Iterator[tuple[str, Record]] | None = iter(records.items()) if records else None
        for urls, at in batches:
            for url in urls:
                record = None
                if walk is not None:
                    for loc, candidate in walk:
                        if loc is url or loc == url:
                            record = candidate
                            break
                    else:  # not in step (an older pending URL): look the rest up
                        walk = None
                if record is None:
                    record = records.get(url)
                if record is None:  # recorded in a part this run did not make: see settle_submitted
                    if self.submitted.get(url, "") < at:
                        self.submitted[url] = at
                elif record[LAST_SUBMITTED] is None or record[LAST_SUBMITTED] < at:
                    record[LAST_SUBMITTED] = at

    def settle_submitted(self) -> None:
        """Write the acknowledged times into the records of the parts that hold those URLs."""
        left = self.submitted
        wanted: set[int] | None = None
        for part in self.parts:
            if not left:
                break
            if part.is_view:  # its records are in self.records: done above
                continue
            if not part.decoded:  # look in its index before decoding it
                if wanted is None:
                    wanted = {loc_hash(loc) for loc in left}
                if wanted.isdisjoint(part.fingerprints()):
                    continue
            urls = part.urls()
            hits = [loc for loc in left if loc in urls] if len(left) < len(urls) else [loc for loc in urls if loc in left]
            for loc in hits:
                urls[loc][LAST_SUBMITTED] = left.pop(loc)
            if hits:
                part.touch()
        self.submitted = {}


def _decode_records(raw: bytes | memoryview, name: str) -> dict[str, Record]:
    try:
        urls = orjson.loads(raw)
    except ValueError:
        raise damaged(name, "a part's URL records are not valid JSON") from None
    return check_records(urls, name)


def encode_chunks(state: State) -> Iterator[bytes | memoryview]:
    """The exact bytes written for ``state``, in pieces: compact UTF-8 JSON, one part a line.

    orjson writes the same bytes as ``json.dumps(..., ensure_ascii=False,
    separators=(",", ":"))``, ten times faster. The layout (a header line, then one line
    per part, its records last) lets the next run leave the records of unchanged parts
    undecoded; any other layout of the same JSON reads too, just slower.
    """
    state.settle()
    header: dict[str, Any] = {"version": FORMAT_VERSION}
    if state.created:
        header["created"] = state.created
    if state.updated:
        header["updated"] = state.updated
    yield orjson.dumps(header)[:-1] + b',"pending":{'
    yield from _pending_chunks(state.pending)
    yield b'},"runs":' + orjson.dumps(state.runs[-MAX_RUNS_KEPT:]) + b',"parts":[\n'
    last = len(state.parts) - 1
    for number, (part, encoded) in enumerate(encoded_parts(state)):
        yield orjson.dumps(part.meta())[:-1] + b',"urls":'
        yield encoded
        yield b"},\n" if number < last else b"}\n"
    yield b"]}\n"


def encode_state(state: State) -> bytes:
    return b"".join(encode_chunks(state))


def decode_state(data: bytes, name: str) -> State:
    """Parse and check a state file's bytes; anything unexpected is a StateError, never a crash.

    The usual layout (``encode_chunks``) is read part by part, each part's records left
    encoded until asked for (and checked then: see ``decode_parts_holding``); anything else
    is parsed and checked whole.
    """
    state = _decode_lazily(data, name)
    if state is not None:
        return state
    try:
        document = orjson.loads(data)
    except (ValueError, RecursionError):
        raise damaged(name, "not valid JSON (a truncated or corrupt state file)") from None
    if not isinstance(document, dict) or "version" not in document:
        raise damaged(name, 'not a notify-changes state file (no "version")')
    version = check_version(document["version"], name)
    check_header(document, name, required=("pending", "runs", "parts") if version >= 2 else ("urls",))
    state = _state_from_header(document, name, version)
    if version == 1:
        state.parts = _parts_from_v1(document, name)
        return state
    for part in document["parts"]:
        meta = check_part_meta(part, name)
        if "urls" not in part:
            raise damaged(name, f'part {meta.name or "(unnamed)"} has no "urls"')
        urls = check_records(part["urls"], name)
        state.parts.append(Part(meta.name, meta.digest, urls, origins=meta.origins))
    return state


def _decode_lazily(data: bytes, name: str) -> State | None:
    """The state from ``encode_chunks``' layout, or None for any other text (parsed whole)."""
    view = memoryview(data)
    end = data.find(b"\n")
    if end < 0 or not data.startswith(b'{"version":2') or not data.endswith(b"]}\n"):
        return None
    head = view[:end]
    if bytes(head[-10:]) != b',"parts":[':
        return None
    try:
        header = orjson.loads(bytes(head[:-10]) + b"}")
    except ValueError:
        return None
    if not isinstance(header, dict):
        return None
    version = check_version(header.get("version"), name)
    check_header(header, name, required=("pending", "runs"))
    state = _state_from_header(header, name, version)
    pos, size = end + 1, len(data)
    while pos < size - 3:  # the last line is b"]}\n"
        end = data.find(b"\n", pos)
        if end < 0:
            return None
        stop = end - 1 if data[end - 1] == 0x2C else end  # without the comma between parts
        split = data.find(b',"urls":{', pos, stop)
        if split < 0 or data[stop - 2 : stop] != b"}}":
            return None
        try:
            meta = check_part_meta(orjson.loads(bytes(view[pos:split]) + b"}"), name)
        except ValueError:
            return None
        raw = view[split + 8 : stop - 1]
        pos = end + 1
        state.parts.append(
            Part(
                meta.name,
                meta.digest,
                raw=raw,
                count=meta.count,
                missing=meta.missing,
                origins=meta.origins,
                index=meta.index,
                source=name,
            )
        )
    return state


def encoded_parts(state: State) -> Iterator[tuple[Part, bytes | memoryview]]:
    """Each part with its records encoded, in order. The parts this run made list their
    URLs in the order ``state.records`` holds them: one walk through it yields each part's
    records in turn, no lookup by URL (at a million, each lookup is a cache miss)."""
    walk = iter(state.records.items()) if state.records is not None else None
    for part in state.parts:
        taken = part.take(walk) if walk is not None and part.is_view else None
        yield part, orjson.dumps(taken) if taken is not None else part.encoded_urls()


def _pending_chunks(pending: dict[str, dict[str, PendingItem]]) -> Iterator[bytes | memoryview]:
    """The "pending" object's members, its URL lists a few megabytes at a time (a first run
    has a million pending URLs: never one string of them all)."""
    endpoints = [(endpoint, items) for endpoint, items in pending.items() if items]
    for number, (endpoint, items) in enumerate(endpoints):
        yield (b"," if number else b"") + orjson.dumps(endpoint) + b":["
        for count, group in enumerate(grouped_pending(items)):
            urls = group.pop("urls")
            yield (b"," if count else b"") + orjson.dumps(group)[:-1] + b',"urls":['
            for start in range(0, len(urls), 65_536):
                yield (b"," if start else b"") + memoryview(orjson.dumps(urls[start : start + 65_536]))[1:-1]
            yield b"]}"
        yield b"]"


def grouped_pending(items: dict[str, PendingItem]) -> list[dict[str, Any]]:
    """A pending set as the file keeps it: the URLs that wait for one reason since one time
    together, in order (a first run's million share one reason and one time)."""
    groups: dict[tuple[str, str], dict[str, Any]] = {}
    last: PendingItem | None = None
    urls: list[str] = []
    for url, item in items.items():
        if item is not last:
            key = (item["reason"], item["since"])
            group = groups.get(key)
            if group is None:
                group = groups[key] = {"reason": key[0], "since": key[1], "urls": []}
            urls, last = group["urls"], item
        urls.append(url)
    return list(groups.values())


def _state_from_header(document: dict[str, Any], name: str, version: int) -> State:
    """Pending, runs and timestamps, checked (``check_header`` has seen their types)."""
    pending = document.get("pending", {})
    shared_items: dict[tuple[str, str], PendingItem] = {}
    for endpoint, items in pending.items():
        if version == 1:  # format 1: url -> item
            if type(items) is not dict:
                raise damaged(name, f"pending[{endpoint}] is malformed")
            groups = [
                {"reason": item.get("reason"), "since": item.get("since"), "urls": [url]} if type(item) is dict else {}
                for url, item in items.items()
            ]
        else:
            groups = items if type(items) is list else [{}]
        pending[endpoint] = waiting = {}
        for group in groups:
            reason, since, urls = check_pending_group(group, name, endpoint)
            item = shared_items.setdefault((reason, since), PendingItem(reason=reason, since=since))
            waiting.update(dict.fromkeys(urls, item))
    return State(
        pending=pending,
        runs=cast(list[RunRecord], [check_run(run, name) for run in document.get("runs", [])]),
        created=document.get("created", ""),
        updated=document.get("updated", ""),
    )


def _parts_from_v1(document: dict[str, Any], name: str) -> list[Part]:
    """Format 1 kept one "urls" object, each record naming its part: regroup them."""
    metas = [check_part_meta(part, name, full=False) for part in document.get("parts", [])]
    grouped: list[dict[str, Record]] = [{} for _ in metas]
    loose: dict[str, Record] = {}
    for loc, record in document["urls"].items():
        lastmod, first_seen, last_submitted, fingerprint, number = check_v1_record(loc, record, name)
        target = grouped[number] if type(number) is int and 0 <= number < len(grouped) else loose
        target[loc] = new_record(lastmod, first_seen, last_submitted, fingerprint)
    result = [Part(meta.name, meta.digest, records) for meta, records in zip(metas, grouped, strict=True)]
    if loose:
        result.append(Part("", "", loose))  # no file named: parsed again next time
    return result


def follow_link(path: Path) -> Path:
    """The real file behind a state path that is a symlink (state kept on a mounted volume,
    say): the new file replaces the target, not the link, and the lock and journal sit beside
    the target, where every run that reaches it through any link finds them."""
    return Path(os.path.realpath(path)) if path.is_symlink() else path


def open_store(path: Path, **options: Any) -> StateStore:
    """The store for ``path``: SQLite for a ``.sqlite`` or ``.db`` name, else the JSON file."""
    sqlite = path.suffix in SQLITE_SUFFIXES  # by the name the user gave, not the link's target
    path = follow_link(path)
    if sqlite:
        from notifier.sqlite_store import SqliteStore

        return SqliteStore(path, **options)
    return JsonStore(path, **options)


def read_state(path: Path) -> State | None:
    """The recorded state without locking or writing (``check``, ``--dry-run``), either store."""
    sqlite = path.suffix in SQLITE_SUFFIXES
    path = follow_link(path)
    if sqlite:
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

    def record_delivered(self, state: State, endpoint: str, urls: Iterable[str], at: str) -> None:
        raise NotImplementedError

    @property
    def delivery_log(self) -> str:
        """Where acknowledged batches are kept until a save folds them in (said in messages)."""
        raise NotImplementedError


class JsonStore(StateStore):
    """The state as one JSON file (the default), with a delivery journal beside it."""

    @property
    def journal_path(self) -> Path:
        return journal_path(self.path)

    @property
    def delivery_log(self) -> str:
        return f"the delivery journal {self.journal_path}"

    def load(self) -> State | None:
        """The recorded state, with the deliveries of a killed run's journal folded in."""
        state = load_state(self.path)
        if state is not None and self.journal_path.exists():
            self.save(state)  # load_state applied the journal: make it part of the file, then drop it
        return state

    def save(self, state: State) -> None:
        """Replace the state file atomically; on any failure the old file stays as it was.

        The delivery journal is folded into ``state`` by then, so it goes once the new
        file is in place.
        """
        write_atomic(self.path, encode_chunks(state), self._tmp_prefix())
        self._drop_journal()

    def _drop_journal(self) -> None:
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
        apply_delivery(state, endpoint, urls, at, live=True)
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


def apply_delivery(state: State, endpoint: str, urls: Iterable[str], at: str, *, live: bool = False) -> None:
    """An endpoint acknowledged ``urls``; folded into the state by ``State.settle``. ``live``:
    a batch this run made from the pending set (so its URLs are there, once)."""
    state.deliveries.append((endpoint, list(urls), at, live))
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
    state.settle()


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


class SaveFailed(StateError):
    """The state could not be rewritten; the file on disk is the one from before the save."""

    def __init__(self, path: Path, reason: str) -> None:
        super().__init__(f"{path}: cannot write the state file ({reason}); the file on disk was left as it was")
        self.path, self.reason = path, reason


def write_atomic(path: Path, chunks: Iterable[bytes | memoryview], tmp_prefix: str) -> None:
    """Temporary file in the same folder, fsync, rename, fsync of the folder."""
    folder = path.parent
    try:
        fd, tmp_name = tempfile.mkstemp(prefix=tmp_prefix, suffix=_TMP_SUFFIX, dir=folder)
    except OSError as error:
        raise StateError(f"{folder}: cannot write the state file there ({error.strerror}); make it writable") from None
    try:
        with os.fdopen(fd, "wb") as handle:
            for chunk in chunks:
                handle.write(chunk)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp_name, path)
    except BaseException as error:
        with contextlib.suppress(OSError):
            os.unlink(tmp_name)
        if isinstance(error, OSError):
            raise SaveFailed(path, error.strerror or str(error)) from None
        raise
    _fsync_folder(folder)


def _fsync_folder(folder: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
