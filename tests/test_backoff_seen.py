"""The shared back-off as a user sees it (issue #38, item 7): after a 429 whose Retry-After
reaches past --retry-timeout, `state show` and a dry run say the endpoint's batches are held
until T; `state forget --backoff --yes` clears the wait; every spelling of an endpoint waits
alike; and a stored wait is bounded when it is read, in every store."""

from __future__ import annotations

import datetime as dt
import json
import sqlite3
from typing import Any

import pytest

from notifier.cli import main
from notifier.database import DatabaseURL
from notifier.pipeline.loop import Environment, execute
from notifier.report import Report, render_json, render_text
from notifier.settings.settings import build_settings
from notifier.store import read_state
from notifier.waits import bounded, endpoint_key
from tests.conftest import BASE, KEY, Result, Site, pages, urlset
from tests.fakeindexnow import status
from tests.faketime import FakeTime

POSTGRESQL = "postgresql"


@pytest.fixture(params=["notify-changes.json", "notify-changes.sqlite", POSTGRESQL])
def each_store(site: Site, request: pytest.FixtureRequest) -> Site:
    if request.param == POSTGRESQL:
        site.state = DatabaseURL(request.getfixturevalue("pg_url"), site="shop")  # type: ignore[assignment]
    else:
        site.state = site.root / "state" / request.param
    return site


def _now() -> dt.datetime:
    """The wall clock, to the second: `state show` measures a stored wait against it."""
    return dt.datetime.now(dt.UTC).replace(microsecond=0)


def _stamp(instant: dt.datetime) -> str:
    return instant.strftime("%Y-%m-%dT%H:%M:%SZ")


def _deploy(site: Site, when: dt.datetime, endpoint: str | None = None, *, dry_run: bool = False) -> Report:
    assert site.fake is not None
    state: object = site.state
    cli: dict[str, Any] = {
        "sitemap": str(site.sitemap),
        "endpoint": [endpoint or site.fake.endpoint],
        "key": KEY,
        "retry-timeout": "30",
        "initial": "submit",
        "dry-run": dry_run or None,
    }
    if isinstance(state, DatabaseURL):
        cli |= {"state": state.dsn, "site-name": state.site}
    else:
        cli["state"] = str(state)
    clock = FakeTime(when)
    return execute(build_settings("run", cli, cwd=site.root), Environment(now=clock.now, sleep=clock.sleep, clock=clock.clock))


def _state(site: Site, *args: str) -> Result:
    site.capsys.readouterr()
    code = main(["state", *args, *site.state_args])
    captured = site.capsys.readouterr()
    return Result(code, captured.out, captured.err)


def _told_to_wait(site: Site, now: dt.datetime) -> str:
    """A deploy whose endpoint answers 429 with an hour's Retry-After: the wait, not before T."""
    assert site.fake is not None
    site.write(urlset(pages(2)))
    site.fake.plan = [status(429, "slow down", **{"Retry-After": "3600"})]
    report = _deploy(site, now)
    assert report.exit_code == 3 and len(site.fake.posts) == 1
    until = _stamp(now + dt.timedelta(hours=1))
    assert any(f"they stay pending and go out with the first run after {until}" in note for note in report.notes), report.notes
    return until


def test_state_show_says_the_pending_urls_are_held_until_the_wait_is_over(each_store: Site) -> None:
    assert each_store.fake is not None
    until = _told_to_wait(each_store, _now())
    shown = _state(each_store, "show")
    assert shown.code == 0, shown.err
    endpoint = each_store.fake.endpoint
    assert f"{endpoint}: 2 URLs, waiting since" in shown.out and f"held: not sent before {until}" in shown.out
    assert "sent by the next run" not in shown.out
    assert f"{endpoint}: not before {until}" in shown.out  # the waits, each endpoint and until when
    summary = json.loads(_state(each_store, "show", "--format", "json").out)
    assert summary["backoff"] == {endpoint: until} and summary["pending"][endpoint]["not_before"] == until


