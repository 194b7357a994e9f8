"""The user's story: first deploy, an identical deploy, a deploy that changed pages."""

from __future__ import annotations

import json

import pytest

from tests.conftest import BASE, HOST, KEY, Site, pages, recorded_urls, urlset
from tests.schema import assert_valid_state

FIVE = {"/": "2024-05-01", "/a/": "2024-05-02T10:00:00Z", "/b/": "2024-05-03T11:00:00+02:00", "/c/": "2024-05-04", "/d/": None}


def test_first_deploy_records_a_baseline_and_submits_nothing(site: Site) -> None:
    site.write(FIVE)
    result = site.run()
    assert result.code == 0, result.err
    assert site.fake is not None and site.fake.posts == []
    assert "baseline of 5 URLs" in result.out
    urls = recorded_urls(site.state)
    assert set(urls) == {BASE + path for path in FIVE}
    assert urls[BASE + "/b/"]["lastmod"] == "2024-05-03T11:00:00+02:00"  # recorded as written
    assert_valid_state(site.state)


def test_the_same_deploy_twice_sends_nothing_and_leaves_state_bytes_alone(site: Site) -> None:
    site.write(FIVE)
    assert site.run("--initial", "submit").code == 0
    assert site.fake is not None and len(site.fake.posts) == 1
    before = site.state_bytes()
    requests_before = len(site.fake.posts) + len(site.fake.gets)
    result = site.run()
    assert result.code == 0, result.err
    assert len(site.fake.posts) + len(site.fake.gets) == requests_before
    assert site.state_bytes() == before
    assert result.out.startswith("0 added, 0 changed, 0 removed, 0 submitted, 0 pending")


def test_a_deploy_announces_exactly_what_was_added_changed_and_removed(site: Site) -> None:
    site.write(FIVE)
    site.run()
    changed = dict(FIVE)
    changed["/a/"] = "2024-06-01T09:00:00Z"  # changed
    changed["/b/"] = "2024-05-03T09:00:00Z"  # the same instant, written in UTC: not a change
    del changed["/c/"]  # removed
    changed["/new/"] = "2024-06-02"  # added
    site.write(changed)
    result = site.run()
    assert result.code == 0, result.err
    assert site.fake is not None
    assert [post.json["urlList"] for post in site.fake.posts] == [[BASE + "/new/", BASE + "/a/", BASE + "/c/"]]
    post = site.fake.posts[0]
    assert post.json["host"] == HOST and post.json["key"] == KEY and "keyLocation" not in post.json
    assert post.headers["content-type"] == "application/json; charset=utf-8"
    assert result.out.startswith("1 added, 1 changed, 1 removed, 3 submitted, 0 pending")
    state = json.loads(site.state.read_text())
    urls = recorded_urls(site.state)
    assert BASE + "/c/" not in urls
    assert urls[BASE + "/a/"]["lastmod"] == "2024-06-01T09:00:00Z"
    assert urls[BASE + "/b/"]["lastmod"] == "2024-05-03T09:00:00Z"
    assert state["pending"] == {}
    assert "last_submitted" in urls[BASE + "/a/"]
    assert_valid_state(site.state)
    # and the next identical deploy is silent
    assert site.run().code == 0
    assert len(site.fake.posts) == 1


def test_no_removed_keeps_deletions_quiet(site: Site) -> None:
    site.write(FIVE)
    site.run()
    smaller = dict(FIVE)
    del smaller["/c/"]
    site.write(smaller)
    assert site.run("--no-removed").code == 0
    assert site.fake is not None and site.fake.posts == []
    assert BASE + "/c/" not in recorded_urls(site.state)
    last = json.loads(site.state.read_bytes())["runs"][-1]  # the deploy that removed a page is in the run log all the same
    assert (last["removed"], last["submitted"], last["pending"]) == (1, 0, 0), last


def test_initial_submit_announces_every_url(site: Site) -> None:
    site.write(FIVE)
    result = site.run("--initial", "submit")
    assert result.code == 0, result.err
    assert site.fake is not None and sorted(site.fake.delivered()) == sorted(BASE + path for path in FIVE)


def test_initial_since_announces_only_recent_lastmods(site: Site) -> None:
    import datetime as dt

    today = dt.datetime.now(dt.UTC).date()
    recent = (today - dt.timedelta(days=3)).isoformat()
    old = (today - dt.timedelta(days=40)).isoformat()
    site.write({"/old/": old, "/recent/": recent, "/undated/": None})
    result = site.run("--initial", "since:14d")
    assert result.code == 0, result.err
    assert site.fake is not None and site.fake.delivered() == [BASE + "/recent/"]
    assert len(recorded_urls(site.state)) == 3


