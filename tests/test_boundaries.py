"""Every documented threshold, tested on each side of its boundary.

The README's rules table, the protocol's limits and the retry classes are promises with
numbers in them; moving any number by one must fail a test here.
"""

from __future__ import annotations

import datetime as dt
import gzip
from typing import Any

import pytest

from notifier.errors import UsageError
from notifier.pipeline.loop import Environment, execute
from notifier.report import Report
from notifier.settings.settings import build_settings
from notifier.sitemap.source import MAX_FILE_BYTES
from notifier.urls import MAX_URL_LENGTH
from tests.conftest import BASE, KEY, NS, Site, pages, urlset
from tests.fakeindexnow import FakeIndexNow, status
from tests.faketime import FakeTime

NOW = dt.datetime(2030, 1, 1, 12, 0, 0, tzinfo=dt.UTC)


def check(site: Site, *rules_off: str, **options: Any) -> Report:
    """``check`` at a fixed clock, the named rules off."""
    cli: dict[str, Any] = {"sitemap": str(site.sitemap), "state": str(site.state), "rule": [f"{rule}=off" for rule in rules_off]}
    cli.update(options)
    clock = FakeTime(NOW)
    return execute(build_settings("check", cli), Environment(now=clock.now, sleep=clock.sleep, clock=clock.clock))


def fired(report: Report) -> set[str]:
    return {violation.rule for violation in report.violations}


def record(site: Site, listed: dict[str, str | None]) -> None:
    site.write(urlset(listed))
    clock = FakeTime(NOW)
    cli = {"sitemap": str(site.sitemap), "state": str(site.state), "rule": ["lastmod-bulk=off"]}
    report = execute(build_settings("run", cli), Environment(now=clock.now, sleep=clock.sleep, clock=clock.clock))
    assert report.exit_code == 0, report.violations


# -- lastmod-future: now plus --clock-skew (default 1 h) ---------------------------------------
@pytest.mark.parametrize(("lastmod", "future"), [("2030-01-01T13:00:00Z", False), ("2030-01-01T13:00:01Z", True)])
def test_lastmod_future_at_exactly_now_plus_the_clock_skew(offline_site: Site, lastmod: str, future: bool) -> None:
    offline_site.write(urlset({"/a/": lastmod, "/b/": "2029-06-01T00:00:00Z"}))
    assert ("lastmod-future" in fired(check(offline_site))) is future


@pytest.mark.parametrize(("skew", "future"), [("30m", True), ("2h", False)])
def test_lastmod_future_moves_with_the_clock_skew(offline_site: Site, skew: str, future: bool) -> None:
    offline_site.write(urlset({"/a/": "2030-01-01T13:00:01Z"}))
    assert ("lastmod-future" in fired(check(offline_site, **{"clock-skew": skew}))) is future


# -- lastmod-bulk: at least 10 URLs, half the changed ones, a fifth of the site -------------------
def shared(count: int, others: int = 0) -> dict[str, str | None]:
    """``count`` pages sharing one instant, ``others`` with dates of their own."""
    # finer than a second, months before the run: the shared-instant mark alone (not a crowd near the run)
    listed: dict[str, str | None] = {f"/s/{n}/": "2029-05-05T05:05:05.500Z" for n in range(count)}
    listed.update(pages(others, prefix="/o/", lastmod="2029-0{n}-{day:02d}T10:{minute:02d}:00Z".replace("{n}", "3")))
    return listed


@pytest.mark.parametrize(("count", "bulk"), [(9, False), (10, True)])
def test_lastmod_bulk_needs_min_urls_sharing_an_instant(offline_site: Site, count: int, bulk: bool) -> None:
    offline_site.write(urlset(shared(count)))
    assert ("lastmod-bulk" in fired(check(offline_site))) is bulk


@pytest.mark.parametrize(("others", "bulk"), [(10, True), (11, False)])  # 10 of 20 is half; 10 of 21 is not
def test_lastmod_bulk_needs_half_the_dated_urls(offline_site: Site, others: int, bulk: bool) -> None:
    offline_site.write(urlset(shared(10, others)))
    assert ("lastmod-bulk" in fired(check(offline_site))) is bulk


