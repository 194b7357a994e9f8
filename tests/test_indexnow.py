"""The IndexNow client against the fake endpoint: protocol, retries, every kind of failure."""

from __future__ import annotations

import datetime as dt
import json
import random
import time

import pytest

from notifier.indexnow import Batch, BatchResult, Client, RetryPolicy, parse_retry_after
from tests.conftest import BASE, HOST, KEY, Site, pages, recorded_pending, urlset
from tests.fakeindexnow import FakeIndexNow, flood, hang, reset, status
from tests.faketime import FakeTime

NOW = dt.datetime(2024, 6, 1, 12, 0, 0, tzinfo=dt.UTC)


def client(
    fake_time: FakeTime,
    budget: float = 120.0,
    request_timeout: float = 2.0,
    rng: random.Random | None = None,
    notices: list[str] | None = None,
) -> Client:
    return Client(
        policy=RetryPolicy(budget=budget),
        request_timeout=request_timeout,
        sleep=fake_time.sleep,
        clock=fake_time.clock,
        wall_clock=fake_time.now,
        rng=rng or random.Random(7),
        notice=None if notices is None else notices.append,
    )


BATCH = Batch(HOST, KEY, None, [f"{BASE}/a/", f"{BASE}/b/"])


def send(fake: FakeIndexNow, fake_time: FakeTime, budget: float = 120.0, request_timeout: float = 2.0) -> BatchResult:
    the_client = client(fake_time, budget, request_timeout)
    try:
        return the_client.submit(fake.endpoint, BATCH)
    finally:
        the_client.close()


def test_a_good_post_is_delivered(fake: FakeIndexNow) -> None:
    result = send(fake, FakeTime(NOW))
    assert (result.status, result.http_status, result.attempts) == ("delivered", 200, 1)
    body = fake.posts[0].json
    assert body == {"host": HOST, "key": KEY, "urlList": [f"{BASE}/a/", f"{BASE}/b/"]}


def test_202_counts_as_delivered_and_says_so(fake: FakeIndexNow) -> None:
    fake.success_status = 202
    result = send(fake, FakeTime(NOW))
    assert result.status == "accepted" and "validate the key later" in result.message


@pytest.mark.parametrize("code", [500, 502, 503])
def test_server_errors_are_retried_with_backoff(fake: FakeIndexNow, code: int) -> None:
    fake.plan = [status(code), status(code)]
    fake_time = FakeTime(NOW)
    result = send(fake, fake_time)
    assert result.status == "delivered" and result.attempts == 3 and len(fake.posts) == 3
    assert len(fake_time.sleeps) == 2
    assert 1 <= fake_time.sleeps[0] <= 2 and 2 <= fake_time.sleeps[1] <= 3  # exponential, with jitter


def test_retry_after_seconds_is_honoured(fake: FakeIndexNow) -> None:
    fake.plan = [status(429, Retry_After="7")]
    fake_time = FakeTime(NOW)
    result = send(fake, fake_time)
    assert result.status == "delivered" and fake_time.sleeps == [7.0]


def test_retry_after_http_date_is_honoured(fake: FakeIndexNow) -> None:
    fake.plan = [status(429, Retry_After="Sat, 01 Jun 2024 12:00:30 GMT")]
    fake_time = FakeTime(NOW)
    assert send(fake, fake_time).status == "delivered"
    assert fake_time.sleeps == [30.0]


@pytest.mark.parametrize("value", [None, "soon", "-5", "1.5e3", "Sat, 99 Foo 2024"])
def test_429_without_a_usable_retry_after_backs_off(fake: FakeIndexNow, value: str | None) -> None:
    fake.plan = [status(429, **({"Retry_After": value} if value is not None else {}))]
    fake_time = FakeTime(NOW)
    assert send(fake, fake_time).status == "delivered"
    assert len(fake_time.sleeps) == 1 and 1 <= fake_time.sleeps[0] <= 2


