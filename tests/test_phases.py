"""The pipeline's phases one by one: each takes the run and the state and returns a frozen result
(notifier/pipeline/loop.py calls them in order and puts the report together)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import pytest

from notifier.environment import Environment
from notifier.pipeline.context import STOPS, Deliveries, Run, Verified
from notifier.pipeline.loop import _persist_pending, _record_run
from notifier.pipeline.planning import plan_announcements
from notifier.pipeline.submission import submit_pending
from notifier.pipeline.verification import diff_and_verify
from notifier.settings.settings import Settings, build_settings
from notifier.store import JsonStore, State, read_state
from notifier.workers import Workers
from tests.conftest import BASE, KEY, Site, pages, urlset
from tests.fakeindexnow import FakeIndexNow, status

NOW = dt.datetime(2030, 6, 1, 12, 0, tzinfo=dt.UTC)


def settings_for(
    site: Site,
    endpoint: str = "https://api.indexnow.org/indexnow",
    *,
    command: str = "run",
    named: dict[str, Any] | None = None,
    **options: Any,
) -> Settings:
    """``named``: options whose names are not Python names (``dry-run``)."""
    given = {"sitemap": str(site.sitemap), "state": str(site.state), "key": KEY, "endpoint": [endpoint], **options, **(named or {})}
    return build_settings(command, given)


def run_of(settings: Settings, *, first_run: bool = False) -> Run:
    return Run(settings, Environment(now=lambda: NOW), NOW, first_run, Workers(1))


def recorded(site: Site) -> State:
    site.write(urlset(pages(3)))
    assert site.run().code == 0
    state = read_state(site.state)
    assert state is not None
    return state


def verified(state: State, settings: Settings, *, first_run: bool = False) -> Verified:
    return diff_and_verify(run_of(settings, first_run=first_run), state)


def test_diff_and_verify_returns_the_changes_and_findings_and_changes_nothing_on_disk(offline_site: Site) -> None:
    state = recorded(offline_site)
    before = offline_site.state_bytes()
    offline_site.write(urlset(pages(4) | {"http://localhost:1313/": "2024-01-01"}))
    result = verified(state, settings_for(offline_site, command="check"))
    assert [change.loc for change in result.diff.added] == [f"{BASE}/p/3/", "http://localhost:1313/"]
    assert result.failed and [violation.rule for violation in result.violations if violation.level == "error"] == ["url-dev-host"]
    assert result.diff.parts == []  # check makes no new parts
    assert offline_site.state_bytes() == before


@pytest.mark.parametrize(
    ("command", "options", "stop"), [("check", {}, "verify"), ("run", {"dry-run": True}, "plan"), ("run", {}, "record")]
)
def test_where_each_command_stops_is_one_table(offline_site: Site, command: str, options: dict[str, Any], stop: str) -> None:
    offline_site.write(urlset(pages(1)))
    run = run_of(settings_for(offline_site, command=command, named=options))
    assert run.stops_after == stop == STOPS[run.mode] and run.records == (stop == "record")


def test_plan_records_the_announcements_as_pending_per_endpoint(offline_site: Site) -> None:
    state = recorded(offline_site)
    offline_site.write(urlset(pages(2) | {"javascript:alert(1)": "2024-01-01"}))
    settings = settings_for(offline_site, rule=["url-invalid=warn", "mass-removal=off"])
    plan = plan_announcements(run_of(settings), verified(state, settings).diff, state)
    assert [[change.loc for change in group] for group in plan.to_submit] == [[], [], [f"{BASE}/p/2/"]]
    assert {loc: item["reason"] for loc, item in state.pending["https://api.indexnow.org/indexnow"].items()} == {f"{BASE}/p/2/": "removed"}
    assert any("can never be sent" in note for note in plan.notes)
    assert plan.planned == [] and list(plan.explain()) == [f"{BASE}/p/2/"]  # a run sends them; a dry run shows them
    dry = settings_for(offline_site, rule=["url-invalid=warn", "mass-removal=off"], named={"dry-run": True})
    state = recorded(offline_site)
    offline_site.write(urlset(pages(2) | {"javascript:alert(1)": "2024-01-01"}))
    plan = plan_announcements(run_of(dry), verified(state, dry).diff, state)
    assert [(batch.host, [change.loc for change in batch.urls]) for batch in plan.planned] == [("www.shop-site.org", [f"{BASE}/p/2/"])]


def test_plan_on_a_first_run_follows_initial(offline_site: Site) -> None:
    offline_site.write(urlset(pages(3, lastmod="2030-05-{day:02d}T00:00:00Z")))
    for initial, announced in (("baseline", 0), ("submit", 3), ("since:31d", 2)):
        state = State()
        settings = settings_for(offline_site, initial=initial)
        plan = plan_announcements(run_of(settings, first_run=True), verified(state, settings, first_run=True).diff, state)
        assert sum(len(group) for group in plan.to_submit) == announced, initial
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
    settings = settings_for(site, fake.endpoint, named={"batch-size": 2})
    with JsonStore(site.state) as store:
        deliveries = submit_pending(run_of(settings), state, store)
    assert deliveries.delivered == [f"{BASE}/p/0/", f"{BASE}/p/1/"]
    assert [batch.status for batch in deliveries.batches] == ["delivered", "failed"]
    assert state.waiting([fake.endpoint]) == [f"{BASE}/p/2/"]
    assert site.state.with_name(site.state.name + ".journal").exists()  # acknowledged batches are durable at once


def test_record_run_logs_a_run_that_did_something_and_leaves_a_rerun_alone(site: Site) -> None:
    state = recorded(site)
    before = site.state_bytes()
    settings = settings_for(site)
    checked = verified(state, settings)
    with JsonStore(site.state) as store:
        done = _record_run(run_of(settings), store, state, checked, Deliveries([], []), changed=False)
    assert site.state_bytes() == before and not done.incomplete
    state.pending[settings.endpoints[0]] = {f"{BASE}/p/1/": {"reason": "changed", "since": "2030-01-01T00:00:00Z"}}
    with JsonStore(site.state) as store:
        done = _record_run(run_of(settings), store, state, checked, Deliveries([], []), changed=False)
    assert done.incomplete and done.pending == [f"{BASE}/p/1/"]
    again = read_state(site.state)
    assert again is not None and again.runs[-1]["pending"] == 1 and again.runs[-1]["exit_code"] == 3


def test_the_pending_note_names_the_first_failed_batch_not_a_delivered_one(site: Site) -> None:
    from notifier.indexnow import BatchResult

    state = recorded(site)
    settings = settings_for(site)
    endpoint = settings.endpoints[0]
    checked = verified(state, settings)
    batches = [
        BatchResult(endpoint, "www.shop-site.org", 1, "delivered", 200, "OK", 1),
        BatchResult(endpoint, "www.shop-site.org", 1, "failed", 503, "HTTP 503; gave up within --retry-timeout 1 s", 3),
    ]
    state.pending[endpoint] = {f"{BASE}/p/1/": {"reason": "changed", "since": "2030-01-01T00:00:00Z"}}
    with JsonStore(site.state) as store:
        done = _record_run(run_of(settings), store, state, checked, Deliveries(batches, [f"{BASE}/p/0/"]), changed=True)
    assert done.notes[-1].endswith("first problem: HTTP 503; gave up within --retry-timeout 1 s")
