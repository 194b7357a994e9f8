"""The state as one JSON file (the default): its encoder and its lazy decoder, which share
one byte layout, the delivery journal beside it, and the store that writes them.

The format is documented in ``state/README.md`` and ``state/schema.json``.
"""

from __future__ import annotations

import contextlib
import functools
import os
import weakref
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, cast, overload

import orjson

from notifier.errors import StateError
from notifier.paths import NotRegularFile, cannot, open_regular
from notifier.store.checks import (
    check_backoff,
    check_count,
    check_header,
    check_key_checks,
    check_part_meta,
    check_pending_group,
    check_records,
    check_run,
    check_sent_today,
    damaged,
)
from notifier.store.durable import DeliveryNotRecorded, StateStore, follow_link, fsync_folder, write_atomic
from notifier.store.ledger import LedgerEntry
from notifier.store.ledgerfile import append_ledger, json_ledger_entries
from notifier.store.migrate import FORMAT_VERSION, check_version, parts_from_v1, v1_pending_groups
from notifier.store.model import MAX_RUNS_KEPT, NewPart, Part, PendingItem, RecordedPart, RunRecord, State, apply_delivery, grouped_pending


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
    if state.backoff:  # written only when some endpoint asked to wait: older readers' files stay the same bytes
        header["backoff"] = dict(sorted(state.backoff.items()))
    if state.sent_today:  # only with [announce] per-day
        header["sent_today"] = dict(sorted(state.sent_today.items()))
    if state.key_checks:  # only once a run has sent a batch: an older state's bytes stay the same until then
        header["key_checks"] = dict(sorted(state.key_checks.items()))
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
    state = _decode_lazily(lambda offset, length: data[offset : offset + length], len(data), name, view=memoryview(data))
    return state if state is not None else _decode_whole(data, name)


def _decode_whole(data: bytes, name: str) -> State:
    """A state file in any other layout of the same JSON, parsed and checked whole."""
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
        state.parts = parts_from_v1(document, name)
        return state
    for part in document["parts"]:
        meta = check_part_meta(part, name)
        if "urls" not in part:
            raise damaged(name, f'part {meta.name or "(unnamed)"} has no "urls"')
        urls = check_records(part["urls"], name)
        check_count(urls, meta.count, name, meta.name)
        state.parts.append(RecordedPart(meta.name, meta.digest, urls, origins=meta.origins, url_hash_index=meta.url_hash_index))
    return state


# (offset, length) -> the bytes there: a slice of the bytes in memory, or a read of the file
ReadAt = Callable[[int, int], bytes]
# (offset, length) -> the same bytes read in another process, or None (see read_again)
ReadElsewhere = Callable[[int, int], bytes | None]
_RECORDS_START = b',"urls":{'
_SCAN_CHUNK = 1 << 24
_HEAD = 1 << 20  # read first of a part's line: its fields, with a 50,000-URL index, are 540 KB


