"""[announce] min-interval, per-run and per-day (issue #41, items 6 and 7): what a policy keeps
back stays pending, exit 0, with one line, and a later run sends it; the day's count per
endpoint comes from the state, so it holds across runs, in every store. Clocks are injected."""

from __future__ import annotations

import datetime as dt
import io
import json
from typing import Any

import pytest

from notifier.cli import main
from notifier.commands.state import run_state_sites
from notifier.commands.state_request import StateRequest
from notifier.database import DatabaseURL
from notifier.report import Report, render_json
from notifier.settings.config_sites import site_states
from notifier.store import read_state
from tests.conftest import BASE, KEY, Site, pages, recorded_pending, run_at, urlset
from tests.fakeindexnow import FakeIndexNow

T0 = dt.datetime(2030, 6, 1, 12, 0, tzinfo=dt.UTC)


def _deploy(site: Site, when: dt.datetime, endpoints: list[str] | None = None, **options: Any) -> Report:
    return run_at(site, when, retry_timeout="5", **({"endpoint": endpoints} if endpoints else {}), **options)


def _url(n: int) -> str:
    return f"{BASE}/p/{n}/"


# -- min-interval ---------------------------------------------------------------------------
def test_a_url_announced_less_than_min_interval_ago_waits_then_goes(site: Site) -> None:
    assert site.fake is not None
    site.write(urlset(pages(2)))
    assert _deploy(site, T0, min_interval="10m").exit_code == 0
    assert sorted(site.fake.delivered()) == [_url(0), _url(1)]
    site.write(urlset({**pages(2), "/p/0/": "2030-06-01T12:04:00Z"}))
    early = _deploy(site, T0 + dt.timedelta(minutes=5), min_interval="10m")
    assert early.exit_code == 0 and early.pending == [_url(0)]  # a deferral is policy, not a failure
    assert len(site.fake.delivered()) == 2  # not sent again yet
    assert early.deferred[_url(0)].endswith("sent by the first run after 2030-06-01T12:10:00Z")
    lines = [note for note in early.notes if "[announce]" in note]
    assert lines == [f"1 URL waits for [announce] (1 by min-interval): pending, not a failure (e.g. {_url(0)}: {early.deferred[_url(0)]})"]
    assert not any("not delivered" in note for note in early.notes)
    assert recorded_pending(site.state)[site.fake.endpoint][_url(0)]["reason"] == "changed"
    still = _deploy(site, T0 + dt.timedelta(minutes=9), min_interval="10m")
    assert still.exit_code == 0 and still.pending == [_url(0)] and len(site.fake.delivered()) == 2
    after = _deploy(site, T0 + dt.timedelta(minutes=10, seconds=1), min_interval="10m")
    assert after.exit_code == 0 and after.submitted == [_url(0)] and after.pending == [] and after.deferred == {}
    assert site.fake.delivered()[-1] == _url(0) and recorded_pending(site.state) == {}


def test_without_min_interval_a_change_goes_at_once(site: Site) -> None:
    assert site.fake is not None
    site.write(urlset(pages(2)))
    assert _deploy(site, T0).exit_code == 0
    site.write(urlset({**pages(2), "/p/0/": "2030-06-01T12:04:00Z"}))
    report = _deploy(site, T0 + dt.timedelta(minutes=5))
    assert report.submitted == [_url(0)] and report.deferred == {}


def test_a_new_url_and_a_removal_are_never_deferred(site: Site) -> None:
    """Only a URL an endpoint acknowledged has a last announcement to measure from."""
    assert site.fake is not None
    site.write(urlset(pages(2)))
    assert _deploy(site, T0, min_interval="1h").exit_code == 0
    site.write(urlset({"/p/0/": pages(2)["/p/0/"], "/p/9/": "2030-06-01T12:00:00Z"}))
    report = _deploy(site, T0 + dt.timedelta(minutes=1), min_interval="1h")
    assert sorted(report.submitted) == [_url(1), _url(9)] and report.deferred == {}


# -- per-run and its order ----------------------------------------------------------------------
def test_per_run_sends_added_then_changed_then_removed_and_the_rest_waits(site: Site) -> None:
    assert site.fake is not None
    site.write(urlset(pages(2)))
    assert _deploy(site, T0, initial="baseline").exit_code == 0
    site.write(urlset({"/p/0/": "2030-06-01T12:30:00Z", "/p/5/": "2030-06-01T12:30:00Z"}))  # 0 changed, 1 removed, 5 added
    sent = []
    for hour in range(1, 5):
        report = _deploy(site, T0 + dt.timedelta(hours=hour), per_run="1")
        assert report.exit_code == 0, report.notes
        sent.append(report.submitted)
    assert sent == [[_url(5)], [_url(0)], [_url(1)], []]
    assert site.fake.delivered() == [_url(5), _url(0), _url(1)]


