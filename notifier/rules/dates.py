"""The rules that judge lastmods one by one: lastmod-invalid, lastmod-future, lastmod-regressed, lastmod-missing
(lastmod-bulk, which judges them together, is in ``bulk``)."""

from __future__ import annotations

import array
from collections.abc import Iterator

from notifier.changes import Change
from notifier.dates import parse_w3c, timestamps
from notifier.rules.context import Context, Dated
from notifier.rules.table import Found, RuleSettings


def _recorded_on(change: Change) -> str:
    return change.recorded[:10] if change.recorded else "the last deploy"


def _lastmods(context: Context, settings: RuleSettings) -> Iterator[Found]:
    diff = context.diff
    missing = len(diff.missing)
    if missing:
        if missing == diff.total:
            yield (
                "lastmod-missing",
                "(all URLs)",
                ("the one URL has no lastmod" if missing == 1 else f"none of the {missing} URLs has a lastmod")
                + "; search engines cannot tell what changed",
                None,
            )
        else:
            for loc in diff.missing:
                yield "lastmod-missing", loc, "no lastmod", None
    yield from _judged(dated_lastmods(context), settings)
    if diff.held_back:
        # Held back decides what is announced, never which dates are judged: a lastmod of
        # 2031 on a page whose bytes did not change is as false as on one that did.
        held = diff.held_back
        stamps = timestamps([change.new for change in held])
        invalid = [change for change, stamp in zip(held, stamps, strict=True) if stamp != stamp and change.new is not None]
        yield from _judged(Dated((), held, stamps, invalid), settings)


def _judged(dated: Dated, settings: RuleSettings) -> Iterator[Found]:
    """lastmod-invalid, lastmod-future and lastmod-regressed of these lastmods."""
    limit = settings.now + settings.clock_skew
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


def dated_lastmods(context: Context) -> Dated:
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
