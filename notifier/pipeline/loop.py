"""The deploy loop in one place: read and diff -> verify -> plan -> persist -> submit -> record.

``check``, ``--dry-run`` and ``run`` take the same path and stop at different phases, as
``context.STOPS`` says: ``check`` after verifying, a dry run after planning (it shows the
batches), a run goes on to make what must be sent durable, send it, and record the run.
Each phase is a function of the run (``context.Run``) and the state, in a module named for
it, and returns a frozen result; the report is put together here, once.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

from notifier.environment import Environment
from notifier.errors import ExitCode, InputError, NotifierError
from notifier.metrics import after_error, after_run
from notifier.pipeline.context import Deliveries, Plan, Recorded, Run, Verified, mode_of
from notifier.pipeline.pending import drop_unsendable, hand_over_orphans
from notifier.pipeline.planning import plan_announcements, preview_first_run
from notifier.pipeline.verification import diff_and_verify
from notifier.protocol import Keys, redact_all
from notifier.report import Report, plural
from notifier.rules import Violation
from notifier.settings.settings import Settings
from notifier.stats import run_totals
from notifier.store import Part, RunRecord, SaveFailed, State, Store, open_store, read_state
from notifier.waits import bounded, wait_for
from notifier.workers import Workers

__all__ = ["Environment", "execute"]

_NOTHING: Mapping[str, str] = {}


def execute(settings: Settings, env: Environment | None = None, *, notes: Sequence[str] = ()) -> Report:
    """Run ``check`` or ``run`` as ``settings`` say and return the report; ``notes``: the
    caller's own, last in the report. Never prints."""
    env = env or Environment()
    try:
        with without_cycle_collection(), Workers(settings.jobs) as workers, contextlib.ExitStack() as stack:
            begun, store = begin_site(settings, env, workers, stack)
            report = finish(begun, store, notes)
    except NotifierError as error:  # its one line names files and URLs: a key file's path holds the key
        error.args = (redact_all(str(error), settings.keys),)
        after_error(settings, error, env.now())  # --metrics: a run that stopped says so too
        raise
    return after_run(report, [settings], env.now(), [begun.state])  # --metrics, once the state's lock is let go


