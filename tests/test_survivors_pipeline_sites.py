"""What notifier/pipeline/sites.py does that the mutation run found no test stating (#44):
several sites run on the clock they are given. The test names the edit it catches; the
clock is injected, nothing sleeps."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from notifier.pipeline.loop import Environment
from notifier.pipeline.sites import execute_sites
from notifier.settings.config_sites import build_runs
from notifier.store import read_state
from tests.conftest import KEY
from tests.fakeindexnow import FakeIndexNow
from tests.faketime import FakeTime
from tests.test_sites import _monorepo

T0 = dt.datetime(2030, 6, 1, 12, 0, tzinfo=dt.UTC)


def test_several_sites_run_on_the_clock_they_are_given(tmp_path: Path, fake: FakeIndexNow) -> None:
    """Each site's state is stamped with the injected clock's time, not the wall clock's.
    fails if ``env or Environment()`` loses ``env`` in pipeline/sites.py::execute_sites"""
    config = _monorepo(tmp_path, fake)
    runs = build_runs("run", {"config": str(config), "initial": "submit"}, {"INDEXNOW_KEY": KEY}, tmp_path)
    clock = FakeTime(T0)
    report = execute_sites(runs, Environment(now=clock.now, sleep=clock.sleep, clock=clock.clock))
    assert report.exit_code == 0 and sorted(report.sites) == ["blog", "docs"]
    for name in ("docs", "blog"):
        state = read_state(tmp_path / "state" / f"{name}.json")
        assert state is not None and state.updated == "2030-06-01T12:00:00Z"
        assert [run["at"] for run in state.runs] == ["2030-06-01T12:00:00Z"]
