"""The diff in progress, one URL's comparison with its record, and the steps that need every
file: what moved between files, what the unread files know, what was removed, what still
waits, and the counts (``Matching.finish``). ``diff.DiffBuilder`` compares the files.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from typing import NamedTuple

from notifier.changes import Change, Diff, PageFinding, same_instant
from notifier.pipeline.condensed import Listed
from notifier.pipeline.unread import Known, consult
from notifier.sitemap.files import Entry, Row
from notifier.store import NewPart, Part, Record, State, fingerprint_of, lastmod_of, recorded_on, renew

# a file's entries and its recorded records -> loc -> the fingerprint of its built page
Fingerprints = Callable[[Sequence[Row], Mapping[str, Record]], dict[str, str]]


class Unmatched(NamedTuple):
    loc: str
    lastmod: str | None
    part: int | None  # index into the new parts (None when not building)
    fingerprint: str | None
    file: int  # where the sitemap lists it: index into Sitemap.files, and line
    line: int


class Matching:
    """What a diff holds while the files come in, and what it does once they are all in.

    With ``makes_parts``, the state's parts after this deploy are made too (a ``run``), reusing
    the recorded records (updated in place); a ``check`` only counts and changes nothing.
    ``fingerprints`` gives a file's built-page fingerprints.
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
        self.unmatched_new: list[Unmatched] = []
        self.unmatched_old: dict[str, Record] = {}
        self.from_news: set[str] = set()  # of unmatched_old: recorded in a news file
        self.origins: dict[str, None] = {}
        self.kept: list[Part] = []  # the parts of unread files
        self.new_parts: list[Part | None] = []

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