def test_retry_after_beyond_the_budget_leaves_the_batch_pending_without_sleeping(fake: FakeIndexNow) -> None:
    fake.plan = [status(429, Retry_After="86400")]
    fake_time = FakeTime(NOW)
    started = time.monotonic()
    result = send(fake, fake_time, budget=120)
    assert result.status == "failed" and result.http_status == 429
    assert "Retry-After: 86400" in result.message and "--retry-timeout" in result.message
    assert fake_time.sleeps == [] and len(fake.posts) == 1
    assert time.monotonic() - started < 2


def test_a_huge_retry_after_never_raises(fake: FakeIndexNow) -> None:
    fake.plan = [status(429, Retry_After="9" * 40)]
    result = send(fake, FakeTime(NOW))
    assert result.status == "failed" and len(fake.posts) == 1


def test_the_budget_bounds_retries(fake: FakeIndexNow) -> None:
    fake.plan = [status(503)] * 50
    fake_time = FakeTime(NOW)
    result = send(fake, fake_time, budget=30)
    assert result.status == "failed" and "HTTP 503" in result.message
    assert sum(fake_time.sleeps) <= 30
    assert 3 <= len(fake.posts) <= 6  # 1, 2, 4, 8, 16 s backoff (+jitter) within 30 s


def test_a_connection_reset_is_retried(fake: FakeIndexNow) -> None:
    fake.plan = [reset()]
    result = send(fake, FakeTime(NOW))
    assert result.status == "delivered" and len(fake.posts) == 2


def test_a_server_that_never_answers_is_bounded_by_the_timeouts(fake: FakeIndexNow) -> None:
    fake.plan = [hang(30), hang(30), hang(30)]
    fake_time = FakeTime(NOW)
    started = time.monotonic()
    result = send(fake, fake_time, budget=1.5, request_timeout=0.3)
    elapsed = time.monotonic() - started
    assert result.status == "failed" and "timed out" in result.message
    assert elapsed < 5


def test_a_hang_then_an_answer_is_delivered(fake: FakeIndexNow) -> None:
    fake.plan = [hang(30)]
    result = send(fake, FakeTime(NOW), request_timeout=0.3)
    assert result.status == "delivered" and result.attempts == 2


def test_a_redirect_is_never_followed(fake: FakeIndexNow) -> None:
    other = FakeIndexNow()
    try:
        fake.plan = [status(307, Location=other.endpoint)]
        result = send(fake, FakeTime(NOW))
        assert result.status == "failed" and result.http_status == 307
        assert other.endpoint in result.message and "--endpoint" in result.message
        assert other.posts == [] and other.gets == [] and len(fake.posts) == 1
    finally:
        other.close()


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        (status(400, "Invalid format"), "HTTP 400 Bad Request"),
        (status(403, '{"code":"UserForbiddedToAccessSite"}'), "UserForbiddedToAccessSite"),
        (status(403, '{"code":"SiteVerificationNotCompleted"}'), "SiteVerificationNotCompleted"),
        (status(403, '{"code":"KeyNotFound"}'), "KeyNotFound"),
        (status(422, "Unprocessable"), "HTTP 422"),
    ],
)
def test_client_errors_are_not_retried_and_say_what_to_fix(fake: FakeIndexNow, answer: object, expected: str) -> None:
    fake.plan = [answer]  # type: ignore[list-item]
    fake_time = FakeTime(NOW)
    result = send(fake, fake_time)
    assert result.status == "failed" and expected in result.message
    assert len(fake.posts) == 1 and fake_time.sleeps == []


def test_the_fake_enforces_the_protocol(fake: FakeIndexNow) -> None:
    the_client = client(FakeTime(NOW))
    off_host = Batch(HOST, KEY, None, ["http://elsewhere.org/x/"])
    assert the_client.submit(fake.endpoint, off_host).http_status == 422
    wrong_key = Batch(HOST, "ffffffffffffffff", None, [f"{BASE}/a/"])
    assert the_client.submit(fake.endpoint, wrong_key).http_status == 403
    too_many = Batch(HOST, KEY, None, [f"{BASE}/{n}" for n in range(10_001)])
    assert the_client.submit(fake.endpoint, too_many).http_status == 400


