"""lastmod-bulk: the dates of a deploy came from the build, not from the content.

A build leaves one of four marks, each judged here in turn (the first that fits is said):

1. pages proven unchanged: with ``--site-dir``, many of the deploy's moved lastmods belong
   to built pages byte-identical to the last deploy's (those pages are held back, never
   announced; the diff does that);
2. one shared instant: many changed pages carry the same second. On a first run that is
   a build only when the instant is close to the run or finer than a second (no commit
   and no hand-written date has milliseconds): a site imported in one commit, long
   before the build, shares its commit's instant honestly;
3. the run's own day: date-only lastmods (or midnight) are days, not instants; many
   pages sharing a day is a mark only when it is the day of the run;
4. a crowd: many changed pages whose lastmods, all distinct, lie within minutes of each
   other in the hour before the run (a plugin stamping each file's creation time).

Dates that git history backs (``[history]``) are left out of every mark: one big commit is
honest, and so is a page held back whose new date is its source's commit.
Every mark needs the thresholds of ``[bulk]``: at least ``min-urls`` pages, ``ratio`` of
the changed pages with a date, ``site-ratio`` of the site (the held-back mark: the first two).
"""

from __future__ import annotations

import array
import bisect
import datetime as dt
import math
import operator
from collections import Counter
from collections.abc import Iterator

from notifier.dates import ZONE_SLACK, day_sized, day_span, parse_w3c
from notifier.rules.context import Context, Dated
from notifier.rules.dates import dated_lastmods
from notifier.rules.table import BulkThresholds, Found, RuleSettings

BUILD_WINDOW = dt.timedelta(hours=1)  # how long before the run a build's clock stamps its pages
CROWD = dt.timedelta(minutes=10)  # how far apart the stamps of one build lie
FIX = "take lastmod from git or a front-matter field (`notify-changes stamp` rewrites it), or back the dates with [history]"


class _Judged:
    """The deploy's dates that the rule judges: those history does not back, parsed."""

    def __init__(self, context: Context) -> None:
        dated = dated_lastmods(context)
        backed = context.backed_by_history
        stamps = dated.stamps
        self.dated = dated
        if backed:
            self.keep: list[int] | None = [number for number in range(len(stamps)) if dated.change(number).loc not in backed]
            self.stamps = array.array("d", (stamps[number] for number in self.keep))
            invalid = sum(1 for change in dated.invalid if change.loc not in backed)
        else:
            self.keep, self.stamps, invalid = None, stamps, len(dated.invalid)
        valid_count = sum(1 for stamp in self.stamps if stamp == stamp)
        self.candidates = valid_count + invalid  # an invalid date is a changed page all the same
        self.valid = self.stamps
        if valid_count != len(self.stamps):
            self.valid = array.array("d", (stamp for stamp in self.stamps if stamp == stamp))

    def change(self, position: int) -> tuple[str, str]:
        """(loc, lastmod) of the judged page at ``position``."""
        change = self.dated.change(self.keep[position] if self.keep is not None else position)
        return change.loc, change.new or ""

    def first_at(self, stamp: float) -> tuple[str, str]:
        """(loc, lastmod) of the first judged page whose date is ``stamp``."""
        return self.change(self.stamps.index(stamp))


def lastmod_bulk(context: Context, settings: RuleSettings) -> Iterator[Found]:
    bulk = settings.bulk
    what = "added" if context.first_run else "changed"
    backed = context.backed_by_history
    held_back = [change for change in context.diff.held_back if change.loc not in backed] if backed else context.diff.held_back
    held = len(held_back)
    if held >= bulk.min_urls and held >= bulk.ratio * (held + len(context.diff.changed)):
        example = held_back[0]
        yield (
            "lastmod-bulk",
            example.loc,
            f"{held} of {held + len(context.diff.changed)} changed URLs moved their lastmod while the built page is "
            f"byte-identical to the last deploy's (e.g. {example.old} -> {example.new}): dates from file times or the "
            f"build clock, not from the content (those pages were held back, not announced); {FIX}",
            None,
        )
        return
    judged = _Judged(context)
    if judged.candidates < bulk.min_urls or not judged.valid:
        return
    enough = max(bulk.min_urls, bulk.ratio * judged.candidates, bulk.site_ratio * context.diff.total)
    now = settings.now
    stamp, shared = _most_shared(judged.valid, bulk.ratio)
    if shared >= enough:
        loc, lastmod = judged.first_at(stamp)
        message = _shared_mark(lastmod, now, first_run=context.first_run)
        if message is not None:
            yield "lastmod-bulk", loc, f"{shared} of {judged.candidates} {what} URLs {message}; {FIX}", None
            return
    crowd = _crowd(judged, now, settings.clock_skew)
    if crowd is not None and crowd[0] >= enough:
        count, loc, first, last, apart = crowd
        yield (
            "lastmod-bulk",
            loc,
            f"{count} of {judged.candidates} {what} URLs have lastmods within {_span(apart)} of each other, from "
            f"{first} to {last}, in the hour before this run: the build's clock or file times, not the content; {FIX}",
            None,
        )


