"""Compare the built sitemap with the recorded state: added, changed, removed, pending.

Every URL lands in exactly one of the five groups. ``changed`` compares lastmods as
instants (``2024-01-01`` and ``2024-01-01T00:00:00Z`` are the same date); a URL without
a lastmod is changed only when its page file's fingerprint changed.

The comparison runs file by file while the sitemap is read (``DiffBuilder.add_file``): each
file is compared with the records of the same file at the last deploy, so memory holds one
file's records at a time, not the whole site twice; a check's workers compare the files
they parse (``condensed``). A URL that moved to another file is matched at the end
(``matching``). A file whose bytes did not change is not read at all: its part stays as it
was (``unread`` consults it). The values it makes are in ``changes``.
"""

from __future__ import annotations

import operator
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from notifier.changes import Added, Change, Diff, PageFinding, same_instant
from notifier.pipeline.condensed import Condensed, condense, differing, without_lastmod
from notifier.pipeline.matching import Matching, Unmatched
from notifier.sitemap.files import Condense, Entry, Row, SitemapFile, facts_of
from notifier.store import (
    NewPart,
    Part,
    Record,
    RecordedPart,
    State,
    lastmod_of,
    new_record,
    renew,
)
from notifier.urlhash import loc_hash

__all__ = ["Added", "Change", "Diff", "DiffBuilder", "PageFinding", "compute_diff", "same_instant"]


_LOC, _LASTMOD = operator.itemgetter(0), operator.itemgetter(1)  # of a row


