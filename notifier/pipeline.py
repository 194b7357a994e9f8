"""The deploy loop in one place: parse -> diff -> verify -> submit -> record."""

from __future__ import annotations

import datetime as dt
import gc
import itertools
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import requests

from notifier.dates import format_utc, parse_w3c
from notifier.diff import Added, Change, Diff, DiffBuilder, apply_to_state
from notifier.errors import ExitCode, InputError, StateError, UsageError
from notifier.history import HistoryCheck, check_history
from notifier.indexnow import Batch, BatchResult, Client, RetryPolicy, make_batches, redact
from notifier.pages import fingerprints
from notifier.pending import drop_unsendable, hand_over_orphans, refuse_unsendable
from notifier.report import PlannedBatch, Report, plural
from notifier.rules import Context, RuleSettings, Violation, verify
from notifier.settings import HistorySettings, Settings
from notifier.sitemap import Entry, ReadOptions, read_sitemap
from notifier.store import RunRecord, SaveFailed, State, StateStore, open_store, read_state
from notifier.urls import by_origin, locate, site, where_host


@dataclass
class Environment:
    """What a run takes from the outside world; tests replace any of it."""

    now: Callable[[], dt.datetime] = lambda: dt.datetime.now(dt.UTC)
    sleep: Callable[[float], None] = time.sleep
    clock: Callable[[], float] = time.monotonic
    progress: Callable[[str], None] | None = None
    notice: Callable[[str], None] | None = None  # one line as it happens: each retry wait
    session: requests.Session | None = None
    extra_violations: list[Violation] = field(default_factory=list)


def execute(settings: Settings, env: Environment | None = None) -> Report:
    """Run ``check`` or ``run`` as ``settings`` say and return the report. Never prints."""
    # A run makes millions of small objects and no reference cycles; the cyclic garbage
    # collector would walk them all again and again (a third of the parse time at a
    # million URLs). It is switched off for the run and restored after.
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _execute(settings, env or Environment())
    finally:
        if collecting:
            gc.enable()


def _execute(settings: Settings, env: Environment) -> Report:
    if settings.command == "check" or settings.dry_run:
        return _pipeline(settings, env, read_state(settings.state), store=None)
    store = open_store(settings.state, lock_timeout=settings.lock_timeout, clock=env.clock, sleep=env.sleep)
    with store:
        return _pipeline(settings, env, store.load(), store=store)