def _shared_mark(lastmod: str, now: dt.datetime, *, first_run: bool) -> str | None:
    """What a shared date says of the build, or None when sharing it is honest."""
    instant = parse_w3c(lastmod)
    if instant is None:
        return None
    if day_sized(lastmod):
        start, end = day_span(lastmod, instant)
        if start - ZONE_SLACK <= now < end + ZONE_SLACK:
            return f"carry the run's own day, {lastmod}: a date from the build clock, not the content"
        return None  # pages changed on one day: a day is not an instant
    subsecond = instant.microsecond != 0
    if first_run and not subsecond and instant < now - BUILD_WINDOW:
        return None  # an import, a first commit of many pages: shared by design, long before the build
    finer = " (finer than a second: a machine's clock)" if subsecond else ""
    return f"share one lastmod {lastmod}{finer}: dates from file mtimes or the build clock, not from the content"


def _crowd(judged: _Judged, now: dt.datetime, skew: dt.timedelta) -> tuple[int, str, str, str, float] | None:
    """The most precise dates within CROWD of each other, in the hour before the run: (how
    many, the first one's loc, the first and the last lastmod, their distance in seconds);
    None when no precise date lies there."""
    low, high = (now - BUILD_WINDOW).timestamp(), (now + skew).timestamp()
    if max(judged.valid) < low:  # the common case, at C speed: no date in the hour before the run
        return None
    stamps = judged.stamps
    near = [stamp for stamp in stamps if low <= stamp <= high]
    if any(stamp % 60 == 0 for stamp in near):  # a day-sized date is a whole minute (midnight in some zone)
        near = [
            stamp for number, stamp in enumerate(stamps) if low <= stamp <= high and (stamp % 60 or not day_sized(judged.change(number)[1]))
        ]
    if not near:
        return None
    near.sort()
    width = CROWD.total_seconds()
    if near[-1] - near[0] <= width:  # a build's dates: all of them, one crowd
        count, first, last = len(near), 0, len(near) - 1
    else:
        count, first, last = 0, 0, 0
        for start_at, stamp in enumerate(near):
            end_at = bisect.bisect_right(near, stamp + width, lo=start_at)
            if end_at - start_at > count:
                count, first, last = end_at - start_at, start_at, end_at - 1
    loc, first_lastmod = judged.first_at(near[first])
    _, last_lastmod = judged.first_at(near[last])
    return count, loc, first_lastmod, last_lastmod, near[last] - near[first]


def _span(seconds: float) -> str:
    if seconds < 1:
        return f"{seconds * 1000:.0f} ms"
    if seconds < 120:
        return f"{seconds:.0f} s"
    return f"{seconds / 60:.0f} minutes"


_COUNT = operator.itemgetter(1)


def _most_shared(stamps: array.array[float], share: float) -> tuple[float, int]:
    """The instant most of ``stamps`` share and how many, whenever that is at least ``share``
    of them (else some instant and its count, below ``share``).

    Misra-Gries: with k counters, every value seen more than n/(k+1) times survives one
    pass; an exact count of the survivors follows. Memory stays k counters, not a
    counter per distinct date (a million at a first run).
    """
    if share <= 0.001:
        return max(Counter(stamps).items(), key=_COUNT)
    slots = math.ceil(1 / share)
    counters: dict[float, int] = {}
    for value in stamps:
        if value in counters:
            counters[value] += 1
        elif len(counters) < slots:
            counters[value] = 1
        else:
            for key in list(counters):
                if counters[key] == 1:
                    del counters[key]
                else:
                    counters[key] -= 1
    exact = Counter(value for value in stamps if value in counters)
    return max(exact.items(), key=_COUNT) if exact else (stamps[0], 1)  # (max: the first of equals, as most_common)


__all__ = ["BUILD_WINDOW", "CROWD", "BulkThresholds", "Dated", "lastmod_bulk"]
