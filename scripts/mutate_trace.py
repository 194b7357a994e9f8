"""A pytest plugin for scripts/mutate.py: which tests run which lines of the package, and how long each takes.

Loaded with ``-p mutate_trace`` in the run that maps the suite. Every test's lines are recorded
under its node id (a coverage "context"), so a mutant is judged by the tests that run its line,
fastest first, instead of by the whole suite.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import coverage
import pytest

_COVERAGE = coverage.Coverage(
    data_file=os.environ["MUTATE_TRACE_DATA"],
    source=[os.environ["MUTATE_TRACE_SOURCE"]],
    branch=False,
)
_DURATIONS: dict[str, float] = {}
_FAILED: set[str] = set()  # a test that fails without a mutant would "kill" every mutant it runs


# A second thread, idle: notifier.workers.usable_cores() then gives 1, so the work a run
# would hand to worker processes runs here, where coverage sees which test ran it. (The
# mutants themselves are judged with the worker processes, which fork with the mutant.)
_IDLE = threading.Thread(target=threading.Event().wait, daemon=True, name="mutate-trace-idle")


def pytest_configure(config: pytest.Config) -> None:
    _IDLE.start()
    _COVERAGE.start()


def pytest_runtest_setup(item: pytest.Item) -> None:
    _COVERAGE.switch_context(item.nodeid)


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    _DURATIONS[report.nodeid] = _DURATIONS.get(report.nodeid, 0.0) + report.duration
    if report.failed:
        _FAILED.add(report.nodeid)


def pytest_unconfigure(config: pytest.Config) -> None:
    _COVERAGE.stop()
    _COVERAGE.save()
    Path(os.environ["MUTATE_TRACE_DATA"] + ".durations.json").write_text(json.dumps(_DURATIONS))
    Path(os.environ["MUTATE_TRACE_DATA"] + ".failed.json").write_text(json.dumps(sorted(_FAILED)))
