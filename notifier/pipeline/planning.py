"""Phase two of a run: what this deploy announces, recorded in the state as each endpoint's
pending URLs. A dry run stops here and shows the batches it would send.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from notifier.dates import parse_w3c
from notifier.errors import UsageError
from notifier.pipeline.context import Holds, Plan, Run
from notifier.pipeline.diff import Added, Change, Diff
from notifier.pipeline.pending import apply_to_state, refuse_unsendable
from notifier.pipeline.policy import add_alternates, hold_back, hold_out, holds_note
from notifier.protocol import make_batches
from notifier.report import PlannedBatch, plural
from notifier.settings.settings import Settings
from notifier.store import State
from notifier.urls import host_of, origins_in, site
from notifier.waits import wait_for


def plan_announcements(run: Run, diff: Diff, state: State) -> Plan:
    """Choose what to announce (``--initial``, ``--no-removed``; never a URL no endpoint can
    take), require a key for every host, and record the sitemap as the new truth with each
    endpoint's pending URLs. A dry run's plan has the batches it would send, and why."""
    notes: list[str] = []
    chosen, excluded, held_out = hold_out(run.settings.announce, _choose(run, diff, notes), state, run.endpoints)
    chosen, alternates, with_alternates = add_alternates(run.settings.announce, diff, chosen)
    to_submit, refused = refuse_unsendable(chosen, diff.irregular)
    notes.extend([*held_out, *with_alternates, *refused])
    _require_keys(run, to_submit, state)
    apply_to_state(diff, state, endpoints=run.endpoints, to_submit=to_submit, now=run.stamp)
    holds = hold_back(run, state)
    notes.extend(holds_note(holds))
    explain = _explainer(diff, to_submit, state, run.endpoints)
    planned: list[PlannedBatch] = []
    if run.mode == "dry-run":
        keys = run.settings.keys
        if not keys.configured:
            notes.append(f"no IndexNow key is set: for a real run, {keys.missing()}")
        planned = _plan(run.settings, state, run.endpoints, explain(), holds)
    return Plan(to_submit, notes, explain, planned, excluded, holds, alternates)


def preview_first_run(run: Run, diff: Diff) -> list[str]:
    """``check`` of a site with no state stops before planning: say what a real run would do
    with this first deploy (record a baseline, or announce what ``--initial`` picks)."""
    notes: list[str] = []
    _choose(run, diff, notes)
    return notes


def _choose(run: Run, diff: Diff, notes: list[str]) -> list[Sequence[Change]]:
    """Which of this deploy's changes to announce (``--initial`` on the first run, ``--no-removed``)."""
    settings = run.settings
    if run.first_run:
        if settings.initial == "submit":
            return [diff.added]
        since = settings.since
        if since is not None:
            cutoff = run.now - since
            chosen = []
            for change in diff.added:
                instant = parse_w3c(change.new) if change.new else None
                if instant is not None and instant >= cutoff:
                    chosen.append(change)
            recorded = "recorded" if run.records else "would record"
            notes.append(
                f"{_no_state(settings)}: {recorded} {plural(len(diff.added), 'URL')}, announcing the "
                f"{len(chosen)} whose lastmod is within {settings.initial[6:]}"
            )
            return [chosen]
        if not run.records:
            notes.append(
                f"{_no_state(settings)}: a real run would record a baseline of {plural(len(diff.added), 'URL')} "
                "and submit nothing (or pass --initial submit to announce every URL)"
            )
        else:
            notes.append(
                f"{_no_state(settings)}: recorded a baseline of {plural(len(diff.added), 'URL')} and submitted nothing; "
                f"{_keep(settings)} (or pass --initial submit to announce every URL)"
            )
        return []
    if settings.no_removed:
        return [diff.added, diff.changed]
    return diff.announced


def _keep(settings: Settings) -> str:
    """What the first run asks of its user: a file to keep between deploys; a database keeps itself."""
    return "keep the state file between deploys" if isinstance(settings.state, Path) else "the next run announces what changed"