@pytest.mark.parametrize(("unchanged", "bulk"), [(40, True), (41, False)])  # 10 of 50 is a fifth; 10 of 51 is not
def test_lastmod_bulk_needs_a_fifth_of_the_site(offline_site: Site, unchanged: int, bulk: bool) -> None:
    before = pages(unchanged, prefix="/u/") | {f"/s/{n}/": "2029-01-01T00:00:00Z" for n in range(10)}
    record(offline_site, before)
    after = dict(before) | {f"/s/{n}/": "2029-05-05T05:05:05Z" for n in range(10)}  # ten changed, one instant
    offline_site.write(urlset(after))
    assert ("lastmod-bulk" in fired(check(offline_site))) is bulk


@pytest.mark.parametrize(("instant", "bulk"), [("2030-01-01T11:00:00Z", True), ("2030-01-01T10:59:59Z", False)])
def test_a_first_run_shared_instant_is_the_build_within_the_hour_before_the_run(offline_site: Site, instant: str, bulk: bool) -> None:
    offline_site.write(urlset({f"/s/{n}/": instant for n in range(10)}))
    said = [violation.message for violation in check(offline_site).violations if violation.rule == "lastmod-bulk"]
    assert bool(said) is bulk
    assert not said or "10 of 10 added URLs share one lastmod" in said[0]  # the shared-instant mark, not the crowd


def check_at(site: Site, now: dt.datetime) -> Report:
    clock = FakeTime(now)
    cli = {"sitemap": str(site.sitemap), "state": str(site.state), "rule": ["lastmod-future=off"]}
    return execute(build_settings("check", cli), Environment(now=clock.now, sleep=clock.sleep, clock=clock.clock))


@pytest.mark.parametrize("day", ["2030-01-02", "2030-01-02T00:00:00Z"])  # midnight written as a datetime is the day too
@pytest.mark.parametrize(
    ("now", "bulk"),
    [
        ("2030-01-01T10:00:00Z", True),  # the day 2030-01-02 begins within 14 h, in the easternmost zone
        ("2030-01-01T09:59:59Z", False),
        ("2030-01-03T13:59:59Z", True),  # and ends 14 h after UTC midnight, in the westernmost
        ("2030-01-03T14:00:00Z", False),
    ],
)
def test_the_runs_own_day_spans_every_time_zone(offline_site: Site, day: str, now: str, bulk: bool) -> None:
    offline_site.write(urlset({f"/d/{n}/": day for n in range(10)}))
    moment = dt.datetime.fromisoformat(now.replace("Z", "+00:00"))
    assert ("lastmod-bulk" in fired(check_at(offline_site, moment))) is bulk


@pytest.mark.parametrize(("apart", "bulk"), [(600, True), (601, False)])  # ten dates within ten minutes of each other
def test_a_crowd_is_ten_minutes_wide(offline_site: Site, apart: int, bulk: bool) -> None:
    first = NOW - dt.timedelta(minutes=30)
    moments = [first + dt.timedelta(seconds=n) for n in range(9)] + [first + dt.timedelta(seconds=apart)]
    offline_site.write(urlset({f"/c/{n}/": moment.strftime("%Y-%m-%dT%H:%M:%SZ") for n, moment in enumerate(moments)}))
    assert ("lastmod-bulk" in fired(check(offline_site))) is bulk


@pytest.mark.parametrize("with_today", [False, True])  # a whole-minute date near the run beside: the careful pass
@pytest.mark.parametrize(("minutes", "bulk"), [(60, True), (61, False)])  # the crowd's first date, before the run
def test_a_crowd_counts_only_in_the_hour_before_the_run(offline_site: Site, minutes: int, bulk: bool, with_today: bool) -> None:
    first = NOW - dt.timedelta(minutes=minutes)
    listed = {f"/c/{n}/": (first + dt.timedelta(seconds=7 * n)).strftime("%Y-%m-%dT%H:%M:%SZ") for n in range(10)}
    if with_today:
        listed["/today/"] = "2030-01-01T11:30:00Z"  # a whole minute near the run
    offline_site.write(urlset(listed))
    assert ("lastmod-bulk" in fired(check(offline_site))) is bulk