def test_initial_fail_refuses_without_state(site: Site) -> None:
    site.write(FIVE)
    result = site.run("--initial", "fail")
    assert result.code == 2
    assert "no state file" in result.err and "--initial fail" in result.err
    assert not site.state.exists()


def test_batches_hold_at_most_batch_size_urls_of_one_host(site: Site) -> None:
    other = "www.other-site.org"
    assert site.fake is not None
    site.fake.serve_key(other, KEY)
    entries = {f"/p{n}/": f"2024-05-{n + 1:02d}" for n in range(5)}
    entries.update({f"http://{other}/q{n}/": f"2024-05-{n + 1:02d}" for n in range(3)})
    site.write(entries)
    result = site.run("--initial", "submit", "--batch-size", "2", "--rule", "url-out-of-scope=off")
    assert result.code == 0, result.err
    sizes = [(post.json["host"], len(post.json["urlList"])) for post in site.fake.posts]
    assert sizes == [(HOST, 2), (HOST, 2), (HOST, 1), (other, 2), (other, 1)]
    for post in site.fake.posts:
        assert all(url.split("/")[2] == post.json["host"] for url in post.json["urlList"])


def test_every_endpoint_is_told(site: Site) -> None:
    from tests.fakeindexnow import FakeIndexNow

    second = FakeIndexNow()
    second.serve_key(HOST, KEY)
    try:
        site.write(FIVE)
        assert site.fake is not None
        result = site.run("--initial", "submit", "--endpoint", site.fake.endpoint, "--endpoint", second.endpoint)
        assert result.code == 0, result.err
        assert len(site.fake.delivered()) == 5 and len(second.delivered()) == 5
        # the run's log counts the URLs submitted, not the deliveries (five URLs, told to two endpoints)
        assert json.loads(site.state.read_bytes())["runs"][-1]["submitted"] == 5
        assert "5 submitted" in result.out, result.out
    finally:
        second.close()


def recorded_then_changed(site: Site, **more: str) -> bytes | None:
    """FIVE recorded, then /a/ changed (and ``more`` pages added); the state's bytes in between."""
    site.write(FIVE)
    site.run()
    before = site.state_bytes()
    site.write(FIVE | {"/a/": "2024-06-01T09:00:00Z"} | more)
    return before


def test_dry_run_lists_batches_and_reasons_without_network_or_state(site: Site) -> None:
    before = recorded_then_changed(site, **{"/new/": "2024-06-02"})
    result = site.run("--dry-run")
    assert result.code == 0, result.err
    assert site.fake is not None and site.fake.posts == [] and site.fake.gets == []
    assert site.state_bytes() == before
    assert f"would send to {site.fake.endpoint}: host {HOST}, 2 URLs" in result.out
    assert f"added    {BASE}/new/  (lastmod 2024-06-02)" in result.out
    assert f"changed  {BASE}/a/  (lastmod 2024-05-02T10:00:00Z -> 2024-06-01T09:00:00Z)" in result.out


def test_dry_run_on_a_first_deploy_writes_no_state(site: Site) -> None:
    site.write(FIVE)
    result = site.run("--dry-run", "--initial", "submit")
    assert result.code == 0
    assert not site.state.exists() and not site.state.parent.exists()
    assert result.out.count("added    ") == 5


def test_check_never_contacts_an_endpoint_nor_writes_state(site: Site) -> None:
    before = recorded_then_changed(site)
    result = site.check()
    assert result.code == 0
    assert result.out.startswith("0 added, 1 changed, 0 removed, 0 submitted, 0 pending")
    assert site.fake is not None and site.fake.posts == [] and site.fake.gets == []
    assert site.state_bytes() == before


def test_json_report_has_the_documented_fields(site: Site) -> None:
    site.write(FIVE)
    site.run()
    changed = dict(FIVE)
    changed["/a/"] = "2024-06-01T09:00:00Z"
    site.write(changed)
    result = site.run("--format", "json")
    assert result.code == 0, result.err
    report = json.loads(result.out)
    for name in (
        "added",
        "changed",
        "removed",
        "unchanged",
        "held_back",
        "pending",
        "submitted",
        "excluded",
        "deferred",
        "alternates",
        "exit_code",
    ):
        assert isinstance(report[name], int), name
    assert report["changed"] == 1 and report["unchanged"] == 4 and report["submitted"] == 1
    assert report["urls"] == {
        "added": [],
        "changed": [BASE + "/a/"],
        "removed": [],
        "pending": [],
        "held_back": [],
        "excluded": [],
        "deferred": [],
        "alternates": [],
    }
    assert report["why"][BASE + "/a/"] == {
        "reason": "changed",
        "old_lastmod": "2024-05-02T10:00:00Z",
        "new_lastmod": "2024-06-01T09:00:00Z",
    }
    assert report["batches"][0]["status"] == "delivered" and report["batches"][0]["count"] == 1
    assert set(report["batches"][0]) >= {"endpoint", "host", "count", "status"}
    assert report["violations"] == [] or all(set(v) == {"rule", "level", "url", "message"} for v in report["violations"])


