"""The announcement policy of ``[announce]`` (``announce.Announce``) applied to a run: which of
what a deploy found is announced at all (``include``, ``exclude``), and what waits, pending,
for a later run (``min-interval``, ``per-run``, ``per-day``). Unset, each step returns what
it was given without looking at a URL.
"""

from __future__ import annotations

from collections.abc import Sequence

from notifier.announce import Announce
from notifier.pipeline.changes import Added, Change
from notifier.report import plural
from notifier.store import State

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