def test_parse_retry_after() -> None:
    assert parse_retry_after("120", NOW) == 120
    assert parse_retry_after("Sat, 01 Jun 2024 11:00:00 GMT", NOW) == 0  # in the past: now
    assert parse_retry_after("", NOW) is None
    assert parse_retry_after("NaN", NOW) is None
    assert parse_retry_after("Sat, 01 Jun 2024 14:00:30 +0200", NOW) == 30  # an offset: the same instant as 12:00:30 GMT
    assert parse_retry_after("Sat, 01 Jun 2024 12:00:30 -0000", NOW) == 30  # "-0000": no zone said, read as GMT
    assert parse_retry_after("9" * 11, NOW) == 99_999_999_999
    assert parse_retry_after("9" * 5000, NOW) == float("inf")  # never an int of 5,000 digits
    assert parse_retry_after("9" * 12, NOW) == 999_999_999_999
    assert parse_retry_after("²", NOW) is None  # a digit to str.isdigit, no number: the backoff, not a traceback


# -- what the run makes of failures ------------------------------------------------------
def test_an_undelivered_batch_stays_pending_and_goes_out_next_run(site: Site) -> None:
    site.write(urlset(pages(4)))
    site.run()
    site.write(urlset(pages(4, lastmod="2024-06-{day:02d}T10:{minute:02d}:00Z")))
    assert site.fake is not None
    site.fake.plan = [status(503)] * 20
    result = site.run()
    assert result.code == 3, result
    assert "4 URLs not delivered" in result.out and "HTTP 503" in result.out
    pending = recorded_pending(site.state)[site.fake.endpoint]
    assert sorted(pending) == sorted(f"{BASE}/p/{n}/" for n in range(4))
    assert {item["reason"] for item in pending.values()} == {"changed"}
    # nothing changed in the sitemap, but the pending URLs go out now
    site.fake.plan = []
    posts_before = len(site.fake.posts)
    result = site.run()
    assert result.code == 0, result
    assert sorted(site.fake.posts[-1].json["urlList"]) == sorted(pending)
    assert len(site.fake.posts) == posts_before + 1
    assert json.loads(site.state.read_text())["pending"] == {}


def test_on_submit_error_warn_exits_0_and_keeps_pending(site: Site) -> None:
    site.write(urlset(pages(2)))
    site.run()
    site.write(urlset(pages(3)))
    assert site.fake is not None
    site.fake.plan = [status(500)] * 20
    result = site.run("--on-submit-error", "warn")
    assert result.code == 0 and "warning: 1 URL not delivered" in result.out
    assert len(recorded_pending(site.state)[site.fake.endpoint]) == 1


def test_each_accepted_batch_is_recorded_before_the_next(site: Site) -> None:
    site.write(urlset(pages(2)))
    site.run()
    site.write(urlset(pages(6)))
    assert site.fake is not None
    site.fake.plan = [status(200), status(400, "bad")]
    result = site.run("--batch-size", "2")
    assert result.code == 3
    pending = recorded_pending(site.state)[site.fake.endpoint]
    # batch 1 (p/2, p/3) accepted; batch 2 (p/4, p/5) rejected
    assert sorted(pending) == [f"{BASE}/p/4/", f"{BASE}/p/5/"]


def test_a_key_file_mismatch_stops_before_any_post(site: Site) -> None:
    site.write(urlset(pages(2)))
    site.run()
    site.write(urlset(pages(3)))
    assert site.fake is not None
    site.fake.sites[HOST] = {f"/{KEY}.txt": b"somebody-elses-key"}
    result = site.run()
    assert result.code == 3
    assert site.fake.posts == []
    assert f"http://{HOST}/{KEY[:4]}….txt serves 'some…'" in result.out and KEY not in result.out
    assert f"not the key {KEY[:4]}…;" in result.out  # four characters say which key, no more
    assert len(recorded_pending(site.state)[site.fake.endpoint]) == 1


