"""The recorded state in memory: URL records, the parts that hold them, the pending sets, and
how an acknowledged batch is folded in (``State.settle``).

Nothing here reads or writes a file: ``jsonfile`` and ``sqlite`` do, both through the same model.
"""

from __future__ import annotations

import array
import base64
import bisect
import itertools
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, TypedDict

import orjson

from notifier.store.checks import KeyCheck, SentToday, check_count, check_records, damaged
from notifier.store.records import Record, lastmod_of, stamp_submitted
from notifier.urlhash import hash_index, loc_hash
from notifier.urls import origins_of

MAX_RUNS_KEPT = 20


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
    totals: dict[str, dict[str, int]]  # endpoint -> URLs received, refused, failed by every run so far (metrics.run_totals)
    findings: dict[str, dict[str, int]]  # rule -> level -> URLs: this run's findings (only when it had any; the report page's)


class Part:
    """What the state knows of one sitemap file: its name, the digest of its bytes, how many
    URLs it holds and how many of them have no lastmod, their origins (``scheme://host`` in
    order of first appearance) and its URL-hash index: the sorted ``urlhash.loc_hash`` of
    every URL the file lists, so that a run can tell a URL is surely not listed there without decoding its records.

    Its records come in one of two kinds: :class:`RecordedPart`, read from the state and
    decoded on first use (a deploy that changed one file of twenty decodes one), or
    :class:`NewPart`, made by this run over the run's one dict of records.
    """

    __slots__ = ("_array", "_index", "_index_text", "count", "digest", "missing", "name", "origins")

    def __init__(self, name: str, digest: str, *, count: int, missing: int, origins: list[str], url_hash_index: bytes | None) -> None:
        self.name, self.digest = name, digest
        self.count, self.missing, self.origins = count, missing, origins
        self._index = url_hash_index
        self._index_text: str | None = None  # its base64, kept for the next save
        self._array: array.array[int] | None = None

    @property
    def decoded(self) -> bool:
        """Whether its records are at hand without decoding."""
        raise NotImplementedError

    def urls(self) -> Mapping[str, Record]:
        """Its records, by URL, in the file's order."""
        raise NotImplementedError

    def encoded_urls(self) -> bytes | memoryview:
        """Its records as the JSON object both stores keep."""
        raise NotImplementedError

    def unload(self) -> None:
        """Let go of decoded records that can be decoded again (memory for the next file)."""

    @property
    def url_hash_index(self) -> bytes:
        """The URL-hash index (see ``urlhash.hash_index``), as the state keeps it."""
        if self._index is None:
            self._index = hash_index(self.urls())
        return self._index

    def url_hashes(self) -> array.array[int]:
        """``url_hash_index`` as numbers."""
        if self._array is None:
            self._array = array.array("Q")
            self._array.frombytes(self.url_hash_index)
        return self._array

    def may_list(self, loc: str) -> bool:
        """False when its file surely does not list ``loc``; True when it may (then decode)."""
        return self.may_list_hash(loc_hash(loc))

    def may_list_hash(self, value: int) -> bool:
        """``may_list`` of the URL whose ``loc_hash`` is ``value``."""
        hashes = self.url_hashes()
        position = bisect.bisect_left(hashes, value)
        return position < len(hashes) and hashes[position] == value

    def may_list_among(self, hashed: list[tuple[str, int]]) -> list[str]:
        """Those of ``hashed`` (URL, ``loc_hash``) it may list: many, one set of its hashes; few, a search each."""
        if len(hashed) * 16 > self.count:
            hashes = set(self.url_hashes())
            return [loc for loc, value in hashed if value in hashes]
        return [loc for loc, value in hashed if self.may_list_hash(value)]

    def _recount(self, urls: Mapping[str, Record]) -> None:
        self.count = len(urls)
        self.missing = sum(1 for record in urls.values() if lastmod_of(record) is None)

    def meta(self) -> dict[str, Any]:
        if self._index_text is None or self._index is None:
            self._index_text = base64.b64encode(self.url_hash_index).decode("ascii")
        return {
            "name": self.name,
            "digest": self.digest,
            "count": self.count,
            "missing": self.missing,
            "origins": self.origins,
            "index": self._index_text,
        }