def test_per_run_takes_the_oldest_pending_first(site: Site) -> None:
    assert site.fake is not None
    site.write(urlset(pages(3)))
    assert _deploy(site, T0, per_run="1").submitted == [_url(0)]
    site.write(urlset(pages(4)))  # /p/3/ is added later than /p/1/ and /p/2/ waited
    assert _deploy(site, T0 + dt.timedelta(hours=1), per_run="2").submitted == [_url(1), _url(2)]
    assert _deploy(site, T0 + dt.timedelta(hours=2), per_run="2").submitted == [_url(3)]


def test_per_run_caps_each_endpoint_in_all_mode(site: Site, second: FakeIndexNow) -> None:
    assert site.fake is not None
    site.write(urlset(pages(3)))
    report = _deploy(site, T0, [site.fake.endpoint, second.endpoint], per_run="2")
    assert report.exit_code == 0 and site.fake.delivered() == second.delivered() == [_url(0), _url(1)]
    assert sorted(recorded_pending(site.state)) == sorted([site.fake.endpoint, second.endpoint])


def test_a_dry_run_shows_only_what_the_cap_lets_through(site: Site) -> None:
    assert site.fake is not None
    site.write(urlset(pages(3)))
    code = main(["run", str(site.sitemap), "--dry-run", "--initial", "submit", "--per-run", "2", "--key", KEY, "--format", "json"])
    report = json.loads(site.capsys.readouterr().out)
    assert code == 0 and [batch["count"] for batch in report["batches"]] == [2]
    assert report["deferred"] == 1 and report["policy"]["deferred"] == {
        _url(2): "over the [announce] per-run cap of 2: a later run sends it"
    }


# -- per-day ----------------------------------------------------------------------------------
@pytest.mark.parametrize("store", ["notify-changes.json", "notify-changes.sqlite", "postgresql"])
def test_per_day_holds_across_runs_and_a_new_utc_day_sends_the_rest(site: Site, store: str, request: pytest.FixtureRequest) -> None:
    assert site.fake is not None
    if store == "postgresql":
        site.state = DatabaseURL(request.getfixturevalue("pg_url"), site="shop")  # type: ignore[assignment]
    else:
        site.state = site.root / "state" / store
    site.write(urlset(pages(5)))
    first = _deploy(site, T0, per_day="3")
    assert first.exit_code == 0 and first.submitted == [_url(0), _url(1), _url(2)] and len(first.pending) == 2
    recorded = read_state(site.state)
    assert recorded is not None and recorded.sent_today == {site.fake.endpoint: {"day": "2030-06-01", "urls": 3}}
    later = _deploy(site, T0 + dt.timedelta(hours=11, minutes=59), per_day="3")  # 23:59 UTC, the same day
    assert later.exit_code == 0 and later.submitted == [] and len(later.deferred) == 2
    assert "2 URLs wait for [announce] (2 by per-day)" in later.notes[-1] or any("2 by per-day" in note for note in later.notes)
    tomorrow = _deploy(site, T0 + dt.timedelta(hours=12), per_day="3")
    assert tomorrow.exit_code == 0 and tomorrow.submitted == [_url(3), _url(4)] and tomorrow.pending == []
    recorded = read_state(site.state)
    assert recorded is not None and recorded.sent_today == {site.fake.endpoint: {"day": "2030-06-02", "urls": 2}}


def test_per_day_in_first_mode_passes_over_an_endpoint_whose_day_is_used_up(site: Site, second: FakeIndexNow) -> None:
    assert site.fake is not None
    site.write(urlset(pages(5)))
    both = [site.fake.endpoint, second.endpoint]
    one = _deploy(site, T0, both, endpoint_mode="first", per_day="2")
    assert one.submitted == [_url(0), _url(1)] and site.fake.delivered() == [_url(0), _url(1)] and second.posts == []
    two = _deploy(site, T0 + dt.timedelta(hours=1), both, endpoint_mode="first", per_day="2")
    assert two.exit_code == 0 and second.delivered() == [_url(2), _url(3)] and len(site.fake.posts) == 1
    three = _deploy(site, T0 + dt.timedelta(hours=2), both, endpoint_mode="first", per_day="2")
    assert three.exit_code == 0 and three.submitted == [] and three.pending == [_url(4)]
    recorded = read_state(site.state)
    assert recorded is not None
    assert recorded.sent_today == {site.fake.endpoint: {"day": "2030-06-01", "urls": 2}, second.endpoint: {"day": "2030-06-01", "urls": 2}}
    four = _deploy(site, T0 + dt.timedelta(days=1), both, endpoint_mode="first", per_day="2")
    assert four.submitted == [_url(4)] and site.fake.delivered()[-1] == _url(4)


def test_the_json_report_lists_what_waits_and_why(site: Site) -> None:
    site.write(urlset(pages(3)))
    report = json.loads(render_json(_deploy(site, T0, per_day="1")))
    assert report["exit_code"] == 0 and report["deferred"] == 2 and report["pending"] == 2
    assert report["urls"]["deferred"] == [_url(1), _url(2)]
    assert report["policy"]["deferred"][_url(1)] == "over the [announce] per-day cap of 1: a later run sends it"


