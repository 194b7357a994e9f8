"""[announce] include and exclude (issue #41, item 5): glob patterns on a URL's path pick what
a deploy announces. A URL held out is recorded as usual (its history stays true), never
announced, counted in the report, and `state url` says why."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from notifier.announce import held_out, matches, path_and_query
from notifier.errors import UsageError
from notifier.settings.settings import build_settings
from tests.conftest import BASE, Site, recorded_pending, recorded_urls, urlset
from tests.fakeindexnow import status

PAGES = {
    "/": "2024-05-01T10:00:00Z",
    "/blog/tea/": "2024-05-02T10:00:00Z",
    "/blog/2024/05/coffee/": "2024-05-03T10:00:00Z",
    "/drafts/new/": "2024-05-04T10:00:00Z",
    "/search?q=tea": "2024-05-05T10:00:00Z",
}


def _hit(pattern: str, url: str) -> bool:
    return matches(pattern, *path_and_query(url))


@pytest.mark.parametrize(
    ("pattern", "url", "hit"),
    [
        ("/blog/*/", f"{BASE}/blog/tea/", True),
        ("/blog/*/", f"{BASE}/blog/2024/05/coffee/", False),  # * stays within a segment
        ("/blog/**", f"{BASE}/blog/2024/05/coffee/", True),  # ** crosses them
        ("/**/coffee/", f"{BASE}/blog/2024/05/coffee/", True),
        ("/**/coffee/", f"{BASE}/coffee/", True),  # /**/ is also one slash
        ("/search", f"{BASE}/search?q=tea", True),  # no ?: the path alone
        ("/search?q=*", f"{BASE}/search?q=tea", True),  # a ?: the query too
        ("/search?q=*", f"{BASE}/search?page=2", False),
        ("/search?*", f"{BASE}/search", False),  # a pattern about a query needs one
        ("/blog/", f"{BASE}/blog/tea/", False),  # the whole path, not a prefix
        ("/Blog/**", f"{BASE}/blog/tea/", False),  # as written: letter case counts
        ("/", BASE, True),  # no path is /
    ],
)
def test_patterns_match_the_path_and_with_a_question_mark_the_query(pattern: str, url: str, hit: bool) -> None:
    assert _hit(pattern, url) is hit


def test_an_exclude_wins_over_an_include() -> None:
    assert held_out(f"{BASE}/blog/draft-x/", ("/blog/**",), ("/blog/draft-*/",)) == "matches [announce] exclude '/blog/draft-*/'"
    assert held_out(f"{BASE}/blog/tea/", ("/blog/**",), ("/blog/draft-*/",)) is None
    assert "matches no [announce] include pattern" in (held_out(f"{BASE}/shop/", ("/blog/**",), ()) or "")


PATTERNS = ["/blog/*/", "/blog/**", "/**/coffee/", "/search", "/search?q=*", "/search?*", "/", "/Blog/**", "/*/item-*/", "/a?b=*&c=*"]
URLS = ["/", "/blog/tea/", "/blog/2024/05/coffee/", "/coffee/", "/search", "/search?q=tea", "/search?page=2", "/x/item-7/", "/a?b=1&c=2"]


@given(st.lists(st.sampled_from(PATTERNS), max_size=4, unique=True), st.lists(st.sampled_from(PATTERNS), max_size=4, unique=True))
def test_a_list_of_patterns_matches_as_its_patterns_one_at_a_time(include: list[str], exclude: list[str]) -> None:
    """The patterns of a list are tried as one expression; the answer is the one of trying each in turn."""
    for url in URLS:
        path, query = path_and_query(BASE + url)
        first = next((pattern for pattern in exclude if matches(pattern, path, query)), None)
        if first is not None:
            expected: str | None = f"matches [announce] exclude {first!r}"
        elif include and not any(matches(pattern, path, query) for pattern in include):
            expected = f"matches no [announce] include pattern ({', '.join(repr(each) for each in include)})"
        else:
            expected = None
        assert held_out(BASE + url, tuple(include), tuple(exclude)) == expected, url


@pytest.mark.parametrize("bad", ["drafts/**", "https://www.shop-site.org/drafts/", "/a#b", ""])
def test_a_pattern_not_on_the_path_is_refused_with_one_line(bad: str) -> None:
    with pytest.raises(UsageError, match="is not a pattern on a URL's path"):
        build_settings("run", {"sitemap": "s.xml", "exclude": [bad]})


def test_the_announce_table_is_read_and_an_unknown_key_refused(site: Site) -> None:
    (site.root / "notify-changes.toml").write_text('[announce]\nexclude = ["/drafts/**"]\ninclude = ["/**"]\n')
    settings = build_settings("run", {"sitemap": str(site.sitemap)}, cwd=site.root)
    assert settings.announce.exclude == ("/drafts/**",) and settings.announce.include == ("/**",)
    (site.root / "notify-changes.toml").write_text('[announce]\nexclud = ["/drafts/**"]\n')
    with pytest.raises(UsageError, match=r"\[announce\] unknown setting 'exclud'"):
        build_settings("run", {"sitemap": str(site.sitemap)}, cwd=site.root)
    (site.root / "notify-changes.toml").write_text('[announce]\nexclude = ["drafts"]\n')
    with pytest.raises(UsageError, match=r"notify-changes.toml: \[announce\] exclude: 'drafts' is not a pattern"):
        build_settings("run", {"sitemap": str(site.sitemap)}, cwd=site.root)


def test_an_excluded_url_is_recorded_and_never_announced(site: Site) -> None:
    assert site.fake is not None
    site.write(urlset(PAGES))
    result = site.run("--initial", "submit", "--exclude", "/drafts/**", "--exclude", "/search?*", "--format", "json")
    assert result.code == 0, result.err
    report = json.loads(result.out)
    assert sorted(site.fake.delivered()) == [f"{BASE}/", f"{BASE}/blog/2024/05/coffee/", f"{BASE}/blog/tea/"]
    assert report["excluded"] == 2 and sorted(report["urls"]["excluded"]) == [f"{BASE}/drafts/new/", f"{BASE}/search?q=tea"]
    assert report["policy"]["excluded"][f"{BASE}/drafts/new/"] == "matches [announce] exclude '/drafts/**'"
    assert report["pending"] == 0
    recorded = recorded_urls(site.state)
    assert recorded[f"{BASE}/drafts/new/"]["lastmod"] == "2024-05-04T10:00:00Z"  # its history stays true
    assert "last_submitted" not in recorded[f"{BASE}/drafts/new/"]
    assert "last_submitted" in recorded[f"{BASE}/blog/tea/"]


def test_the_honest_run_without_patterns_announces_every_url(site: Site) -> None:
    assert site.fake is not None
    site.write(urlset(PAGES))
    result = site.run("--initial", "submit", "--format", "json")
    assert result.code == 0 and len(site.fake.delivered()) == 5
    assert json.loads(result.out)["excluded"] == 0


def test_an_include_announces_only_what_it_matches_and_changes_are_held_out_too(site: Site) -> None:
    assert site.fake is not None
    site.write(urlset(PAGES))
    assert site.run("--initial", "submit", "--include", "/blog/**").code == 0
    assert sorted(site.fake.delivered()) == [f"{BASE}/blog/2024/05/coffee/", f"{BASE}/blog/tea/"]
    site.write(urlset({**PAGES, "/": "2024-06-01T10:00:00Z", "/blog/tea/": "2024-06-01T10:00:00Z"}))
    result = site.run("--include", "/blog/**")
    assert result.code == 0
    assert site.fake.delivered()[-1] == f"{BASE}/blog/tea/" and len(site.fake.delivered()) == 3
    assert "1 URL held out by [announce] patterns" in result.out
    assert recorded_urls(site.state)[f"{BASE}/"]["lastmod"] == "2024-06-01T10:00:00Z"


def test_a_pending_url_a_new_pattern_holds_out_leaves_the_pending_sets(site: Site) -> None:
    assert site.fake is not None
    site.write(urlset(PAGES))
    site.fake.plan = [status(503)] * 50
    assert site.run("--initial", "submit").code == 3
    assert len(recorded_pending(site.state)[site.fake.endpoint]) == 5
    site.fake.plan = []
    result = site.run("--exclude", "/drafts/**")
    assert result.code == 0
    assert "1 pending URL now held out by [announce] patterns left the pending set" in result.out
    assert f"{BASE}/drafts/new/" not in site.fake.delivered() and len(site.fake.delivered()) == 4
    assert recorded_pending(site.state) == {}


def test_state_url_says_why_a_url_is_never_announced(site: Site) -> None:
    (site.root / "notify-changes.toml").write_text('[announce]\nexclude = ["/drafts/**"]\n')
    site.write(urlset(PAGES))
    assert site.run("--config", str(site.root / "notify-changes.toml"), "--initial", "submit").code == 0
    from notifier.cli import main

    site.capsys.readouterr()
    config = ["--config", str(site.root / "notify-changes.toml")]
    assert main(["state", "url", f"{BASE}/drafts/new/", *site.state_args, *config]) == 0
    out = site.capsys.readouterr().out
    assert "announced: never: it matches [announce] exclude '/drafts/**' (recorded as usual)" in out
    assert main(["state", "url", f"{BASE}/blog/tea/", *site.state_args, *config]) == 0
    assert "announced:" not in site.capsys.readouterr().out