def test_a_dry_run_says_the_batch_is_held_until_then(each_store: Site) -> None:
    now = _now()
    until = _told_to_wait(each_store, now)
    report = _deploy(each_store, now + dt.timedelta(minutes=10), dry_run=True)
    assert [plan.held_until for plan in report.planned] == [until]
    text = render_text(report)
    assert f"held until {until}" in text and "would send to" not in text
    assert [batch["status"] for batch in json.loads(render_json(report))["batches"]] == ["held"]
    later = _deploy(each_store, now + dt.timedelta(hours=2), dry_run=True)  # the wait is over: it would send
    assert [plan.held_until for plan in later.planned] == [None] and "would send to" in render_text(later)


def test_forget_backoff_says_what_it_would_clear_then_clears_it_with_yes(each_store: Site) -> None:
    assert each_store.fake is not None
    now = _now()
    until = _told_to_wait(each_store, now)
    endpoint = each_store.fake.endpoint
    asked = _state(each_store, "forget", "--backoff")
    assert asked.code == 2 and f"would clear the wait at {endpoint} (not before {until})" in asked.out
    assert "nothing changed: add --yes" in asked.err
    held = _deploy(each_store, now + dt.timedelta(minutes=1))
    assert held.exit_code == 3 and len(each_store.fake.posts) == 1  # without --yes the wait stands
    done = _state(each_store, "forget", "--backoff", "--yes")
    assert done.code == 0 and f"cleared the wait at {endpoint}" in done.out, done.err
    assert _state(each_store, "show", "--format", "json").out.count(until) == 0
    sent = _deploy(each_store, now + dt.timedelta(minutes=2))
    assert sent.exit_code == 0 and each_store.fake.delivered() == [f"{BASE}/p/0/", f"{BASE}/p/1/"]
    for again in (_state(each_store, "forget", "--backoff", "--yes"), _state(each_store, "forget", "--backoff")):
        # nothing waited for: nothing cleared, and no claim that a run "sends there again"
        assert again.code == 0 and "no endpoint is waited for in" in again.out and "nothing to clear" in again.out, again.out + again.err
        assert "0 waits" not in again.out + again.err and "sends there again" not in again.out, again.out


def test_forget_backoff_of_one_endpoint_in_any_spelling_and_an_unknown_one(site: Site) -> None:
    assert site.fake is not None
    _told_to_wait(site, _now())
    unknown = _state(site, "forget", "--backoff", "--endpoint", "https://yandex.com/indexnow", "--yes")
    assert unknown.code == 2 and f"the endpoints waited for: {site.fake.endpoint}" in unknown.err
    spelled = site.fake.endpoint.replace("http://", "HTTP://") + "/"
    done = _state(site, "forget", "--backoff", "--endpoint", spelled, "--yes")
    assert done.code == 0 and "1 wait cleared" in done.out, done.err
    recorded = read_state(site.state)
    assert recorded is not None and recorded.backoff == {}
    assert _state(site, "forget", "--backoff", "https://e/p/", "--yes").code == 2  # URLs and --backoff are two things


def test_the_same_endpoint_with_a_trailing_slash_waits_too(each_store: Site) -> None:
    assert each_store.fake is not None
    now = _now()
    until = _told_to_wait(each_store, now)
    slashed = each_store.fake.endpoint + "/"
    later = _deploy(each_store, now + dt.timedelta(minutes=10), endpoint=slashed)
    assert later.exit_code == 3 and len(each_store.fake.posts) == 1, later.notes  # nothing sent: the same endpoint
    assert any(f"asked to wait until {until}" in batch.message for batch in later.batches)
    assert not any("no longer configured" in note for note in later.notes)  # its pending URLs are its own


def test_one_form_of_an_endpoint() -> None:
    assert endpoint_key("HTTPS://Api.IndexNow.org:443/indexnow/") == "https://api.indexnow.org/indexnow"
    assert endpoint_key("http://127.0.0.1:8080/indexnow") == "http://127.0.0.1:8080/indexnow"
    assert endpoint_key("https://e.org/indexnow?x=1") != endpoint_key("https://e.org/indexnow")
    assert endpoint_key("https://e.org:8443/") != endpoint_key("https://e.org/")