def _pipeline(settings: Settings, env: Environment, recorded: State | None, store: StateStore | None) -> Report:
    now = env.now()
    stamp = format_utc(now)
    report = Report(command=settings.command, dry_run=settings.dry_run)
    first_run = recorded is None
    if first_run and settings.initial == "fail" and settings.command == "run":
        raise InputError(
            f"{settings.state}: no state file, and --initial fail refuses to start without one; "
            "restore the state from the last deploy, or pick --initial baseline|submit|since:DURATION"
        )
    state = recorded or State()
    writes = store is not None  # check and --dry-run never write: no new parts to make
    recorded_parts = list(state.parts)
    endpoints = list(settings.endpoints)
    tidied = hand_over_orphans(state, endpoints) + drop_unsendable(state)
    report.notes.extend(tidied)

    # parse and diff, file by file (a file whose bytes did not change since the last deploy is
    # not parsed again; with --site-dir every page is fingerprinted, so every file is read)
    site_dir = settings.site_dir
    builder = DiffBuilder(
        state,
        endpoints=endpoints,
        now=stamp,
        build=writes,
        fingerprints=(lambda locs: fingerprints(locs, site_dir)) if site_dir is not None else None,
    )
    known = {part.name: part.digest for part in state.parts if part.name} if site_dir is None else None
    sitemap = read_sitemap(
        settings.sitemap,
        ReadOptions(
            site_dir=site_dir,
            request_timeout=settings.request_timeout,
            progress=env.progress,
            known_digests=known,
            index=writes,
            stamps=not state.parts,  # a first run judges every date: parse them on every core
        ),
        sink=builder.add_file,
    )
    diff = builder.finish()
    report.added, report.changed, report.removed = diff.added, diff.changed, diff.removed
    report.unchanged = diff.unchanged
    # verify
    extra = list(env.extra_violations)
    backed: set[str] = set()
    if settings.history is not None:
        checked = _history(settings.history, diff, report)
        extra.extend(checked.violations)
        backed = checked.backed
    report.violations = verify(
        Context(
            sitemap=sitemap,
            diff=diff,
            state=state,
            first_run=first_run,
            key_file_missing=_missing_key_files(settings, diff.origins),
            backed_by_history=backed,
            extra=extra,
        ),
        RuleSettings(
            levels=settings.rule_levels,
            now=now,
            clock_skew=settings.clock_skew,
            max_removed=settings.max_removed,
            bulk=settings.bulk,
            sitemap_url=settings.sitemap_url,
        ),
    )
    diff.added.stamps = None  # the rules are done with the dates: 8 MB at a million URLs
    if report.errors:
        report.pending = _pending_urls(state, endpoints)
        report.exit_code = ExitCode.VERIFICATION_FAILED
        return report
    if settings.command == "check":
        report.pending = _pending_urls(state, endpoints)
        return report

    # record what this deploy changed, and what each endpoint must now be told
    to_submit, refused = refuse_unsendable(_choose(settings, diff, first_run, now, report), diff.irregular)
    report.notes.extend(refused)
    _require_keys(settings, to_submit, state, endpoints)
    apply_to_state(diff, state, endpoints=endpoints, to_submit=to_submit, now=stamp)
    report.explain = _explainer(diff, to_submit, state, endpoints)
    if settings.dry_run:
        if settings.keys.default is None and not settings.keys.per_host:
            report.notes.append("no IndexNow key is set: a real run needs INDEXNOW_KEY (or --key)")
        report.planned = _plan(settings, state, endpoints, report.reasons)  # before anything leaves pending
        report.pending = _pending_urls(state, endpoints)
        return report
    assert store is not None
    to_send = any(state.pending.get(endpoint) for endpoint in endpoints)
    if to_send:  # every record a delivery will touch is read and checked before the first request
        state.check_parts_holding(itertools.chain.from_iterable(state.pending.get(endpoint, {}) for endpoint in endpoints))
    # a rerun of the same deploy changes nothing: every file unread, nothing new to announce
    changed = first_run or bool(tidied) or any(to_submit) or len(state.parts) != len(recorded_parts)
    changed = changed or any(new is not old for new, old in zip(state.parts, recorded_parts, strict=True))
    if to_send and changed:
        state.updated = stamp
        store.save(state)  # what must be sent is durable before the first request

    # submit, recording each acknowledged batch before the next is sent
    delivered: list[str] = []
    if to_send:
        client = Client(
            policy=RetryPolicy(budget=settings.retry_timeout),
            request_timeout=settings.request_timeout,
            sleep=env.sleep,
            clock=env.clock,
            wall_clock=env.now,
            session=env.session,
            notice=env.notice,
        )
        try:
            for result, batch in _Submissions(settings, client, state, endpoints, env):
                report.batches.append(result)
                if batch is not None and result.status in ("delivered", "accepted"):
                    store.record_delivered(state, result.endpoint, batch.urls, format_utc(env.now()))
                    delivered.extend(batch.urls)
        finally:
            if env.session is None:
                client.close()
    report.submitted = list(dict.fromkeys(delivered)) if len(endpoints) > 1 else delivered
    report.pending = _pending_urls(state, endpoints)

    # record the run itself, only when something happened (a rerun leaves the bytes alone)
    if any(diff.announced) or report.batches or first_run or report.pending:
        exit_code = ExitCode.OK
        if report.pending and settings.on_submit_error == "fail":
            exit_code = ExitCode.SUBMISSION_INCOMPLETE
        state.runs.append(
            RunRecord(
                at=stamp,
                command="run",
                added=len(diff.added),
                changed=len(diff.changed),
                removed=len(diff.removed),
                submitted=len(report.submitted),
                pending=len(report.pending),
                exit_code=int(exit_code),
            )
        )
        changed = True
    if changed:  # else the file keeps its bytes, its "updated" too
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
        if settings.on_submit_error == "fail":
            report.exit_code = ExitCode.SUBMISSION_INCOMPLETE
    return report


def _history(history: HistorySettings, diff: Diff, report: Report) -> HistoryCheck:
    """lastmod-vs-history, with one note for the pages it could not check."""
    # like the other rules, history judges the dates this deploy added or changed
    dated = [Entry(change.loc, change.new, -1, 0) for change in itertools.chain(diff.added, diff.changed)]
    checked = check_history(dated, history.sources, history.repo or Path.cwd(), history.tolerance)
    if checked.unmapped:
        report.notes.append(
            f"lastmod-vs-history: {checked.unmapped} page(s) have no source file matching [history] sources "
            f"(e.g. {checked.example_unmapped}); their dates were not checked"
        )
    if checked.untracked:
        report.notes.append(f"lastmod-vs-history: {checked.untracked} page(s) have a source file with no commit yet")
    return checked


