"""What notifier/pipeline/submission.py does that the mutation run found no test stating (#44):
the retry lines' redaction, the ledger written once under --endpoint-mode first, --verify-live
per host, a Retry-After wait that ends during the run, and --endpoint-mode first's steps,
signing and stop lines. Each test names the edit it catches. Clocks are injected."""

from __future__ import annotations

import datetime as dt
from typing import Any

from notifier.environment import Environment
from notifier.pipeline.loop import execute
from notifier.pipeline.submission import _redacting
from notifier.protocol import Keys
from notifier.report import Report
from notifier.settings.settings import build_settings
from notifier.store import read_ledger, read_state
from notifier.urls import host_of
from tests.conftest import BASE, HOST, KEY, Site, pages, run_at, urlset
from tests.fakeindexnow import FakeIndexNow, status
from tests.faketime import FakeTime
from tests.test_wait_live import Deploying

T0 = dt.datetime(2030, 6, 1, 12, 0, tzinfo=dt.UTC)
NEW = "fedcba9876543210fedc"
OTHER = "other.shop-site.org"


def _deploy(site: Site, endpoints: list[str], options: dict[str, Any], clock: FakeTime | None = None, **env: Any) -> Report:
    """A run at T0 (or on ``clock``) to ``endpoints``; ``env``: more of the Environment (step=...)."""
    cli: dict[str, Any] = {
        "sitemap": str(site.sitemap),
        "state": str(site.state),
        "endpoint": endpoints,
        "key": KEY,
        "retry-timeout": "30",
        "initial": "submit",
        **options,
    }
    clock = clock or FakeTime(T0)
    return execute(build_settings("run", cli, cwd=site.root), Environment(now=clock.now, sleep=clock.sleep, clock=clock.clock, **env))


def test_a_notice_cuts_every_configured_key_to_four_characters() -> None:
    """fails if ``not keys.secrets`` becomes ``keys.secrets`` in pipeline/submission.py::_redacting"""
    said: list[str] = []
    notice = _redacting(said.append, Keys(default=KEY))
    assert notice is not None
    notice(f"key file http://{HOST}/{KEY}.txt: HTTP 503, retrying in 1 s")
    assert said == [f"key file http://{HOST}/0123….txt: HTTP 503, retrying in 1 s"]


def test_first_mode_writes_a_batchs_ledger_entry_once_however_many_endpoints_held_it(site: Site, second: FakeIndexNow) -> None:
    """Both endpoints held the URLs; the first takes them: one entry, written with the delivery.
    fails if ``store.record_delivered(...) or written`` becomes ``and``, or loses ``written``, in
    pipeline/submission.py::_record_delivered"""
    assert site.fake is not None
    site.state = site.root / "state" / "notify-changes.sqlite"
    site.write(urlset(pages(2)))
    report = run_at(site, T0, endpoint=[site.fake.endpoint, second.endpoint], endpoint_mode="first")
    assert report.exit_code == 0 and sorted(site.fake.delivered()) == [f"{BASE}/p/0/", f"{BASE}/p/1/"] and second.posts == []
    assert [(entry["endpoint"], entry["status"]) for entry in read_ledger(site.state)] == [(site.fake.endpoint, "delivered")]


def test_verify_live_looks_at_each_hosts_own_pages(site: Site) -> None:
    """A page of another host that is not live holds back that host only.
    fails if ``item["reason"] in ("added", "changed") and host_of(loc) == host`` loses its host
    test in pipeline/submission.py::_Submissions._live_problem"""
    assert site.fake is not None
    site.fake.serve_key(OTHER, KEY)
    site.fake.sites[HOST]["/p/0/"] = b"<html>live</html>"  # http://other.shop-site.org/o/ answers 404
    site.write(urlset({f"{BASE}/p/0/": "2024-05-01", f"http://{OTHER}/o/": "2024-05-01"}))
    report = _deploy(site, [site.fake.endpoint], {"verify-live": "5", "rule": ["url-out-of-scope=off"]})
    assert report.exit_code == 3 and site.fake.delivered() == [f"{BASE}/p/0/"]
    assert report.pending == [f"http://{OTHER}/o/"]


def test_a_retry_after_wait_that_ends_while_the_run_waits_live_is_over(site: Site) -> None:
    """The run began before the wait's end and reaches the endpoint at that very second.
    fails if ``until <= format_utc(self.env.now())`` becomes ``<``, or (the state keeping the
    wait) if ``self.state.backoff.pop(...)`` is left out, in pipeline/submission.py::_Submissions._waiting"""
    assert site.fake is not None
    site.write(urlset(pages(1)))
    site.fake.plan = [status(429, "slow down", **{"Retry-After": "3"})]
    first = _deploy(site, [site.fake.endpoint], {"retry-timeout": "1"})
    recorded = read_state(site.state)
    assert first.exit_code == 3 and recorded is not None and recorded.backoff == {site.fake.endpoint: "2030-06-01T12:00:03Z"}
    fake = site.fake
    del fake.sites[HOST][f"/{KEY}.txt"]
    clock = Deploying(T0, {2: lambda: fake.serve_key(HOST, KEY)})  # looks at 12:00:00 and :01, live at :03
    report = _deploy(site, [fake.endpoint], {"wait-live": "10"}, clock)
    assert clock.sleeps == [1.0, 2.0] and report.exit_code == 0, report.notes
    assert fake.delivered() == [f"{BASE}/p/0/"]
    after = read_state(site.state)
    assert after is not None and after.backoff == {}  # a wait that is over is forgotten


