"""``notify-changes state show|url|pending|forget|export`` on both stores (issue #13, item 5)."""

from __future__ import annotations

import csv
import fcntl
import io
import json
import os
import threading
import time
from pathlib import Path

import pytest

from notifier.cli import main
from tests.conftest import BASE, Result, Site, pages, recorded_pending, recorded_urls, urlset
from tests.fakeindexnow import status


@pytest.fixture(params=["json", "sqlite"])
def store_site(request: pytest.FixtureRequest, site: Site) -> Site:
    if request.param == "sqlite":
        site.state = site.state.with_suffix(".sqlite")
    return site


def state(site: Site, *args: str) -> Result:
    site.capsys.readouterr()
    code = main(["state", *args, "--state", str(site.state)])
    captured = site.capsys.readouterr()
    return Result(code, captured.out, captured.err)


def _deployed_with_pending(site: Site) -> None:
    """Two deploys: the first submits and records 5 pages, the second adds 2 that the endpoint refuses (503)."""
    listed = pages(5)
    site.write(urlset(listed))
    assert site.run("--initial", "submit").code == 0
    assert site.fake is not None
    site.fake.plan = [status(503)] * 50
    site.write(urlset(listed | {"/new/a/": "2024-09-01T10:00:00Z", "/new/b/": "2024-09-01T10:00:00Z"}))
    assert site.run("--on-submit-error", "warn").code == 0


def test_show_says_counts_pending_per_endpoint_and_the_last_runs(store_site: Site) -> None:
    _deployed_with_pending(store_site)
    shown = state(store_site, "show")
    assert shown.code == 0, shown.err
    assert "7 URLs in 1 sitemap file" in shown.out
    assert store_site.fake is not None and f"{store_site.fake.endpoint}: 2 URLs, waiting since" in shown.out
    assert "0 added, 0 changed" not in shown.out and " 2 added, 0 changed, 0 removed, 0 submitted, 2 pending" in shown.out
    summary = json.loads(state(store_site, "show", "--format", "json").out)
    assert summary["urls"] == 7 and summary["pending"][store_site.fake.endpoint]["urls"] == 2
    assert summary["store"] == ("sqlite" if store_site.state.suffix == ".sqlite" else "json")
    assert [run["added"] for run in summary["runs"]] == [5, 2]


def test_url_shows_one_record_and_where_it_waits(store_site: Site) -> None:
    _deployed_with_pending(store_site)
    one = json.loads(state(store_site, "url", f"{BASE}/new/a/", "--format", "json").out)
    assert one["lastmod"] == "2024-09-01T10:00:00Z" and one["first_seen"] and one["last_submitted"] is None
    assert store_site.fake is not None and one["pending"][store_site.fake.endpoint]["reason"] == "added"
    sent = state(store_site, "url", f"{BASE}/p/1/")
    assert sent.code == 0 and "last submitted: 20" in sent.out and "pending: nowhere" in sent.out
    typo = state(store_site, "url", f"{BASE}/p/1")
    assert typo.code == 2 and f"did you mean {BASE}/p/1/?" in typo.err and typo.err.count("\n") == 1


def test_pending_lists_every_waiting_url(store_site: Site) -> None:
    _deployed_with_pending(store_site)
    listed = state(store_site, "pending")
    assert store_site.fake is not None
    assert sorted(line.split("\t")[1] for line in listed.out.splitlines()) == [f"{BASE}/new/a/", f"{BASE}/new/b/"]
    assert all(line.startswith(store_site.fake.endpoint + "\t") and "\tadded\t" in line for line in listed.out.splitlines())


def test_forget_needs_yes_then_drops_only_what_it_names(store_site: Site) -> None:
    _deployed_with_pending(store_site)
    before = store_site.state.read_bytes()
    asked = state(store_site, "forget", f"{BASE}/new/a/")
    assert asked.code == 2 and "add --yes" in asked.err and "would forget" in asked.out
    assert store_site.state.read_bytes() == before  # nothing changed without --yes
    done = state(store_site, "forget", f"{BASE}/new/a/", "--yes")
    assert done.code == 0 and "1 pending URL dropped" in done.out
    assert store_site.fake is not None
    assert set(recorded_pending(store_site.state)[store_site.fake.endpoint]) == {f"{BASE}/new/b/"}
    assert f"{BASE}/new/a/" in recorded_urls(store_site.state)  # its record stays
    store_site.fake.plan = []
    store_site.fake.posts.clear()
    assert store_site.run().code == 0
    assert store_site.fake.delivered() == [f"{BASE}/new/b/"]  # the forgotten one is never sent
    unknown = state(store_site, "forget", f"{BASE}/p/1/", "--yes")
    assert unknown.code == 2 and "not pending" in unknown.err