def _decode_lazily(
    read: ReadAt, size: int, name: str, *, view: memoryview | None = None, elsewhere: ReadElsewhere | None = None
) -> State | None:
    """The state from ``encode_chunks``' layout, or None for any other text (parsed whole).

    The file is scanned once, in chunks, for its line ends, and never held whole (a
    ten-million-URL state is over a gigabyte); of each part's line only the head is read
    here. Its records are then ``view``'s slice, or, reading a file, read from it when first
    needed and let go after use: memory holds the parts being compared, not the state.
    """
    ends = _line_ends(read, size)
    if len(ends) < 2 or ends[-1] != size - 1 or ends[-2] != size - 4 or read(size - 3, 3) != b"]}\n":
        return None  # the last line is b"]}"
    first = read(0, ends[0])
    if not first.startswith(b'{"version":2') or not first.endswith(b',"parts":['):
        return None
    try:
        header = orjson.loads(first[:-10] + b"}")
    except ValueError:
        return None
    if not isinstance(header, dict):
        return None
    version = check_version(header.get("version"), name)
    check_header(header, name, required=("pending", "runs"))
    state = _state_from_header(header, name, version)
    spans: list[tuple[int, int]] = []  # each part's records: offset and length

    def fetch(row: int) -> bytes:
        offset, length = spans[row]
        records = read(offset, length)
        if len(records) != length:
            raise damaged(name, "the file was cut while this run read it")
        return records

    for start, end in zip((previous + 1 for previous in ends), ends[1:-1], strict=False):  # each part line
        head = _head(read, start, end)
        tail = read(end - 3, 3)
        stop, closing = (end - 1, tail[:2]) if tail[2:] == b"," else (end, tail[1:])
        if head is None or closing != b"}}" or start + len(head) > stop - 8:
            return None
        split = start + len(head)
        try:
            meta = check_part_meta(orjson.loads(head + b"}"), name)
        except ValueError:
            return None
        spans.append((split + 8, stop - 1 - split - 8))
        offset, length = spans[-1]
        state.parts.append(
            RecordedPart(
                meta.name,
                meta.digest,
                raw=view[offset : offset + length] if view is not None else None,
                fetch=fetch if view is None else None,
                row=len(spans) - 1 if view is None else None,
                elsewhere=functools.partial(elsewhere, offset, length) if elsewhere is not None else None,
                count=meta.count,
                missing=meta.missing,
                origins=meta.origins,
                url_hash_index=meta.url_hash_index,
                source=name,
            )
        )
    return state


def read_again(path: str, identity: tuple[int, int, int, int], offset: int, length: int) -> bytes | None:
    """A span of the state file read by another process (a worker comparing a part): None
    unless the file is still the one loaded (a run that saved meanwhile replaced it)."""
    try:
        with open(path, "rb") as handle:
            status = os.fstat(handle.fileno())
            if (status.st_dev, status.st_ino, status.st_size, status.st_mtime_ns) != identity:
                return None
            data = os.pread(handle.fileno(), length, offset)
    except OSError:
        return None
    return data if len(data) == length else None


def _line_ends(read: ReadAt, size: int) -> list[int]:
    """Where the lines end: one pass over the file, a chunk at a time (at memchr speed)."""
    ends: list[int] = []
    for offset in range(0, size, _SCAN_CHUNK):
        chunk = read(offset, _SCAN_CHUNK)
        at = chunk.find(b"\n")
        while at >= 0:
            ends.append(offset + at)
            at = chunk.find(b"\n", at + 1)
    return ends


def _head(read: ReadAt, start: int, end: int) -> bytes | None:
    """A part line's head: its fields before ``,"urls":{``, or None when they are not as
    ``Part.meta`` writes them. The URL-hash index comes last and its base64 holds no quote,
    so the quote that closes it is found at memchr speed, never by searching the records."""
    head = read(start, min(_HEAD, end - start))
    while True:
        key = head.find(b'"index":"')
        close = head.find(b'"', key + 9) if key >= 0 else -1
        if (close >= 0 and len(head) >= close + 1 + len(_RECORDS_START)) or start + len(head) >= end:
            break
        head += read(start + len(head), min(2 * len(head), end - start - len(head)))  # a longer head: read on
    if close < 0 or head[close + 1 : close + 1 + len(_RECORDS_START)] != _RECORDS_START:
        return None
    return head[: close + 1]


@overload
def encoded_parts(state: State) -> Iterator[tuple[Part, bytes | memoryview]]: ...
@overload
def encoded_parts(state: State, keep: Callable[[Part], bool]) -> Iterator[tuple[Part, bytes | memoryview | None]]: ...
def encoded_parts(state: State, keep: Callable[[Part], bool] | None = None) -> Iterator[tuple[Part, bytes | memoryview | None]]:
    """Each part with its records encoded, in order (None for a part ``keep`` says its store
    holds already). The parts this run made list their URLs in the order ``state.records``
    holds them: one walk through it yields each part's records in turn, no lookup by URL (at
    a million, each lookup is a cache miss)."""
    walk = iter(state.records.items()) if state.records is not None else None
    for part in state.parts:
        if keep is not None and keep(part):
            yield part, None
            continue
        taken = part.take(walk) if walk is not None and isinstance(part, NewPart) else None
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