class DiffBuilder(Matching):
    """Compare the sitemap with ``state`` file by file, as the reader delivers them (see
    ``Matching`` for what it holds and makes).

    A check's workers compare the recorded files they parse (``ask``, ``take``; see
    ``condensed``): only the rows that differ come here.
    """

    # -- one file ------------------------------------------------------------------------
    def add_file(self, info: SitemapFile, entries: Sequence[Row] | None) -> None:
        """Compare one urlset or text file; ``entries`` None: not read (same bytes as recorded)."""
        key = info.key
        old = self.old_parts.get(key)
        if old is not None and key in self.used:
            old = None  # the index lists one file twice: the reader refuses that, but never compare twice
        if old is not None:
            self.used.add(key)
        if entries is None:
            assert old is not None, "only a file recorded last deploy is left unread"
            self.result.news_recorded += old.count if info.news else 0
            self.kept.append(old)
            self.new_parts.append(old)
            self.origins.update(dict.fromkeys(old.origins))
            return
        result = self.result
        recorded = old.urls() if old is not None else {}
        prints = self.fingerprints(entries, recorded) if self.fingerprints is not None else None
        part_no = len(self.new_parts)
        matched: set[str] = set()
        # check: seen maps a URL to its first lastmod; run: records maps it to its record as
        # this deploy leaves it (the first listing wins), and the new part lists its URLs
        seen, records, makes_parts = self.seen, self.records, self.makes_parts
        if self.listed.condensed:  # its URLs new to it that a file compared on a worker lists: into seen
            self.listed.reveal([entry[0] for entry in entries if entry[0] not in recorded])
        if not recorded and prints is None and self._all_new(info, entries, part_no):
            return
        if old is not None and prints is None and not makes_parts and self._compare_in_bulk(info, entries, old, recorded):
            old.unload()
            return
        locs: list[str] = []
        missing = 0
        for entry in entries:
            loc, lastmod = entry[0], entry[1]
            if makes_parts:
                first = records.get(loc)
                if first is not None:
                    result.duplicates.append((lastmod_of(first), Entry._make(entry)))
                    continue
            elif loc in seen:
                result.duplicates.append((self._first_lastmod(loc), Entry._make(entry)))
                continue
            else:
                seen[loc] = lastmod
            if lastmod is None:
                result.missing.append(loc)
                missing += 1
            fingerprint = prints.get(loc) if prints is not None else None
            record = recorded.get(loc)
            if record is None:
                if self.nothing_recorded:  # a first run: nothing can have moved here
                    result.added.add(loc, lastmod)
                else:
                    self.unmatched_new.append(Unmatched(loc, lastmod, part_no if makes_parts else None, fingerprint, entry[2], entry[3]))
                if makes_parts:
                    records[loc] = new_record(lastmod, self.now, None, fingerprint)
                    locs.append(loc)
                continue
            matched.add(loc)
            self._classify(loc, lastmod, record, fingerprint)
            if makes_parts:
                records[loc] = renew(record, lastmod, fingerprint)
                locs.append(loc)
        if info.news:
            result.news_recorded += len(recorded)
        if len(matched) < len(recorded):
            self._gone_from(info, ((loc, record) for loc, record in recorded.items() if loc not in matched))
        self._close_file(info, locs, missing)
        if old is not None:
            old.unload()
        while self.redecoded:
            self.redecoded.pop().unload()

    # -- one file, compared on the worker that parsed it ------------------------------
    def ask(self, key: str) -> Condense | None:
        """What the worker that parses the file ``key`` does with its rows: a check without
        page fingerprints compares them there with the file's recorded part, when that part
        can be read there (``RecordedPart.reader``)."""
        old = self.old_parts.get(key)
        if self.makes_parts or self.fingerprints is not None or not isinstance(old, RecordedPart) or key in self.used:
            return None
        reader = old.reader()
        if reader is None:
            return None
        if self.pending_hashed is None:
            self.pending_hashed = [(loc, loc_hash(loc)) for loc in self.pending_since]
        return Condense(condense, (reader, frozenset(old.may_list_among(self.pending_hashed))))

    def take(self, info: SitemapFile, condensed: object) -> bool:
        """A file its worker compared (``condense``). False, having changed nothing, when a
        URL it lists may be listed by a file before it: then it is compared here, row by row."""
        assert isinstance(condensed, Condensed), "a worker hands over what ask asked for"
        old = self.old_parts.get(info.key)
        assert old is not None and info.key not in self.used, "ask condenses a recorded file, read once"
        listed, others, records = self.listed, condensed.others, condensed.records
        if not self.seen.keys().isdisjoint(map(_LOC, others)):
            return False  # listed by a file before (new to both, say)
        if listed.held([row[0] for row in others if row[0] not in records]):
            return False  # new to this file, listed (as recorded) by a file compared before
        new_hashed = self.new_hashed
        new_hashed.extend((item.loc, loc_hash(item.loc)) for item in self.unmatched_new[len(new_hashed) :])
        if any(loc not in condensed.unlisted for loc in old.may_list_among(new_hashed)):
            return False  # a file before listed as new a URL this file may still list as recorded
        self.used.add(info.key)
        self._take_differing(others, records)
        self.result.missing.extend(condensed.missing)
        if info.news:
            self.result.news_recorded += old.count
        self._gone_from(info, condensed.unlisted.items())
        listed.add(old, condensed)
        self._close_file(info, [], len(condensed.missing))
        return True

    def _all_new(self, info: SitemapFile, entries: Sequence[Row], part_no: int) -> bool:
        """A file with no record of its own (a first run, a new file): one sweep at C speed.
        False, having changed nothing, when some URL is listed twice (the loop then decides)."""
        result = self.result
        now = self.now
        known: dict[str, Any]
        if self.makes_parts:
            fresh: dict[str, Any] = {entry[0]: [entry[1], now, None] for entry in entries}
            known = self.records
        else:
            fresh = {entry[0]: entry[1] for entry in entries}
            known = self.seen
        if not _listed_once(fresh, entries, known):
            return False
        known.update(fresh)
        locs = list(fresh)
        lastmods = list(map(_LASTMOD, entries))
        missing = without_lastmod(entries)
        result.missing.extend(missing)
        if self.nothing_recorded:
            added = result.added
            added.locs.extend(locs)
            added.lastmods.extend(lastmods)
            if added.stamps is not None and info.facts.stamps is not None and len(info.facts.stamps) == len(entries):
                added.stamps.extend(info.facts.stamps)
            else:
                added.stamps = None
        else:
            self.unmatched_new.extend(
                Unmatched(entry[0], entry[1], part_no if self.makes_parts else None, None, entry[2], entry[3]) for entry in entries
            )
        self._close_file(info, locs, len(missing))
        return True

    def _compare_in_bulk(self, info: SitemapFile, entries: Sequence[Row], old: Part, recorded: Mapping[str, Record]) -> bool:
        """A check of a recorded file without page fingerprints: the URLs listed with the lastmod
        recorded, waiting nowhere (nearly all), are passed over in one sweep, the rest compared
        in the file's order. False, having changed nothing, when a URL is listed twice."""
        seen = self.seen
        fresh = dict.fromkeys(map(_LOC, entries))
        if not _listed_once(fresh, entries, seen):
            return False
        seen.update(dict.fromkeys(fresh, old))  # as recorded; the others' lastmods are kept below
        result = self.result
        unrecorded = self._take_differing(differing(entries, fresh, recorded, self.pending_since), recorded)
        missing = without_lastmod(entries)
        result.missing.extend(missing)
        if info.news:
            result.news_recorded += len(recorded)
        if len(fresh) - unrecorded < len(recorded):
            self._gone_from(info, ((loc, record) for loc, record in recorded.items() if loc not in fresh))
        self._close_file(info, [], len(missing))
        return True

    def _take_differing(self, rows: list[Row], records: Mapping[str, Record]) -> int:
        """A check's rows not as recorded, each now its URL's first listing: compared with its
        record (``records``: the file's), or new to the file. Returns how many were new."""
        seen = self.seen
        unrecorded = 0
        for row in rows:
            loc, lastmod = row[0], row[1]
            seen[loc] = lastmod
            record = records.get(loc)
            if record is not None:
                self._classify(loc, lastmod, record, None)
            else:  # new to this file (the state has parts: this one's)
                unrecorded += 1
                self.unmatched_new.append(Unmatched(loc, lastmod, None, None, row[2], row[3]))
        return unrecorded

    def _gone_from(self, info: SitemapFile, gone: Iterable[tuple[str, Record]]) -> None:
        """URLs the file's part records that the file no longer lists: moved or removed."""
        for loc, record in gone:
            self.unmatched_old[loc] = record
            if info.news:
                self.from_news.add(loc)

    def _first_lastmod(self, loc: str) -> str | None:
        """The lastmod of a check's first listing of ``loc`` (for a URL listed twice)."""
        first = self.seen[loc]
        if not isinstance(first, Part):
            return first
        records = first.urls()  # decoded again, for this one file
        self.redecoded.append(first)
        return lastmod_of(records[loc])

    def _close_file(self, info: SitemapFile, locs: list[str], missing: int) -> None:
        """What every file read leaves: its origins and irregular URLs, and (a run) its new part."""
        self.origins.update(dict.fromkeys(info.facts.origins))
        self.result.irregular.update(info.facts.irregular)
        if self.makes_parts:
            part = NewPart(
                info.key, info.digest, locs, self.records, missing=missing, origins=info.facts.origins, url_hash_index=info.facts.url_hashes
            )
            self.new_parts.append(part)
        else:
            self.new_parts.append(None)


def _listed_once(fresh: Mapping[str, Any], entries: Sequence[Row], before: Mapping[str, Any]) -> bool:
    """Whether the file (``fresh``: its URLs) lists each once and none a file before listed."""
    return len(fresh) == len(entries) and before.keys().isdisjoint(fresh)


def compute_diff(
    entries: list[Entry],
    state: State,
    *,
    endpoints: list[str],
    fingerprints: dict[str, str] | None = None,
    now: str = "",
) -> Diff:
    """The diff of a whole list of entries (one file), for tests and small callers. Like a
    run, it makes the new parts, updating the matched records of ``state`` in place."""
    builder = DiffBuilder(
        state,
        endpoints=endpoints,
        now=now,
        makes_parts=True,
        fingerprints=(lambda rows, _: {row[0]: fingerprints[row[0]] for row in rows if row[0] in fingerprints})
        if fingerprints is not None
        else None,
    )
    builder.add_file(SitemapFile("entries", "urlset", key="\0entries", facts=facts_of(entries)), entries)
    return builder.finish()