@pytest.mark.program
def test_python_m_notifier_is_the_same_program(site: Site) -> None:
    import subprocess

    from tests.conftest import program_python

    site.write(urlset(pages(3)))
    done = subprocess.run(
        [program_python(), "-m", "notifier", "check", str(site.sitemap), "--state", str(site.state), "--format", "json"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["added"] == 3


def test_a_rerun_an_hour_later_leaves_the_state_bytes_and_its_updated_time_alone(site: Site) -> None:
    import datetime as dt

    from notifier.pipeline.loop import Environment, execute
    from notifier.settings.settings import build_settings

    site.write(FIVE)
    assert site.run().code == 0
    before = site.state_bytes()
    later = dt.datetime.now(dt.UTC) + dt.timedelta(hours=1)
    assert site.fake is not None
    cli = {"sitemap": str(site.sitemap), "state": str(site.state), "endpoint": [site.fake.endpoint], "key": KEY}
    report = execute(build_settings("run", cli), Environment(now=lambda: later))
    assert report.exit_code == 0 and not report.added and not report.changed
    assert site.state_bytes() == before


@pytest.mark.parametrize("store", ["notify-changes.json", "notify-changes.sqlite"])
def test_a_rerun_with_site_dir_leaves_the_state_bytes_alone(site: Site, store: str) -> None:
    """--site-dir reads every file again (to fingerprint its pages): the same records are no
    change, so a commit-the-state workflow does not commit on every deploy."""
    import datetime as dt

    from notifier.pipeline.loop import Environment, execute
    from notifier.settings.settings import build_settings

    site.state = site.root / "state" / store
    site.write(FIVE)
    site.build_pages(FIVE)
    assert site.run("--site-dir", str(site.public)).code == 0
    before = site.state_bytes()
    later = dt.datetime.now(dt.UTC) + dt.timedelta(hours=1)
    assert site.fake is not None
    cli = {
        "sitemap": str(site.sitemap),
        "state": str(site.state),
        "endpoint": [site.fake.endpoint],
        "key": KEY,
        "site-dir": str(site.public),
    }
    report = execute(build_settings("run", cli), Environment(now=lambda: later))
    assert report.exit_code == 0 and not report.added and not report.changed
    assert site.state_bytes() == before
    (site.public / "a" / "index.html").write_text("<html><head></head><body>edited</body></html>")  # a real change is saved
    assert site.run("--site-dir", str(site.public)).code == 0
    assert site.state_bytes() != before


@pytest.mark.parametrize("mode", [0o664, 0o640, 0o600])
def test_a_save_keeps_the_state_files_mode(site: Site, mode: int) -> None:
    """A state shared by a deploy user and a CI account (group-writable) must stay so."""
    import os

    site.write(FIVE)
    assert site.run().code == 0
    os.chmod(site.state, mode)
    site.write(FIVE | {"/e/": "2024-05-05"})
    assert site.run().code == 0
    assert site.state.stat().st_mode & 0o7777 == mode


def test_a_new_state_file_gets_the_mode_any_new_file_gets(site: Site) -> None:
    import os

    old = os.umask(0o002)
    try:
        site.write(FIVE)
        assert site.run().code == 0
    finally:
        os.umask(old)
    assert site.state.stat().st_mode & 0o7777 == 0o664


def test_a_dry_run_without_a_key_still_shows_its_batches_and_says_a_run_needs_one(site: Site) -> None:
    site.write(FIVE)
    result = site.run("--dry-run", "--initial", "submit", "--batch-size", "2", key=False)
    assert result.code == 0, result.err
    assert "no IndexNow key is set: for a real run, set INDEXNOW_KEY (or --key, or [keys] in the config)" in result.out
    assert site.fake is not None
    sends = [line for line in result.out.splitlines() if line.startswith("would send to")]
    assert sends == [f"would send to {site.fake.endpoint}: host {HOST}, {count}" for count in ("2 URLs", "2 URLs", "1 URL")], result.out
    keyed = site.run("--dry-run", "--initial", "submit", "--batch-size", "2")
    assert "no IndexNow key is set" not in keyed.out and keyed.out.count("would send to") == 3


def test_a_dry_run_plans_only_what_its_key_file_covers(site: Site) -> None:
    """A key file in a folder covers the URLs under it; the others would never be sent."""
    site.write(FIVE)
    result = site.run("--dry-run", "--initial", "submit", "--key-location", f"{BASE}/a/{KEY}.txt")
    assert site.fake is not None
    sends = [line for line in result.out.splitlines() if line.startswith("would send to")]
    assert sends == [f"would send to {site.fake.endpoint}: host {HOST}, 1 URL"], result.out
