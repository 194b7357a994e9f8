"""The announcement policy of ``[announce]`` (``announce.Announce``) applied to a run: which of
what a deploy found is announced at all (``include``, ``exclude``), what is announced with it
(``alternates``), and what waits, pending, for a later run (``min-interval``, ``per-run``,
``per-day``). Unset, each step returns what
it was given without looking at a URL.
"""

from __future__ import annotations

import datetime as dt
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

from notifier.announce import Announce
from notifier.changes import Added, Change, Diff
from notifier.dates import format_utc, parse_w3c
from notifier.pipeline.context import NO_HOLDS, Holds, Run
from notifier.report import plural
from notifier.sitemap.files import SitemapFile
from notifier.store import PendingItem, State
from notifier.store.checks import SentToday
from notifier.store.model import RecordedPart
from notifier.store.records import last_submitted_of
from notifier.urlhash import loc_hash
from notifier.urls import where_host
from notifier.waits import endpoint_key

if TYPE_CHECKING:  # the head reader is lxml's: state show reads the policy without it
    from notifier.site.head import Head

Groups = list[Sequence[Change]]


def hold_out(announce: Announce, groups: Groups, state: State, endpoints: Sequence[str]) -> tuple[Groups, dict[str, str], list[str]]:
    """``groups`` without the URLs the patterns hold out, those URLs (loc -> why) and a note.
    A URL pending from an earlier run that a pattern now holds out leaves the pending sets
    (it would never be sent, and would hold every later run at exit 3)."""
    if not announce.patterns:
        return groups, {}, []
    out: dict[str, str] = {}
    kept: list[Sequence[Change]] = []
    for group in groups:
        if isinstance(group, Added):
            fewer = Added()
            for loc, lastmod in zip(group.locs, group.lastmods, strict=True):
                why = announce.why_held_out(loc)
                if why is None:
                    fewer.add(loc, lastmod)
                else:
                    out[loc] = why
            kept.append(fewer if len(fewer) < len(group) else group)
        else:
            chosen = []
            for change in group:
                why = announce.why_held_out(change.loc)
                if why is None:
                    chosen.append(change)
                else:
                    out[change.loc] = why
            kept.append(chosen)
    dropped: set[str] = set()
    for endpoint in endpoints:
        items = state.pending.get(endpoint, {})
        for loc in [loc for loc in items if loc in out or announce.why_held_out(loc) is not None]:
            del items[loc]
            if loc not in out:
                dropped.add(loc)
    notes: list[str] = []
    if out:
        loc, why = next(iter(out.items()))
        notes.append(f"{plural(len(out), 'URL')} held out by [announce] patterns: recorded, never announced (e.g. {loc[:200]}: {why})")
    if dropped:
        notes.append(f"{plural(len(dropped), 'pending URL')} now held out by [announce] patterns left the pending set; they are never sent")
    return kept, out, notes


_ORDER = {"added": 0, "changed": 1, "removed": 2}  # what a cap sends first; oldest first within each


def hold_back(run: Run, state: State) -> Holds:
    """What ``min-interval``, ``per-run`` and ``per-day`` keep pending this run. With
    ``--endpoint-mode first`` every endpoint holds the same URLs (the batches are made of
    what any endpoint waits for), capped by the smallest allowance left among the endpoints
    that can still take some, so that no endpoint goes over its cap."""
    announce = run.settings.announce
    if not announce.holds:
        return NO_HOLDS
    endpoints = run.endpoints
    first = run.settings.endpoint_mode == "first"
    deferred = _deferred(announce, state, endpoints, run.now) if announce.min_interval else {}
    allowance = {endpoint: _allowance(announce, state, endpoint, run.stamp) for endpoint in endpoints}
    full = {e: f"took its [announce] per-day {announce.per_day} URLs today (UTC)" for e, left in allowance.items() if left == 0}
    waiting: dict[str, dict[str, str]] = {}
    if first:
        union: dict[str, PendingItem] = {}
        for endpoint in endpoints:
            for loc, item in state.pending.get(endpoint, {}).items():
                union.setdefault(loc, item)
        open_to = [left for endpoint, left in allowance.items() if endpoint not in full and left is not None]
        uncapped = announce.per_run is None and announce.per_day is None
        held = _capped(union, deferred, None if uncapped else min(open_to, default=0), announce)
        waiting = dict.fromkeys(endpoints, held)
    else:
        for endpoint in endpoints:
            waiting[endpoint] = _capped(state.pending.get(endpoint, {}), deferred, allowance[endpoint], announce)
    return Holds({endpoint: held for endpoint, held in waiting.items() if held}, full)


