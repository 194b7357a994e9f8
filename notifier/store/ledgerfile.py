"""The JSON store's ledger file, ``STATE.ledger``: one line a batch, appended, trimmed and
read as a stream.

A ledger of big batches is hundreds of megabytes (a 10,000-URL batch is a line of about a
megabyte), so nothing here holds it whole: a run appends its lines and counts the file's
lines a megabyte at a time; a trim copies the newest lines a line at a time; a reader gets
one entry after the other. Memory is a line, whatever the file's size. The ledger is opened
only when it is a regular file (``paths.open_regular``): a FIFO put in its place would
block a run after its last batch, and ``state history``, for ever.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, cast

import orjson

from notifier.errors import StateError
from notifier.paths import cannot, open_regular
from notifier.store.durable import write_atomic, write_chunks
from notifier.store.ledger import LedgerEntry, is_entry

MAX_LINE = 32 << 20  # bytes: a batch's line is at most 10,000 URLs of 2,048 characters (21 MB); longer is damage, skipped
_CHUNK = 1 << 20


def append_ledger(path: Path, entries: list[LedgerEntry], keep: int, tmp_prefix: str) -> None:
    """Append one line a batch; past twice ``keep`` lines, rewrite the file (atomically) with
    the newest ``keep``: a few hundred bytes a batch, bounded, and never read whole."""
    fd = open_regular(path, os.O_RDWR | os.O_CREAT | os.O_APPEND)  # read too: its last byte
    with os.fdopen(fd, "ab") as handle:
        size = os.fstat(fd).st_size
        if size and os.pread(fd, 1, size - 1) != b"\n":  # a line torn by a crash: the new one starts on a line of its own
            handle.write(b"\n")
        write_chunks(handle, (orjson.dumps(each, option=orjson.OPT_APPEND_NEWLINE) for each in entries))
        handle.flush()
        os.fsync(handle.fileno())
    count = line_count(path) if size else len(entries)  # a new file holds the lines just written: not read back
    if count > 2 * keep:  # counted, not parsed: a trim is rare, a run is not
        write_atomic(path, _entry_lines(path, skip=count - keep), tmp_prefix)


def line_count(path: Path) -> int:
    """The lines of a file, a megabyte at a time."""
    count, buffer = 0, bytearray(_CHUNK)
    with os.fdopen(open_regular(path, os.O_RDONLY), "rb", buffering=0) as handle:
        while size := handle.readinto(buffer):
            count += buffer.count(b"\n", 0, size)
    return count


def _entry_lines(path: Path, skip: int) -> Iterator[bytes]:
    """The file's lines after the first ``skip`` that are entries, one at a time."""
    with os.fdopen(open_regular(path, os.O_RDONLY), "rb") as handle:
        for number, line in enumerate(_lines(handle)):
            if number >= skip and _entry(line) is not None:
                yield line if line.endswith(b"\n") else line + b"\n"


def json_ledger_entries(path: Path, damaged: Callable[[], None] | None = None) -> Iterator[LedgerEntry]:
    """The entries of the ledger file ``path``, oldest first, one at a time; a damaged line
    is skipped (nothing decides on the ledger), and ``damaged`` called for it (a blank line
    is no damage). None there: no entry."""
    try:
        handle = os.fdopen(open_regular(path, os.O_RDONLY), "rb")
    except FileNotFoundError:
        return
    except OSError as error:
        raise StateError(f"{path}: cannot read the ledger ({error.strerror}); remove it, the next run starts a new one") from None
    with handle:
        try:
            for line in _lines(handle):
                entry = _entry(line)
                if entry is not None:
                    yield entry
                elif damaged is not None and line.strip():
                    damaged()
        except OSError as error:
            raise StateError(f"{path}: {cannot('read the ledger', error)}") from None


def _lines(handle: IO[bytes]) -> Iterator[bytes]:
    """The lines of ``handle``; one longer than ``MAX_LINE`` (no batch writes one) is passed
    over without being held, as an empty line."""
    while line := handle.readline(MAX_LINE):
        if len(line) == MAX_LINE and not line.endswith(b"\n"):
            while (rest := handle.readline(_CHUNK)) and not rest.endswith(b"\n"):
                pass
            line = b"\n"
        yield line


def _entry(line: bytes) -> LedgerEntry | None:
    with contextlib.suppress(orjson.JSONDecodeError):
        value = orjson.loads(line)
        if is_entry(value):
            return cast(LedgerEntry, value)
    return None
