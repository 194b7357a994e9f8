"""The deploy loop in one place: read and diff -> verify -> plan -> persist -> submit -> record.

``check``, ``--dry-run`` and ``run`` take the same path and stop at different phases:
``check`` after verifying, a dry run after planning (it shows the batches), a run goes on
to make what must be sent durable, send it, and record the run. Each phase is a function
with its inputs and outputs in its signature, in a module named for it.
"""

from __future__ import annotations

import gc

from notifier import workers
from notifier.dates import format_utc
from notifier.environment import Environment
from notifier.errors import ExitCode, InputError, NotifierError, StateError
from notifier.pipeline.changes import Diff
from notifier.pipeline.pending import drop_unsendable, hand_over_orphans
from notifier.pipeline.planning import plan_announcements, preview_first_run, show_plan
from notifier.pipeline.submission import submit_pending
from notifier.pipeline.verification import diff_and_verify
from notifier.protocol import Keys, redact_all
from notifier.report import Report, plural
from notifier.settings import Settings
from notifier.store import Part, RunRecord, SaveFailed, State, StateStore, open_store, read_state

__all__ = ["Environment", "execute"]


def execute(settings: Settings, env: Environment | None = None) -> Report:
    """Run ``check`` or ``run`` as ``settings`` say and return the report. Never prints."""
    # A run makes millions of small objects and no reference cycles; the cyclic garbage
    # collector would walk them all again and again (a third of the parse time at a
    # million URLs). It is switched off for the run and restored after.
    collecting = gc.isenabled()
    gc.disable()
    try:
        with workers.jobs(settings.jobs):
            report = _execute(settings, env or Environment())
    except NotifierError as error:  # its one line names files and URLs: a key file's path holds the key
        error.args = (redact_all(str(error), settings.keys),)
        raise
    finally:
        if collecting:
            gc.enable()
    without_secrets(report, settings.keys)
    return report


def without_secrets(report: Report, keys: Keys) -> None:
    """Every text of the report with each key cut to its first four characters: the README
    promises it of every message, in every format and in the API's Report alike."""
    if not keys.secrets:
        return
    report.violations = [
        violation._replace(url=redact_all(violation.url, keys), message=redact_all(violation.message, keys))
        for violation in report.violations
    ]
    report.notes = [redact_all(note, keys) for note in report.notes]
    report.batches = [batch._replace(message=redact_all(batch.message, keys)) for batch in report.batches]


def _execute(settings: Settings, env: Environment) -> Report:
    if settings.command == "check" or settings.dry_run:
        return _pipeline(settings, env, read_state(settings.state), store=None)
    store = open_store(settings.state, lock_timeout=settings.lock_timeout, clock=env.clock, sleep=env.sleep)
    with store:
        return _pipeline(settings, env, store.load(), store=store)


def _pipeline(settings: Settings, env: Environment, recorded: State | None, store: StateStore | None) -> Report:
    now = env.now()
    report = Report(command=settings.command, dry_run=settings.dry_run)
    if settings.found_sitemap and env.notice is not None:
        env.notice(f"no SITEMAP given: reading {settings.sitemap}, with --site-dir {settings.site_dir}")
    first_run = recorded is None
    if first_run and settings.initial == "fail" and settings.command == "run":
        raise InputError(
            f"{settings.state}: no state file, and --initial fail refuses to start without one; "
            "restore the state from the last deploy, or pick --initial baseline|submit|since:DURATION"
        )
    state = recorded or State()
    recorded_parts = list(state.parts)
    endpoints = list(settings.endpoints)
    tidied = hand_over_orphans(state, endpoints) + drop_unsendable(state)
    report.notes.extend(tidied)

    diff = diff_and_verify(settings, env, state, report, first_run=first_run, writes=store is not None, now=now)
    if report.errors or settings.command == "check":
        if first_run and not report.errors:
            preview_first_run(settings, diff, report, now=now)
        return _stop(report, state, endpoints, ExitCode.VERIFICATION_FAILED if report.errors else ExitCode.OK)
    to_submit = plan_announcements(settings, diff, state, report, first_run=first_run, now=now)
    if store is None:  # --dry-run
        show_plan(settings, state, report)
        return _stop(report, state, endpoints, ExitCode.OK)
    # a rerun of the same deploy changes nothing: every file unread, nothing new to announce
    changed = first_run or bool(tidied) or any(to_submit) or _parts_changed(state.parts, recorded_parts)
    _persist_pending(store, state, endpoints, stamp=format_utc(now), changed=changed)
    delivered = submit_pending(settings, env, state, store, report) if _has_pending(state, endpoints) else []
    _record_run(settings, store, state, diff, report, delivered, stamp=format_utc(now), first_run=first_run, changed=changed)
    return report


def _stop(report: Report, state: State, endpoints: list[str], exit_code: ExitCode) -> Report:
    """The end of ``check`` or a dry run: what is still pending, and the outcome."""
    report.pending = state.waiting(endpoints)
    report.exit_code = exit_code
    return report


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


def _persist_pending(store: StateStore, state: State, endpoints: list[str], *, stamp: str, changed: bool) -> None:
    """What must be sent is durable before the first request. (Every record a delivery will
    touch was read and checked by the diff already: it decodes each part that holds a pending
    URL, so a damaged record stops the run before it sends.)"""
    if not _has_pending(state, endpoints):
        return
    if changed:
        state.updated = stamp
        store.save(state)


def _record_run(
    settings: Settings,
    store: StateStore,
    state: State,
    diff: Diff,
    report: Report,
    delivered: list[str],
    *,
    stamp: str,
    first_run: bool,
    changed: bool,
) -> None:
    """The run's outcome in the report and, when something happened, in the state's log of
    runs; the final save (a rerun that did nothing leaves the file's bytes alone)."""
    endpoints = list(settings.endpoints)
    report.submitted = list(dict.fromkeys(delivered)) if len(endpoints) > 1 else delivered
    report.pending = state.waiting(endpoints)
    incomplete = bool(report.pending) and settings.on_submit_error == "fail"
    if any(diff.announced) or report.batches or first_run or report.pending:
        state.runs.append(
            RunRecord(
                at=stamp,
                command="run",
                added=len(diff.added),
                changed=len(diff.changed),
                removed=len(diff.removed),
                submitted=len(report.submitted),
                pending=len(report.pending),
                exit_code=int(ExitCode.SUBMISSION_INCOMPLETE if incomplete else ExitCode.OK),
            )
        )
        changed = True
    if changed:
        state.updated = max(state.updated, stamp)
        try:
            store.save(state)
        except SaveFailed as error:
            if not delivered:
                raise
            raise StateError(
                f"{error.path}: the endpoints acknowledged {plural(len(report.submitted), 'URL')} and each acknowledged "
                f"batch is recorded in {store.delivery_log}, but the state could not be rewritten ({error.reason}); "
                "the next run folds those deliveries in and sends only the rest: free space (or fix the folder) and run again"
            ) from None
    if report.pending:
        failed = [batch for batch in report.batches if batch.status not in ("delivered", "accepted")]
        detail = f"; first problem: {failed[0].message}" if failed else ""
        report.notes.append(f"{plural(len(report.pending), 'URL')} not delivered; they stay pending and go out with the next run{detail}")
        if incomplete:
            report.exit_code = ExitCode.SUBMISSION_INCOMPLETE