def _allowance(announce: Announce, state: State, endpoint: str, stamp: str) -> int | None:
    """How many URLs ``endpoint`` may still take this run (None: no cap)."""
    caps = [announce.per_run] if announce.per_run is not None else []
    if announce.per_day is not None:
        today = state.sent_today.get(endpoint_key(endpoint))
        sent = today["urls"] if today is not None and today["day"] == stamp[:10] else 0
        caps.append(max(announce.per_day - sent, 0))
    return min(caps) if caps else None


def _capped(items: Mapping[str, PendingItem], deferred: dict[str, str], allowance: int | None, announce: Announce) -> dict[str, str]:
    held = {loc: deferred[loc] for loc in items if loc in deferred} if deferred else {}
    if allowance is None:
        return held
    free = [loc for loc in items if loc not in held] if held else list(items)
    if len(free) <= allowance:
        return held
    free.sort(key=lambda loc: (_ORDER.get(items[loc]["reason"], 0), items[loc]["since"]))  # stable: sitemap order within
    cap = "per-run" if announce.per_run is not None and allowance == announce.per_run else "per-day"
    limit = announce.per_run if cap == "per-run" else announce.per_day
    why = f"over the [announce] {cap} cap of {limit}: a later run sends it"
    held.update(dict.fromkeys(free[allowance:], why))
    return held


def _deferred(announce: Announce, state: State, endpoints: Sequence[str], now: dt.datetime) -> dict[str, str]:
    """loc -> why, for the pending URLs last announced less than ``min-interval`` ago."""
    union = dict.fromkeys(loc for endpoint in endpoints for loc in state.pending.get(endpoint, {}))
    deferred: dict[str, str] = {}
    for loc, at in last_announced(state, union).items():
        instant = parse_w3c(at)
        if instant is not None and instant + announce.min_interval > now:
            until = format_utc(instant + announce.min_interval)
            deferred[loc] = f"announced at {at}, less than [announce] min-interval ago: sent by the first run after {until}"
    return deferred


def held_now(announce: Announce, state: State, endpoint: str, now: dt.datetime) -> tuple[int, str] | None:
    """For ``state show``: how many of ``endpoint``'s pending URLs ``[announce]`` keeps from a
    run at ``now`` (its per-day cap used up, ``min-interval``), and until when; None: none."""
    items = state.pending.get(endpoint, {})
    if not items or not announce.holds:
        return None
    if announce.per_day is not None and _allowance(Announce(per_day=announce.per_day), state, endpoint, format_utc(now)) == 0:
        tomorrow = format_utc(dt.datetime.combine(now.date() + dt.timedelta(days=1), dt.time(), dt.UTC))
        return len(items), f"its [announce] per-day cap of {announce.per_day} is used up today: sent by a run from {tomorrow}"
    if not announce.min_interval:
        return None
    until = sorted(
        instant + announce.min_interval
        for at in last_announced(state, items).values()
        if (instant := parse_w3c(at)) is not None and instant + announce.min_interval > now
    )
    if not until:
        return None
    return len(until), f"[announce] min-interval: sent by the first run after {format_utc(until[0])}" + (
        f" (the last of them after {format_utc(until[-1])})" if until[-1] != until[0] else ""
    )


def last_announced(state: State, locs: Iterable[str]) -> dict[str, str]:
    """loc -> when an endpoint last acknowledged it, for those of ``locs`` recorded with a time."""
    records = state.records or {}
    found: dict[str, str] = {}
    left: list[str] = []
    for loc in locs:
        record = records.get(loc)
        if record is None:
            left.append(loc)
        elif last_submitted_of(record):
            found[loc] = last_submitted_of(record) or ""
    if left:
        hashed = [(loc, loc_hash(loc)) for loc in left]
        for part in state.parts:
            if isinstance(part, RecordedPart):  # a new part's records are this run's: looked up above
                urls = part.urls() if part.decoded else None
                for loc in part.may_list_among(hashed):
                    record = (urls if urls is not None else part.urls()).get(loc)
                    at = last_submitted_of(record) if record is not None else None
                    if at:
                        found.setdefault(loc, at)
    return found


