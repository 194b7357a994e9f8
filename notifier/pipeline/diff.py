"""Compare the built sitemap with the recorded state: added, changed, removed, pending.

Every URL lands in exactly one of the five groups. ``changed`` compares lastmods as
instants (``2024-01-01`` and ``2024-01-01T00:00:00Z`` are the same date); a URL without
a lastmod is changed only when its page file's fingerprint changed.

The comparison runs file by file while the sitemap is read (``DiffBuilder.add_file``): each
file is compared with the records of the same file at the last deploy, so memory holds one
file's records at a time, not the whole site twice. A URL that moved to another file is
matched at the end (``finish``). A file whose bytes did not change is not read at all: its
part stays as it was (``unread`` consults it). The values it makes are in ``changes``.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any, NamedTuple

from notifier.pipeline.changes import Added, Change, Diff, PageFinding, same_instant
from notifier.pipeline.condensed import Condensed, Listed, condense, differing, may_list, without_lastmod
from notifier.pipeline.unread import Known, consult
from notifier.sitemap.files import Condense, Entry, Row, SitemapFile, facts_of
from notifier.store import (
    NewPart,
    Part,
    Record,
    RecordedPart,
    State,
    fingerprint_of,
    lastmod_of,
    new_record,
    recorded_on,
    renew,
)
from notifier.urlhash import loc_hash

__all__ = ["Added", "Change", "Diff", "DiffBuilder", "PageFinding", "compute_diff", "same_instant"]


_LOC, _LASTMOD = operator.itemgetter(0), operator.itemgetter(1)  # of a row


class _Unmatched(NamedTuple):
    loc: str
    lastmod: str | None
    part: int | None  # index into the new parts (None when not building)
    fingerprint: str | None
    file: int  # where the sitemap lists it: index into Sitemap.files, and line
    line: int


# a file's entries and its recorded records -> loc -> the fingerprint of its built page
Fingerprints = Callable[[Sequence[Row], Mapping[str, Record]], dict[str, str]]


class DiffBuilder:
    """Compare the sitemap with ``state`` file by file, as the reader delivers them.

    With ``makes_parts``, the state's parts after this deploy are made too (a ``run``), reusing
    the recorded records (updated in place); a ``check`` only counts and changes nothing.
    ``fingerprints`` gives a file's built-page fingerprints.

    A check's workers compare the recorded files they parse (``ask``, ``take``; see
    ``condensed``): only the rows that differ come here.
    """

    def __init__(
        self,
        state: State,
        *,
        endpoints: list[str],
        now: str = "",
        makes_parts: bool,
        fingerprints: Fingerprints | None = None,
    ) -> None:
        self.state, self.now, self.makes_parts, self.fingerprints = state, now, makes_parts, fingerprints
        self.result = Diff()
        self.old_parts: dict[str, Part] = {}
        for part in state.parts:
            self.old_parts.setdefault(part.name, part)
        self.used: set[str] = set()  # names of old parts compared already
        self.nothing_recorded = not state.parts
        self.pending_since: dict[str, str] = {}
        for endpoint in endpoints:
            for loc, item in state.pending.get(endpoint, {}).items():
                since = self.pending_since.get(loc)
                if since is None or item["since"] < since:
                    self.pending_since[loc] = item["since"]
        # check: loc -> its first lastmod over the files read, or the part that recorded that
        # very lastmod (the text of nearly every URL is then held once, in the state: ten
        # million lastmods are most of a gigabyte)
        self.seen: dict[str, str | Part | None] = {}
        self.listed = Listed(self.seen)  # seen, and the URLs of the files the workers compared
        self.new_hashed: list[tuple[str, int]] = []  # loc_hash of unmatched_new's URLs, as far as worked out
        self.pending_hashed: list[tuple[str, int]] | None = None
        self.records: dict[str, Record] = {}  # run: loc -> its record after this deploy
        self.redecoded: list[Part] = []  # parts decoded again to name a first listing's lastmod
        self.unmatched_new: list[_Unmatched] = []
        self.unmatched_old: dict[str, Record] = {}
        self.from_news: set[str] = set()  # of unmatched_old: recorded in a news file
        self.origins: dict[str, None] = {}
        self.kept: list[Part] = []  # the parts of unread files
        self.new_parts: list[Part | None] = []

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
                    self.unmatched_new.append(_Unmatched(loc, lastmod, part_no if makes_parts else None, fingerprint, entry[2], entry[3]))
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
        if len(matched) < len(recorded):  # recorded here, not listed here any more: moved or removed
            for loc, record in recorded.items():
                if loc not in matched:
                    self.unmatched_old[loc] = record
                    if info.news:
                        self.from_news.add(loc)
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
        return Condense(condense, (reader, frozenset(may_list(old, self.pending_hashed))))

    def take(self, info: SitemapFile, condensed: object) -> bool:
        """A file its worker compared (``condense``). False, having changed nothing, when a
        URL it lists may be listed by a file before it: then it is compared here, row by row."""
        assert isinstance(condensed, Condensed), "a worker hands over what ask asked for"
        old = self.old_parts.get(info.key)
        seen, listed = self.seen, self.listed
        others, records = condensed.others, condensed.records
        if old is None or info.key in self.used or not seen.keys().isdisjoint(map(_LOC, others)):
            return False
        if listed.held([row[0] for row in others if row[0] not in records]):
            return False  # new to this file, listed (as recorded) by a file compared before
        new_hashed = self.new_hashed
        new_hashed.extend((item.loc, loc_hash(item.loc)) for item in self.unmatched_new[len(new_hashed) :])
        if any(loc not in condensed.unlisted for loc in may_list(old, new_hashed)):
            return False  # a file before listed as new a URL this file may still list as recorded
        self.used.add(info.key)
        for row in others:
            loc, lastmod = row[0], row[1]
            seen[loc] = lastmod
            record = records.get(loc)
            if record is not None:
                self._classify(loc, lastmod, record, None)
            else:  # new to this file (the state has parts: this one's)
                self.unmatched_new.append(_Unmatched(loc, lastmod, None, None, row[2], row[3]))
        self.result.missing.extend(condensed.missing)
        if info.news:
            self.result.news_recorded += old.count
        for loc, record in condensed.unlisted.items():  # recorded here, not listed here any more: moved or removed
            self.unmatched_old[loc] = record
            if info.news:
                self.from_news.add(loc)
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
                _Unmatched(entry[0], entry[1], part_no if self.makes_parts else None, None, entry[2], entry[3]) for entry in entries
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
        others = differing(entries, fresh, recorded, self.pending_since)
        unrecorded = 0
        for entry in others:
            loc, lastmod = entry[0], entry[1]
            seen[loc] = lastmod
            record = recorded.get(loc)
            if record is not None:
                self._classify(loc, lastmod, record, None)
            else:  # new to this file (the state has parts: this one's)
                unrecorded += 1
                self.unmatched_new.append(_Unmatched(loc, lastmod, None, None, entry[2], entry[3]))
        missing = without_lastmod(entries)
        result.missing.extend(missing)
        if info.news:
            result.news_recorded += len(recorded)
        if len(fresh) - unrecorded < len(recorded):  # recorded here, not listed here any more: moved or removed
            for loc, record in recorded.items():
                if loc not in fresh:
                    self.unmatched_old[loc] = record
                    if info.news:
                        self.from_news.add(loc)
        self._close_file(info, [], len(missing))
        return True

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

    def _classify(self, loc: str, lastmod: str | None, record: Record, fingerprint: str | None) -> None:
        result = self.result
        old = lastmod_of(record)
        old_print = fingerprint_of(record)
        print_moved = fingerprint is not None and old_print is not None and fingerprint != old_print
        if lastmod is None:
            moved = print_moved  # no date to go by: the page file decides
        elif old == lastmod:
            moved = False
        elif same_instant(old, lastmod):
            moved = False  # the same instant written differently: recorded, never announced
        else:
            moved = True
        if fingerprint is not None and old_print is not None:
            if moved and lastmod is not None and not print_moved:
                # proven unchanged: the built page is byte-identical to the one fingerprinted
                # at the last deploy. Never announced; its new lastmod is recorded all the same
                result.page_findings.append(PageFinding("lastmod-without-change", loc, old, lastmod))
                result.held_back.append(Change(loc, "held back", old, lastmod))
                moved = False
            elif not moved and lastmod is not None and print_moved:
                result.page_findings.append(PageFinding("change-without-lastmod", loc, old, lastmod))
        if moved:
            announced_on = recorded_on(record) or self.state.updated or None
            result.changed.append(Change(loc, "changed", old, lastmod, None, announced_on))
        elif loc in self.pending_since:
            result.pending.append(Change(loc, "pending", old, lastmod, self.pending_since[loc]))

    # -- the end -------------------------------------------------------------------------
    def finish(self) -> Diff:
        """The cross-file steps, once every file is in: match what moved between files,
        consult the unread files, then what was removed, what still waits, and the counts."""
        self._release_unlisted_parts()
        known = consult(self.kept, (item.loc for item in self.unmatched_new), self.unmatched_old, self.pending_since, self._listed())
        self._match_new_urls(known)
        self._rescue_listed_elsewhere(known)
        self._removals(known)
        waiting_listed = self._still_pending(known)
        self._missing_in_unread()
        self._count(known, waiting_listed)
        result = self.result
        result.origins = list(self.origins)
        result.listed, result.unread_files = self.records if self.makes_parts else self.listed, len(self.kept)
        if self.makes_parts:
            result.parts = [part for part in self.new_parts if part is not None]
            result.records = self.records
        return result

    def _listed(self) -> Collection[str]:
        """The URLs the files read list (each once), as the steps of ``finish`` ask: each asks of
        URLs recorded in some other part, or waiting, and a file compared on a worker hands
        over those it lists (a URL's record is in one part; see ``condensed``)."""
        return self.records if self.makes_parts else self.seen

    def _release_unlisted_parts(self) -> None:
        """The records of files no longer in the sitemap: moved elsewhere, or removed."""
        for name, part in self.old_parts.items():
            if name not in self.used:
                for loc, gone in part.urls().items():
                    self.unmatched_old.setdefault(loc, gone)
                part.unload()

    def _match_new_urls(self, known: Known) -> None:
        """URLs new to the file that lists them: moved from another file (their record comes
        along), a second listing of an unread file's URL (that file keeps the record), or added."""
        result = self.result
        fixes: dict[int, set[str]] = {}
        for item in self.unmatched_new:
            record = self.unmatched_old.pop(item.loc, None)
            if record is None:
                kept_record = known.records.get(item.loc)
                if kept_record is not None:
                    result.duplicates.append((lastmod_of(kept_record), Entry(item.loc, item.lastmod, item.file, item.line)))
                    if item.part is not None:
                        fixes.setdefault(item.part, set()).add(item.loc)
                    continue
                result.added.add(item.loc, item.lastmod)
                continue
            self._classify(item.loc, item.lastmod, record, item.fingerprint)
            if self.makes_parts:
                self.records[item.loc] = renew(record, item.lastmod, item.fingerprint)
        for number, dropped in fixes.items():
            fixed = self.new_parts[number]
            assert isinstance(fixed, NewPart), "a fix is made only in a part this run made"
            fixed.drop(dropped)  # the unread file keeps the record, and counts it: the sitemap's total takes it once
            for loc in dropped:
                del self.records[loc]

    def _rescue_listed_elsewhere(self, known: Known) -> None:
        """A URL whose record was in a part now gone while an unread file lists it too (its
        second listing was not recorded): not removed; that file's part takes the record."""
        listed = self._listed()
        for loc, part in known.listed.items():
            record = self.unmatched_old.get(loc)
            if record is None or loc in listed:
                continue
            known.records[loc] = record
            if self.makes_parts:
                part.adopt(loc, record)
            else:
                known.uncounted += 1  # its part's count does not include it yet

    def _removals(self, known: Known) -> None:
        """What no file lists any more (never "everything": an empty sitemap is a broken build)."""
        listed = self._listed()
        if not listed and not self.kept:
            return
        for loc, old_record in self.unmatched_old.items():
            if loc not in listed and loc not in known.records:
                gone = Change(loc, "removed", lastmod_of(old_record), None)
                (self.result.left_news if loc in self.from_news else self.result.removed).append(gone)

    def _still_pending(self, known: Known) -> int:
        """Pending URLs not read this deploy: unchanged in an unread file, or removed earlier.
        Returns how many pending URLs are still listed (those are not counted unchanged)."""
        result = self.result
        listed = self._listed()
        removed = {change.loc for change in result.removed}
        waiting_listed = len(result.pending)  # found while classifying the files read: listed there
        for loc, since in self.pending_since.items():
            if loc in listed or loc in removed:
                continue
            kept_record = known.records.get(loc)  # listed by an unread file (perhaps by one read, too)
            if kept_record is not None:
                result.pending.append(Change(loc, "pending", lastmod_of(kept_record), lastmod_of(kept_record), since))
                waiting_listed += 1
            else:  # removed earlier (or the sitemap is empty), still not delivered
                result.pending.append(Change(loc, "pending", None, None, since))
        return waiting_listed

    def _missing_in_unread(self) -> None:
        """The unread files' URLs without a lastmod, for lastmod-missing."""
        listed = self._listed()
        for part in self.kept:
            if part.missing:
                self.result.missing.extend(loc for loc, record in part.urls().items() if lastmod_of(record) is None and loc not in listed)
                part.unload()

    def _count(self, known: Known, waiting_listed: int) -> None:
        """How many distinct URLs the sitemap lists, and how many of them did not change: once,
        from the sets, not adjusted along the way."""
        result = self.result
        listed = self._listed()
        read = len(self.records if self.makes_parts else self.listed)
        in_unread = sum(part.count for part in self.kept) + known.uncounted
        both = sum(1 for loc in known.records if loc in listed)
        result.total = read + in_unread - both
        result.unchanged = result.total - len(result.added) - len(result.changed) - waiting_listed


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
