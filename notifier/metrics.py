"""After the run: the job summary's trend, and ``--metrics FILE``: after any run or check, Prometheus' text exposition format (version
0.0.4), written atomically, for node_exporter's textfile collector and its peers.

The counters are the state's (the newest run's ``totals``, ``stats.run_totals``), so they
survive a CI runner that starts empty whenever the state does; the pending count is the
state's after the run; the last run's time, exit code and findings are this run's. Nothing
here sends or prints: a file that cannot be written is a note of the report (and exit 74
when the run was otherwise fine, as for any output lost).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import math
from collections import Counter
from collections.abc import Iterator, Sequence
from pathlib import Path

from notifier.errors import ExitCode, NotifierError
from notifier.report import Report
from notifier.settings.settings import Settings
from notifier.stats import ledger_stats, pending_ages
from notifier.store import State, backend, read_state
from notifier.store.durable import write_atomic

PREFIX = "notify_changes_"
COUNTERS = (
    ("received", "URLs an endpoint received (any 2xx), over every run the state recorded"),
    ("refused", "URLs an endpoint refused (a 4xx but 429: 400, 403, 422), over every run the state recorded"),
    ("failed", "URLs an endpoint failed to take (429, 5xx, no answer), over every run the state recorded"),
)
WEEK = dt.timedelta(days=7)
DEFAULT_SITE = "default"  # the site label of a run without [[sites]] or --site-name


class _NotWritten(Exception):
    pass


def site_label(settings: Settings) -> str:
    """The ``site`` label: the [[sites]] name, else a PostgreSQL state's site, else ``default``."""
    if settings.site:
        return settings.site
    site = backend(settings.state).site
    if site:
        return site
    return DEFAULT_SITE


def write_metrics(
    path: Path, sites: Sequence[tuple[Settings, Report | None, int]], now: dt.datetime, states: Sequence[State | None] = ()
) -> str | None:
    """Write the metrics of ``sites`` (each: its settings, its report or None when it stopped
    on an error, its exit code) to ``path`` atomically; a note when it could not be written.
    ``states``: each site's state as the run left it in memory (None, or none given: read it)."""
    try:
        write_atomic(path, [metrics_text(sites, now, states).encode("utf-8")], f".{path.name}.", _failed)
    except _NotWritten as error:
        return f"{path}: the metrics file could not be written ({error}); the run itself stands"
    return None


def after_run(report: Report, runs: Sequence[Settings], now: dt.datetime, states: Sequence[State | None] = ()) -> Report:
    """The report once the run is over: under ``--format github`` with the week's trend for
    the job summary; with ``--metrics``, once the file is written, or with a note (and exit 74
    if it was 0) when it could not be. ``states``: each site's state as the run left it (its
    counters and pending set are that, not read from the store again: a JSON state is scanned
    whole to be read, 0.038 s of CPU at 300,000 URLs, 1.6 % of their check, growing with it)."""
    if runs[0].format == "github":
        report = dataclasses.replace(report, received_week=_received_week(runs, now))
    path = runs[0].metrics
    if path is None:
        return report
    sites = [(settings, report.sites.get(settings.site or "", report) if report.sites else report) for settings in runs]
    note = write_metrics(path, [(settings, each, each.exit_code) for settings, each in sites], now, states)
    if note is None:
        return report
    code = report.exit_code if report.exit_code != ExitCode.OK else ExitCode.OUTPUT_FAILED
    return dataclasses.replace(report, notes=[*report.notes, note], exit_code=ExitCode(code))


def _received_week(runs: Sequence[Settings], now: dt.datetime) -> int | None:
    """The URLs every site's endpoints received in the 7 days before ``now`` (None: a ledger
    could not be read; the summary then says nothing of it)."""
    try:
        return sum(ledger_stats(settings.state, None, now - WEEK, now).totals.received for settings in runs)
    except NotifierError:
        return None


def after_error(settings: Settings, error: NotifierError, now: dt.datetime) -> None:
    """A run that stopped on an error still says so (its exit code, its time); its error is
    what the user reads, so a file that cannot be written is not said twice."""
    if settings.metrics is not None:
        write_metrics(settings.metrics, [(settings, None, int(error.exit_code))], now)


def _failed(path: Path, reason: str, *, begun: bool) -> Exception:
    return _NotWritten(reason)


def metrics_text(sites: Sequence[tuple[Settings, Report | None, int]], now: dt.datetime, held: Sequence[State | None] = ()) -> str:
    """The exposition text: each family's HELP and TYPE once, then a sample a site (and label).
    ``held``: each site's state in memory, when the run has it (else it is read)."""
    kept = [*held, *[None] * (len(sites) - len(held))]
    states = [
        (site_label(settings), state if state is not None else _state(settings), report, code)
        for (settings, report, code), state in zip(sites, kept, strict=True)
    ]
    lines: list[str] = []
    for what, help_text in COUNTERS:
        name = f"{PREFIX}urls_{what}_total"
        lines += [f"# HELP {name} {help_text}.", f"# TYPE {name} counter"]
        for site, state, _, _ in states:
            for endpoint, counts in sorted(_totals(state).items()):
                lines.append(_sample(name, {"endpoint": endpoint, "site": site}, counts.get(what, 0)))
    lines += _family("pending_urls", "gauge", "URLs waiting for an endpoint to take them, after the run")
    lines += [_sample(f"{PREFIX}pending_urls", {"site": site}, pending_ages(state, now)[0] if state else 0) for site, state, _, _ in states]
    lines += _family("last_run_timestamp_seconds", "gauge", "When the last run or check ended (Unix time)")
    lines += [_sample(f"{PREFIX}last_run_timestamp_seconds", {"site": site}, now.timestamp()) for site, _, _, _ in states]
    lines += _family("last_run_exit_code", "gauge", "The exit code of the last run or check (0 done, 1 verification failed, 3 incomplete)")
    lines += [_sample(f"{PREFIX}last_run_exit_code", {"site": site}, code) for site, _, _, code in states]
    lines += _family("findings", "gauge", "Findings of the last run's verification, by rule and level")
    for site, _, report, _ in states:
        found = Counter((violation.rule, violation.level) for violation in report.violations) if report else Counter()
        for (rule, level), count in sorted(found.items()):
            lines.append(_sample(f"{PREFIX}findings", {"rule": rule, "level": level, "site": site}, count))
    return "\n".join(lines) + "\n"


def _family(name: str, kind: str, help_text: str) -> Iterator[str]:
    yield f"# HELP {PREFIX}{name} {help_text}."
    yield f"# TYPE {PREFIX}{name} {kind}"


def _state(settings: Settings) -> State | None:
    """The state after the run; one that cannot be read gives no counters (the run said why)."""
    try:
        return read_state(settings.state)
    except NotifierError:
        return None


def _totals(state: State | None) -> dict[str, dict[str, int]]:
    if state is None:
        return {}
    return next((run["totals"] for run in reversed(state.runs) if "totals" in run), {})


def _sample(name: str, labels: dict[str, str], value: float) -> str:
    written = ",".join(f'{key}="{_escaped(text)}"' for key, text in labels.items())
    number = f"{value:.3f}" if isinstance(value, float) and not math.isinf(value) and value != int(value) else f"{int(value)}"
    return f"{name}{{{written}}} {number}"


def _escaped(text: str) -> str:
    """A label value as the format writes it: backslash, double quote and newline escaped."""
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
