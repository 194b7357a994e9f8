"""A loc with a user name and password (``http://admin:hunter2@host/page/``, issue #39 item 4)
is url-invalid, never queued, and its password is on no channel: the text, JSON and github
reports, the job summary, the state, the ledger, state show. A path holding "@" is a URL
like any other."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from notifier.store import State, open_store
from notifier.store.model import PendingItem
from notifier.urls import unsendable, userinfo, without_password
from tests.conftest import BASE, HOST, Site, pages, urlset

PASSWORD = "hunter2-sitemap-pw"
WITH_PASSWORD = f"http://admin:{PASSWORD}@{HOST}/secret/"
SHOWN = f"http://admin:•••@{HOST}/secret/"


def _sitemap(site: Site, *extra: str) -> None:
    site.write(urlset({**pages(3), **dict.fromkeys(extra, "2024-05-01T10:00:00Z")}))


def _everything(site: Site, tmp_path: Path) -> str:
    """Every file the run may have written: the state folder (state, journal, ledger) and the job summary."""
    files = [path for path in tmp_path.rglob("*") if path.is_file() and path.parent != site.public]
    return "".join(path.read_bytes().decode("utf-8", "replace") for path in files)


@pytest.mark.parametrize("style", ["text", "json", "github"])
def test_a_loc_with_a_password_fails_the_check_and_never_shows_it(
    site: Site, tmp_path: Path, style: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(tmp_path / "summary.md"))
    monkeypatch.setenv("GITHUB_OUTPUT", str(tmp_path / "output.txt"))
    _sitemap(site, WITH_PASSWORD)
    for result in (site.check("--format", style), site.run("--format", style), site.run("--dry-run", "--format", style)):
        assert result.code == 1, result
        assert PASSWORD not in result.out + result.err
        assert SHOWN in result.out and "user name or password" in result.out
        if style == "json":
            violations = json.loads(result.out)["violations"]
            assert [violation["rule"] for violation in violations if violation["url"] == SHOWN] == ["url-invalid"]
        if style == "github":
            assert "::error" in result.out
    assert site.fake is not None and site.fake.posts == []
    assert PASSWORD not in _everything(site, tmp_path)
    if style == "github":
        assert SHOWN in (tmp_path / "summary.md").read_text()


def test_let_through_it_is_recorded_without_its_password_and_never_sent(site: Site, tmp_path: Path) -> None:
    """``--rule url-invalid=warn``: the other pages go out; the loc with a password is
    recorded with its mark in the password's place, never queued, never in a batch or the ledger."""
    _sitemap(site, WITH_PASSWORD, f"{BASE}/@team/", f"{BASE}/a:b@c/")
    result = site.run("--initial", "submit", "--rule", "url-invalid=warn", "--rule", "url-out-of-scope=off", "--format", "json")
    assert result.code == 0, result
    report = json.loads(result.out)
    assert PASSWORD not in result.out + result.err
    assert site.fake is not None
    sent = site.fake.delivered()
    assert f"{BASE}/@team/" in sent and f"{BASE}/a:b@c/" in sent  # "@" in a path is no userinfo
    assert not [url for url in sent if "admin" in url] and all(post.json["host"] == HOST for post in site.fake.posts)
    assert SHOWN in report["urls"]["added"] and SHOWN not in report["urls"]["pending"]
    assert "never be sent" in " ".join(report["notes"])
    assert PASSWORD not in _everything(site, tmp_path)
    with open_store(site.state) as store:
        state = store.load()
    assert state is not None
    assert SHOWN in {loc for part in state.parts for loc in part.urls()}
    assert not any(SHOWN in items for items in state.pending.values())
    again = site.run("--rule", "url-invalid=warn", "--rule", "url-out-of-scope=off")
    assert again.code == 0 and len(site.fake.posts) == 1, again  # nothing new: the loc with a mark is the same loc
    for words in (["show"], ["url", SHOWN], ["pending"], ["history"]):
        assert PASSWORD not in _state(site, words)


def _state(site: Site, words: list[str]) -> str:
    from notifier.cli import main

    site.capsys.readouterr()
    main(["state", *words, *site.state_args])
    captured = site.capsys.readouterr()
    return captured.out + captured.err


def test_one_an_older_version_queued_is_dropped_and_named_without_its_password(site: Site) -> None:
    """A pending URL with a password (queued before this was caught) is dropped with one note
    that shows it without the password; it never reaches an endpoint."""
    _sitemap(site)
    assert site.run().code == 0
    with open_store(site.state) as store:
        loaded = store.load()
        assert loaded is not None
        state: State = loaded
        assert site.fake is not None
        state.pending.setdefault(site.fake.endpoint, {})[WITH_PASSWORD] = PendingItem(reason="added", since=state.updated)
        store.save(state)
    result = site.run()
    assert result.code == 0, result
    assert "dropped 1 pending URL" in result.out and SHOWN in result.out and PASSWORD not in result.out + result.err
    assert site.fake is not None and not [url for url in site.fake.delivered() if "admin" in url]


@pytest.mark.parametrize(
    ("url", "shown", "info"),
    [
        (WITH_PASSWORD, SHOWN, f"admin:{PASSWORD}"),
        (f"http://admin@{HOST}/x", f"http://admin@{HOST}/x", "admin"),  # a user alone: nothing to hide, still userinfo
        (f"https://a:p@ss@{HOST}:8443/x?y#z", f"https://a:•••@{HOST}:8443/x?y#z", "a:p@ss"),  # the last "@" ends it
        ("http://a:pw@[::1/x", "http://a:•••@[::1/x", "a:pw"),  # a URL urlsplit cannot split
        (f"http://u:pw@{HOST}?q", f"http://u:•••@{HOST}?q", "u:pw"),
        (f"{BASE}/@team/", f"{BASE}/@team/", None),  # honest: "@" in a path
        (f"{BASE}/p?from=a@b", f"{BASE}/p?from=a@b", None),
        (f"{BASE}/#a@b", f"{BASE}/#a@b", None),
        ("mailto:a:b@c", "mailto:a:b@c", None),
    ],
)
def test_the_userinfo_of_a_url_and_the_url_without_its_password(url: str, shown: str, info: str | None) -> None:
    assert userinfo(url) == info
    assert without_password(url) == shown and without_password(shown) == shown
    assert (unsendable(url) is not None) is (info is not None or not url.startswith("http"))