@pytest.mark.parametrize(("held", "edited", "bulk"), [(9, 0, False), (10, 0, True), (10, 10, True), (10, 11, False)])
def test_held_back_pages_are_a_lying_generator_from_min_urls_and_half(offline_site: Site, held: int, edited: int, bulk: bool) -> None:
    listed = pages(30)
    offline_site.build_pages(listed)
    offline_site.write(urlset(listed))
    clock = FakeTime(NOW)
    cli = {"sitemap": str(offline_site.sitemap), "state": str(offline_site.state), "site-dir": str(offline_site.public)}
    assert execute(build_settings("run", cli), Environment(now=clock.now, sleep=clock.sleep, clock=clock.clock)).exit_code == 0
    for n in range(held, held + edited):  # honest edits beside them: the page and its date moved
        (offline_site.public / "p" / str(n) / "index.html").write_text(f"<html><body>edit {n}</body></html>")
    moved = {f"/p/{n}/": f"2029-09-01T10:{n:02d}:00Z" for n in range(held + edited)}
    offline_site.write(urlset(listed | moved))
    report = check(offline_site, **{"site-dir": str(offline_site.public)})
    assert len(report.held_back) == held and ("lastmod-bulk" in fired(report)) is bulk


# -- mass-removal: more than --max-removed (20 %), and at least 10 URLs ------------------------------
@pytest.mark.parametrize(
    ("recorded", "removed", "mass"),
    [(50, 10, False), (49, 10, True), (40, 9, False), (45, 10, True)],  # exactly 20 %; 20.4 %; 22.5 % but 9; 22 % and 10
)
def test_mass_removal_over_the_share_and_at_least_the_minimum(offline_site: Site, recorded: int, removed: int, mass: bool) -> None:
    listed = pages(recorded)
    record(offline_site, listed)
    offline_site.write(urlset(dict(list(listed.items())[removed:])))
    assert ("mass-removal" in fired(check(offline_site))) is mass


# -- --initial since:DURATION: a lastmod exactly at the cutoff is recent ------------------------------
@pytest.mark.parametrize(("lastmod", "announced"), [("2029-12-18T12:00:00Z", True), ("2029-12-18T11:59:59Z", False)])
def test_initial_since_includes_a_lastmod_exactly_at_the_cutoff(offline_site: Site, lastmod: str, announced: bool) -> None:
    offline_site.write(urlset({"/a/": lastmod}))
    clock = FakeTime(NOW)
    cli = {"sitemap": str(offline_site.sitemap), "state": str(offline_site.state), "initial": "since:14d", "dry-run": True}
    report = execute(build_settings("run", cli), Environment(now=clock.now, sleep=clock.sleep, clock=clock.clock))
    assert bool(report.pending) is announced


# -- the protocol's limits -------------------------------------------------------------------------
@pytest.mark.parametrize(("count", "over"), [(50_000, False), (50_001, True)])
def test_a_file_of_50000_urls_is_within_the_limit(offline_site: Site, count: int, over: bool) -> None:
    rows = "".join(f"<url><loc>{BASE}/p/{n}/</loc></url>" for n in range(count))
    offline_site.write(f'<urlset xmlns="{NS}">{rows}</urlset>')
    assert ("sitemap-limits" in fired(check(offline_site, "lastmod-missing"))) is over


@pytest.mark.parametrize(("length", "invalid"), [(MAX_URL_LENGTH, False), (MAX_URL_LENGTH + 1, True)])
def test_a_loc_of_2048_characters_is_valid(offline_site: Site, length: int, invalid: bool) -> None:
    loc = f"{BASE}/" + "a" * (length - len(BASE) - 1)
    assert len(loc) == length
    offline_site.write(urlset({loc: "2024-01-01", "/b/": "2024-01-02"}))
    assert ("url-invalid" in fired(check(offline_site))) is invalid


