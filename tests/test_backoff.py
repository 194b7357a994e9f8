"""A back-off shared by every run (issue #19, item 3): a 429 or 503 whose Retry-After reaches
beyond --retry-timeout is kept in the state as "not before T"; later runs (and in
PostgreSQL every site of the database) keep that endpoint's batches pending until T."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from notifier.database import DatabaseURL
from notifier.report import Report
from notifier.store import read_ledger, read_state
from tests.conftest import BASE, Site, pages, run_at, urlset
from tests.fakeindexnow import status

T0 = dt.datetime(2030, 6, 1, 12, 0, tzinfo=dt.UTC)


def _deploy(site: Site, when: dt.datetime, state: object = None, **more: Any) -> Report:
    return run_at(site, when, **({} if state is None else {"state": state}), **more)


@pytest.mark.parametrize("store", ["notify-changes.json", "notify-changes.sqlite"])
def test_a_retry_after_past_the_budget_holds_every_later_run_until_then(site: Site, store: str) -> None:
    assert site.fake is not None
    site.state = site.root / "state" / store
    site.write(urlset(pages(2)))
    site.fake.plan = [status(429, "slow down", **{"Retry-After": "3600"})]
    first = _deploy(site, T0)
    assert first.exit_code == 3 and len(site.fake.posts) == 1  # one POST, then no wait of an hour within 30 s
    recorded = read_state(site.state)
    assert recorded is not None and recorded.backoff == {site.fake.endpoint: "2030-06-01T13:00:00Z"}
    later = _deploy(site, T0 + dt.timedelta(minutes=10))
    assert later.exit_code == 3 and len(site.fake.posts) == 1  # nothing sent: the wait is not over
    assert any("asked to wait until 2030-06-01T13:00:00Z" in note for note in later.notes), later.notes
    assert [batch.status for batch in later.batches] == ["skipped"]
    assert [entry["http_status"] for entry in read_ledger(site.state)] == [429]  # a batch held back was never sent: no entry
    done = _deploy(site, T0 + dt.timedelta(hours=1))  # the very second it was told: the wait is over
    assert done.exit_code == 0 and site.fake.delivered() == [f"{BASE}/p/0/", f"{BASE}/p/1/"]
    after = read_state(site.state)
    assert after is not None and after.backoff == {}


def test_a_retry_after_within_the_budget_is_waited_for_and_not_kept(site: Site) -> None:
    assert site.fake is not None
    site.write(urlset(pages(1)))
    site.fake.plan = [status(503, "busy", **{"Retry-After": "5"})]
    report = _deploy(site, T0)
    assert report.exit_code == 0 and len(site.fake.posts) == 2
    recorded = read_state(site.state)
    assert recorded is not None and recorded.backoff == {}
    assert b"backoff" not in site.state.read_bytes()  # written only when there is one


def test_in_postgresql_every_site_waits_with_the_one_that_was_told(site: Site, pg_url: str) -> None:
    assert site.fake is not None
    site.write(urlset(pages(1)))
    site.fake.plan = [status(429, "slow down", **{"Retry-After": "3600"})]
    assert _deploy(site, T0, pg_url, **{"site-name": "shop"}).exit_code == 3
    other = _deploy(site, T0 + dt.timedelta(minutes=5), pg_url, **{"site-name": "blog"})
    assert other.exit_code == 3 and len(site.fake.posts) == 1  # another site, the same endpoint: it waits too
    assert read_state(DatabaseURL(pg_url, site="blog")) is not None
    assert _deploy(site, T0 + dt.timedelta(hours=2), pg_url, **{"site-name": "blog"}).exit_code == 0