class RecordedPart(Part):
    """A part read from the state: its records as the encoded bytes (``raw``) until asked for,
    or given as a dict (a state parsed whole, a converted older format, tests). A store may
    leave the bytes where they are (``fetch`` reads them when first needed, and again after
    ``unload``) and name the row that holds them (``row``: in a database a save keeps that
    row while the part is untouched; in the JSON file, the part's line). ``elsewhere`` reads
    those bytes in another process (a worker; picklable), or says None when they are no
    longer where they were when the state was loaded."""

    __slots__ = ("_elsewhere", "_fetch", "_raw", "_source", "_urls", "row")

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
        url_hash_index: bytes | None = None,
        source: str = "",
        fetch: Callable[[int], bytes] | None = None,
        row: int | None = None,
        elsewhere: Callable[[], bytes | None] | None = None,
    ) -> None:
        if urls is not None:  # counted here; an encoded part is told its counts
            count, missing = len(urls), sum(1 for record in urls.values() if lastmod_of(record) is None)
            origins = origins if origins is not None else origins_of(urls)
        super().__init__(name, digest, count=count, missing=missing, origins=origins or [], url_hash_index=url_hash_index)
        self._urls, self._raw, self._source = urls, raw, source
        self._fetch, self.row, self._elsewhere = fetch, row, (elsewhere if fetch is not None and row is not None else None)

    def _bytes(self) -> bytes | memoryview | None:
        """The encoded records, read from the store the first time they are needed."""
        if self._raw is None and self._fetch is not None and self.row is not None:
            self._raw = self._fetch(self.row)  # the row it holds now: a save may have moved it
        return self._raw

    @property
    def decoded(self) -> bool:
        return self._urls is not None

    def urls(self) -> dict[str, Record]:
        """Its records, decoded (and checked) on first use; changes to them need ``touch``."""
        if self._urls is None:
            self._urls = decode_part(self._bytes() or b"{}", self._source, self.name, self.count)
        return self._urls

    def reader(self) -> PartReader | None:
        """How another process reads and decodes its records, or None (decoded here, changed, or in no file)."""
        if self._elsewhere is None or self._urls is not None:
            return None
        return PartReader(self._elsewhere, self._source, self.name, self.count)

    def unload(self) -> None:
        """Records that can be decoded again go; so do bytes the store can read again."""
        refetch = self._fetch is not None and self.row is not None
        if self._raw is not None or refetch:
            self._urls = None
        if refetch:
            self._raw = None

    def touch(self) -> None:
        """Its records were changed or added to: encode them again at the next save. The file
        still lists the same URLs, so its URL-hash index stands."""
        urls = self.urls()  # decoded before the bytes go
        self._raw, self._fetch, self.row, self._elsewhere = None, None, None, None
        self._recount(urls)

    def hold(self) -> None:
        """Its row is about to go (the store writes every row again): read its bytes now, forget the row."""
        self._raw, self._fetch, self.row, self._elsewhere = self._bytes(), None, None, None

    def adopt(self, loc: str, record: Record) -> None:
        """Hold the record of a URL its file lists but another part held (that part is gone)."""
        self.urls()[loc] = record
        self.touch()

    def encoded_urls(self) -> bytes | memoryview:
        if self._urls is not None:
            return self._raw if self._raw is not None else orjson.dumps(self._urls)
        if self._raw is None and self._fetch is not None and self.row is not None:
            return self._fetch(self.row)  # read for this save, not kept: a save copies 199 parts of 200
        return self._raw if self._raw is not None else orjson.dumps(self.urls())


class NewPart(Part):
    """A part this run made: its URLs in the file's order, their records in the run's one dict
    of records (shared by every new part; ``State.records``)."""

    __slots__ = ("_locs", "_records")

    def __init__(
        self,
        name: str,
        digest: str,
        locs: list[str],
        records: dict[str, Record],
        *,
        missing: int,
        origins: list[str],
        url_hash_index: bytes | None,
    ) -> None:
        super().__init__(name, digest, count=len(locs), missing=missing, origins=origins, url_hash_index=url_hash_index)
        self._locs, self._records = locs, records

    @property
    def decoded(self) -> bool:
        return True

    def urls(self) -> Mapping[str, Record]:
        """Its records, read-only: they live in the run's dict of records."""
        records = self._records
        return MappingProxyType({loc: records[loc] for loc in self._locs})

    def drop(self, locs: set[str]) -> None:
        """It no longer holds the records of these URLs (another part does). Its file still
        lists them, so its URL-hash index stands."""
        self._locs = [loc for loc in self._locs if loc not in locs]
        self._recount(self.urls())

    def take(self, walk: Iterator[tuple[str, Record]]) -> dict[str, Record] | None:
        """Its records as the next ``count`` items of a walk through the run's records, when
        they are exactly its URLs in order (see ``State.records``); else None (then ``urls()``)."""
        locs = self._locs
        taken = dict(itertools.islice(walk, len(locs)))
        return taken if list(taken) == locs else None  # the same objects: a pointer check each

    def encoded_urls(self) -> bytes | memoryview:
        return orjson.dumps(dict(self.urls()))


