"""What each configured endpoint still has to be told, made sendable before anything is sent.

Two promises live here. Nothing is lost: IndexNow endpoints share what they receive, so
the work a pending URL stands for is "announce this URL", not "tell this host"; the URLs
pending for an endpoint that has left the configuration (a typo fixed, an endpoint
retired) go to the endpoints configured now. Nothing is stuck: a URL no endpoint can ever
accept (``javascript:``, over 2,048 characters) is reported and never queued, and one an
older version queued is dropped with a note, so it cannot hold every later run at exit 3.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from notifier.changes import Added, Change, Diff
from notifier.report import plural
from notifier.store import PendingItem, State
from notifier.urls import unsendable, without_password
from notifier.waits import endpoint_key


def hand_over_orphans(state: State, endpoints: Sequence[str]) -> list[str]:
    """Move the pending URLs of endpoints not in ``endpoints`` to each of them; one note each."""
    notes: list[str] = []
    configured = {endpoint_key(each): each for each in endpoints}
    for endpoint in [each for each in state.pending if each not in endpoints]:
        items = state.pending.pop(endpoint)
        if not items:
            continue
        same = configured.get(endpoint_key(endpoint))  # the same endpoint, written otherwise now (a trailing slash)
        for target in endpoints if same is None else [same]:
            waiting = state.pending.setdefault(target, {})
            for loc, item in items.items():
                waiting.setdefault(loc, item)
        if same is None:
            notes.append(
                f"{plural(len(items), 'URL')} pending for {endpoint}, which is no longer configured; "
                f"{'it goes' if len(items) == 1 else 'they go'} to {', '.join(endpoints)} instead "
                "(IndexNow endpoints share what they receive)"
            )
    return notes


def drop_unsendable(state: State) -> list[str]:
    """Take out of every pending set the URLs no endpoint can accept; one note for them all."""
    dropped: dict[str, str] = {}  # loc -> why, each URL judged once however many endpoints wait for it
    for items in state.pending.values():
        for loc in list(items):
            why = dropped.get(loc) or unsendable(loc)
            if why is not None:
                dropped[loc] = why
                del items[loc]
    if not dropped:
        return []
    loc, why = next(iter(dropped.items()))
    shown = without_password(loc)[:200]
    return [f"dropped {plural(len(dropped), 'pending URL')} that no endpoint can accept (e.g. {shown!r}: {why}); they are never sent"]


def refuse_unsendable(groups: list[Sequence[Change]], irregular: set[str]) -> tuple[list[Sequence[Change]], list[str]]:
    """``groups`` (what this run announces) without the URLs that can never be sent, and a
    note for those. Only ``irregular`` URLs (see urls.irregular) of the sitemap can be such;
    removed URLs come from the state, so each of those is looked at."""
    bad = {loc for loc in irregular if unsendable(loc) is not None}
    kept: list[Sequence[Change]] = []
    refused: list[str] = []
    for group in groups:
        locs = group.locs if isinstance(group, Added) else [change.loc for change in group]
        if isinstance(group, Added):
            here = bad.intersection(locs) if bad else set()
        else:
            here = {loc for loc in locs if loc in bad or unsendable(loc) is not None}
        if not here:
            kept.append(group)
            continue
        refused.extend(loc for loc in locs if loc in here)
        if isinstance(group, Added):
            fewer = Added()
            for loc, lastmod in zip(group.locs, group.lastmods, strict=True):
                if loc not in here:
                    fewer.add(loc, lastmod)
            kept.append(fewer)
        else:
            kept.append([change for change in group if change.loc not in here])
    if not refused:
        return kept, []
    example = refused[0]
    return kept, [
        f"{plural(len(refused), 'URL')} can never be sent to IndexNow and were not queued "
        f"(e.g. {without_password(example)[:200]!r}: {unsendable(example)}); fix them in the sitemap"
    ]


def apply_to_state(diff: Diff, state: State, *, endpoints: list[str], to_submit: Iterable[Sequence[Change]], now: str) -> None:
    """Record the sitemap as the new truth and add ``to_submit`` to every endpoint's pending set.

    The pending sets are then what each endpoint is sent (older pending first). This is
    written durably before the first request, so a run killed mid-way resends what was
    not acknowledged; each acknowledged batch then leaves the pending set.
    """
    state.parts, state.records = diff.parts, diff.records
    fresh = {reason: PendingItem(reason=reason, since=now) for reason in ("added", "changed", "removed")}
    fresh["alternate"] = fresh["changed"]  # [announce] alternates: pending as changed pages (the state's format is the same)
    groups = list(to_submit)
    for endpoint in endpoints:
        items = state.pending.setdefault(endpoint, {})
        for group in groups:
            if isinstance(group, Added) and not items:  # a first run's million: no Change objects
                items = state.pending[endpoint] = dict.fromkeys(group.locs, fresh["added"])
                continue
            for change in group:
                waiting = items.get(change.loc)
                if waiting is None:  # items are never changed in place: one object serves every URL alike
                    items[change.loc] = fresh[change.reason]
                else:
                    items[change.loc] = PendingItem(reason=fresh[change.reason]["reason"], since=waiting["since"])
    if not state.created:
        state.created = now