def test_a_key_file_behind_a_redirect_is_refused(site: Site) -> None:
    """IndexNow fetches the key file at its URL and follows no redirect: neither does the preflight."""
    site.write(urlset(pages(2)))
    site.run()
    site.write(urlset(pages(3)))
    assert site.fake is not None
    site.fake.sites[HOST] = {f"/keys/{KEY}.txt": KEY.encode()}
    site.fake.redirects[f"{HOST}/{KEY}.txt"] = f"http://{HOST}/keys/{KEY}.txt"
    result = site.run()
    assert result.code == 3 and site.fake.posts == []
    assert f"redirects to http://{HOST}/keys/{KEY[:4]}….txt; serve it at that URL directly" in result.out


def test_after_a_403_the_endpoint_gets_no_more_batches(site: Site) -> None:
    site.write(urlset(pages(1)))
    site.run()
    site.write(urlset(pages(7)))
    assert site.fake is not None
    site.fake.plan = [status(403, '{"code":"SiteVerificationNotCompleted"}')]
    result = site.run("--batch-size", "2")
    assert result.code == 3 and len(site.fake.posts) == 1
    assert "SiteVerificationNotCompleted" in result.out
    assert len(recorded_pending(site.state)[site.fake.endpoint]) == 6


def test_pending_is_tracked_per_endpoint(site: Site) -> None:
    second = FakeIndexNow()
    second.serve_key(HOST, KEY)
    try:
        site.write(urlset(pages(2)))
        site.run()
        site.write(urlset(pages(3)))
        assert site.fake is not None
        endpoints = ("--endpoint", site.fake.endpoint, "--endpoint", second.endpoint)
        second.plan = [status(503)] * 20
        assert site.run(*endpoints).code == 3
        pending = recorded_pending(site.state)
        assert site.fake.endpoint not in pending
        assert list(pending[second.endpoint]) == [f"{BASE}/p/2/"]
        second.plan = []
        assert site.run(*endpoints).code == 0
        assert len(site.fake.posts) == 1  # the first endpoint is not told twice
        assert second.delivered() == [f"{BASE}/p/2/"]
    finally:
        second.close()


# -- what can be sent with which key ------------------------------------------------------------
def test_a_key_file_in_a_folder_covers_only_the_urls_under_it() -> None:
    """An endpoint answers 422 for a URL outside the key file's folder: such URLs are never sent."""
    from notifier.indexnow import Keys, make_batches

    keys = Keys(default=KEY, key_location=f"{BASE}/blog/{KEY}.txt")
    urls = [f"{BASE}/blog/a/", f"{BASE}/blog/", f"{BASE}/shop/b/", f"{BASE}/blogroll/", "http://other.org/x/"]
    batches, unsendable = make_batches(urls, keys, 10)
    assert [(batch.host, batch.key_location, batch.urls) for batch in batches] == [
        (HOST, f"{BASE}/blog/{KEY}.txt", [f"{BASE}/blog/a/", f"{BASE}/blog/"]),
        ("other.org", None, ["http://other.org/x/"]),  # another host: its key file is at its root
    ]
    assert [(url, reason) for url, reason in unsendable] == [
        (f"{BASE}/shop/b/", f"outside /blog/, the folder its key file {BASE}/blog/{KEY}.txt covers"),
        (f"{BASE}/blogroll/", f"outside /blog/, the folder its key file {BASE}/blog/{KEY}.txt covers"),
    ]
    everything, none = make_batches(urls[:4], Keys(default=KEY, key_location=f"{BASE}/{KEY}.txt"), 10)
    assert [batch.urls for batch in everything] == [urls[:4]] and none == []


