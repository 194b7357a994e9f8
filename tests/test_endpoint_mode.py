"""One accepting endpoint (issue #41, item 4): with ``--endpoint-mode first`` a batch goes to
the endpoints in configured order and stops at the first that takes it; a 429, 5xx, timeout
or connection failure moves it to the next at once, an endpoint with a stored wait is passed
over, and a batch no endpoint took stays pending (exit 3). The default, ``all``, is as before."""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

import pytest

from notifier.pipeline.loop import Environment, execute
from notifier.report import Report
from notifier.settings.settings import build_settings
from notifier.store import read_ledger, read_state
from tests.conftest import BASE, KEY, Site, pages, recorded_pending, urlset
from tests.fakeindexnow import FakeIndexNow, reset, status
from tests.faketime import FakeTime

T0 = dt.datetime(2030, 6, 1, 12, 0, tzinfo=dt.UTC)


def _deploy(site: Site, endpoints: list[str], when: dt.datetime = T0, options: dict[str, str] | None = None) -> tuple[Report, FakeTime]:
    cli: dict[str, Any] = {
        "sitemap": str(site.sitemap),
        "state": str(site.state),
        "endpoint": endpoints,
        "key": KEY,
        "retry-timeout": "30",
        "initial": "submit",
        **(options or {}),
    }
    clock = FakeTime(when)
    report = execute(build_settings("run", cli, cwd=site.root), Environment(now=clock.now, sleep=clock.sleep, clock=clock.clock))
    return report, clock


def test_the_default_sends_every_batch_to_every_endpoint(site: Site, second: FakeIndexNow) -> None:
    assert site.fake is not None
    site.write(urlset(pages(3)))
    report, _ = _deploy(site, [site.fake.endpoint, second.endpoint])
    assert report.exit_code == 0
    assert sorted(site.fake.delivered()) == sorted(second.delivered()) == sorted(f"{BASE}/p/{n}/" for n in range(3))
    assert [entry["endpoint"] for entry in read_ledger(site.state)] == [site.fake.endpoint, second.endpoint]


def test_first_stops_at_the_first_endpoint_that_takes_the_batch(site: Site, second: FakeIndexNow) -> None:
    assert site.fake is not None
    site.write(urlset(pages(3)))
    report, _ = _deploy(site, [site.fake.endpoint, second.endpoint], options={"endpoint-mode": "first", "batch-size": "2"})
    assert report.exit_code == 0 and len(report.submitted) == 3
    assert len(site.fake.delivered()) == 3 and second.posts == []  # the second is never asked
    assert recorded_pending(site.state) == {}
    assert [(entry["endpoint"], entry["status"]) for entry in read_ledger(site.state)] == [(site.fake.endpoint, "delivered")] * 2


@pytest.mark.parametrize("fault", [status(429, "slow down"), status(503, "busy"), reset()], ids=["429", "503", "reset"])
def test_first_moves_a_failed_batch_to_the_next_endpoint_at_once(site: Site, second: FakeIndexNow, fault: Any) -> None:
    assert site.fake is not None
    site.write(urlset(pages(2)))
    site.fake.plan = [fault]
    report, clock = _deploy(site, [site.fake.endpoint, second.endpoint], options={"endpoint-mode": "first"})
    assert report.exit_code == 0, report.notes
    assert len(site.fake.posts) == 1 and clock.sleeps == []  # not retried there: no wait at all
    assert sorted(second.delivered()) == [f"{BASE}/p/0/", f"{BASE}/p/1/"]
    assert [(batch.endpoint, batch.status, batch.moved_to) for batch in report.batches] == [
        (site.fake.endpoint, "failed", second.endpoint),
        (second.endpoint, "delivered", None),
    ]
    assert "sent on to 127.0.0.1" in report.batches[0].message
    ledger = read_ledger(site.state)
    assert [(entry["endpoint"], entry["status"]) for entry in ledger] == [(site.fake.endpoint, "failed"), (second.endpoint, "delivered")]
    assert "sent on to" in ledger[0]["error"]
    assert recorded_pending(site.state) == {}  # delivered is delivered: neither endpoint waits for it
    batches = json.loads(json.dumps(report.to_json()))["batches"]
    assert batches[0]["moved_to"] == second.endpoint and "moved_to" not in batches[1]


