"""Wait until live (issue #41, item 3): with ``--wait-live SECONDS`` a run polls each host's key
file and, with ``--site-dir``, a sample of the changed pages until they serve the key / the
build's bytes, with a bounded backoff; past the bound the batches stay pending (exit 3) and
one line names what was not live. The default, 0, waits for nothing, as before."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable
from typing import Any

import notifier
from notifier.pipeline.loop import Environment, execute
from notifier.report import Report
from notifier.settings.settings import build_settings
from tests.conftest import BASE, HOST, KEY, Site, pages, recorded_pending, urlset
from tests.faketime import FakeTime

T0 = dt.datetime(2030, 6, 1, 12, 0, tzinfo=dt.UTC)
KEY_FILE = f"/{KEY}.txt"


class Deploying(FakeTime):
    """A clock whose ``sleep`` also lets the deploy go on: ``at_sleep[n]`` runs at the n-th sleep."""

    def __init__(self, start: dt.datetime, at_sleep: dict[int, Callable[[], None]]) -> None:
        super().__init__(start)
        self.at_sleep = at_sleep

    def sleep(self, seconds: float) -> None:
        super().sleep(seconds)
        step = self.at_sleep.get(len(self.sleeps))
        if step is not None:
            step()


def _deploy(site: Site, clock: FakeTime, options: dict[str, Any] | None = None) -> Report:
    cli: dict[str, Any] = {
        "sitemap": str(site.sitemap),
        "state": str(site.state),
        "endpoint": [site.fake.endpoint] if site.fake else [],
        "key": KEY,
        "retry-timeout": "30",
        "initial": "submit",
        **(options or {}),
    }
    return execute(build_settings("run", cli, cwd=site.root), Environment(now=clock.now, sleep=clock.sleep, clock=clock.clock))


def _unpublished(site: Site) -> None:
    assert site.fake is not None
    del site.fake.sites[HOST][KEY_FILE]


def test_a_key_file_that_appears_while_the_run_waits_is_waited_for(site: Site) -> None:
    assert site.fake is not None
    fake = site.fake
    _unpublished(site)
    site.write(urlset(pages(2)))
    served_before_posting: list[bool] = []
    fake.on_post = lambda _: served_before_posting.append(KEY_FILE in fake.sites[HOST])
    clock = Deploying(T0, {3: lambda: fake.serve_key(HOST, KEY)})  # the CDN has it after the third wait
    report = _deploy(site, clock, {"wait-live": "60"})
    assert report.exit_code == 0, report.notes
    assert sorted(fake.delivered()) == [f"{BASE}/p/0/", f"{BASE}/p/1/"] and served_before_posting == [True]
    assert clock.sleeps == [1.0, 2.0, 4.0]  # a backoff, doubling
    assert report.not_live == [] and recorded_pending(site.state) == {}


def test_without_wait_live_a_missing_key_file_fails_at_once(site: Site) -> None:
    """The default (0): one look at the key file, no wait, as before."""
    assert site.fake is not None
    _unpublished(site)
    site.write(urlset(pages(1)))
    clock = FakeTime(T0)
    report = _deploy(site, clock)
    assert report.exit_code == 3 and clock.sleeps == [] and site.fake.posts == []


def test_past_the_bound_nothing_is_sent_the_urls_stay_pending_and_one_line_says_what(site: Site) -> None:
    assert site.fake is not None
    _unpublished(site)
    site.write(urlset(pages(2)))
    clock = FakeTime(T0)
    report = _deploy(site, clock, {"wait-live": "100", "format": "json"})
    assert report.exit_code == 3 and site.fake.posts == []
    assert sum(clock.sleeps) == 100 and max(clock.sleeps) == 15  # bounded (15 s, docs), and never past the bound
    assert sorted(report.pending) == [f"{BASE}/p/0/", f"{BASE}/p/1/"]
    assert list(recorded_pending(site.state)) == [site.fake.endpoint]
    said = [note for note in report.notes if "not live within" in note]
    assert len(said) == 1 and "not live within --wait-live 100 s" in said[0] and f"http://{HOST}/0123….txt answered HTTP 404" in said[0]
    assert KEY not in json.dumps(report.to_json())  # the key file's URL names the key: cut, as everywhere
    assert report.to_json()["not_live"] == [f"http://{HOST}/0123….txt"]


def test_the_next_run_sends_what_was_not_live(site: Site) -> None:
    assert site.fake is not None
    _unpublished(site)
    site.write(urlset(pages(1)))
    assert _deploy(site, FakeTime(T0), {"wait-live": "5"}).exit_code == 3
    site.fake.serve_key(HOST, KEY)
    clock = FakeTime(T0 + dt.timedelta(hours=1))
    report = _deploy(site, clock, {"wait-live": "5"})
    assert report.exit_code == 0 and clock.sleeps == [] and site.fake.delivered() == [f"{BASE}/p/0/"]


def _built(site: Site, count: int) -> list[str]:
    """``count`` built pages; the live site serves each page's old version."""
    assert site.fake is not None
    locs = list(pages(count))
    site.build_pages(locs)
    site.write(urlset(pages(count)))
    for loc in locs:
        site.fake.sites[HOST][loc] = b"<html>the last deploy's page</html>"
    return locs