@contextlib.contextmanager
def without_cycle_collection() -> Iterator[None]:
    """A run makes millions of small objects and no reference cycles; the cyclic garbage
    collector would walk them all again and again (a third of the parse time at a million
    URLs). It is switched off for the run and restored after.

    Every object made while it was off sits in its youngest generation, and the first
    collection after would walk them all (a quarter of a second for the million records the
    report's explanations keep alive): they are moved to the oldest generation first, at no
    cost (``freeze`` then ``unfreeze`` splices the lists), unless the caller keeps objects
    frozen itself (a server that forks), whose freeze is left alone."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            if gc.get_freeze_count() == 0:
                gc.freeze()
                gc.unfreeze()
            gc.enable()


def begin_site(settings: Settings, env: Environment, workers: Workers, stack: contextlib.ExitStack) -> tuple[Begun, Store | None]:
    """Read a site's state and begin: a run opens its store, whose lock ``stack`` holds until
    it closes; check and a dry run read it without a lock."""
    if mode_of(settings) != "run":
        return begin(settings, env, workers, read_state(settings.state)), None
    opened = open_store(settings.state, lock_timeout=settings.lock_timeout, clock=env.clock, sleep=env.sleep, notice=env.notice)
    store = stack.enter_context(opened)
    return begin(settings, env, workers, store.load(), store.shared_waits()), store


@dataclass(frozen=True)
class Begun:
    """A site read, diffed and verified; what ``finish`` needs to plan, send and record."""

    run: Run
    state: State
    recorded_parts: list[Part]
    tidied: list[str]
    verified: Verified


def begin(settings: Settings, env: Environment, workers: Workers, recorded: State | None, waits: Mapping[str, str] | None = None) -> Begun:
    """The first half of a run: read, diff and verify ``recorded`` (None: no state yet).
    ``waits``: what endpoints asked the other sites of a shared state to wait for."""
    run = Run(settings, env, env.now(), recorded is None, workers)
    if settings.found_sitemap and env.notice is not None:
        env.notice(f"no SITEMAP given: reading {settings.sitemap}, with --site-dir {settings.site_dir}")
    if run.first_run and settings.initial == "fail" and run.records:
        raise InputError(
            f"{settings.state}: no state file, and --initial fail refuses to start without one; "
            "restore the state from the last deploy, or pick --initial baseline|submit|since:DURATION"
        )
    state = recorded or State()
    state.backoff, unbelieved = bounded([*state.backoff.items(), *(waits or {}).items()], run.now)
    recorded_parts = list(state.parts)
    tidied = unbelieved + hand_over_orphans(state, run.endpoints) + drop_unsendable(state)
    return Begun(run, state, recorded_parts, tidied, diff_and_verify(run, state))


def finish(begun: Begun, store: Store | None, notes: Sequence[str] = ()) -> Report:
    """The rest, where the command stops: plan, make durable, send, record; the report."""
    run, state, tidied, verified = begun.run, begun.state, begun.tidied, begun.verified
    workers_note = [run.workers.note] if run.workers.note else []
    if verified.failed or run.stops_after == "verify":
        preview = preview_first_run(run, verified.diff) if run.first_run and not verified.failed else []
        exit_code = ExitCode.VERIFICATION_FAILED if verified.failed else ExitCode.OK
        return _report(run, state, verified, notes=[*tidied, *verified.notes, *preview, *workers_note, *notes], exit_code=exit_code)
    plan = plan_announcements(run, verified.diff, state)
    if run.stops_after == "plan":
        return _report(run, state, verified, plan, notes=[*tidied, *verified.notes, *plan.notes, *workers_note, *notes])
    assert store is not None  # a run that records has its store open
    # a rerun of the same deploy changes nothing: every file unread, nothing new to announce
    changed = run.first_run or bool(tidied) or any(plan.to_submit) or _parts_changed(state.parts, begun.recorded_parts)
    _persist_pending(store, state, run.endpoints, stamp=run.stamp, changed=changed)
    from notifier.pipeline.submission import submit_pending  # here: a check never loads requests and tenacity (half its start)

    deliveries = submit_pending(run, state, store, plan.holds) if _has_pending(state, run.endpoints) else Deliveries([], [])
    done = _record_run(run, store, state, verified, deliveries, changed=changed, held=plan.holds.urls())
    exit_code = ExitCode.NOT_RECORDED if done.not_recorded else ExitCode.SUBMISSION_INCOMPLETE if done.incomplete else ExitCode.OK
    return _report(
        run,
        state,
        verified,
        plan,
        deliveries,
        done,
        notes=[*tidied, *verified.notes, *plan.notes, *deliveries.notes, *done.notes, *workers_note, *notes],
        exit_code=exit_code,
    )


def _report(
    run: Run,
    state: State,
    verified: Verified,
    plan: Plan | None = None,
    deliveries: Deliveries | None = None,
    done: Recorded | None = None,
    *,
    notes: list[str],
    exit_code: ExitCode = ExitCode.OK,
) -> Report:
    """The report of a run that stopped where ``run.stops_after`` says (or failed verifying):
    every text with each key cut to its first four characters, as the README promises of
    every message, in every format and in the API's Report alike."""
    keys = run.settings.keys
    diff = verified.diff
    return Report(
        command=run.settings.command,
        dry_run=run.settings.dry_run,
        exit_code=exit_code,
        added=diff.added,
        changed=diff.changed,
        removed=diff.removed,
        unchanged=diff.unchanged,
        held_back=[change.loc for change in diff.held_back],
        pending=done.pending if done is not None else state.waiting(run.endpoints),
        submitted=done.submitted if done is not None else [],
        violations=_without_secrets_in(verified, keys) + (deliveries.findings if deliveries else []),
        batches=[batch._replace(message=redact_all(batch.message, keys)) for batch in deliveries.batches] if deliveries else [],
        planned=plan.planned if plan is not None else [],
        notes=[redact_all(note, keys) for note in notes] if keys.secrets else notes,
        not_live=[redact_all(url, keys) for url in deliveries.not_live] if deliveries else [],
        previous_key=deliveries.previous_key if deliveries else [],
        explain=plan.explain if plan is not None else None,
        excluded=plan.excluded if plan is not None else {},
        deferred=plan.holds.urls() if plan is not None else {},
        alternates=plan.alternates if plan is not None else {},
    )


def _without_secrets_in(verified: Verified, keys: Keys) -> list[Violation]:
    if not keys.secrets:
        return verified.violations
    return [
        violation._replace(url=redact_all(violation.url, keys), message=redact_all(violation.message, keys))
        for violation in verified.violations
    ]