@pytest.mark.parametrize("packed", [False, True])  # plain; gzip, 50 MB once uncompressed
@pytest.mark.parametrize(("size", "refused"), [(MAX_FILE_BYTES, False), (MAX_FILE_BYTES + 1, True)])
def test_a_file_of_exactly_50_mb_is_read(offline_site: Site, size: int, refused: bool, packed: bool) -> None:
    body = f'<urlset xmlns="{NS}"><url><loc>{BASE}/a/</loc><lastmod>2024-01-01</lastmod></url></urlset>'.encode()
    data = body + b" " * (size - len(body))
    offline_site.write(gzip.compress(data, compresslevel=1) if packed else data)
    result = offline_site.check()
    assert ((result.code == 2 and "50 MB" in result.err) or "bytes" in result.err) is refused, result.err[:200]
    if not refused:
        assert result.code == 0, result.err


@pytest.mark.parametrize(("batch_size", "allowed"), [("10000", True), ("10001", False), ("1", True), ("0", False)])
def test_batch_size_is_1_to_10000(offline_site: Site, batch_size: str, allowed: bool) -> None:
    cli = {"sitemap": str(offline_site.sitemap), "batch-size": batch_size}
    if allowed:
        assert build_settings("run", cli).batch_size == int(batch_size)
    else:
        with pytest.raises(UsageError, match="--batch-size"):
            build_settings("run", cli)


@pytest.mark.slow
def test_10001_urls_go_in_two_batches_of_at_most_10000(site: Site, fake: FakeIndexNow) -> None:
    rows = "".join(f"<url><loc>{BASE}/p/{n}/</loc><lastmod>2024-01-01</lastmod></url>" for n in range(10_001))
    site.write(f'<urlset xmlns="{NS}">{rows}</urlset>')
    result = site.run("--initial", "submit", "--rule", "lastmod-bulk=off")
    assert result.code == 0, result.err
    assert [len(post.json["urlList"]) for post in fake.posts] == [10_000, 1]


# -- the retry classes --------------------------------------------------------------------------------
@pytest.mark.parametrize(("code", "retried"), [(408, True), (429, True), (500, True), (501, True), (505, True), (599, True),
                                                (400, False), (403, False), (404, False), (422, False), (499, False),
                                                (600, False)])  # fmt: skip
def test_which_answers_are_retried(site: Site, fake: FakeIndexNow, code: int, retried: bool) -> None:
    site.write(urlset(pages(2)))
    assert site.run().code == 0
    site.write(urlset(pages(3)))
    fake.plan = [status(code, "no")]
    clock = FakeTime(NOW)
    cli = {"sitemap": str(site.sitemap), "state": str(site.state), "endpoint": [fake.endpoint], "key": KEY, "retry-timeout": 60}
    report = execute(build_settings("run", cli), Environment(now=clock.now, sleep=clock.sleep, clock=clock.clock))
    assert len(fake.posts) == (2 if retried else 1)
    assert report.exit_code == (0 if retried else 3)


def test_verify_live_samples_only_added_and_changed_pages(site: Site, fake: FakeIndexNow) -> None:
    """A removed page answers 404 on the live site, as it should: it must not hold the deploy."""
    site.write(urlset(pages(3)))
    assert site.run().code == 0
    site.write(urlset(pages(2) | {"/new/": "2024-06-01"}))  # /p/2/ removed, /new/ added
    fake.sites["www.shop-site.org"]["/new/"] = b"<html>new</html>"
    result = site.run("--verify-live", "5")
    assert result.code == 0, result.out
    assert sorted(url for post in fake.posts for url in post.json["urlList"]) == [f"{BASE}/new/", f"{BASE}/p/2/"]


