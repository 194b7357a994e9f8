"""``--metrics FILE`` as written, where a mutant of metrics.py once went unnoticed (issue #44):
the exposition text itself (each family's HELP and TYPE, a number's spelling), each site's
own report in a config's file, a PostgreSQL state's site as the label, and states or ledgers
that cannot be read."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from notifier.database import DatabaseURL
from notifier.errors import ExitCode
from notifier.metrics import after_run, metrics_text, site_label
from notifier.report import Report
from notifier.settings.settings import Settings
from notifier.store import State

NOW = dt.datetime(2030, 6, 1, 12, 0, 0, tzinfo=dt.UTC)


def test_the_text_gives_every_family_its_help_and_type_and_writes_whole_numbers_whole(tmp_path: Path) -> None:
    """The file as node_exporter's textfile collector reads it, line for line: each family's
    HELP and TYPE before its samples; a count, a code and a whole-second time without a
    fraction. Fails if any ``lines += _family(...)`` of metrics.py::metrics_text is removed;
    or in ::_sample if ``isinstance(value, float) and not math.isinf(value) and value !=
    int(value)`` becomes ``or`` or loses its third side."""
    state = State(
        runs=[
            {"at": "2030-05-31T00:00:00Z", "command": "run", "totals": {"https://e/indexnow": {"received": 5, "refused": 1, "failed": 2}}}
        ]
    )
    settings = Settings(state=tmp_path / "state.json")
    assert metrics_text([(settings, None, 3)], NOW, [state]).splitlines() == [
        "# HELP notify_changes_urls_received_total URLs an endpoint received (any 2xx), over every run the state recorded.",
        "# TYPE notify_changes_urls_received_total counter",
        'notify_changes_urls_received_total{endpoint="https://e/indexnow",site="default"} 5',
        "# HELP notify_changes_urls_refused_total URLs an endpoint refused (a 4xx but 429: 400, 403, 422), over every run the state "
        "recorded.",
        "# TYPE notify_changes_urls_refused_total counter",
        'notify_changes_urls_refused_total{endpoint="https://e/indexnow",site="default"} 1',
        "# HELP notify_changes_urls_failed_total URLs an endpoint failed to take (429, 5xx, no answer), over every run the state recorded.",
        "# TYPE notify_changes_urls_failed_total counter",
        'notify_changes_urls_failed_total{endpoint="https://e/indexnow",site="default"} 2',
        "# HELP notify_changes_pending_urls URLs waiting for an endpoint to take them, after the run.",
        "# TYPE notify_changes_pending_urls gauge",
        'notify_changes_pending_urls{site="default"} 0',
        "# HELP notify_changes_last_run_timestamp_seconds When the last run or check ended (Unix time).",
        "# TYPE notify_changes_last_run_timestamp_seconds gauge",
        f'notify_changes_last_run_timestamp_seconds{{site="default"}} {int(NOW.timestamp())}',
        "# HELP notify_changes_last_run_exit_code The exit code of the last run or check (0 done, 1 verification failed, 3 incomplete).",
        "# TYPE notify_changes_last_run_exit_code gauge",
        'notify_changes_last_run_exit_code{site="default"} 3',
        "# HELP notify_changes_findings Findings of the last run's verification, by rule and level.",
        "# TYPE notify_changes_findings gauge",
    ]


def test_a_time_with_a_fraction_of_a_second_keeps_its_milliseconds(tmp_path: Path) -> None:
    """Fails if in metrics.py::_sample ``not math.isinf(value)`` loses its ``not``, or
    ``value != int(value)`` becomes ``==``."""
    later = NOW + dt.timedelta(milliseconds=250)
    text = metrics_text([(Settings(state=tmp_path / "state.json"), None, 0)], later)
    assert f'notify_changes_last_run_timestamp_seconds{{site="default"}} {int(NOW.timestamp())}.250\n' in text


def test_a_counter_a_run_record_lacks_is_0(tmp_path: Path) -> None:
    """A state's totals may name only some counts of an endpoint (the store's checks take
    that): the others are 0. Fails if ``counts.get(what, 0)`` defaults to 1 in
    metrics.py::metrics_text."""
    state = State(runs=[{"at": "2030-05-31T00:00:00Z", "command": "run", "totals": {"https://e/indexnow": {"received": 5}}}])
    text = metrics_text([(Settings(state=tmp_path / "state.json"), None, 0)], NOW, [state])
    assert 'notify_changes_urls_refused_total{endpoint="https://e/indexnow",site="default"} 0\n' in text
    assert 'notify_changes_urls_failed_total{endpoint="https://e/indexnow",site="default"} 0\n' in text


def test_a_state_that_cannot_be_read_gives_no_counters(tmp_path: Path) -> None:
    """The run said why; the file still has the run's code and time. Fails if ``return None``
    is made ``raise`` in metrics.py::_state."""
    damaged = tmp_path / "state.json"
    damaged.write_text("{not json", encoding="utf-8")
    text = metrics_text([(Settings(state=damaged), None, 2)], NOW)
    assert "notify_changes_urls_received_total{" not in text
    assert 'notify_changes_pending_urls{site="default"} 0\n' in text and 'notify_changes_last_run_exit_code{site="default"} 2\n' in text


def test_a_postgresql_states_site_is_the_label() -> None:
    """Fails if ``return site`` is made ``raise`` in metrics.py::site_label."""
    state = DatabaseURL("postgresql://ci@db.invalid/notify", site="shop")
    assert site_label(Settings(state=state)) == "shop"
    assert site_label(Settings(site="docs", state=state)) == "docs"  # a [[sites]] name first
    assert site_label(Settings(state=DatabaseURL("postgresql://ci@db.invalid/notify"))) == "default"


def test_each_site_of_a_config_has_its_own_exit_code_and_findings(tmp_path: Path) -> None:
    """The combined report's code is the most severe; each site's sample is its own. Fails
    if ``settings.site or ""`` becomes ``settings.site and ""`` or ``""`` in
    metrics.py::after_run."""
    metrics = tmp_path / "sites.prom"
    runs = [Settings(site=name, state=tmp_path / f"{name}.json", metrics=metrics) for name in ("docs", "blog")]
    docs = Report(command="run")
    blog = Report(command="run", exit_code=ExitCode.SUBMISSION_INCOMPLETE)
    combined = Report(command="run", exit_code=ExitCode.SUBMISSION_INCOMPLETE, sites={"docs": docs, "blog": blog})
    assert after_run(combined, runs, NOW, [None, None]) is combined
    text = metrics.read_text(encoding="utf-8")
    assert 'notify_changes_last_run_exit_code{site="docs"} 0\n' in text
    assert 'notify_changes_last_run_exit_code{site="blog"} 3\n' in text


def test_a_ledger_that_cannot_be_read_leaves_the_week_out_of_the_summary(tmp_path: Path) -> None:
    """Under ``--format github`` the summary's week comes from the ledger; one that cannot be
    read leaves the line out, and the run stands. Fails if ``return None`` is made ``raise``
    in metrics.py::_received_week."""
    (tmp_path / "state.json.ledger").mkdir()  # a folder: the ledger cannot be read
    report = Report(command="run")
    after = after_run(report, [Settings(state=tmp_path / "state.json", format="github")], NOW)
    assert after.received_week is None and after.exit_code == ExitCode.OK