@dataclass
class State:
    """The whole recorded state. ``pending`` is per endpoint: endpoint -> url -> why."""

    parts: list[Part] = field(default_factory=list)  # the sitemap files read last deploy, with their URLs
    pending: dict[str, dict[str, PendingItem]] = field(default_factory=dict)
    runs: list[RunRecord] = field(default_factory=list)
    created: str = ""
    updated: str = ""
    # endpoint -> not before this time: a 429 or 503's Retry-After beyond --retry-timeout (every run and site keeps it)
    backoff: dict[str, str] = field(default_factory=dict)
    sent_today: dict[str, SentToday] = field(default_factory=dict)  # endpoint -> URLs it took on a UTC day ([announce] per-day)
    key_checks: dict[str, KeyCheck] = field(default_factory=dict)  # host -> its key's digest and 403 streaks (refusals.py)
    submitted: dict[str, str] = field(default_factory=dict)  # loc -> when an endpoint took it, not yet in its part's record
    # batches acknowledged, not yet folded in (see settle): (endpoint, urls, at, sent by this run)
    deliveries: list[tuple[str, list[str], str, bool]] = field(default_factory=list)
    # loc -> record of every URL in the parts this run made (see NewPart).
    #
    # The ordering invariant, stated here once: the diff inserts these records in the order
    # of the new parts and, within a part, of its URLs (a URL that moved between files is
    # the exception: it comes last). The fast paths walk this dict in step with that order
    # instead of looking each URL up (at a million URLs each lookup is a cache miss):
    # settle's _stamp, jsonfile.encoded_parts (NewPart.take). Out of step, each falls back
    # to lookups, so the order is speed, never correctness. Held by
    # tests/test_state.py::test_records_are_walked_in_step (the order) and the two tests
    # beside it (the same bytes and stamps in order or not).
    records: dict[str, Record] | None = None

    @classmethod
    def from_urls(cls, urls: dict[str, Record], **fields: Any) -> State:
        """A state whose URLs all belong to one part with no file behind it (tests, conversions)."""
        return cls(parts=[RecordedPart("", "", dict(urls))] if urls else [], **fields)

    def url_count(self) -> int:
        return sum(part.count for part in self.parts)

    def all_urls(self) -> dict[str, Record]:
        """Every recorded URL, decoding every part (small states, tests, full checks)."""
        merged: dict[str, Record] = {}
        for part in self.parts:
            for loc, record in part.urls().items():
                merged.setdefault(loc, record)
        return merged

    def waiting(self, endpoints: Iterable[str]) -> list[str]:
        """The URLs still pending at ``endpoints``, in order, without the acknowledged batches
        not folded in yet. Reads only: the state is settled on load and on save, nowhere else."""
        sent: dict[str, int] = {}
        replayed: set[str] = set()
        for endpoint, urls, _, sent_now in self.deliveries:
            sent[endpoint] = sent.get(endpoint, 0) + len(urls)
            if not sent_now:
                replayed.add(endpoint)
        result: dict[str, None] = {}
        for endpoint in endpoints:
            items = self.pending.get(endpoint, {})
            if not items or (endpoint not in replayed and sent.get(endpoint) == len(items)):
                continue  # nothing waits, or this run's batches (disjoint slices of the set) all went
            if endpoint not in sent:
                result.update(dict.fromkeys(items))
                continue
            delivered = {url for each, urls, _, _ in self.deliveries if each == endpoint for url in urls}
            result.update(dict.fromkeys(loc for loc in items if loc not in delivered))
        return list(result)

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
                else:
                    stamp_submitted(record, at)

    def settle_submitted(self) -> None:
        """Write the acknowledged times into the records of the parts that hold those URLs."""
        left = self.submitted
        wanted: set[int] | None = None
        for part in self.parts:
            if not left:
                break
            if not isinstance(part, RecordedPart):  # a new part's records are in self.records: done above
                continue
            if not part.decoded:  # look in its URL-hash index before decoding it
                if wanted is None:
                    wanted = {loc_hash(loc) for loc in left}
                if wanted.isdisjoint(part.url_hashes()):
                    continue
            urls = part.urls()
            hits = [loc for loc in left if loc in urls] if len(left) < len(urls) else [loc for loc in urls if loc in left]
            for loc in hits:
                stamp_submitted(urls[loc], left.pop(loc))
            if hits:
                part.touch()
        self.submitted = {}


@dataclass(frozen=True, slots=True)
class PartReader:
    """A recorded part's records, read in another process (``RecordedPart.reader``): picklable."""

    fetch: Callable[[], bytes | None]
    source: str
    name: str
    count: int

    def records(self) -> dict[str, Record] | None:
        """Decoded and checked as on load; None when the bytes are no longer where they were."""
        raw = self.fetch()
        return decode_part(raw, self.source, self.name, self.count) if raw is not None else None


def decode_part(raw: bytes | memoryview, source: str, name: str, count: int) -> dict[str, Record]:
    """A part's records from their bytes, checked: each record, and that they are ``count``."""
    urls = _decode_records(raw, source)
    check_count(urls, count, source, name)
    return urls


def _decode_records(raw: bytes | memoryview, name: str) -> dict[str, Record]:
    try:
        urls = orjson.loads(raw)
    except ValueError:
        raise damaged(name, "a part's URL records are not valid JSON") from None
    return check_records(urls, name)


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


def apply_delivery(state: State, endpoint: str, urls: Iterable[str], at: str, *, live: bool = False) -> None:
    """An endpoint acknowledged ``urls``; folded into the state by ``State.settle``. ``live``:
    a batch this run made from the pending set (so its URLs are there, once)."""
    state.deliveries.append((endpoint, list(urls), at, live))
    if at > state.updated:
        state.updated = at