# -- what the mutation run showed untested (scripts/mutate.py) ------------------------------------
def test_a_regression_says_the_day_it_was_recorded(offline_site: Site) -> None:
    record(offline_site, {"/a/": "2029-06-01T00:00:00Z"})
    offline_site.write(urlset({"/a/": "2029-05-01T00:00:00Z"}))
    messages = [v.message for v in check(offline_site).violations if v.rule == "lastmod-regressed"]
    assert messages == ["lastmod 2029-05-01T00:00:00Z is earlier than 2029-06-01T00:00:00Z recorded on 2030-01-01"]


def test_a_lastmod_appearing_on_a_page_that_had_none_is_a_change_not_a_regression(offline_site: Site) -> None:
    record(offline_site, {"/a/": None, "/b/": "2029-01-01"})
    offline_site.write(urlset({"/a/": "2029-06-01", "/b/": "2029-01-01"}))
    report = check(offline_site)
    assert [change.loc for change in report.changed] == [f"{BASE}/a/"] and "lastmod-regressed" not in fired(report)


def test_only_the_lastmods_past_the_limit_are_in_the_future(offline_site: Site) -> None:
    offline_site.write(urlset({"/at/": "2030-01-01T13:00:00Z", "/past/": "2030-01-01T13:00:01Z"}))
    assert [v.url for v in check(offline_site).violations if v.rule == "lastmod-future"] == [f"{BASE}/past/"]


def test_every_invalid_lastmod_is_reported_and_no_missing_one(offline_site: Site) -> None:
    offline_site.write(urlset({"/a/": "yesterday", "/b/": "2024-13-45", "/c/": None}))
    report = check(offline_site)
    assert sorted(v.url for v in report.violations if v.rule == "lastmod-invalid") == [f"{BASE}/a/", f"{BASE}/b/"]
    assert [v.url for v in report.violations if v.rule == "lastmod-missing"] == [f"{BASE}/c/"]


def test_bulk_still_fires_when_a_few_lastmods_are_invalid(offline_site: Site) -> None:
    offline_site.write(urlset(shared(10) | {f"/bad/{n}/": "soon" for n in range(3)}))
    assert "lastmod-bulk" in fired(check(offline_site, "lastmod-invalid"))


def test_each_page_finding_says_what_it_found(offline_site: Site) -> None:
    for name in ("a", "b"):
        page = offline_site.public / name / "index.html"
        page.parent.mkdir(parents=True, exist_ok=True)
        page.write_text(f"<html>{name}</html>")
    record(offline_site, {"/a/": "2029-01-01", "/b/": "2029-01-01"})
    clock = FakeTime(NOW)
    cli = {
        "sitemap": str(offline_site.sitemap),
        "state": str(offline_site.state),
        "site-dir": str(offline_site.public),
        "rule": ["lastmod-bulk=off"],
    }
    execute(build_settings("run", cli), Environment(now=clock.now, sleep=clock.sleep, clock=clock.clock))  # fingerprints recorded
    (offline_site.public / "b" / "index.html").write_text("<html>b, edited</html>")
    offline_site.write(urlset({"/a/": "2029-06-01", "/b/": "2029-01-01"}))
    report = check(offline_site, **{"site-dir": str(offline_site.public)})
    said = {v.rule: v.message for v in report.violations}
    assert "byte-identical" in said["lastmod-without-change"]
    assert "byte-identical" not in said["change-without-lastmod"]


def test_bulk_counts_only_the_urls_that_have_a_lastmod(offline_site: Site) -> None:
    offline_site.write(urlset(shared(10) | {f"/none/{n}/": None for n in range(3)}))
    assert "lastmod-bulk" in fired(check(offline_site, "lastmod-missing"))


@pytest.mark.parametrize(("length", "invalid"), [(MAX_URL_LENGTH, False), (MAX_URL_LENGTH + 1, True)])
def test_an_irregular_loc_of_2048_characters_is_valid(offline_site: Site, length: int, invalid: bool) -> None:
    loc = f"{BASE}/%41" + "a" * (length - len(BASE) - 4)  # a percent-escape: judged one by one, not by the plain-URL regex
    assert len(loc) == length
    offline_site.write(urlset({loc: "2024-01-01", "/b/": "2024-01-02"}))
    assert ("url-invalid" in fired(check(offline_site))) is invalid