def _no_state(settings: Settings) -> str:
    """How the first run names the state it found empty: a file not there yet, or a database site with no rows."""
    return f"no state file at {settings.state}" if isinstance(settings.state, Path) else f"nothing recorded yet in {settings.state}"


def _explainer(diff: Diff, to_submit: list[Sequence[Change]], state: State, endpoints: list[str]) -> Callable[[], dict[str, Change]]:
    """loc -> why it is sent, for what this run announced and every URL pending at a configured
    endpoint; made when the report is rendered (as JSON), not for every run."""

    @functools.cache  # the dry run's batches and the JSON report ask for the same answer
    def explain() -> dict[str, Change]:
        reasons = {change.loc: change for change in diff.pending}
        reasons.update((change.loc, change) for change in itertools.chain.from_iterable(to_submit))
        for endpoint in endpoints:
            for loc, item in state.pending.get(endpoint, {}).items():
                if loc not in reasons:
                    reasons[loc] = Change(loc, "pending", since=item["since"])
        return reasons

    return explain


def _plan(settings: Settings, state: State, endpoints: list[str], reasons: dict[str, Change], holds: Holds) -> list[PlannedBatch]:
    planned: list[PlannedBatch] = []
    for endpoint, sends in _sends(settings, state, [each for each in endpoints if each not in holds.full] or endpoints):
        kept = holds.at(endpoint)  # [announce] keeps these pending this run
        pending = [loc for loc in sends if loc not in kept] if kept else sends
        held = wait_for(state.backoff, endpoint)  # the waits still ahead (loop.begin bounded them)
        batches, unsendable = make_batches(pending, settings.keys, settings.batch_size)
        for batch in batches:
            planned.append(PlannedBatch(endpoint, batch.host, [reasons[loc] for loc in batch.urls], held))
        if unsendable and not settings.keys.configured:
            # a dry run without a key still shows what would be sent, grouped by host
            by_host: dict[str, list[Change]] = {}
            for loc, _ in unsendable:
                by_host.setdefault(host_of(loc), []).append(reasons[loc])
            for host, changes in by_host.items():
                for start in range(0, len(changes), settings.batch_size):
                    planned.append(PlannedBatch(endpoint, host, changes[start : start + settings.batch_size], held))
    return planned


def _sends(settings: Settings, state: State, endpoints: list[str]) -> list[tuple[str, Iterable[str]]]:
    """Each endpoint a dry run shows batches to, with their URLs: with ``--endpoint-mode
    first``, the first endpoint not asked to wait (else the first) with the URLs pending at any."""
    if settings.endpoint_mode != "first":
        return [(endpoint, state.pending.get(endpoint, {})) for endpoint in endpoints]
    union = dict.fromkeys(loc for endpoint in endpoints for loc in state.pending.get(endpoint, {}))
    free = [endpoint for endpoint in endpoints if wait_for(state.backoff, endpoint) is None]
    return [((free or endpoints)[0], union)]


def _require_keys(run: Run, to_submit: list[Sequence[Change]], state: State) -> None:
    """A run with something to send needs a key for every host, before anything is written."""
    settings, endpoints = run.settings, run.endpoints
    origins: set[str] = set()
    for group in to_submit:
        origins.update(origins_in(group.locs if isinstance(group, Added) else (change.loc for change in group)))
    for endpoint in endpoints:
        origins.update(origins_in(state.pending.get(endpoint, {})))
    hosts = {site(each).host or "?" for each in origins}
    missing = sorted(host for host in hosts if settings.keys.key_for(host) is None)
    if missing and run.records:
        raise UsageError(
            f"no IndexNow key for {', '.join(missing[:3])}: {settings.keys.missing()}"
            + ("; `notify-changes key new` makes one" if settings.keys.derive_variable is None else "")
        )