def test_an_endpoint_that_failed_gets_no_more_batches_in_that_run(site: Site, second: FakeIndexNow) -> None:
    assert site.fake is not None
    site.write(urlset(pages(3)))
    site.fake.plan = [status(503)]
    report, _ = _deploy(site, [site.fake.endpoint, second.endpoint], options={"endpoint-mode": "first", "batch-size": "1"})
    assert report.exit_code == 0
    assert len(site.fake.posts) == 1 and len(second.delivered()) == 3


def test_first_passes_over_an_endpoint_with_a_stored_wait(site: Site, second: FakeIndexNow) -> None:
    assert site.fake is not None
    site.write(urlset(pages(1)))
    site.fake.plan = [status(429, "slow down", Retry_After="3600")]
    report, _ = _deploy(site, [site.fake.endpoint, second.endpoint], options={"endpoint-mode": "first"})
    assert report.exit_code == 0 and second.delivered() == [f"{BASE}/p/0/"]
    recorded = read_state(site.state)
    assert recorded is not None and recorded.backoff == {site.fake.endpoint: "2030-06-01T13:00:00Z"}
    site.write(urlset(pages(2)))
    later, _ = _deploy(site, [site.fake.endpoint, second.endpoint], T0 + dt.timedelta(minutes=10), options={"endpoint-mode": "first"})
    assert later.exit_code == 0 and len(site.fake.posts) == 1  # still waited for: not asked
    assert second.delivered() == [f"{BASE}/p/0/", f"{BASE}/p/1/"]


def test_a_batch_no_endpoint_took_stays_pending_and_the_next_run_sends_it(site: Site, second: FakeIndexNow) -> None:
    assert site.fake is not None
    site.write(urlset(pages(2)))
    site.fake.plan = [status(500)]
    second.plan = [status(503)] * 100  # the last endpoint retries within --retry-timeout, then gives up
    report, _ = _deploy(site, [site.fake.endpoint, second.endpoint], options={"endpoint-mode": "first"})
    assert report.exit_code == 3 and sorted(report.pending) == [f"{BASE}/p/0/", f"{BASE}/p/1/"]
    assert len(site.fake.posts) == 1 and len(second.posts) > 1
    assert any("not delivered" in note and "HTTP 503" in note for note in report.notes), report.notes
    second.plan = []
    again, _ = _deploy(site, [site.fake.endpoint, second.endpoint], T0 + dt.timedelta(hours=1), options={"endpoint-mode": "first"})
    assert again.exit_code == 0 and sorted(site.fake.delivered()) == [f"{BASE}/p/0/", f"{BASE}/p/1/"]
    assert recorded_pending(site.state) == {}


def test_a_refusal_every_endpoint_shares_is_not_sent_on(site: Site, second: FakeIndexNow) -> None:
    assert site.fake is not None
    site.write(urlset(pages(1)))
    site.fake.plan = [status(422, "bad key")]
    report, _ = _deploy(site, [site.fake.endpoint, second.endpoint], options={"endpoint-mode": "first"})
    assert report.exit_code == 3 and second.posts == []
    assert sorted(recorded_pending(site.state)) == sorted([site.fake.endpoint, second.endpoint])


def test_urls_pending_at_one_endpoint_only_are_sent_once(site: Site, second: FakeIndexNow) -> None:
    """From --endpoint-mode all to first: what one endpoint still waits for goes to the first that takes it."""
    assert site.fake is not None
    site.write(urlset(pages(2)))
    second.plan = [status(400, "no")]
    assert _deploy(site, [site.fake.endpoint, second.endpoint])[0].exit_code == 3
    assert list(recorded_pending(site.state)) == [second.endpoint]
    report, _ = _deploy(site, [site.fake.endpoint, second.endpoint], T0 + dt.timedelta(hours=1), options={"endpoint-mode": "first"})
    assert report.exit_code == 0 and len(site.fake.delivered()) == 4 and len(second.posts) == 1
    assert recorded_pending(site.state) == {}


def test_a_dry_run_in_first_mode_shows_each_batch_once(site: Site, second: FakeIndexNow) -> None:
    assert site.fake is not None
    site.write(urlset(pages(2)))
    result = site.run(
        "--dry-run", "--initial", "submit", "--endpoint", site.fake.endpoint, "--endpoint", second.endpoint, "--endpoint-mode", "first"
    )
    assert result.code == 0 and result.out.count("would send to") == 1 and f"would send to {site.fake.endpoint}" in result.out


def test_endpoint_mode_is_checked_in_the_config_file_too(site: Site) -> None:
    (site.root / "notify-changes.toml").write_text('endpoint-mode = "second"\n')
    result = site.check()
    assert result.code == 2 and "endpoint-mode: 'second' is not one of all, first" in result.err
