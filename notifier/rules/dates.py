"""The rules that judge lastmods: lastmod-invalid, lastmod-future, lastmod-regressed, lastmod-missing, lastmod-bulk."""

from __future__ import annotations

import array
import math
from collections import Counter
from collections.abc import Iterator

from notifier.changes import Change
from notifier.dates import parse_w3c, timestamps
from notifier.rules.table import Context, Dated, Found, RuleSettings


def _recorded_on(change: Change) -> str:
    return change.recorded[:10] if change.recorded else "the last deploy"


def _lastmods(context: Context, settings: RuleSettings) -> Iterator[Found]:
    diff = context.diff
    limit = settings.now + settings.clock_skew
    missing = len(diff.missing)
    if missing:
        if missing == diff.total:
            yield (
                "lastmod-missing",
                "(all URLs)",
                f"none of the {missing} URLs has a lastmod; search engines cannot tell what changed",
                None,
            )
        else:
            for loc in diff.missing:
                yield "lastmod-missing", loc, "no lastmod", None
    dated = _dated(context)
    for change in dated.invalid:
        if change.new and change.new[:1].isalpha():  # a feed's <pubDate> that did not parse
            what = (
                "is neither a W3C Datetime nor, as feeds write them, a valid RFC 822 date "
                "(e.g. Wed, 01 May 2024 12:00:00 +0000; the weekday must fit)"
            )
        else:
            what = "is not a W3C Datetime (e.g. 2024-05-01 or 2024-05-01T12:00:00+00:00)"
        yield "lastmod-invalid", change.loc, f"lastmod {change.new!r} {what}", None
    limit_stamp = limit.timestamp()
    stamps = dated.stamps
    for number in _positions_over(stamps, limit_stamp):
        change = dated.change(number)
        yield (
            "lastmod-future",
            change.loc,
            f"lastmod {change.new} is in the future (now is {settings.now:%Y-%m-%dT%H:%M:%SZ}); check the generator's clock and time zone",
            None,
        )
    first_changed = len(dated.added)
    for offset, change in enumerate(dated.changed):
        stamp = stamps[first_changed + offset]
        if change.old is not None and stamp == stamp:  # NaN: no date, or no valid one
            old_instant = parse_w3c(change.old)
            if old_instant is not None and stamp < old_instant.timestamp():
                yield (
                    "lastmod-regressed",
                    change.loc,
                    f"lastmod {change.new} is earlier than {change.old} recorded on {_recorded_on(change)}",
                    None,
                )


def _positions_over(stamps: array.array[float], limit: float) -> Iterator[int]:
    """Where ``stamps`` exceed ``limit``: a scan at C speed first, positions only if any do."""
    if not stamps or max((stamp for stamp in stamps if stamp == stamp), default=limit) <= limit:
        return
    for number, stamp in enumerate(stamps):
        if stamp > limit:
            yield number


def _dated(context: Context) -> Dated:
    if context.dated is None:
        diff = context.diff
        lastmods = diff.added.lastmods  # a first run's million, not copied
        if diff.changed:
            lastmods = lastmods + [change.new for change in diff.changed]
        parsed = diff.added.stamps  # parsed by the reader already, on every core (a first run)
        usable = parsed is not None and len(parsed) == len(diff.added) and not diff.changed
        stamps = parsed if usable and parsed is not None else timestamps(lastmods)
        dated = Dated(diff.added, diff.changed, stamps, [])
        if any(stamp != stamp for stamp in dated.stamps):  # NaN: no lastmod, or not a W3C Datetime
            dated.invalid.extend(
                dated.change(number) for number, stamp in enumerate(dated.stamps) if stamp != stamp and lastmods[number] is not None
            )
        context.dated = dated
    return context.dated


def _bulk(context: Context, settings: RuleSettings) -> Iterator[Found]:
    bulk = settings.bulk
    dated = _dated(context)
    # a date that git history backs is honest however many pages share it (one big commit)
    backed = context.backed_by_history
    candidates = sum(1 for stamp in dated.stamps if stamp == stamp) + len(dated.invalid)
    stamps = dated.stamps
    if backed:
        keep = [number for number in range(len(stamps)) if dated.change(number).loc not in backed]
        candidates = sum(1 for number in keep if stamps[number] == stamps[number]) + sum(
            1 for change in dated.invalid if change.loc not in backed
        )
        stamps = array.array("d", (stamps[number] for number in keep))
    else:
        keep = None
    valid = array.array("d", (stamp for stamp in stamps if stamp == stamp)) if candidates != len(stamps) else stamps
    if candidates < bulk.min_urls or not valid:
        return
    stamp, shared = _most_shared(valid, bulk.ratio)
    total_site = context.diff.total
    if shared >= bulk.min_urls and shared >= bulk.ratio * candidates and shared >= bulk.site_ratio * total_site:
        position = stamps.index(stamp)
        example = dated.change(keep[position] if keep is not None else position)
        what = "added" if context.first_run else "changed"
        yield (
            "lastmod-bulk",
            example.loc,
            f"{shared} of {candidates} {what} URLs share one lastmod {example.new}: dates from file mtimes or "
            "the build clock, not from the content; take lastmod from git or a front-matter field",
            None,
        )


def _most_shared(stamps: array.array[float], share: float) -> tuple[float, int]:
    """The instant most of ``stamps`` share and how many, whenever that is at least ``share``
    of them (else some instant and its count, below ``share``).

    Misra-Gries: with k counters, every value seen more than n/(k+1) times survives one
    pass; an exact count of the survivors follows. Memory stays k counters, not a
    counter per distinct date (a million at a first run).
    """
    if share <= 0.001:
        return Counter(stamps).most_common(1)[0]
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
    return exact.most_common(1)[0] if exact else (stamps[0], 1)
