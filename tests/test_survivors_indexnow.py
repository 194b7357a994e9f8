"""What notifier/indexnow.py does that the mutation run found no test stating (#44): a
Retry-After with spaces around it, the User-Agent sent, the jitter added to each backoff, that a
polled GET (--wait-live) is never retried, what a GET that cannot be made or is refused gives,
the keyLocation a batch posts, and a redirect to a Location that is no URL (a crash before: a
real bug). Each test names the edit it catches. Clocks are injected;
nothing sleeps."""

from __future__ import annotations

import datetime as dt
import random

from notifier.indexnow import Batch, BatchResult, Client, RetryPolicy, parse_retry_after
from tests.conftest import BASE, HOST, KEY
from tests.fakeindexnow import FakeIndexNow, status
from tests.faketime import FakeTime

NOW = dt.datetime(2024, 6, 1, 12, 0, 0, tzinfo=dt.UTC)
PAGE = f"{BASE}/p/"


class _MostJitter(random.Random):
    """A random source whose every jitter is the most the policy allows."""

    def uniform(self, a: float, b: float) -> float:
        return b


def _client(fake_time: FakeTime, budget: float = 120.0, rng: random.Random | None = None) -> Client:
    return Client(
        policy=RetryPolicy(budget=budget),
        request_timeout=2.0,
        sleep=fake_time.sleep,
        clock=fake_time.clock,
        wall_clock=fake_time.now,
        rng=rng or random.Random(7),
    )


def _submitted(fake: FakeIndexNow, batch: Batch) -> BatchResult:
    """``batch`` sent to the fake endpoint by a client of its own, closed after."""
    the_client = _client(FakeTime(NOW))
    try:
        return the_client.submit(fake.endpoint, batch)
    finally:
        the_client.close()


def test_a_retry_after_with_spaces_around_its_seconds_is_read() -> None:
    """fails if ``value = value.strip()`` is removed in indexnow.py::parse_retry_after"""
    assert parse_retry_after(" 7 ", NOW) == 7.0
    assert parse_retry_after("\t30\r\n", NOW) == 30.0


def test_posts_say_they_come_from_notify_changes(fake: FakeIndexNow) -> None:
    """The User-Agent an endpoint (and its logs) sees is notify-changes, not python-requests.
    fails if ``self.session.headers["User-Agent"] = user_agent`` is removed in indexnow.py::Client.__init__"""
    result = _submitted(fake, Batch(HOST, KEY, None, [f"{BASE}/a/"]))
    assert result.status == "delivered"
    assert fake.posts[0].headers["user-agent"] == "notify-changes"


def test_each_backoff_gets_its_jitter_added(fake: FakeIndexNow) -> None:
    """With the jitter at its most (1 s), the waits are 1 + 1 and 2 + 1 seconds.
    fails if ``backoff += self._rng.uniform(0, policy.jitter)`` is removed in
    indexnow.py::Client._with_retries.next_wait"""
    fake.plan = [status(503), status(503)]
    fake_time = FakeTime(NOW)
    the_client = _client(fake_time, rng=_MostJitter())
    try:
        result = the_client.submit(fake.endpoint, Batch(HOST, KEY, None, [f"{BASE}/a/"]))
    finally:
        the_client.close()
    assert result.status == "delivered"
    assert fake_time.sleeps == [2.0, 3.0]


def test_a_live_page_is_asked_for_once_per_look_never_retried(fake: FakeIndexNow) -> None:
    """--wait-live asks again after its own wait, so one look is one GET, with no sleep, even
    for an answer that is otherwise retried. fails if ``fail_over or polled or ...`` loses
    ``polled`` in indexnow.py::Client._with_retries.stop, or if live_page's ``polled=True``
    becomes ``False`` in indexnow.py::Client.live_page; also if live_page's ``return None,
    problem`` raises"""
    fake.sites[HOST] = {"/p/": b"<html>p</html>"}
    fake.get_status = 503
    fake_time = FakeTime(NOW)
    the_client = _client(fake_time)
    try:
        content, problem = the_client.live_page(PAGE, 1000)
    finally:
        the_client.close()
    assert content is None
    assert problem == f"{PAGE} could not be fetched: HTTP 503; asked again after a wait"
    assert len(fake.gets) == 1 and fake_time.sleeps == []


def test_a_live_page_refused_says_its_status(fake: FakeIndexNow) -> None:
    """fails if ``return None, f"{url} answers HTTP {response.status_code}"`` raises in
    indexnow.py::Client.live_page"""
    the_client = _client(FakeTime(NOW))
    try:
        content, problem = the_client.live_page(f"{BASE}/missing/", 1000)
        found, none = the_client.live_page(f"{BASE}/{KEY}.txt", 1000)
    finally:
        the_client.close()
    assert (content, problem) == (None, f"{BASE}/missing/ answers HTTP 404")
    assert (found, none) == (KEY.encode(), None)


def test_a_url_that_cannot_be_requested_is_a_problem_not_a_crash(fake: FakeIndexNow) -> None:
    """A request requests refuses before sending (no scheme) is named with its error's kind.
    fails if ``return None, f"{label} could not be fetched ({type(error).__name__})"`` raises in
    indexnow.py::Client._get, or ``return problem`` raises in indexnow.py::Client.check_live"""
    fake_time = FakeTime(NOW)
    the_client = _client(fake_time)
    try:
        live = the_client.check_live("www.shop-site.org/p/")
        page = the_client.live_page("www.shop-site.org/p/", 1000)
    finally:
        the_client.close()
    assert live == "www.shop-site.org/p/ could not be fetched (MissingSchema)"
    assert page == (None, "www.shop-site.org/p/ could not be fetched (MissingSchema)")
    assert fake.gets == [] and fake_time.sleeps == []


def test_a_batch_with_a_key_location_posts_it(fake: FakeIndexNow) -> None:
    """fails if ``body["keyLocation"] = batch.key_location`` is removed or raises in
    indexnow.py::Client.submit"""
    location = f"{BASE}/keys/{KEY}.txt"
    fake.serve_key(HOST, KEY, f"/keys/{KEY}.txt")
    result = _submitted(fake, Batch(HOST, KEY, location, [f"{BASE}/a/"]))
    assert result.status == "delivered"
    assert fake.posts[0].json == {"host": HOST, "key": KEY, "keyLocation": location, "urlList": [f"{BASE}/a/"]}


def test_a_redirect_to_a_location_that_is_no_url_is_a_problem_not_a_crash(fake: FakeIndexNow) -> None:
    """A real bug found beside the survivors of indexnow.py::Client._get: requests reads a
    redirect's Location even when it does not follow it, and one Python cannot split (an
    unclosed bracket) raised ValueError out of check_key_file, check_live and submit"""
    host = f"127.0.0.1:{fake.port}"
    fake.redirects[f"{host}/{KEY}.txt"] = "http://[::1/x"
    fake.plan = [status(301, Location="http://[::1/x")]
    the_client = _client(FakeTime(NOW))
    try:
        key_file = the_client.check_key_file(f"{fake.url}/{KEY}.txt", KEY)
        live = the_client.check_live(f"{fake.url}/{KEY}.txt")
        result = the_client.submit(fake.endpoint, Batch(HOST, KEY, None, [f"{BASE}/a/"]))
    finally:
        the_client.close()
    assert key_file == f"key file {fake.url}/0123….txt could not be fetched (ValueError)"
    assert live == f"{fake.url}/{KEY}.txt could not be fetched (ValueError)"
    assert (result.status, result.http_status, result.message) == ("failed", None, "request failed: Invalid IPv6 URL")