# -- --endpoint-mode first --------------------------------------------------------------------
def test_first_mode_with_one_endpoint_sends_what_the_cap_lets_through(site: Site) -> None:
    """fails if ``self.holds.at(endpoints[0])`` becomes ``endpoints[1]`` in
    pipeline/submission.py::_Submissions._first_taker"""
    assert site.fake is not None
    site.write(urlset(pages(2)))
    report = run_at(site, T0, endpoint_mode="first", per_run="1")
    assert report.exit_code == 0 and site.fake.delivered() == [f"{BASE}/p/0/"] and report.pending == [f"{BASE}/p/1/"]


def test_first_mode_says_each_batch_it_sends_counted_from_one(site: Site, second: FakeIndexNow) -> None:
    """fails if ``enumerate(batches, start=1)`` becomes ``start=2``, or ``self._step(label, batch,
    len(batches))`` is left out, in pipeline/submission.py::_Submissions._first_taker"""
    assert site.fake is not None
    site.write(urlset(pages(2)))
    steps: list[str] = []
    options = {"endpoint-mode": "first", "batch-size": "1"}
    report = _deploy(site, [site.fake.endpoint, second.endpoint], options, step=steps.append)
    assert report.exit_code == 0
    name = host_of(site.fake.endpoint)
    assert steps == [f"sending batch 1/2 to {name}: 1 URL of {HOST}", f"sending batch 2/2 to {name}: 1 URL of {HOST}"]


def test_first_mode_signs_with_the_previous_key_while_the_new_key_file_is_not_served(site: Site, second: FakeIndexNow) -> None:
    """fails if ``batch = self.signed(batch)`` is removed in pipeline/submission.py::_Submissions._first_taker"""
    assert site.fake is not None
    site.write(urlset(pages(1)))
    options = {"endpoint-mode": "first", "key": NEW, "key-previous": KEY}
    report = _deploy(site, [site.fake.endpoint, second.endpoint], options)
    assert report.exit_code == 0 and report.previous_key == [HOST]
    assert [post.json["key"] for post in site.fake.posts] == [KEY] and site.fake.delivered() == [f"{BASE}/p/0/"]


def test_first_mode_says_which_endpoint_was_retried_and_which_was_passed_on_at_once(site: Site, second: FakeIndexNow) -> None:
    """The first endpoint fails over to the next without retries; the last is retried.
    fails if ``retried=following is None`` becomes ``is not None`` in
    pipeline/submission.py::_Submissions._first_taker"""
    assert site.fake is not None
    site.write(urlset(pages(2)))
    site.fake.plan = [status(503, "busy")] * 20
    second.plan = [status(503, "busy")] * 20
    options = {"endpoint-mode": "first", "batch-size": "1", "retry-timeout": "2"}
    report = _deploy(site, [site.fake.endpoint, second.endpoint], options)
    assert report.exit_code == 3 and len(site.fake.posts) == 1 and len(second.posts) > 1
    one, two = host_of(site.fake.endpoint), host_of(second.endpoint)
    assert report.batches[-1].status == "skipped"
    assert report.batches[-1].message == (
        f"not sent: {one} failed batch 1/2 to {one} (--endpoint-mode first: not retried while another endpoint is next); "
        f"they stay pending for the next run; not sent: {two} failed batch 1/2 to {two} after its retries; "
        "they stay pending for the next run"
    )


def test_first_mode_says_the_pending_urls_it_cannot_send_and_keeps_them(site: Site, second: FakeIndexNow) -> None:
    """URLs pending from an earlier run that this run's key no longer covers (a --key-location
    in a folder they are outside of): one "skipped" result a host and reason, and they stay
    pending (edits: that ``yield`` made a raise; a result's count or attempts not 0 where 0 is written)."""
    assert site.fake is not None
    both = [site.fake.endpoint, second.endpoint]
    site.write(urlset(pages(2)))
    site.fake.plan = [status(503)] * 40
    second.plan = [status(503)] * 40
    first = _deploy(site, both, {"endpoint-mode": "first", "on-submit-error": "warn"})
    assert first.exit_code == 0 and sorted(first.pending) == [f"{BASE}/p/0/", f"{BASE}/p/1/"]
    site.fake.plan, second.plan = [], []
    site.fake.sites[HOST][f"/docs/{KEY}.txt"] = KEY.encode()
    report = _deploy(site, both, {"endpoint-mode": "first", "on-submit-error": "warn", "key-location": f"{BASE}/docs/{KEY}.txt"})
    skipped = [batch for batch in report.batches if batch.status == "skipped"]
    assert [(batch.endpoint, batch.host, batch.url_count, batch.attempts, batch.http_status) for batch in skipped] == [
        (site.fake.endpoint, HOST, 2, 0, None)
    ], report.batches
    assert "outside" in skipped[0].message and site.fake.delivered() == [] and second.delivered() == []
    assert sorted(report.pending) == [f"{BASE}/p/0/", f"{BASE}/p/1/"]


def test_verify_live_fetches_a_page_pending_at_two_endpoints_once(site: Site, second: FakeIndexNow) -> None:
    """--verify-live larger than the new pages, with both endpoints holding them: each page is
    fetched once (edit: the ``continue`` for a page already fetched made a raise)."""
    from tests.test_pinned_two import _live_pages

    assert site.fake is not None
    _live_pages(site, 2)
    site.write(urlset(pages(2)))
    site.fake.gets.clear()
    report = _deploy(site, [site.fake.endpoint, second.endpoint], {"verify-live": "10"})
    assert report.exit_code == 0 and report.pending == []
    assert sorted(path for path in site.fake.gets if "/p/" in path) == [f"{BASE}/p/0/", f"{BASE}/p/1/"], site.fake.gets