def _choose(settings: Settings, diff: Diff, first_run: bool, now: dt.datetime, report: Report) -> list[Sequence[Change]]:
    """Which of this deploy's changes to announce (``--initial`` on the first run, ``--no-removed``)."""
    if first_run:
        if settings.initial == "submit":
            return [diff.added]
        since = settings.since
        if since is not None:
            cutoff = now - since
            chosen = []
            for change in diff.added:
                instant = parse_w3c(change.new) if change.new else None
                if instant is not None and instant >= cutoff:
                    chosen.append(change)
            recorded = "would record" if settings.dry_run else "recorded"
            report.notes.append(
                f"no state file at {settings.state}: {recorded} {plural(len(diff.added), 'URL')}, announcing the "
                f"{len(chosen)} whose lastmod is within {settings.initial[6:]}"
            )
            return [chosen]
        if settings.dry_run or settings.command == "check":
            report.notes.append(
                f"no state file at {settings.state}: a real run would record a baseline of {plural(len(diff.added), 'URL')} "
                "and submit nothing (or pass --initial submit to announce every URL)"
            )
        else:
            report.notes.append(
                f"no state file at {settings.state}: recorded a baseline of {plural(len(diff.added), 'URL')} and submitted nothing; "
                "keep the state file between deploys (or pass --initial submit to announce every URL)"
            )
        return []
    if settings.no_removed:
        return [diff.added, diff.changed]
    return diff.announced


def _explainer(diff: Diff, to_submit: list[Sequence[Change]], state: State, endpoints: list[str]) -> Callable[[], dict[str, Change]]:
    """loc -> why it is sent, for what this run announced and every URL pending at a configured
    endpoint; made when the report is rendered (as JSON), not for every run."""

    def explain() -> dict[str, Change]:
        reasons = {change.loc: change for change in diff.pending}
        reasons.update((change.loc, change) for change in itertools.chain.from_iterable(to_submit))
        for endpoint in endpoints:
            for loc, item in state.pending.get(endpoint, {}).items():
                if loc not in reasons:
                    reasons[loc] = Change(loc, "pending", since=item["since"])
        return reasons

    return explain


def _pending_urls(state: State, endpoints: list[str]) -> list[str]:
    state.settle()
    urls: dict[str, None] = {}
    for endpoint in endpoints:
        urls.update(dict.fromkeys(state.pending.get(endpoint, {})))
    return list(urls)


def _plan(settings: Settings, state: State, endpoints: list[str], reasons: dict[str, Change]) -> list[PlannedBatch]:
    planned: list[PlannedBatch] = []
    for endpoint in endpoints:
        batches, unsendable = make_batches(state.pending.get(endpoint, {}), settings.keys, settings.batch_size)
        for batch in batches:
            planned.append(PlannedBatch(endpoint, batch.host, [reasons[loc] for loc in batch.urls]))
        if unsendable and settings.keys.default is None and not settings.keys.per_host:
            # a dry run without a key still shows what would be sent, grouped by host
            by_host: dict[str, list[Change]] = {}
            for loc, _ in unsendable:
                by_host.setdefault(_host_of(loc), []).append(reasons[loc])
            for host, changes in by_host.items():
                for start in range(0, len(changes), settings.batch_size):
                    planned.append(PlannedBatch(endpoint, host, changes[start : start + settings.batch_size]))
    return planned


