"""The fault matrix: each endpoint failure, its outcome, exit code, exact pending set, and bounds."""

from __future__ import annotations

import datetime as dt
import time
from dataclasses import dataclass
from typing import Any

import pytest

from notifier.errors import ExitCode
from notifier.pipeline import Environment, execute
from notifier.report import Report
from notifier.settings import build_settings
from tests.conftest import BASE, KEY, Site, pages, recorded_pending, urlset
from tests.fakeindexnow import FakeIndexNow, Fault, hang, reset, status
from tests.faketime import FakeTime

NOW = dt.datetime(2030, 1, 1, 12, 0, 0, tzinfo=dt.UTC)
CHANGED = [f"{BASE}/p/{n}/" for n in range(3)]


def run_library(site: Site, fake: FakeIndexNow, **options: Any) -> tuple[Report, FakeTime, float]:
    cli: dict[str, Any] = {
        "sitemap": str(site.sitemap),
        "state": str(site.state),
        "endpoint": [fake.endpoint],
        "key": KEY,
        "retry-timeout": 60,
        "request-timeout": 0.4,
    }
    cli.update(options)
    fake_time = FakeTime(NOW)
    started = time.monotonic()
    report = execute(build_settings("run", cli), Environment(now=fake_time.now, sleep=fake_time.sleep, clock=fake_time.clock))
    return report, fake_time, time.monotonic() - started


@pytest.fixture
def changed(site: Site) -> Site:
    """A recorded site whose three pages then changed."""
    site.write(urlset(pages(3)))
    assert site.run().code == 0
    site.write(urlset(pages(3, lastmod="2029-06-{day:02d}T10:{minute:02d}:00Z")))
    return site


@dataclass(frozen=True)
class Case:
    plan: list[Fault]
    exit_code: ExitCode
    delivered: bool
    max_requests: int
    max_sleep: float = 60.0
    says: str = ""


CASES = {
    "429 Retry-After seconds": Case([status(429, Retry_After="5")], ExitCode.OK, True, 2),
    "429 Retry-After HTTP-date": Case([status(429, Retry_After="Tue, 01 Jan 2030 12:00:09 GMT")], ExitCode.OK, True, 2),
    "429 without Retry-After": Case([status(429)], ExitCode.OK, True, 2),
    "429 garbage Retry-After": Case([status(429, Retry_After="soon-ish")], ExitCode.OK, True, 2),
    "429 negative Retry-After": Case([status(429, Retry_After="-30")], ExitCode.OK, True, 2),
    "429 huge Retry-After": Case([status(429, Retry_After="99999999")], ExitCode.SUBMISSION_INCOMPLETE, False, 1, 0, "Retry-After"),
    "429 forever": Case([status(429)] * 40, ExitCode.SUBMISSION_INCOMPLETE, False, 7, says="HTTP 429"),
    "500": Case([status(500)], ExitCode.OK, True, 2),
    "502": Case([status(502)], ExitCode.OK, True, 2),
    "503": Case([status(503)], ExitCode.OK, True, 2),
    "503 forever": Case([status(503)] * 40, ExitCode.SUBMISSION_INCOMPLETE, False, 7, says="HTTP 503"),
    "connection reset": Case([reset()], ExitCode.OK, True, 2),
    "resets forever": Case([reset()] * 40, ExitCode.SUBMISSION_INCOMPLETE, False, 7, says="connection failed"),
    "never answers": Case([hang(30)] * 40, ExitCode.SUBMISSION_INCOMPLETE, False, 7, says="timed out"),
    "400": Case([status(400, "Bad request")], ExitCode.SUBMISSION_INCOMPLETE, False, 1, 0, "HTTP 400"),
    "403 UserForbiddedToAccessSite": Case(
        [status(403, '{"code":"UserForbiddedToAccessSite"}')], ExitCode.SUBMISSION_INCOMPLETE, False, 1, 0, "not accepted for this site"
    ),
    "403 SiteVerificationNotCompleted": Case(
        [status(403, '{"code":"SiteVerificationNotCompleted"}')], ExitCode.SUBMISSION_INCOMPLETE, False, 1, 0, "run again later"
    ),
    "403 KeyNotFound": Case([status(403, '{"code":"KeyNotFound"}')], ExitCode.SUBMISSION_INCOMPLETE, False, 1, 0, "publish KEY.txt"),
    "422": Case([status(422, "Unprocessable")], ExitCode.SUBMISSION_INCOMPLETE, False, 1, 0, "HTTP 422"),
}


@pytest.mark.parametrize("name", list(CASES))
def test_fault_matrix(changed: Site, fake: FakeIndexNow, name: str) -> None:
    case = CASES[name]
    fake.plan = list(case.plan)
    report, fake_time, wall = run_library(changed, fake)
    assert report.exit_code == case.exit_code, report.batches
    pending = recorded_pending(changed.state)
    if case.delivered:
        assert pending == {} and sorted(report.submitted) == sorted(CHANGED)
    else:
        assert sorted(pending[fake.endpoint]) == sorted(CHANGED) and report.submitted == []
        assert case.says in report.batches[-1].message
    assert 1 <= len(fake.posts) <= case.max_requests
    assert sum(fake_time.sleeps) <= case.max_sleep  # never sleeps past --retry-timeout
    assert wall < 10


def test_202_is_delivered_and_reported_as_such(changed: Site, fake: FakeIndexNow) -> None:
    fake.success_status = 202
    report, _, _ = run_library(changed, fake)
    assert report.exit_code == 0 and report.batches[0].status == "accepted"
    assert recorded_pending(changed.state) == {}


def test_a_redirect_is_not_followed(changed: Site, fake: FakeIndexNow) -> None:
    other = FakeIndexNow()
    try:
        fake.plan = [status(307, Location=other.endpoint)]
        report, fake_time, _ = run_library(changed, fake)
        assert report.exit_code == 3 and other.endpoint in report.batches[0].message
        assert other.posts == [] and other.gets == [] and len(fake.posts) == 1 and fake_time.sleeps == []
    finally:
        other.close()


def test_pending_is_per_endpoint_under_faults(changed: Site, fake: FakeIndexNow) -> None:
    other = FakeIndexNow()
    other.serve_key("www.shop-site.org", KEY)
    try:
        other.plan = [status(500)] * 40
        report, _, _ = run_library(changed, fake, endpoint=[fake.endpoint, other.endpoint])
        assert report.exit_code == 3
        pending = recorded_pending(changed.state)
        assert list(pending) == [other.endpoint] and sorted(pending[other.endpoint]) == sorted(CHANGED)
        assert sorted(fake.delivered()) == sorted(CHANGED)
    finally:
        other.close()