def _parts_changed(parts: list[Part], recorded: list[Part]) -> bool:
    """Whether the parts differ from the recorded ones. A part read again (with --site-dir
    every file is read, to fingerprint its pages) is a new object holding the same records:
    compared by content, so that a rerun of the same deploy leaves the file's bytes alone."""
    return len(parts) != len(recorded) or any(new is not old and not _same_part(new, old) for new, old in zip(parts, recorded, strict=True))


def _same_part(new: Part, old: Part) -> bool:
    if new.meta() != old.meta():
        return False
    return list(new.urls().items()) == list(old.urls().items())


def _has_pending(state: State, endpoints: list[str]) -> bool:
    return any(state.pending.get(endpoint) for endpoint in endpoints)


def _persist_pending(store: Store, state: State, endpoints: list[str], *, stamp: str, changed: bool) -> None:
    """What must be sent is durable before the first request. (Every record a delivery will
    touch was read and checked by the diff already: it decodes each part that holds a pending
    URL, so a damaged record stops the run before it sends.)"""
    if not _has_pending(state, endpoints):
        return
    if changed:
        state.updated = stamp
        store.save(state)


def findings_count(violations: Sequence[Violation]) -> dict[str, dict[str, int]]:
    """rule -> level -> URLs: what a run record keeps of its findings (no URL, no message)."""
    counted: dict[str, dict[str, int]] = {}
    for violation in violations:
        levels = counted.setdefault(violation.rule, {})
        levels[violation.level] = levels.get(violation.level, 0) + 1
    return counted


def _record_run(
    run: Run,
    store: Store,
    state: State,
    verified: Verified,
    deliveries: Deliveries,
    *,
    changed: bool,
    held: Mapping[str, str] = _NOTHING,
) -> Recorded:
    """The run's outcome and, when something happened, the state's log of runs; the final
    save (a rerun that did nothing leaves the file's bytes alone). What [announce] ``held``
    pending is no failure."""
    endpoints, diff, delivered = run.endpoints, verified.diff, deliveries.delivered
    submitted = list(dict.fromkeys(delivered)) if len(endpoints) > 1 else delivered
    if deliveries.unrecorded:  # the store failed a batch: on disk it is still pending, and this run writes no more
        pending = list(dict.fromkeys([*state.waiting(endpoints), *deliveries.unrecorded]))
        return Recorded(submitted, pending, [], incomplete=True, not_recorded=True)
    pending = state.waiting(endpoints)
    undelivered = [loc for loc in pending if loc not in held] if held else pending
    incomplete = bool(undelivered) and run.settings.on_submit_error == "fail"
    if any(diff.announced) or deliveries.batches or run.first_run or pending:
        record = RunRecord(
            at=run.stamp,
            command="run",
            added=len(diff.added),
            changed=len(diff.changed),
            removed=len(diff.removed),
            submitted=len(submitted),
            pending=len(pending),
            exit_code=int(ExitCode.SUBMISSION_INCOMPLETE if incomplete else ExitCode.OK),
            totals=run_totals(state.runs, deliveries.batches),
        )
        if counted := findings_count([*verified.violations, *deliveries.findings]):
            record["findings"] = counted
        state.runs.append(record)
        changed = True
    notes: list[str] = []
    saved = True
    if changed:
        state.updated = max(state.updated, run.stamp)
        try:
            store.save(state)
        except SaveFailed as error:
            if not delivered:
                raise
            saved = False  # what was delivered stands, and the report says it (exit 5, not 2: something was sent)
            notes.append(
                f"{error.path}: the endpoints acknowledged {plural(len(submitted), 'URL')} and each acknowledged "
                f"batch is recorded in {store.delivery_log}, but the state could not be rewritten ({error.reason}); "
                "the next run folds those deliveries in and sends only the rest: free space (or fix the folder) and run again"
            )
    if undelivered:
        failed = [batch for batch in deliveries.batches if batch.status not in ("delivered", "accepted") and not batch.moved_to]
        detail = f"; first problem: {failed[0].message}" if failed else ""
        waiting = [endpoint for endpoint in run.endpoints if state.pending.get(endpoint)]
        asked = [until for until in (wait_for(state.backoff, endpoint) for endpoint in waiting) if until]
        when = f"the first run after {min(asked)}" if asked and len(asked) == len(waiting) else "the next run"  # every endpoint waits
        notes.append(f"{plural(len(undelivered), 'URL')} not delivered; they stay pending and go out with {when}{detail}")
    return Recorded(submitted, pending, notes, incomplete, not_recorded=not saved)
