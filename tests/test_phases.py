"""The pipeline's phases one by one, with their inputs and outputs (pipeline.py calls them in order)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

from notifier.environment import Environment
from notifier.pipeline.loop import _persist_pending, _record_run
from notifier.pipeline.planning import plan_announcements, show_plan
from notifier.pipeline.submission import submit_pending
from notifier.pipeline.verification import diff_and_verify
from notifier.report import Report
from notifier.settings import Settings, build_settings
from notifier.store import JsonStore, State, read_state
from tests.conftest import BASE, KEY, Site, pages, urlset
from tests.fakeindexnow import FakeIndexNow, status

NOW = dt.datetime(2030, 6, 1, 12, 0, tzinfo=dt.UTC)


def settings_for(site: Site, endpoint: str = "https://api.indexnow.org/indexnow", **options: Any) -> Settings:
    return build_settings("run", {"sitemap": str(site.sitemap), "state": str(site.state), "key": KEY, "endpoint": [endpoint], **options})


def recorded(site: Site) -> State:
    site.write(urlset(pages(3)))
    assert site.run().code == 0
    state = read_state(site.state)
    assert state is not None
    return state


def verified(site: Site, state: State, settings: Settings, *, first_run: bool = False, writes: bool = True) -> tuple[Any, Report]:
    report = Report(command="run")
    diff = diff_and_verify(settings, Environment(now=lambda: NOW), state, report, first_run=first_run, writes=writes, now=NOW)
    return diff, report


def test_diff_and_verify_fills_the_report_and_changes_nothing_on_disk(offline_site: Site) -> None:
    state = recorded(offline_site)
    before = offline_site.state_bytes()
    offline_site.write(urlset(pages(4) | {"http://localhost:1313/": "2024-01-01"}))
    diff, report = verified(offline_site, state, settings_for(offline_site), writes=False)
    assert [change.loc for change in report.added] == [f"{BASE}/p/3/", "http://localhost:1313/"]
    assert [violation.rule for violation in report.errors] == ["url-dev-host"] and diff.parts == []
    assert offline_site.state_bytes() == before


def test_plan_records_the_announcements_as_pending_per_endpoint(offline_site: Site) -> None:
    state = recorded(offline_site)
    offline_site.write(urlset(pages(2) | {"javascript:alert(1)": "2024-01-01"}))
    settings = settings_for(offline_site, rule=["url-invalid=warn", "mass-removal=off"])
    diff, report = verified(offline_site, state, settings)
    to_submit = plan_announcements(settings, diff, state, report, first_run=False, now=NOW)
    assert [[change.loc for change in group] for group in to_submit] == [[], [], [f"{BASE}/p/2/"]]
    assert {loc: item["reason"] for loc, item in state.pending["https://api.indexnow.org/indexnow"].items()} == {f"{BASE}/p/2/": "removed"}
    assert any("can never be sent" in note for note in report.notes)
    show_plan(settings, state, report)
    assert [(plan.host, [change.loc for change in plan.urls]) for plan in report.planned] == [("www.shop-site.org", [f"{BASE}/p/2/"])]


def test_plan_on_a_first_run_follows_initial(offline_site: Site) -> None:
    offline_site.write(urlset(pages(3, lastmod="2030-05-{day:02d}T00:00:00Z")))
    for initial, announced in (("baseline", 0), ("submit", 3), ("since:31d", 2)):
        state = State()
        settings = settings_for(offline_site, initial=initial)
        diff, report = verified(offline_site, state, settings, first_run=True)
        to_submit = plan_announcements(settings, diff, state, report, first_run=True, now=NOW)
        assert sum(len(group) for group in to_submit) == announced, initial
        assert len(state.pending.get("https://api.indexnow.org/indexnow", {})) == announced


def test_persist_pending_saves_before_anything_is_sent_and_only_when_something_changed(tmp_path: Path) -> None:
    path = tmp_path / "state.json"
    state = State.from_urls({})
    with JsonStore(path) as store:
        _persist_pending(store, state, ["e"], stamp="2030-01-01T00:00:00Z", changed=True)
        assert not path.exists()  # nothing pending: nothing to make durable
        state.pending["e"] = {f"{BASE}/a/": {"reason": "added", "since": "2030-01-01T00:00:00Z"}}
        _persist_pending(store, state, ["e"], stamp="2030-01-01T00:00:00Z", changed=False)
        assert not path.exists()  # pending, but already on disk (nothing changed)
        _persist_pending(store, state, ["e"], stamp="2030-01-01T00:00:00Z", changed=True)
    again = read_state(path)
    assert again is not None and list(again.pending["e"]) == [f"{BASE}/a/"]


def test_submit_pending_returns_what_was_delivered_and_records_it(site: Site, fake: FakeIndexNow) -> None:
    state = recorded(site)
    state.pending[fake.endpoint] = {f"{BASE}/p/{n}/": {"reason": "changed", "since": "2030-01-01T00:00:00Z"} for n in range(3)}
    fake.plan = [status(200), status(400, "no")]
    settings = settings_for(site, fake.endpoint, **{"batch-size": 2})
    report = Report(command="run")
    with JsonStore(site.state) as store:
        delivered = submit_pending(settings, Environment(now=lambda: NOW), state, store, report)
    assert delivered == [f"{BASE}/p/0/", f"{BASE}/p/1/"] and [batch.status for batch in report.batches] == ["delivered", "failed"]
    assert state.waiting([fake.endpoint]) == [f"{BASE}/p/2/"]
    assert site.state.with_name(site.state.name + ".journal").exists()  # acknowledged batches are durable at once


def test_record_run_logs_a_run_that_did_something_and_leaves_a_rerun_alone(site: Site) -> None:
    state = recorded(site)
    before = site.state_bytes()
    settings = settings_for(site)
    diff, report = verified(site, state, settings)
    with JsonStore(site.state) as store:
        _record_run(settings, store, state, diff, report, [], stamp="2030-06-01T12:00:00Z", first_run=False, changed=False)
    assert site.state_bytes() == before and report.exit_code == 0
    state.pending[settings.endpoints[0]] = {f"{BASE}/p/1/": {"reason": "changed", "since": "2030-01-01T00:00:00Z"}}
    with JsonStore(site.state) as store:
        _record_run(settings, store, state, diff, report, [], stamp="2030-06-01T12:00:00Z", first_run=False, changed=False)
    assert report.exit_code == 3 and report.pending == [f"{BASE}/p/1/"]
    again = read_state(site.state)
    assert again is not None and again.runs[-1]["pending"] == 1 and again.runs[-1]["exit_code"] == 3


def test_the_pending_note_names_the_first_failed_batch_not_a_delivered_one(site: Site) -> None:
    from notifier.indexnow import BatchResult

    state = recorded(site)
    settings = settings_for(site)
    endpoint = settings.endpoints[0]
    diff, report = verified(site, state, settings)
    report.batches = [
        BatchResult(endpoint, "www.shop-site.org", 1, "delivered", 200, "OK", 1),
        BatchResult(endpoint, "www.shop-site.org", 1, "failed", 503, "HTTP 503; gave up within --retry-timeout 1 s", 3),
    ]
    state.pending[endpoint] = {f"{BASE}/p/1/": {"reason": "changed", "since": "2030-01-01T00:00:00Z"}}
    with JsonStore(site.state) as store:
        _record_run(settings, store, state, diff, report, [f"{BASE}/p/0/"], stamp="2030-06-01T12:00:00Z", first_run=False, changed=True)
    assert report.notes[-1].endswith("first problem: HTTP 503; gave up within --retry-timeout 1 s")
