"""A check's comparison of one recorded file, done on the worker that parsed it.

At ten million URLs the main process was the bound of a check: it decoded every part's
records, checked them, and compared fifty thousand rows a file while the workers parsed.
Now the worker that parses a part also reads that part's records from the state
(``PartReader``: the JSON file or the SQLite row, read again there), decodes and checks
them as a load would, and hands back only what the diff needs (``Condensed``): the rows
whose lastmod is not the one recorded (new to the file, changed, or waiting at an
endpoint), their records, the records of the URLs the file no longer lists, and its URLs
without a lastmod. Every other URL it lists is listed with the lastmod recorded for it,
and stays out of the main process: ``Listed`` answers for it.

A URL's record is in one part only (a run records a URL's first listing), so a URL a
condensed file lists as recorded can be listed by another file only where that file lists
it as new to itself: ``DiffBuilder`` looks for exactly those as each file comes in.
"""

from __future__ import annotations

import itertools
import operator
from collections.abc import Collection, Container, Iterable, Iterator, Mapping, Sequence
from typing import NamedTuple

from notifier.sitemap.files import Row, SitemapFile
from notifier.store import Part, PartReader, Record, recorded_lastmods
from notifier.urlhash import loc_hash

_ABSENT = object()  # no record: unequal to any lastmod, None included
_LOC, _LASTMOD = operator.itemgetter(0), operator.itemgetter(1)  # of a row


class Condensed(NamedTuple):
    """What a worker hands back of a recorded file it compared (``condense``)."""

    others: list[Row]  # the rows not as recorded (new to the file, another lastmod, waiting), in order
    records: dict[str, Record]  # the records of those of them the file's part holds
    unlisted: dict[str, Record]  # the records of the URLs the file no longer lists
    missing: list[str]  # its URLs without a lastmod, in order
    listed: int  # how many URLs it lists (each once)


def condense(info: SitemapFile, rows: list[Row], data: tuple[PartReader, frozenset[str]]) -> Condensed | None:
    """On a worker: the file's rows compared with its part's records. None (hand over every
    row) when the file lists a URL twice, or the state was replaced since it was loaded."""
    reader, waiting = data
    fresh = dict.fromkeys(map(_LOC, rows))
    if len(fresh) != len(rows):
        return None
    recorded = reader.records()
    if recorded is None:
        return None
    others = differing(rows, fresh, recorded, waiting)
    records = {row[0]: recorded[row[0]] for row in others if row[0] in recorded}
    unrecorded = len(others) - len(records)
    unlisted = {loc: record for loc, record in recorded.items() if loc not in fresh} if len(fresh) - unrecorded < len(recorded) else {}
    return Condensed(others, records, unlisted, without_lastmod(rows), len(fresh))


def differing(rows: Sequence[Row], locs: Collection[str], recorded: Mapping[str, Record], waiting: Container[str]) -> list[Row]:
    """The rows (their URLs ``locs``, in order) whose lastmod is not the one ``recorded`` (or
    that have no record), and those ``waiting``, in order: at C speed, one sweep of each."""
    differ: Iterator[bool] = map(operator.ne, recorded_lastmods(recorded, locs, _ABSENT), map(_LASTMOD, rows))
    if waiting:
        differ = map(operator.or_, differ, map(waiting.__contains__, locs))
    return list(itertools.compress(rows, differ))


def without_lastmod(rows: Sequence[Row]) -> list[str]:
    """The file's URLs without a lastmod, in order (most files have none: found at C speed)."""
    return [row[0] for row in rows if row[1] is None] if None in map(_LASTMOD, rows) else []


class Listed:
    """The URLs the files read list, each once: ``seen`` (URL -> its first lastmod, or the
    part that records that lastmod) and the URLs of the condensed files left out of it (each
    listed with the lastmod its file's part records; ``hidden`` of them)."""

    def __init__(self, seen: dict[str, str | Part | None]) -> None:
        self.seen = seen
        self.condensed: list[tuple[Part, Mapping[str, Record]]] = []  # each condensed file's part, and its unlisted URLs
        self.hidden = 0

    def add(self, part: Part, condensed: Condensed) -> None:
        """A condensed file taken: its other rows are in ``seen`` now, the rest are hidden."""
        self.condensed.append((part, condensed.unlisted))
        self.hidden += condensed.listed - len(condensed.others)

    def held(self, locs: list[str]) -> dict[str, Part]:
        """Those of ``locs`` (none of them in ``seen``) that a condensed file lists as its part
        records them, each with that part: found through the parts' URL-hash indexes, each part
        hit decoded here (a URL listed in two files, or a hash shared by two URLs: rare)."""
        found: dict[str, Part] = {}
        if not self.condensed or not locs:
            return found
        hashed = [(loc, loc_hash(loc)) for loc in locs]
        for part, unlisted in self.condensed:
            hits = [loc for loc in part.may_list_among(hashed) if loc not in unlisted and loc not in found]
            if hits:
                urls = part.urls()
                found.update((loc, part) for loc in hits if loc in urls)
                part.unload()
        return found

    def reveal(self, locs: list[str]) -> None:
        """Those of ``locs`` a condensed file lists go into ``seen``, with the part recording
        them (a file after it lists them again: that listing is then the second)."""
        for loc, part in self.held([loc for loc in locs if loc not in self.seen]).items():
            self.seen[loc] = part
            self.hidden -= 1

    def among(self, locs: Iterable[str]) -> set[str]:
        """Those of ``locs`` that are listed (many asked at once: each part hit decoded once)."""
        seen = self.seen
        wanted = dict.fromkeys(locs)
        found = {loc for loc in wanted if loc in seen}
        found.update(self.held([loc for loc in wanted if loc not in seen]))
        return found

    def __len__(self) -> int:
        return len(self.seen) + self.hidden