def test_only_absolute_http_urls_with_a_host_and_a_key_are_sent() -> None:
    from notifier.indexnow import Keys, make_batches

    urls = [f"{BASE}/a/", "ftp://www.shop-site.org/b/", "https:///c/", "/d/", "https://no-key.org/e/"]
    batches, unsendable = make_batches(urls, Keys(per_host={HOST: KEY}), 10)
    assert [batch.urls for batch in batches] == [[f"{BASE}/a/"]]
    reasons = dict(unsendable)
    assert set(reasons) == set(urls[1:])
    assert reasons["ftp://www.shop-site.org/b/"] == "not an absolute http(s) URL" == reasons["https:///c/"] == reasons["/d/"]
    assert reasons["https://no-key.org/e/"].startswith("no IndexNow key for no-key.org")


@pytest.mark.parametrize(("size", "expected"), [(1, [1, 1, 1]), (2, [2, 1]), (3, [3]), (10_000, [3])])
def test_batches_are_at_most_the_batch_size(size: int, expected: list[int]) -> None:
    from notifier.indexnow import Keys, make_batches

    batches, _ = make_batches([f"{BASE}/{n}/" for n in range(3)], Keys(default=KEY), size)
    assert [len(batch.urls) for batch in batches] == expected


def test_a_missing_key_file_says_which_file_to_publish(site: Site) -> None:
    site.write(urlset(pages(2)))
    site.run()
    site.write(urlset(pages(3)))
    assert site.fake is not None
    site.fake.sites[HOST] = {}
    result = site.run()
    assert result.code == 3 and site.fake.posts == []
    assert f"answered HTTP 404; publish {KEY[:4]}….txt with the key as its content" in result.out and KEY not in result.out


@pytest.mark.parametrize(
    ("code", "said"),
    [(300, "redirects to"), (302, "redirects to"), (307, "redirects to"), (308, "redirects to"), (399, "redirects to"),
     (400, "answered HTTP 400"), (403, "answered HTTP 403"), (410, "answered HTTP 410"), (204, "serves 'nothing'")],
)  # fmt: skip
def test_what_a_key_file_answer_says(site: Site, code: int, said: str) -> None:
    site.write(urlset(pages(2)))
    site.run()
    site.write(urlset(pages(3)))
    assert site.fake is not None
    site.fake.get_faults[f"/{KEY}.txt"] = status(code, Location=f"http://{HOST}/k.txt", Content_Length="0")
    result = site.run()
    assert result.code == 3 and site.fake.posts == [] and said in result.out


class LowestJitter(random.Random):
    """Every backoff's jitter at its lowest: the waits are the bare backoff."""

    def uniform(self, a: float, b: float) -> float:
        return a


def test_the_backoff_starts_at_one_second_and_doubles_with_up_to_a_second_of_jitter(fake: FakeIndexNow) -> None:
    fake.plan = [status(503)] * 3
    fake_time = FakeTime(NOW)
    assert client(fake_time, 120, rng=LowestJitter()).submit(fake.endpoint, BATCH).status == "delivered"
    assert fake_time.sleeps == [1.0, 2.0, 4.0]


@pytest.mark.parametrize(
    ("budget", "said"),
    [
        (2.0, "1 s of --retry-timeout left after it"),
        (1.99, "the last try --retry-timeout leaves time for"),
        (1.5, "the last try --retry-timeout leaves time for"),
    ],
)
def test_the_line_before_a_wait_says_what_the_budget_leaves(fake: FakeIndexNow, budget: float, said: str) -> None:
    fake.plan = [status(503)] * 2
    notices: list[str] = []
    result = client(FakeTime(NOW), budget, rng=LowestJitter(), notices=notices).submit(fake.endpoint, BATCH, "batch 1 of 1")
    assert result.status == "failed" and len(fake.posts) == 2  # a wait of 1 s fits, the next of 2 s does not
    assert notices == [f"batch 1 of 1: HTTP 503, retrying in 1 s, {said}"]


@pytest.mark.parametrize("code", [429, 503])
@pytest.mark.parametrize(
    ("retry_after", "kept"),
    [("3600", "2024-06-01T13:00:00Z"), ("60", None), ("2592000", "2024-06-08T12:00:00Z")],  # a month asked: a week kept
)
def test_a_retry_after_past_the_budget_is_kept_for_later_runs_up_to_a_week(
    fake: FakeIndexNow, code: int, retry_after: str, kept: str | None
) -> None:
    """A wait that fits in --retry-timeout (60 s here) is waited for within the run, and not
    kept: twice asked, the run gives up, and the next run need not wait."""
    fake.plan = [status(code, Retry_After=retry_after)] * 2
    result = client(FakeTime(NOW), 60, rng=LowestJitter()).submit(fake.endpoint, BATCH)
    assert result.status == "failed" and result.not_before == kept