def _state_from_header(document: dict[str, Any], name: str, version: int) -> State:
    """Pending, runs and timestamps, checked (``check_header`` has seen their types)."""
    pending = document.get("pending", {})
    shared_items: dict[tuple[str, str], PendingItem] = {}
    for endpoint, items in pending.items():
        groups = v1_pending_groups(items, name, endpoint) if version == 1 else items if type(items) is list else [{}]
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
        backoff=check_backoff(document.get("backoff", {}), name),
        sent_today=check_sent_today(document.get("sent_today", {}), name),
        key_checks=check_key_checks(document.get("key_checks", {}), name),
    )


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
            fsync_folder(self.path.parent)

    def record_ledger(self, entries: list[LedgerEntry], keep: int) -> None:
        """Append one line a batch to ``STATE.ledger``, keeping the newest ``keep`` (ledgerfile)."""
        append_ledger(ledger_path(self.path), entries, keep, self._tmp_prefix())

    def record_delivered(
        self, state: State, endpoint: str, urls: Iterable[str], at: str, ledger: Sequence[LedgerEntry] = (), keep: int = 0
    ) -> bool:
        """An endpoint acknowledged these URLs: they leave its pending set, durably.

        Durably means one fsync'd line appended to the journal beside the state file,
        not a rewrite of a state that may hold a million URLs; the run's final save (or
        the next run's load) folds the journal in. The ledger is another file (a second
        fsync a batch, or the journal holding the entries for the save to copy: their bytes
        written twice): it is written once, at the end (False: ``ledger`` is left to
        ``record_ledger``).
        """
        urls = list(urls)
        apply_delivery(state, endpoint, urls, at, live=True)
        line = orjson.dumps({"endpoint": endpoint, "at": at, "urls": urls})
        try:
            fd = open_regular(self.journal_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
            try:
                os.write(fd, line + b"\n")
                os.fsync(fd)
            finally:
                os.close(fd)
        except OSError as error:
            raise DeliveryNotRecorded(self.journal_path, endpoint, len(urls), error.strerror or str(error)) from None
        return False


def ledger_path(path: Path) -> Path:
    return path.with_name(path.name + ".ledger")


def read_json_ledger(path: Path) -> list[LedgerEntry]:
    """The ledger beside a JSON state, oldest first; a damaged line is skipped."""
    return list(json_ledger_entries(ledger_path(follow_link(path))))


def journal_path(path: Path) -> Path:
    return path.with_name(path.name + ".journal")


def _replay_journal(state: State, path: Path) -> None:
    """Apply the deliveries a killed run recorded after its last full save."""
    try:
        with os.fdopen(open_regular(journal_path(path), os.O_RDONLY), "rb") as handle:
            data = handle.read()
    except FileNotFoundError:
        return
    except OSError as error:
        raise StateError(f"{journal_path(path)}: {cannot('read the delivery journal', error)}") from None
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
    """Read a state file (and its delivery journal) without locking, as ``check`` does. The
    usual layout is read lazily, through a handle kept open while the state lives."""
    try:
        handle = os.fdopen(open_regular(path, os.O_RDONLY), "rb")  # a FIFO would block for ever
    except FileNotFoundError:
        return None
    except NotRegularFile as error:
        raise StateError(f"{path}: {error.strerror}; pass --state with the path of a state file") from None
    except OSError as error:
        raise StateError(f"{path}: {cannot('read the state file', error)}") from None
    name = str(path)
    try:
        fd = handle.fileno()
        status = os.fstat(fd)
        again = functools.partial(read_again, str(path), (status.st_dev, status.st_ino, status.st_size, status.st_mtime_ns))
        state = _decode_lazily(lambda offset, length: os.pread(fd, length, offset), status.st_size, name, elsewhere=again)
        if state is None:  # another layout: its lines were scanned already, so parse it whole
            handle.seek(0)
            state = _decode_whole(handle.read(), name)
            handle.close()
        else:
            weakref.finalize(state, handle.close)
    except OSError as error:
        handle.close()
        raise StateError(f"{path}: {cannot('read the state file', error)}") from None
    except BaseException:
        handle.close()
        raise
    _replay_journal(state, path)
    return state