# -- the state ----------------------------------------------------------------------------------
def test_a_state_without_sent_today_reads_and_saves_unchanged(site: Site) -> None:
    site.write(urlset(pages(2)))
    assert _deploy(site, T0).exit_code == 0
    before = site.state.read_bytes()
    assert b"sent_today" not in before
    site.write(urlset({**pages(2), "/p/0/": "2030-06-01T12:30:00Z"}))
    assert _deploy(site, T0 + dt.timedelta(hours=1)).exit_code == 0
    assert b"sent_today" not in site.state.read_bytes()


def test_a_damaged_sent_today_is_exit_2_naming_it(site: Site) -> None:
    site.write(urlset(pages(2)))
    assert _deploy(site, T0, per_day="5").exit_code == 0
    document = json.loads(site.state.read_text())
    document["sent_today"] = {"https://x/indexnow": {"day": "yesterday", "urls": 3}}
    site.state.write_text(json.dumps(document))
    result = site.run("--per-day", "5")
    assert result.code == 2 and '"sent_today" of https://x/indexnow is not {"day": "YYYY-MM-DD", "urls": N}' in result.err
    assert "Traceback" not in result.err


@pytest.mark.parametrize(("option", "value"), [("--per-run", "0"), ("--per-day", "-1"), ("--min-interval", "soon")])
def test_a_bad_policy_value_is_one_line_exit_2(site: Site, option: str, value: str) -> None:
    site.write(urlset(pages(1)))
    result = site.run(option, value)
    assert result.code == 2 and result.err.count("\n") == 1 and option in result.err


def test_min_interval_and_per_run_in_first_mode_hold_the_same_urls_at_every_endpoint(site: Site, second: FakeIndexNow) -> None:
    assert site.fake is not None
    both = [site.fake.endpoint, second.endpoint]
    site.write(urlset(pages(3)))
    first = _deploy(site, T0, both, endpoint_mode="first", min_interval="1h", per_run="2")
    assert first.exit_code == 0 and first.submitted == [_url(0), _url(1)] and first.pending == [_url(2)] and second.posts == []
    site.write(urlset({**pages(3), "/p/0/": "2030-06-01T12:10:00Z"}))
    again = _deploy(site, T0 + dt.timedelta(minutes=20), both, endpoint_mode="first", min_interval="1h", per_run="2")
    assert again.exit_code == 0 and again.submitted == [_url(2)] and again.pending == [_url(0)]
    assert set(again.deferred) == {_url(0)} and "min-interval" in again.deferred[_url(0)]
    late = _deploy(site, T0 + dt.timedelta(hours=1, minutes=1), both, endpoint_mode="first", min_interval="1h", per_run="2")
    assert late.submitted == [_url(0)] and recorded_pending(site.state) == {} and second.posts == []


# -- state show: what the next run holds ----------------------------------------------------
def _shown(site: Site, now: dt.datetime, config: str) -> str:
    """``state show`` at ``now``, with the [announce] the config file gives."""
    (site.root / "notify-changes.toml").write_text(config)
    sites = site_states({"state": str(site.state), "config": str(site.root / "notify-changes.toml")}, {}, site.root)
    out = io.StringIO()
    run_state_sites([StateRequest("show", each.state, announce=each.announce, now=lambda: now) for each in sites], out)
    return out.getvalue()


def test_state_show_says_a_url_waits_for_min_interval_not_that_the_next_run_sends_it(site: Site) -> None:
    assert site.fake is not None
    site.write(urlset(pages(2)))
    assert _deploy(site, T0, min_interval="10m").exit_code == 0
    site.write(urlset({**pages(2), "/p/0/": "2030-06-01T12:04:00Z"}))
    assert _deploy(site, T0 + dt.timedelta(minutes=5), min_interval="10m").pending == [_url(0)]
    early = _shown(site, T0 + dt.timedelta(minutes=6), '[announce]\nmin-interval = "10m"\n')
    endpoint = site.fake.endpoint
    held = "held: [announce] min-interval: sent by the first run after 2030-06-01T12:10:00Z"
    assert f"{endpoint}: 1 URL, waiting since 2030-06-01T12:05:00Z; {held}\n" in early
    assert "sent by the next run" not in early
    later = _shown(site, T0 + dt.timedelta(minutes=11), '[announce]\nmin-interval = "10m"\n')
    assert f"{endpoint}: 1 URL, waiting since 2030-06-01T12:05:00Z; sent by the next run\n" in later  # its time has come
    assert "sent by the next run\n" in _shown(site, T0 + dt.timedelta(minutes=6), "")  # no [announce]: nothing waits


def test_state_show_says_an_endpoints_day_is_used_up(site: Site) -> None:
    assert site.fake is not None
    site.write(urlset(pages(3)))
    assert len(_deploy(site, T0, per_day="2").pending) == 1
    shown = _shown(site, T0 + dt.timedelta(hours=1), "[announce]\nper-day = 2\n")
    held = "held: its [announce] per-day cap of 2 is used up today: sent by a run from 2030-06-02T00:00:00Z"
    assert f"1 URL, waiting since 2030-06-01T12:00:00Z; {held}\n" in shown
    assert "sent by the next run" in _shown(site, T0 + dt.timedelta(hours=12), "[announce]\nper-day = 2\n")  # a new UTC day