def test_export_writes_every_record_as_json_or_csv(store_site: Site) -> None:
    _deployed_with_pending(store_site)
    rows = json.loads(state(store_site, "export").out)
    assert len(rows) == 7 and {row["url"] for row in rows} >= {f"{BASE}/new/a/", f"{BASE}/p/0/"}
    waiting = next(row for row in rows if row["url"] == f"{BASE}/new/a/")
    assert store_site.fake is not None and waiting["pending_at"] == [store_site.fake.endpoint]
    table = list(csv.DictReader(io.StringIO(state(store_site, "export", "--format", "csv").out)))
    assert len(table) == 7 and table[0].keys() >= {"url", "lastmod", "first_seen", "last_submitted", "fingerprint", "pending_at"}
    assert {row["url"]: row["lastmod"] for row in table}[f"{BASE}/new/b/"] == "2024-09-01T10:00:00Z"


def test_read_only_commands_do_not_wait_for_a_run_holding_the_lock(store_site: Site) -> None:
    _deployed_with_pending(store_site)
    lock = store_site.state.with_name(store_site.state.name + ".lock")
    fd = os.open(lock, os.O_RDWR | os.O_CREAT)
    fcntl.flock(fd, fcntl.LOCK_EX)  # a run in progress
    try:
        for action in (["show"], ["pending"], ["export"], ["url", f"{BASE}/p/0/"]):
            assert state(store_site, *action).code == 0, action
        blocked = state(store_site, "forget", f"{BASE}/new/a/", "--yes", "--lock-timeout", "0.2")
        assert blocked.code == 4
    finally:
        os.close(fd)


def test_forget_waits_for_the_lock_and_keeps_what_the_run_wrote(store_site: Site) -> None:
    _deployed_with_pending(store_site)
    lock = store_site.state.with_name(store_site.state.name + ".lock")
    fd = os.open(lock, os.O_RDWR | os.O_CREAT)
    fcntl.flock(fd, fcntl.LOCK_EX)
    threading.Timer(0.3, os.close, args=(fd,)).start()  # the run ends a moment later
    started = time.monotonic()
    assert state(store_site, "forget", f"{BASE}/new/b/", "--yes").code == 0
    assert time.monotonic() - started >= 0.25


@pytest.mark.parametrize(
    ("args", "said"),
    [
        ([], "say what to do"),
        (["shw"], "invalid choice"),
        (["url"], "name one URL"),
        (["forget"], "name the URLs"),
        (["show", "--format", "csv"], "only `state export` writes CSV"),
        (["pending", "https://example.org/"], "takes no URL"),
    ],
)
def test_bad_state_commands_say_one_line(offline_site: Site, args: list[str], said: str) -> None:
    offline_site.write(urlset(pages(3)))
    assert offline_site.run().code == 0  # a first run records the state
    result = state(offline_site, *args)
    assert result.code == 2 and said in result.err and result.err.count("\n") == 1, result.err


def test_no_state_yet_is_said_plainly(tmp_path: Path, offline_site: Site) -> None:
    result = state(offline_site, "show")
    assert result.code == 2 and "no state file yet" in result.err


def test_a_csv_export_never_holds_a_live_formula(offline_site: Site) -> None:
    """OWASP's CSV injection: a recorded value that begins with =, +, -, @ is written as text."""
    offline_site.write(urlset({"/a/": '=HYPERLINK("http://evil.example.org","x")', "/b/": "+1", "/c/": "2024-05-01"}))
    assert offline_site.run("--rule", "lastmod-invalid=off", "--rule", "lastmod-missing=off").code == 0
    out = state(offline_site, "export", "--format", "csv").out
    rows = {row["url"]: row for row in csv.DictReader(io.StringIO(out))}
    assert rows[f"{BASE}/a/"]["lastmod"] == '\'=HYPERLINK("http://evil.example.org","x")'
    assert rows[f"{BASE}/b/"]["lastmod"] == "'+1"
    assert rows[f"{BASE}/c/"]["lastmod"] == "2024-05-01"  # honest values are left as they are


@pytest.mark.slow
def test_a_mistyped_url_in_a_large_state_is_matched_without_comparing_every_url(
    offline_site: Site, monkeypatch: pytest.MonkeyPatch
) -> None:
    """difflib over a million URLs takes minutes: the usual slips are looked up instead."""
    import difflib

    offline_site.write(urlset(pages(6000)))
    assert offline_site.run().code == 0

    def never(*args: object, **kwargs: object) -> list[str]:
        raise AssertionError("difflib compared the typo with every URL")

    monkeypatch.setattr(difflib, "get_close_matches", never)
    for typo in (f"{BASE}/p/17", f"{BASE}/P/17/", f"{BASE}/p/17/".replace("http:", "https:"), f"{BASE}/p/17/".replace("www.", "")):
        result = state(offline_site, "url", typo)
        assert result.code == 2 and f"did you mean {BASE}/p/17/?" in result.err, (typo, result.err)
    result = state(offline_site, "url", f"{BASE}/q/17/")
    assert result.code == 2 and "recorded exactly as the sitemap writes them" in result.err