def count_sent(state: State, endpoint: str, count: int, at: str) -> None:
    """``endpoint`` took ``count`` URLs at ``at``: the day's count, for ``per-day``."""
    key = endpoint_key(endpoint)
    today = state.sent_today.get(key)
    sent = today["urls"] if today is not None and today["day"] == at[:10] else 0
    state.sent_today[key] = SentToday(day=at[:10], urls=sent + count)


def holds_note(holds: Holds) -> list[str]:
    """One line: how many URLs wait, and why (a deferral is policy, not a failure)."""
    every = holds.urls()
    if not every:
        return []
    reasons = Counter("min-interval" if "min-interval" in why else "per-run" if "per-run" in why else "per-day" for why in every.values())
    said = ", ".join(f"{count} by {reason}" for reason, count in reasons.items())
    loc, why = next(iter(every.items()))
    verb = "waits" if len(every) == 1 else "wait"
    return [f"{plural(len(every), 'URL')} {verb} for [announce] ({said}): pending, not a failure (e.g. {loc[:200]}: {why})"]


def declared_alternates(
    files: Iterable[SitemapFile], changed: Iterable[Change], heads: Mapping[str, Head] | None
) -> dict[str, list[tuple[str, str, str]]]:
    """Changed loc -> its hreflang alternates (hreflang, URL, where declared): the sitemap's
    ``xhtml:link``, then (with --site-dir) the page's head."""
    from notifier.site.head import alternates_of  # lxml, loaded where a page's head is read

    wanted = {change.loc for change in changed}
    found: dict[str, list[tuple[str, str, str]]] = {}
    for info in files:
        for loc, links in info.alternates.items():
            if loc in wanted and loc not in found:
                found[loc] = [(language, href, "the sitemap's xhtml:link") for language, href in links]
    for loc in wanted if heads else ():
        head = heads.get(loc) if heads else None
        if head is not None and head.alternates:
            known = {href for _, href, _ in found.get(loc, ())}
            more = [(language, url, "its page's head") for language, url in alternates_of(loc, head) if url not in known]
            found.setdefault(loc, []).extend(more)
    return found


def add_alternates(announce: Announce, diff: Diff, groups: Groups) -> tuple[Groups, dict[str, str], list[str]]:
    """``groups`` with the hreflang alternates of the changed pages they hold, when in scope
    (on the sitemap's hosts, listed by it) and not held out; those added (loc -> why) and a note."""
    if not announce.alternates or not diff.alternates:
        return groups, {}, []
    announced = {loc for group in groups for loc in (group.locs if isinstance(group, Added) else (change.loc for change in group))}
    candidates: dict[str, tuple[str, str, str]] = {}  # alternate -> (the changed page, hreflang, where declared)
    for group in groups:
        for change in () if isinstance(group, Added) else group:
            for language, href, where in diff.alternates.get(change.loc, ()) if change.reason == "changed" else ():
                if href not in announced and href not in candidates:
                    candidates[href] = (change.loc, language, where)
    hosts = {where_host(origin).host for origin in diff.origins}
    listed = _listed(diff, [href for href in candidates if where_host(href).host in hosts])
    added: list[Change] = []
    why: dict[str, str] = {}
    left: Counter[str] = Counter()
    for href, (of, language, where) in candidates.items():
        out = announce.why_held_out(href)
        if href not in listed:
            left["not in the sitemap or on another host"] += 1
        elif out is not None:
            left["held out by [announce] patterns"] += 1
        else:
            added.append(Change(href, "alternate", of, language))
            why[href] = f"the {language} alternate of {of} ({where})"
    notes = []
    if why:
        loc, reason = next(iter(why.items()))
        notes.append(f"{plural(len(why), 'hreflang alternate')} announced with the changed pages (e.g. {loc[:200]}: {reason})")
    if left:
        said = ", ".join(f"{count} {reason}" for reason, count in left.items())
        notes.append(f"{plural(sum(left.values()), 'hreflang alternate')} of the changed pages not announced: {said}")
    return [*groups, added] if added else groups, why, notes


def _listed(diff: Diff, locs: list[str]) -> set[str]:
    """Those of ``locs`` the sitemap lists: the files read this deploy, then the others' parts."""
    listed = diff.listed_of(locs)
    rest = [(loc, loc_hash(loc)) for loc in locs if loc not in listed]
    for part in diff.parts if rest else ():
        if isinstance(part, RecordedPart):
            listed.update(loc for loc in part.may_list_among(rest) if loc in part.urls())
    return listed