def _publish(site: Site, locs: list[str]) -> None:
    assert site.fake is not None
    for loc in locs:
        site.fake.sites[HOST][loc] = (site.public / loc.strip("/") / "index.html").read_bytes()


def test_with_site_dir_the_changed_pages_must_serve_the_built_bytes(site: Site) -> None:
    assert site.fake is not None
    fake = site.fake
    locs = _built(site, 3)
    clock = Deploying(T0, {2: lambda: _publish(site, locs)})
    report = _deploy(site, clock, {"wait-live": "60", "site-dir": str(site.public)})
    assert report.exit_code == 0, report.notes
    assert clock.sleeps == [1.0, 2.0] and len(fake.delivered()) == 3
    assert {f"/p/{n}/" for n in range(3)} <= {path.removeprefix(f"http://{HOST}") for path in fake.gets}


def test_a_page_still_serving_the_old_bytes_holds_its_host_back(site: Site) -> None:
    assert site.fake is not None
    locs = _built(site, 2)
    _publish(site, locs[:1])
    report = _deploy(site, FakeTime(T0), {"wait-live": "20", "site-dir": str(site.public)})
    assert report.exit_code == 3 and site.fake.posts == []
    said = next(note for note in report.notes if "--wait-live" in note)
    assert f"{BASE}/p/1/ serves other bytes than the build holds" in said and "/p/0/" not in said
    assert report.to_json()["not_live"] == [f"{BASE}/p/1/"]


def test_at_most_ten_pages_are_looked_at(site: Site) -> None:
    assert site.fake is not None
    locs = _built(site, 15)
    _publish(site, locs)
    report = _deploy(site, FakeTime(T0), {"wait-live": "60", "site-dir": str(site.public)})
    assert report.exit_code == 0
    looked = [path for path in site.fake.gets if "/p/" in path]
    assert len(looked) == 10  # the number the docs give, not the constant (edit: SAMPLE made 11)


def test_wait_live_in_the_config_file_and_the_api(site: Site) -> None:
    assert site.fake is not None
    _unpublished(site)
    site.write(urlset(pages(1)))
    (site.root / "notify-changes.toml").write_text("wait-live = 3\n")
    clock = FakeTime(T0)
    assert _deploy(site, clock).exit_code == 3 and sum(clock.sleeps) == 3
    site.fake.serve_key(HOST, KEY)
    report = notifier.run(site.sitemap, state=site.state, key=KEY, endpoints=[site.fake.endpoint], wait_live=30, cwd=site.root)
    assert report.exit_code == 0 and site.fake.delivered() == [f"{BASE}/p/0/"]


def test_a_bad_wait_is_one_line_and_exit_2(site: Site) -> None:
    site.write(urlset(pages(1)))
    result = site.run("--wait-live", "-5")
    assert result.code == 2 and "--wait-live: '-5' must be a number of seconds from 0 to 3600" in result.err
    assert "Traceback" not in result.err


def test_what_a_cap_holds_back_is_not_waited_for(site: Site) -> None:
    """A page [announce] keeps back this run is not sent, so nothing waits for it to be live:
    with the day's one URL used, a deploy whose key file is gone waits for nothing and fails
    nothing (the held pages stay pending for the next day), while a URL that does go out is
    waited for as before. Faulty edit: ``live_targets`` reading every pending URL, held or not."""
    assert site.fake is not None
    site.write(urlset(pages(1)))
    assert _deploy(site, FakeTime(T0), {"per-day": "1"}).exit_code == 0
    _unpublished(site)
    site.write(urlset({**pages(3), "/p/0/": "2030-06-01T12:30:00Z"}))
    clock = FakeTime(T0 + dt.timedelta(hours=1))
    held = _deploy(site, clock, {"wait-live": "60", "per-day": "1"})
    assert held.exit_code == 0, held.notes
    assert clock.sleeps == [] and held.not_live == [] and sorted(held.deferred) == [f"{BASE}/p/{n}/" for n in range(3)]
    next_day = FakeTime(T0 + dt.timedelta(days=1))
    waited = _deploy(site, next_day, {"wait-live": "3", "per-day": "1"})
    assert waited.exit_code == 3 and next_day.sleeps and len(waited.not_live) == 1  # the one that goes is waited for
