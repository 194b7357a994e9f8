"""What a deploy changed, as plain values: each URL to announce and why, and the diff's outcome."""

from __future__ import annotations

import array
from collections.abc import Collection, Container, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Literal, NamedTuple, Protocol, overload

from notifier.dates import parse_w3c
from notifier.sitemap.files import Entry
from notifier.store import Part, Record

Reason = Literal["added", "changed", "removed", "pending", "held back", "alternate"]  # held back: never announced


class Listing(Protocol):
    """The URLs the files read list when a check's workers compared some of them
    (``pipeline.condensed.Listed``): asked many at once, never iterated."""

    def among(self, locs: Iterable[str]) -> set[str]: ...

    def __len__(self) -> int: ...


class Change(NamedTuple):
    """One URL to announce, and why."""

    loc: str
    reason: Reason
    old: str | None = None  # the recorded lastmod
    new: str | None = None  # the sitemap's lastmod
    since: str | None = None  # for pending: when it first waited
    recorded: str | None = None  # for changed: when the old lastmod was recorded (or last sent)
    # for alternate ([announce] alternates): old is the changed page it is an alternate of, new its hreflang


class Added(Sequence[Change]):
    """The added URLs: kept as two lists, locs and lastmods, each Change made when asked for
    (a first run adds a million URLs; a million Change objects would be a hundred megabytes)."""

    def __init__(self) -> None:
        self.locs: list[str] = []
        self.lastmods: list[str | None] = []
        # their dates as dates.timestamps gives them, when the reader parsed them (a first
        # run, on every core): None as soon as one URL came without
        self.stamps: array.array[float] | None = array.array("d")

    def add(self, loc: str, lastmod: str | None) -> None:
        self.locs.append(loc)
        self.lastmods.append(lastmod)
        self.stamps = None

    def __len__(self) -> int:
        return len(self.locs)

    @overload
    def __getitem__(self, index: int) -> Change: ...
    @overload
    def __getitem__(self, index: slice) -> list[Change]: ...
    def __getitem__(self, index: int | slice) -> Change | list[Change]:
        if isinstance(index, slice):
            return [Change(loc, "added", None, lastmod) for loc, lastmod in zip(self.locs[index], self.lastmods[index], strict=True)]
        return Change(self.locs[index], "added", None, self.lastmods[index])

    def __iter__(self) -> Iterator[Change]:
        for loc, lastmod in zip(self.locs, self.lastmods, strict=True):
            yield Change(loc, "added", None, lastmod)

    def among(self, locs: Container[str]) -> Iterator[Change]:
        """The changes of the URLs in ``locs`` (a rule that judges a few of a million)."""
        for loc, lastmod in zip(self.locs, self.lastmods, strict=True):
            if loc in locs:
                yield Change(loc, "added", None, lastmod)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Sequence) and list(self) == list(other)

    __hash__ = None  # type: ignore[assignment]

    def __add__(self, other: Sequence[Change]) -> list[Change]:
        return [*self, *other]

    def __repr__(self) -> str:
        return f"Added({self.locs[:3]}{'...' if len(self.locs) > 3 else ''})"


class PageFinding(NamedTuple):
    """A lastmod and a built page file that disagree (with --site-dir fingerprints)."""

    rule: str  # "lastmod-without-change" | "change-without-lastmod"
    loc: str
    old: str | None
    new: str | None


@dataclass
class Diff:
    """The outcome of comparing the sitemap with the state."""

    duplicates: list[tuple[str | None, Entry]] = field(default_factory=list)  # (the first listing's lastmod, the repeat)
    added: Added = field(default_factory=Added)
    changed: list[Change] = field(default_factory=list)
    removed: list[Change] = field(default_factory=list)
    pending: list[Change] = field(default_factory=list)  # waiting from an earlier run only
    unchanged: int = 0
    total: int = 0  # distinct URLs the sitemap lists, read or not
    missing: list[str] = field(default_factory=list)  # URLs without a lastmod
    origins: list[str] = field(default_factory=list)  # scheme://host of the URLs, first seen first
    page_findings: list[PageFinding] = field(default_factory=list)
    # lastmod moved, the built page is byte-identical to the last deploy's: recorded, not announced
    held_back: list[Change] = field(default_factory=list)
    irregular: set[str] = field(default_factory=set)  # URLs of the files read that are not plain (urls.irregular)
    parts: list[Part] = field(default_factory=list)  # the state's parts after this deploy (when built)
    records: dict[str, Record] | None = None  # loc -> record, for every URL of the parts this run made
    listed: Collection[str] | Listing = ()  # the URLs of the files read this deploy (ask listed_of)
    unread_files: int = 0  # files not read (same bytes as recorded): their URLs are in ``parts`` only
    # URLs that left a news sitemap (yesterday's articles) and no other file lists: not removals
    left_news: list[Change] = field(default_factory=list)
    # with --site-dir: URLs no file lists whose page file is still built: not removals
    unlisted: list[Change] = field(default_factory=list)
    news_recorded: int = 0  # URLs the news files read this deploy held at the last one (left out of mass-removal)
    # [announce] alternates: changed loc -> its (hreflang, URL, where it was declared)
    alternates: dict[str, list[tuple[str, str, str]]] = field(default_factory=dict)

    def listed_of(self, locs: Iterable[str]) -> set[str]:
        """Those of ``locs`` the files read list, asked together: the URLs a check's workers
        compared and left out are looked up one part at a time (see ``condensed.Listed``)."""
        listed = self.listed
        if isinstance(listed, Collection):  # a Listing is no Collection: no __iter__, no __contains__
            return {loc for loc in locs if loc in listed}
        return listed.among(locs)

    @property
    def announced(self) -> list[Sequence[Change]]:
        """What this run found new: added, changed and removed, in sitemap order."""
        return [self.added, self.changed, self.removed]


def same_instant(old: str | None, new: str | None) -> bool:
    """Whether two lastmods name the same instant (strings first: the common, cheap case)."""
    if old == new:
        return True
    if old is None or new is None:
        return False
    old_instant = parse_w3c(old)
    return old_instant is not None and old_instant == parse_w3c(new)  # two texts that name no date name no instant
