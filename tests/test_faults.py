"""The fault matrix: each endpoint failure, its outcome, exit code, exact pending set, and bounds."""

from __future__ import annotations

import datetime as dt
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

from notifier.errors import ExitCode
from notifier.pipeline.loop import Environment, execute
from notifier.report import Report
from notifier.settings.settings import build_settings
from tests.conftest import BASE, KEY, Site, pages, recorded_pending, urlset
from tests.fakeindexnow import FakeIndexNow, Fault, drip, hang, reset, status, wait_until
from tests.faketime import FakeTime

NOW = dt.datetime(2030, 1, 1, 12, 0, 0, tzinfo=dt.UTC)
CHANGED = [f"{BASE}/p/{n}/" for n in range(3)]


def _given(options: dict[str, Any]) -> dict[str, Any]:
    """Options by their long names (``retry-timeout``), as keyword arguments of run_library."""
    return options


def run_library(
    site: Site, fake: FakeIndexNow, notice: Callable[[str], None] | None = None, **options: Any
) -> tuple[Report, FakeTime, float]:
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
    environment = Environment(now=fake_time.now, sleep=fake_time.sleep, clock=fake_time.clock, notice=notice)
    report = execute(build_settings("run", cli), environment)
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
    "429 Retry-After 0 forever": Case([status(429, Retry_After="0")] * 600, ExitCode.SUBMISSION_INCOMPLETE, False, 7, says="HTTP 429"),
    "429 Retry-After in the past forever": Case(
        [status(429, Retry_After="Mon, 01 Jan 2029 00:00:00 GMT")] * 600, ExitCode.SUBMISSION_INCOMPLETE, False, 7, says="HTTP 429"
    ),
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
    "403 a message about the key": Case(
        [status(403, "Invalid key for host")], ExitCode.SUBMISSION_INCOMPLETE, False, 1, 0, "publish KEY.txt"
    ),
    "403 without a reason": Case(
        [status(403, "Forbidden")], ExitCode.SUBMISSION_INCOMPLETE, False, 1, 0, "key file not found, not matching, or site not verified"
    ),
    "422": Case(
        [status(422, "Unprocessable")], ExitCode.SUBMISSION_INCOMPLETE, False, 1, 0, "HTTP 422 Unprocessable Entity: a URL is not on"
    ),
    "404": Case([status(404)], ExitCode.SUBMISSION_INCOMPLETE, False, 1, 0, "HTTP 404: no IndexNow endpoint at this URL; check --endpoint"),
    "300": Case(
        [status(300, Location="http://elsewhere.example/")],
        ExitCode.SUBMISSION_INCOMPLETE,
        False,
        1,
        0,
        "redirects to http://elsewhere.example/",
    ),
    "418": Case(
        [status(418, "  I am\n a   teapot ")],
        ExitCode.SUBMISSION_INCOMPLETE,
        False,
        1,
        0,
        "HTTP 418: not a success; the endpoint said: I am a teapot",
    ),
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


def test_a_long_answer_is_quoted_to_its_first_160_characters(changed: Site, fake: FakeIndexNow) -> None:
    fake.plan = [status(400, "word " * 100)]
    report, _, _ = run_library(changed, fake)
    said = report.batches[-1].message.partition("the endpoint said: ")[2]
    assert said == " ".join(["word"] * 100)[:160] and len(said) == 160  # white space made one, then cut


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


def test_a_retry_after_shorter_than_the_backoff_waits_the_backoff(changed: Site, fake: FakeIndexNow) -> None:
    fake.plan = [status(429, Retry_After="0"), status(503, Retry_After="0"), status(429, Retry_After="1")]
    report, fake_time, _ = run_library(changed, fake)
    assert report.exit_code == 0 and len(fake.posts) == 4
    assert [round(wait) for wait in fake_time.sleeps] == [1, 2, 4] or all(wait >= 1 for wait in fake_time.sleeps)
    assert fake_time.sleeps[0] >= 1 and fake_time.sleeps[1] >= 2 and fake_time.sleeps[2] >= 4