def test_a_key_file_url_that_streams_without_end_is_judged_by_its_first_bytes(site: Site) -> None:
    """A server answering the key file's URL with a video: its first 64 KiB are read, not a gigabyte."""
    site.write(urlset(pages(2)))
    site.run()
    site.write(urlset(pages(3)))
    assert site.fake is not None
    site.fake.get_faults[f"/{KEY}.txt"] = flood(1 << 30)
    result = site.run("--request-timeout", "5")
    assert result.code == 3 and site.fake.posts == [], result.out
    assert f"key file http://{HOST}/{KEY[:4]}….txt serves 'nothing', not the key" in result.out, result.out


def test_an_answer_that_cannot_be_decoded_fails_its_batch_once_without_a_retry(fake: FakeIndexNow) -> None:
    """A proxy that labels a plain answer gzip: requests cannot decode it. Not a network
    hiccup, so no retry; the batch fails and its URLs stay pending."""
    fake.plan = [status(200, "OK, not gzip at all", Content_Encoding="gzip")]
    fake_time = FakeTime(NOW)
    result = send(fake, fake_time)
    assert (result.status, result.http_status, result.attempts) == ("failed", None, 1)
    assert result.message.startswith("request failed: ") and fake_time.sleeps == [] and len(fake.posts) == 1


def test_a_key_file_that_answers_503_until_the_budget_is_spent_could_not_be_fetched(site: Site) -> None:
    """Not "answered HTTP 503; publish the key file": the file may be there, the server was busy."""
    site.write(urlset(pages(2)))
    site.run()
    site.write(urlset(pages(3)))
    assert site.fake is not None
    site.fake.get_faults[f"/{KEY}.txt"] = status(503, Content_Length="0")
    result = site.run("--retry-timeout", "1")
    assert result.code == 3 and site.fake.posts == [], result.out
    assert "could not be fetched: HTTP 503; gave up within --retry-timeout 1 s" in result.out, result.out


def test_the_status_line_says_which_key_file_is_checked_with_the_key_cut(site: Site) -> None:
    """On a terminal the line that says what a run is doing names the key file while it is fetched."""
    from notifier.pipeline.loop import Environment, execute
    from notifier.settings.settings import build_settings

    assert site.fake is not None
    site.write(urlset(pages(2)))
    cli = {"sitemap": str(site.sitemap), "state": str(site.state), "endpoint": [site.fake.endpoint], "key": KEY, "initial": "submit"}
    shown: list[str] = []
    report = execute(build_settings("run", cli, cwd=site.root), Environment(progress=shown.append))
    assert report.exit_code == 0
    assert f"checking key file http://{HOST}/{KEY[:4]}….txt" in shown, shown


@pytest.mark.parametrize("code", [201, 203, 204, 206, 299])
def test_any_2xx_is_a_received_batch_and_keeps_its_code(fake: FakeIndexNow, code: int) -> None:
    """RFC 9110, section 15.3: every 2xx is a success (Bing's endpoint has answered 203)."""
    fake.success_status = code
    result = send(fake, FakeTime(NOW))
    assert (result.status, result.http_status, result.attempts) == ("delivered", code, 1)
    assert f"HTTP {code}" in result.message and fake.delivered() == BATCH.urls


def test_a_key_file_served_with_another_2xx_matches(fake: FakeIndexNow) -> None:
    fake.get_status = 203  # a proxy that transformed nothing but the status line
    the_client = client(FakeTime(NOW))
    try:
        assert the_client.check_key_file(f"http://{HOST}/{KEY}.txt", KEY) is None
    finally:
        the_client.close()
