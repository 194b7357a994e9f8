"""Inputs that once crashed the program (#16): each is now a clear verdict, never a traceback
(nor exit 70): feeds without dates for stamp, URLs no file can be named after, front matter
nested thousands deep, the last day of year 9999, and URLs no parser can join."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from notifier.cli import main
from notifier.history.source_files import SourceFinder, front_matter
from tests.conftest import BASE, Result, Site, urlset
from tests.test_history import Repo


def fired(result: Result) -> set[str]:
    return set(re.findall(r"^(?:error|warn)\[([a-z-]+)\]", result.out, re.MULTILINE))


@pytest.fixture
def history(offline_site: Site) -> Repo:
    repo = Repo(offline_site.root)
    repo.commit({"content/posts/tea.md": "---\ntitle: Tea\n---\n"}, "2024-01-01T00:00:00Z")
    (offline_site.root / "notify-changes.toml").write_text('[history]\nsources = ["content/{path}.md"]\n')
    return repo


# -- stamp: a feed entry without its date element ------------------------------------------------
@pytest.mark.parametrize(
    ("name", "feed", "written"),
    [
        (
            "feed.xml",
            f'<?xml version="1.0"?><rss version="2.0"><channel><title>t</title><link>{BASE}/</link>'
            f"<item><link>{BASE}/posts/tea/</link></item></channel></rss>",
            f"<link>{BASE}/posts/tea/</link><pubDate>Mon, 01 Jan 2024 00:00:00 +0000</pubDate></item>",
        ),
        (
            "atom.xml",
            f'<?xml version="1.0"?><feed xmlns="http://www.w3.org/2005/Atom"><title>t</title>'
            f'<entry><link href="{BASE}/posts/tea/"/></entry></feed>',
            f'<link href="{BASE}/posts/tea/"/><updated>2024-01-01T00:00:00Z</updated></entry>',
        ),
    ],
)
def test_stamp_gives_a_feed_entry_without_a_date_its_date(
    offline_site: Site, history: Repo, capsys: pytest.CaptureFixture[str], name: str, feed: str, written: str
) -> None:
    path = offline_site.write(feed, name)
    assert main(["stamp", str(path)]) == 0, capsys.readouterr().err
    assert written in path.read_text()
    stamped = path.read_bytes()
    assert main(["stamp", str(path)]) == 0
    assert path.read_bytes() == stamped  # a stamped feed stamps to itself
    assert offline_site.run("--rule", "lastmod-missing=off", command="check", sitemap=str(path)).code == 0


# -- [history]: URLs no source file can be named after --------------------------------------------
@pytest.mark.parametrize(
    "path",
    [
        "/posts/" + "a" * 300 + "/",  # a segment over the file system's 255 bytes
        "/posts/a%00b%00c/",  # NULs: once the {date} placeholder's mark, a regex error
        "/posts/" + "%E9" * 200 + "/",
    ],
)
def test_a_url_no_file_can_be_named_after_has_no_source(offline_site: Site, history: Repo, path: str) -> None:
    offline_site.write(urlset({path: "2024-01-01", "/posts/tea/": "2024-01-01"}))
    result = offline_site.check()
    assert result.code == 0, result.err + result.out
    assert "1 page(s) have no source file" in result.out and result.err == ""


def test_a_literal_star_in_a_url_is_not_a_wildcard(tmp_path: Path) -> None:
    for name in ("posts/tea.md", "posts/t*a.md"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("")
    finder = SourceFinder(["posts/{slug}.md"], tmp_path, tmp_path)
    assert finder.find("https://a.org/posts/t%2Aa/") == ("posts/t*a.md", None)  # its own file, not the first match
    (tmp_path / "posts" / "t*a.md").unlink()
    assert finder.find("https://a.org/posts/t%2Aa/") is None  # never posts/tea.md
    assert finder.find("https://a.org/posts/*/") is None


@pytest.mark.parametrize("opening", ["+++\n" + "[a]\n" * 0 + "x = " + "[" * 5000 + "]" * 5000 + "\n+++\n", "{" + '"a":' * 0 + "[" * 5000])
def test_front_matter_nested_thousands_deep_has_no_dates(tmp_path: Path, opening: str) -> None:
    source = tmp_path / "deep.md"
    source.write_text(opening)
    assert front_matter(source) == {}


def test_the_last_day_of_year_9999_is_a_date_in_the_future(offline_site: Site, history: Repo) -> None:
    offline_site.write(urlset({"/posts/tea/": "9999-12-31"}))
    result = offline_site.check()
    assert result.code == 1 and fired(result) >= {"lastmod-future"} and result.err == "", result.err


# -- the build's files: URLs no parser can join ---------------------------------------------------
@pytest.mark.parametrize(
    ("head", "rule"),
    [
        ('<link rel="canonical" href="http://[::1/x">', None),  # no parser reads it: ignored, as crawlers do
        ('<base href="http://[::1/"><link rel="canonical" href="/a/">', None),
        ('<meta http-equiv="refresh" content="0; url=http://[::1/x">', "page-redirect"),
    ],
)
def test_a_head_naming_an_unjoinable_url_is_judged_without_a_crash(offline_site: Site, head: str, rule: str | None) -> None:
    offline_site.write(urlset({"/a/": "2024-01-01"}))
    offline_site.build_pages(["/"])  # the sitemap's folder is the build: its pages are judged
    page = offline_site.public / "a" / "index.html"
    page.parent.mkdir(parents=True)
    page.write_text(f"<html><head>{head}</head><body></body></html>")
    result = offline_site.check()
    assert result.err == "" and result.code == (1 if rule else 0), result.out
    if rule:
        assert rule in fired(result)


def test_a_redirects_line_to_an_unjoinable_url_is_a_redirect(offline_site: Site) -> None:
    offline_site.write(urlset({"/a/": "2024-01-01"}))
    offline_site.build_pages(["/"])
    (offline_site.public / "_redirects").write_text("/a/  http://[::1/x  301\n")
    result = offline_site.check()
    assert result.err == "" and result.code == 1 and "page-redirect" in fired(result), result.out