def test_a_dripping_answer_is_cut_at_the_request_timeout(changed: Site, fake: FakeIndexNow) -> None:
    """--request-timeout bounds the whole request: an answer that drips a byte at a time
    (each byte well within the per-read timeout) is abandoned when the bound is reached."""
    fake.plan = [drip(0.05, 600)]  # 30 s of answer, a byte every 50 ms
    report, _, _ = run_library(changed, fake, **_given({"request-timeout": 0.5, "retry-timeout": 0}))
    assert report.exit_code == 3 and "timed out" in report.batches[0].message
    assert wait_until(lambda: fake.posts[0].cut, timeout=5)
    assert fake.posts[0].dripped < 600


def test_a_dead_endpoint_costs_one_budget_not_one_per_batch(changed: Site, fake: FakeIndexNow) -> None:
    other = FakeIndexNow()
    other.serve_key("www.shop-site.org", KEY)
    try:
        fake.plan = [status(503)] * 600
        report, fake_time, _ = run_library(changed, fake, endpoint=[fake.endpoint, other.endpoint], **_given({"batch-size": 1}))
        assert report.exit_code == 3
        assert 1 < len(fake.posts) <= 7  # the first batch's retries, nothing for the other two
        to_dead = [batch for batch in report.batches if batch.endpoint == fake.endpoint]
        assert [batch.status for batch in to_dead] == ["failed", "skipped", "skipped"]
        assert "after its retries" in to_dead[1].message and "batch 1/3" in to_dead[1].message
        assert sum(fake_time.sleeps) <= 60  # one --retry-timeout in all
        assert sorted(other.delivered()) == sorted(CHANGED)  # the other endpoint goes on
        assert sorted(recorded_pending(changed.state)[fake.endpoint]) == sorted(CHANGED)
    finally:
        other.close()


def test_an_endpoint_that_recovers_between_batches_is_not_given_up(changed: Site, fake: FakeIndexNow) -> None:
    fake.plan = [status(503), status(503)]  # the first batch gets through on its third try
    report, _, _ = run_library(changed, fake, **_given({"batch-size": 1}))
    assert report.exit_code == 0 and [batch.status for batch in report.batches] == ["delivered"] * 3


def test_each_retry_wait_is_said_in_one_line(changed: Site, fake: FakeIndexNow) -> None:
    said: list[str] = []
    fake.plan = [status(503), status(429, Retry_After="7")]
    report, _, _ = run_library(changed, fake, said.append, **_given({"retry-timeout": 100, "request-timeout": 2}))
    assert report.exit_code == 0
    assert len(said) == 2, said
    assert said[0].startswith("batch 1/1 to 127.0.0.1:")
    assert re.search(r": HTTP 503, retrying in [12] s, 9[789] s of --retry-timeout left after it$", said[0]), said
    assert ": HTTP 429, retrying in 7 s, " in said[1]


def test_the_key_is_hidden_before_an_error_text_is_cut(changed: Site, fake: FakeIndexNow) -> None:
    for offset in (140, 150, 155, 159, 480, 495):
        fake.plan = [status(400, "e" * offset + KEY + " is not accepted")]
        report, _, _ = run_library(changed, fake)
        message = report.batches[-1].message
        assert KEY[:5] not in message, (offset, message)


def test_an_endpoint_that_drops_every_connection_costs_one_budget_too(changed: Site, fake: FakeIndexNow) -> None:
    fake.plan = [reset()] * 600  # no answer at all, only resets: the same as a 503 every time
    report, fake_time, _ = run_library(changed, fake, **_given({"batch-size": 1}))
    assert report.exit_code == 3
    assert [batch.status for batch in report.batches] == ["failed", "skipped", "skipped"]
    assert "connection failed" in report.batches[0].message
    assert sum(fake_time.sleeps) <= 60
    assert sorted(recorded_pending(changed.state)[fake.endpoint]) == sorted(CHANGED)


def test_the_backoff_is_capped_at_its_longest_wait(changed: Site, fake: FakeIndexNow) -> None:
    """With --retry-timeout 600, waits grow to 60 s and stay there (not 64, 128, 256)."""
    fake.plan = [status(503)] * 40
    report, fake_time, _ = run_library(changed, fake, **_given({"retry-timeout": 600}))
    assert report.exit_code == 3
    waits = [wait for wait in fake_time.sleeps if wait > 0]
    assert len(waits) >= 10 and max(waits) <= 60 + 1  # the longest wait, and at most a second of jitter
    assert sum(1 for wait in waits if wait >= 59) >= 3  # it got there, and stayed
