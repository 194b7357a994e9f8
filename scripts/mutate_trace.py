"""A pytest plugin for scripts/mutate.py: which tests run which lines of the package, and how long each takes.

Loaded with ``-p mutate_trace`` in the run that maps the suite. Every test's lines are recorded
under its node id (a coverage "context"), so a mutant is judged by the tests that run its line,
fastest first, instead of by the whole suite.
"""

from __future__ import annotations

import concurrent.futures
import concurrent.futures.process
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn

import coverage
import pytest

_COVERAGE = coverage.Coverage(
    data_file=os.environ["MUTATE_TRACE_DATA"],
    source=[os.environ["MUTATE_TRACE_SOURCE"]],
    branch=False,
)
_DURATIONS: dict[str, float] = {}
_FAILED: set[str] = set()  # a test that fails without a mutant would "kill" every mutant it runs


class _Here(concurrent.futures.Executor):
    """A "pool" that does each task at once, in this process: coverage does not follow a fork,
    and the lines only a worker runs (an index's parts read on workers, the rows they hand
    back) are then mapped to the tests that run them. (The mutants themselves are judged with
    real worker processes, which fork with the mutant in place.)"""

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> concurrent.futures.Future[Any]:
        future: concurrent.futures.Future[Any] = concurrent.futures.Future()
        real_exit, real_pid = os._exit, os.getpid
        os._exit = _died  # a task that ends "its worker" (a test's dying job) breaks the pool, not pytest
        os.getpid = _worker_pid  # a task knows it runs on a worker by its pid (PostgreSQL's read_again)
        try:
            future.set_result(fn(*args, **kwargs))
        except _Died:
            future.set_exception(concurrent.futures.process.BrokenProcessPool("a worker died"))
        except BaseException as error:  # the caller's .result() raises it, as a worker's would be
            future.set_exception(error)
        finally:
            os._exit, os.getpid = real_exit, real_pid
        return future


class _Died(BaseException):
    """os._exit() called by a task _Here runs."""


def _died(status: int) -> NoReturn:
    raise _Died(status)


_REAL_PID = os.getpid()


def _worker_pid() -> int:
    """The pid a task sees while _Here runs it: not the test process's, as on a real worker."""
    return _REAL_PID + (1 << 22)  # above Linux's pid_max: never a real process's


def pytest_configure(config: pytest.Config) -> None:
    _COVERAGE.start()
    from notifier import workers

    workers.fork_pool = lambda count: _Here()  # type: ignore[assignment,return-value]


def pytest_runtest_setup(item: pytest.Item) -> None:
    _COVERAGE.switch_context(item.nodeid)
    _clear_caches()


def _clear_caches() -> None:
    """Empty the package's ``functools.cache`` and ``lru_cache`` caches before each test, so that
    each test runs the lines its calls need: a pattern compiled for an earlier test was served
    from the cache, the map named only that test for the compiling lines, and the test that
    stated the edit was never given the mutant (announce.compiled's ``rest[2:]``)."""
    import sys

    for name, module in list(sys.modules.items()):
        if name == "notifier" or name.startswith("notifier."):
            for value in list(vars(module).values()):
                clear = getattr(value, "cache_clear", None)
                if callable(clear) and getattr(value, "__module__", None) == name:
                    clear()


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    _DURATIONS[report.nodeid] = _DURATIONS.get(report.nodeid, 0.0) + report.duration
    if report.failed:
        _FAILED.add(report.nodeid)


def pytest_unconfigure(config: pytest.Config) -> None:
    _COVERAGE.stop()
    import sys

    snapshot = sys.modules.get("notifier.store.postgres_snapshot")  # the "workers'" connections live here
    for connection in getattr(snapshot, "_WORKER", {}).values():
        connection.close()
    _COVERAGE.save()
    Path(os.environ["MUTATE_TRACE_DATA"] + ".durations.json").write_text(json.dumps(_DURATIONS))
    Path(os.environ["MUTATE_TRACE_DATA"] + ".failed.json").write_text(json.dumps(sorted(_FAILED)))