class _Submissions:
    """Iterate (result, batch) over every endpoint's pending URLs, after the key preflight."""

    def __init__(self, settings: Settings, client: Client, state: State, endpoints: list[str], env: Environment) -> None:
        self.settings, self.client, self.state, self.endpoints, self.env = settings, client, state, endpoints, env
        self.host_problems: dict[str, str | None] = {}

    def _preflight(self, batch: Batch) -> str | None:
        """Per host, once: the key file matches, and (--verify-live) changed pages are live."""
        if batch.host not in self.host_problems:
            scheme = "https" if batch.urls[0].startswith("https:") else "http"
            _, url = self.settings.keys.location_for(batch.host, scheme)
            if self.env.progress is not None:
                self.env.progress(redact(f"checking key file {url}", batch.key))
            problem = self.client.check_key_file(url, batch.key)
            if problem is None and self.settings.verify_live:
                problem = self._live_problem(batch.host)
            self.host_problems[batch.host] = problem
        return self.host_problems[batch.host]

    def _live_problem(self, host: str) -> str | None:
        """Up to --verify-live added or changed pages of ``host`` must be served already (CDNs lag)."""
        sample: dict[str, None] = {}
        for endpoint in self.endpoints:
            for loc, item in self.state.pending.get(endpoint, {}).items():
                if item["reason"] in ("added", "changed") and _host_of(loc) == host:
                    sample[loc] = None
                if len(sample) >= self.settings.verify_live:
                    break
        for loc in list(sample)[: self.settings.verify_live]:
            problem = self.client.check_live(loc)
            if problem is not None:
                return f"the live site is not serving the new pages yet: {problem}; the URLs stay pending, run again later"
        return None

    def __iter__(self) -> Iterator[tuple[BatchResult, Batch | None]]:
        for endpoint in self.endpoints:
            pending = list(self.state.pending.get(endpoint, {}))
            batches, unsendable = make_batches(pending, self.settings.keys, self.settings.batch_size)
            grouped = Counter((_host_of(loc), why) for loc, why in unsendable)
            for (host, why), count in grouped.items():
                yield BatchResult(endpoint, host, count, "skipped", None, why, 0), None
            stop_reason: str | None = None
            name = _host_of(endpoint)
            for number, batch in enumerate(batches, start=1):
                problem = self._preflight(batch)
                if problem is None and stop_reason is None:
                    label = f"batch {number}/{len(batches)} to {name}"
                    if self.env.progress is not None:
                        self.env.progress(f"sending {label}: {plural(len(batch.urls), 'URL')} of {batch.host}")
                    result = self.client.submit(endpoint, batch, label)
                    if result.http_status == 403:  # the key will not work for the other batches either
                        stop_reason = f"not sent after the 403 above: {result.message}"
                    elif result.exhausted:  # down for this run: its other batches must not each spend the budget
                        stop_reason = f"not sent: {name} failed {label} after its retries; they stay pending for the next run"
                    yield result, batch
                else:
                    message = problem or stop_reason or ""
                    yield BatchResult(endpoint, batch.host, len(batch.urls), "skipped", None, message, 0), batch


def _missing_key_files(settings: Settings, origins: list[str]) -> list[tuple[str, str]]:
    """Key files expected in the build (with --site-dir and a key) that are not there, or hold
    another key: (the file, what is wrong and what to do)."""
    if settings.site_dir is None:
        return []
    missing: list[tuple[str, str]] = []
    hosts: dict[str, str] = {}
    for each in origins:
        where = site(each)
        if where.scheme in ("http", "https") and where.host:
            hosts.setdefault(where.host, where.scheme)
    for host, scheme in hosts.items():
        key = settings.keys.key_for(host)
        if key is None:
            continue
        _, url = settings.keys.location_for(host, scheme)
        candidate = Path(settings.site_dir) / locate(url).path.lstrip("/")
        if not candidate.is_file():
            missing.append(
                (
                    str(candidate),
                    f"the IndexNow key file {candidate} is not in the build; "
                    "run `notify-changes key new --write DIR` or copy it into the site",
                )
            )
            continue
        try:
            served = candidate.read_text(encoding="utf-8", errors="replace").strip()
        except OSError:
            served = ""
        if served != key:
            held = f"holds another key ({served[:4]}…)" if served else "is empty"
            missing.append(
                (
                    str(candidate),
                    f"the key file {candidate} is in the build but {held}, not the key this run uses ({key[:4]}…); "
                    "write the current key into it, or set INDEXNOW_KEY to the key it holds",
                )
            )
    return missing


def _host_of(loc: str) -> str:
    return where_host(loc).host or "?"


def _require_keys(settings: Settings, to_submit: list[Sequence[Change]], state: State, endpoints: list[str]) -> None:
    """A run with something to send needs a key for every host, before anything is written."""
    origins: set[str] = set()
    for group in to_submit:
        origins.update(by_origin(group.locs if isinstance(group, Added) else (change.loc for change in group)))
    for endpoint in endpoints:
        origins.update(by_origin(state.pending.get(endpoint, {})))
    hosts = {site(each).host or "?" for each in origins}
    missing = sorted(host for host in hosts if settings.keys.key_for(host) is None)
    if missing and not settings.dry_run:
        raise UsageError(
            f"no IndexNow key for {', '.join(missing[:3])}: set INDEXNOW_KEY (or --key, or [keys] in the config); "
            "`notify-changes key new` makes one"
        )