def test_a_wait_is_bounded_when_read() -> None:
    now = dt.datetime(2030, 6, 1, tzinfo=dt.UTC)
    waits, notes = bounded(
        [
            ("https://a/indexnow", "2030-06-01T01:00:00Z"),  # an hour: kept
            ("https://a/indexnow/", "2030-06-01T02:00:00Z"),  # the same endpoint: the later wait
            ("https://b/indexnow", "2030-06-09T00:00:00Z"),  # beyond a week
            ("https://c/indexnow", "soon"),  # not a time
            ("https://d/indexnow", "2030-05-31T00:00:00Z"),  # over
        ],
        now,
    )
    assert waits == {"https://a/indexnow": "2030-06-01T02:00:00Z"}
    assert len(notes) == 1 and "https://b/indexnow" in notes[0] and "'soon' is not a time" in notes[0]
    assert bounded([("https://b/indexnow", "2030-06-08T00:00:00Z")], now) == ({"https://b/indexnow": "2030-06-08T00:00:00Z"}, [])


def _store_a_wait(site: Site, endpoint: str, until: str) -> None:
    """A wait written by hand, or by a damaged program, into the store."""
    state: object = site.state
    if isinstance(state, DatabaseURL):
        import psycopg

        with psycopg.connect(state.dsn, autocommit=True) as database:
            database.execute("INSERT INTO notify_changes_backoff VALUES (%s, %s)", (endpoint, until))
    elif site.state.suffix == ".sqlite":
        with sqlite3.connect(site.state) as connection:
            connection.execute("INSERT INTO meta VALUES ('backoff', ?)", (json.dumps({endpoint: until}),))
        connection.close()
    else:
        document = json.loads(site.state.read_text())
        document["backoff"] = {endpoint: until}
        site.state.write_text(json.dumps(document))


@pytest.mark.parametrize("until", ["2099-01-01T00:00:00Z", "garbage"])
def test_a_stored_wait_beyond_a_week_or_not_a_time_is_dropped_with_one_note(each_store: Site, until: str) -> None:
    assert each_store.fake is not None
    now = _now()
    each_store.write(urlset(pages(1)))
    assert _deploy(each_store, now).exit_code == 0  # one page sent, the state recorded
    _store_a_wait(each_store, each_store.fake.endpoint, until)
    shown = _state(each_store, "show", "--format", "json")
    assert shown.code == 0 and json.loads(shown.out)["backoff"] == {}, shown.err
    assert len(json.loads(shown.out)["notes"]) == 1
    text = _state(each_store, "show").out  # the text says it too (#44: its note line left out lived)
    assert [line for line in text.splitlines() if line.startswith("note: ")] == [f"note: {json.loads(shown.out)['notes'][0]}"]
    each_store.write(urlset(pages(2)))
    report = _deploy(each_store, now + dt.timedelta(minutes=1))
    assert report.exit_code == 0 and each_store.fake.delivered() == [f"{BASE}/p/0/", f"{BASE}/p/1/"]  # sent: the wait was not believed
    assert [note for note in report.notes if "dropped the stored wait" in note] == [report.notes[0]]
    beyond = "no Retry-After is kept beyond a week" in report.notes[0]
    assert beyond == (until != "garbage") and ("a wait is a time" in report.notes[0]) == (until == "garbage"), report.notes[0]
    recorded = read_state(each_store.state)
    assert recorded is not None and recorded.backoff == {}  # and it is gone from the store
    assert not any("dropped the stored wait" in note for note in _deploy(each_store, now + dt.timedelta(minutes=2)).notes)


def test_a_garbage_wait_of_another_site_holds_no_site_of_the_database(site: Site, pg_url: str) -> None:
    """A row no run could have written blocked the endpoint for every site of the database, forever."""
    assert site.fake is not None
    site.state = DatabaseURL(pg_url, site="shop")  # type: ignore[assignment]
    site.write(urlset(pages(1)))
    assert _deploy(site, _now()).exit_code == 0
    _store_a_wait(site, site.fake.endpoint, "zzz")
    site.state = DatabaseURL(pg_url, site="blog")  # type: ignore[assignment]
    report = _deploy(site, _now())
    assert report.exit_code == 0 and len(site.fake.delivered()) == 2, report.notes


def test_an_endpoint_given_twice_in_two_spellings_is_sent_to_once(site: Site) -> None:
    assert site.fake is not None
    site.write(urlset(pages(1)))
    endpoint = site.fake.endpoint
    settings = build_settings("run", {"sitemap": str(site.sitemap), "endpoint": [endpoint, endpoint + "/"]}, cwd=site.root)
    assert settings.endpoints == (endpoint,)