@pytest.mark.parametrize(
    ("loc", "says"),
    [
        ("http://[::1/", "a broken host or port"),
        ("/relative/page/", "relative; write absolute URLs"),
        ("ftp://www.shop-site.org/a/", "not an absolute http(s) URL"),
        ("page.html", "not an absolute http(s) URL"),
        ("http:///no-host/", "not an absolute http(s) URL"),
        (f"{BASE}/a b/", "unescaped character ' '"),
    ],
)
def test_url_invalid_says_what_is_wrong(loc: str, says: str) -> None:
    from notifier.rules import url_problem

    problem = url_problem(loc)
    assert problem is not None and says in problem
    assert url_problem(f"{BASE}/%D0%B8/") is None


def test_a_placeholder_prefix_is_seen_even_after_an_honest_url_of_its_host(offline_site: Site) -> None:
    honest, placeholder = "https://bashtage.github.io/other/", "https://bashtage.github.io/sphinx-material/a/"
    offline_site.write(urlset({honest: "2024-01-01", placeholder: "2024-01-02"}))
    report = check(offline_site, **{"sitemap-url": "https://bashtage.github.io/sitemap.xml"})
    assert [v.url for v in report.violations if v.rule == "url-dev-host"] == [placeholder]


def test_scope_is_judged_for_plain_urls_all_off_the_sitemaps_host(offline_site: Site) -> None:
    offline_site.write(urlset({"http://cdn.shop-site.org/a/": "2024-01-01", "http://cdn.shop-site.org/b/": "2024-01-02"}))
    report = check(offline_site, **{"sitemap-url": f"{BASE}/sitemap.xml"})
    assert sorted(v.url for v in report.violations if v.rule == "url-out-of-scope") == [
        "http://cdn.shop-site.org/a/",
        "http://cdn.shop-site.org/b/",
    ]


def test_scope_is_judged_for_plain_urls_on_the_host_outside_the_folder(offline_site: Site) -> None:
    offline_site.write(urlset({"/blog/a/": "2024-01-01", "/shop/b/": "2024-01-02", "/blog/%41/": "2024-01-03"}))
    report = check(offline_site, **{"sitemap-url": f"{BASE}/blog/sitemap.xml"})
    assert [v.url for v in report.violations if v.rule == "url-out-of-scope"] == [f"{BASE}/shop/b/"]


@pytest.mark.parametrize(("retry_after", "budget", "waited"), [("7", 7, True), ("8", 7, False), ("30", 30, True), ("31", 30, False)])
def test_a_wait_that_ends_exactly_at_the_retry_budget_is_waited(fake: FakeIndexNow, retry_after: str, budget: float, waited: bool) -> None:
    """--retry-timeout: never sleep past it; a wait that ends exactly on it is within it."""
    from notifier.indexnow import Batch, Client, RetryPolicy

    fake.plan = [status(429, Retry_After=retry_after)]
    clock = FakeTime(NOW)
    client = Client(policy=RetryPolicy(budget=budget), request_timeout=2, sleep=clock.sleep, clock=clock.clock, wall_clock=clock.now)
    try:
        result = client.submit(fake.endpoint, Batch("www.shop-site.org", KEY, None, ["http://www.shop-site.org/a/"]))
    finally:
        client.close()
    assert (result.status == "delivered") is waited
    assert clock.sleeps == ([float(retry_after)] if waited else [])


@pytest.mark.parametrize(
    ("seconds", "said"), [(0.5, "500 ms"), (0.999, "999 ms"), (1, "1 s"), (119, "119 s"), (120, "2 minutes"), (3600, "60 minutes")]
)
def test_a_crowd_says_how_close_its_dates_are(seconds: float, said: str) -> None:
    from notifier.rules.bulk import _span

    assert _span(seconds) == said
