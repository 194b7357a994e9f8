"""What notifier/pipeline/loop.py does that the mutation run found no test stating (#44): an
error's message never shows a whole key, a sitemap with fewer parts than recorded is recorded,
the state made durable before sending carries the run's stamp, a rerun that only delivers what
was pending is recorded, and the not-delivered note names a time only when every endpoint
waits. Each test names the edit it catches. Clocks are injected; nothing sleeps."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import pytest

from notifier.errors import InputError
from notifier.pipeline.loop import Environment, execute
from notifier.report import Report
from notifier.settings.settings import build_settings
from notifier.store import read_state
from tests.conftest import BASE, KEY, Site, index, pages, recorded_pending, recorded_urls, run_at, urlset
from tests.fakeindexnow import FakeIndexNow, status
from tests.faketime import FakeTime

T0 = dt.datetime(2030, 6, 1, 12, 0, tzinfo=dt.UTC)
DAY = dt.timedelta(days=1)


class Stopped(Exception):
    """What the injected sleep raises: the run stops in its first retry wait."""


def test_an_error_never_shows_the_whole_key(tmp_path: Path) -> None:
    """A path that names the key (a key file's does) is shown with its first four characters.
    fails if ``error.args = (redact_all(str(error), settings.keys),)`` is removed in
    pipeline/loop.py::execute"""
    folder = tmp_path / KEY
    cli: dict[str, Any] = {"sitemap": str(folder / "sitemap.xml"), "state": str(tmp_path / "state.json"), "key": KEY}
    with pytest.raises(InputError) as raised:
        execute(build_settings("check", cli, cwd=tmp_path))
    assert KEY not in str(raised.value)
    assert f"{KEY[:4]}…" in str(raised.value)


def test_a_sitemap_with_a_part_fewer_is_recorded_so(site: Site) -> None:
    """An index that no longer lists its empty part, so nothing to send: the state is
    rewritten with one part. fails (zip's strict ValueError) if ``len(parts) != len(recorded)`` is dropped from the
    ``or`` in pipeline/loop.py::_parts_changed"""
    site.write(urlset(pages(2, prefix="/a/")), "sitemaps/a.xml")
    site.write(urlset({}), "sitemaps/b.xml")
    site.write(index({"/sitemaps/a.xml": None, "/sitemaps/b.xml": None}))
    assert run_at(site, T0).exit_code == 0
    recorded = read_state(site.state)
    assert recorded is not None and len(recorded.parts) == 2
    site.write(index({"/sitemaps/a.xml": None}))
    report = run_at(site, T0 + DAY)
    assert report.exit_code == 0
    saved = read_state(site.state)
    assert saved is not None and [part.name for part in saved.parts] == [recorded.parts[0].name]
    assert sorted(recorded_urls(site.state)) == [f"{BASE}/a/0/", f"{BASE}/a/1/"]


def test_the_state_saved_before_sending_carries_the_runs_stamp(site: Site) -> None:
    """A run stopped in its first retry wait has made its pending URLs durable, stamped with
    its own time. fails if ``state.updated = stamp`` is removed in pipeline/loop.py::_persist_pending"""
    assert site.fake is not None
    site.write(urlset(pages(1)))
    assert run_at(site, T0).exit_code == 0
    site.write(urlset(pages(2)))
    site.fake.plan = [status(503)]
    clock = FakeTime(T0 + DAY)

    def stop(seconds: float) -> None:
        raise Stopped

    cli: dict[str, Any] = {
        "sitemap": str(site.sitemap),
        "state": str(site.state),
        "endpoint": [site.fake.endpoint],
        "key": KEY,
        "retry-timeout": "30",
    }
    with pytest.raises(Stopped):
        execute(build_settings("run", cli, cwd=site.root), Environment(now=clock.now, sleep=stop, clock=clock.clock))
    saved = read_state(site.state)
    assert saved is not None and saved.updated == "2030-06-02T12:00:00Z"
    assert list(recorded_pending(site.state)[site.fake.endpoint]) == [f"{BASE}/p/1/"]


def test_a_rerun_that_delivers_only_what_was_pending_is_recorded(site: Site) -> None:
    """Nothing new in the sitemap, the pending URL delivered: the state is rewritten, its log
    of runs one longer and nothing pending. fails if ``changed = True`` becomes ``False`` in
    pipeline/loop.py::_record_run"""
    assert site.fake is not None
    site.write(urlset(pages(1)))
    site.fake.plan = [status(400, "no")]
    assert run_at(site, T0).exit_code == 3
    assert recorded_pending(site.state) != {}
    report = run_at(site, T0 + DAY)
    assert report.exit_code == 0 and site.fake.delivered() == [f"{BASE}/p/0/"]
    saved = read_state(site.state)
    assert saved is not None and len(saved.runs) == 2 and saved.updated == "2030-06-02T12:00:00Z"
    assert recorded_pending(site.state) == {}


def _two_endpoints(site: Site, second: FakeIndexNow, when: dt.datetime) -> Report:
    assert site.fake is not None
    return run_at(site, when, endpoint=[site.fake.endpoint, second.endpoint])


def test_the_not_delivered_note_names_a_time_only_when_every_endpoint_waits(site: Site, second: FakeIndexNow) -> None:
    """One endpoint asked to wait an hour, the other refused the batch: the next run sends
    again, so the note says so. fails if ``asked and len(asked) == len(waiting)`` becomes
    ``or`` or loses its second side in pipeline/loop.py::_record_run"""
    assert site.fake is not None
    site.write(urlset(pages(1)))
    site.fake.plan = [status(429, "slow down", **{"Retry-After": "3600"})]
    second.plan = [status(400, "no")]
    report = _two_endpoints(site, second, T0)
    assert report.exit_code == 3
    notes = [note for note in report.notes if "not delivered" in note]
    assert len(notes) == 1 and "they stay pending and go out with the next run;" in notes[0], report.notes
    site.fake.plan = [status(429, "slow down", **{"Retry-After": "3600"})]
    second.plan = [status(429, "slow down", **{"Retry-After": "7200"})]
    both = _two_endpoints(site, second, T0 + DAY)
    said = [note for note in both.notes if "not delivered" in note]
    assert len(said) == 1 and "go out with the first run after 2030-06-02T13:00:00Z" in said[0], both.notes
