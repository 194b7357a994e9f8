"""The page rules: a listed URL judged by what the site says of it. Every rule has an honest
example beside the lying one: an honest site (relative canonicals, trailing slashes,
index.html URLs, an allowing robots.txt) raises no page finding."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest

from notifier.rules.urls import tracking_params
from notifier.site.head import (
    EVERY_CRAWLER,
    HEAD_LIMIT,
    Head,
    Noindex,
    canonical_elsewhere,
    noindex_header,
    noindex_meta,
    read_head,
    refresh_target,
    same_page,
)
from notifier.site.hosting import PLATFORMS, Headers, Redirects
from notifier.site.robots import Robots
from tests.conftest import BASE, Result, Site, index, pages, urlset

PAGE_FINDINGS = {
    "page-noindex",
    "page-canonical-elsewhere",
    "page-redirect",
    "page-missing",
    "url-robots-disallowed",
    "url-tracking-params",
}


def fired(result: Result) -> set[str]:
    return set(re.findall(r"^(?:error|warn)\[([a-z-]+)\]", result.out, re.MULTILINE))


def findings(result: Result, rule: str) -> list[str]:
    return re.findall(rf"^(?:error|warn)\[{rule}\] (\S+): ", result.out, re.MULTILINE)


def page(site: Site, path: str, head: str) -> None:
    """A built page with exactly ``head`` inside its <head>."""
    file = site.public / path
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_text(f"<!DOCTYPE html>\n<html><head>{head}</head><body><p>{path}</p></body></html>\n")


def check(site: Site, *args: str) -> Result:
    return site.check("--site-dir", str(site.public), *args)


# -- an honest site ---------------------------------------------------------------------
def test_an_honest_site_raises_no_page_finding(offline_site: Site) -> None:
    site = offline_site
    listed = {
        "/": "2024-05-01",
        "/about/": "2024-05-01",  # a trailing slash, a relative canonical
        "/blog/post.html": "2024-05-02",  # a .html URL
        "/docs/index.html": "2024-05-03",  # an index.html URL, canonical the folder
        "/plain": "2024-05-04",  # no slash; the file is plain/index.html, canonical with a slash
        "/base/": "2024-05-05",  # a <base href> and a canonical relative to it
        "/caf%C3%A9/": "2024-05-06",  # escaped in the sitemap, raw in the canonical
        "/search/?q=shoes": "2024-05-07",  # a query that is not tracking
        "/port/": "2024-05-08",  # the canonical spells the default port
    }
    site.write(urlset(listed))
    page(site, "index.html", f'<link rel="canonical" href="{BASE}/"><meta name="robots" content="index, follow">')
    page(site, "about/index.html", '<link rel="canonical" href="/about/"><meta name="googlebot" content="noindex">')
    page(site, "blog/post.html", '<link rel="canonical" href="post.html"><meta http-equiv="refresh" content="300">')
    page(site, "docs/index.html", f'<link rel="canonical" href="{BASE}/docs/">')
    page(site, "plain/index.html", f'<link rel="canonical" href="{BASE}/plain/">')
    page(site, "base/index.html", '<base href="/base/"><link rel="canonical" href="./">')
    page(site, "café/index.html", f'<meta charset="utf-8"><link rel="canonical" href="{BASE}/café/">')
    page(site, "search/index.html", "")
    page(site, "port/index.html", '<link rel="canonical" href="http://www.shop-site.org:80/port/">')
    robots = f"User-agent: *\nDisallow: /admin/\nAllow: /\n\nUser-agent: GPTBot\nDisallow: /\n\nSitemap: {BASE}/sitemap.xml\n"
    (site.public / "robots.txt").write_text(robots)
    (site.public / "_headers").write_text("/*\n  X-Frame-Options: DENY\nhttps://:project.pages.dev/*\n  X-Robots-Tag: noindex\n")
    (site.public / "_redirects").write_text("/old/*  /blog/:splat  301\n/app/*  /index.html  200\n/about/  /about-us/  301\n")
    result = check(site)
    assert result.code == 0, result.out
    assert not fired(result) & PAGE_FINDINGS, result.out
    assert "robots.txt names" not in result.out


def test_without_a_build_the_page_rules_stay_silent(offline_site: Site) -> None:
    offline_site.write(urlset({"/gone/": "2024-05-01"}))  # no index.html beside the sitemap: not a build
    result = offline_site.check()
    assert result.code == 0 and not fired(result) & PAGE_FINDINGS


def test_the_sitemaps_folder_is_the_build_when_it_holds_the_home_page(offline_site: Site) -> None:
    site = offline_site
    site.write(urlset({"/": "2024-05-01", "/hidden/": "2024-05-02"}))
    page(site, "index.html", "")
    page(site, "hidden/index.html", '<meta name="robots" content="noindex">')
    result = site.check()
    assert result.code == 1 and fired(result) == {"page-noindex"}


# -- page-noindex -------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("head", "noindex"),
    [
        ('<meta name="robots" content="noindex">', True),
        ('<meta name="ROBOTS" content="NoIndex, follow">', True),
        ('<meta name="robots" content="none">', True),
        ('<meta name="bingbot" content="noindex">', False),  # one engine: a note (see below)
        ('<meta name="yandex" content="noindex, nofollow">', False),
        ('<meta name="robots" content="index, follow">', False),
        ('<meta name="robots" content="nofollow">', False),
        ('<meta name="googlebot" content="noindex">', False),  # Google is not an IndexNow engine
        ('<meta name="description" content="noindex, none">', False),
        ("", False),
    ],
)
def test_page_noindex_by_robots_meta(offline_site: Site, head: str, noindex: bool) -> None:
    offline_site.write(urlset({"/a/": "2024-05-01"}))
    page(offline_site, "a/index.html", head)
    result = check(offline_site)
    assert ("page-noindex" in fired(result)) is noindex
    assert result.code == (1 if noindex else 0)
    if noindex:
        assert "a/index.html says <meta name=" in result.out and "leave it out of the sitemap" in result.out


def test_page_noindex_by_x_robots_tag_in_headers(offline_site: Site) -> None:
    site = offline_site
    site.write(urlset({"/drafts/x/": "2024-05-01", "/posts/y/": "2024-05-01", "/bing/z/": "2024-05-01", "/g/w/": "2024-05-01"}))
    site.build_pages(["/drafts/x/", "/posts/y/", "/bing/z/", "/g/w/"])
    (site.public / "_headers").write_text(
        "# drafts stay out\n/drafts/*\n  X-Robots-Tag: noindex, nofollow\n/bing/*\n  X-Robots-Tag: bingbot: noindex\n"
        "/g/*\n  X-Robots-Tag: googlebot: noindex\n  X-Robots-Tag-Note: none\n"
    )
    result = check(site)
    assert findings(result, "page-noindex") == [f"{BASE}/drafts/x/"]
    assert "_headers sends X-Robots-Tag: noindex, nofollow" in result.out
    assert f"an X-Robots-Tag in _headers keeps bingbot away from 1 URL this deploy announces (e.g. {BASE}/bing/z/)" in result.out


def test_x_robots_tag_values() -> None:
    assert noindex_header(["noindex"]) == ("noindex", EVERY_CRAWLER)
    assert noindex_header(["unavailable_after: 25 Jun 2010 15:00:00 PST, noindex"]) is not None
    assert noindex_header(["unavailable_after: 25 Jun 2010 15:00:00 PST"]) is None
    assert noindex_header(["unavailable_after: Wed, 25 Jun 2010 15:00:00 PST, noindex"]) is not None  # a date with a comma
    assert noindex_header(["unavailable_after: Wed, 25 Jun 2010 15:00:00 PST"]) is None
    assert noindex_header(["googlebot: noindex, bingbot: none"]) == Noindex("googlebot: noindex, bingbot: none", frozenset({"bingbot"}))
    assert noindex_header(["googlebot: noindex"]) is None
    assert noindex_header(["max-snippet: 20, nofollow"]) is None
    headers = Headers.parse("/a/*\n  X-Robots-Tag: noindex\n/a/b/*\n  ! X-Robots-Tag\n", PLATFORMS["cloudflare-pages"])
    assert headers.robots_tag(f"{BASE}/a/x") == ["noindex"] and headers.robots_tag(f"{BASE}/a/b/x") == []


# -- page-canonical-elsewhere -----------------------------------------------------------
@pytest.mark.parametrize(
    ("loc", "canonical", "elsewhere"),
    [
        (f"{BASE}/a/", "/a/", False),
        (f"{BASE}/a/", f"{BASE}/a", False),  # trailing slash
        (f"{BASE}/a", "/a/", False),
        (f"{BASE}/a/", "http://WWW.Shop-Site.org:80/a/", False),  # case and default port
        (f"{BASE}/a/index.html", "/a/", False),
        (f"{BASE}/a/", "index.html", False),
        (f"{BASE}/a/", "/a/#top", False),  # a fragment does not count
        (f"{BASE}/a/b/", "../b/", False),
        (f"{BASE}/a/", "/b/", True),
        (f"{BASE}/a/", f"https://{BASE[7:]}/a/", True),  # another scheme
        (f"{BASE}/a/", "http://shop-site.org/a/", True),  # another host
        (f"{BASE}/a/", "http://www.shop-site.org:8080/a/", True),
        (f"{BASE}/a/?page=2", "/a/", True),  # a query is another page
        (f"{BASE}/a/?page=2", "/a/?page=2", False),
    ],
)
def test_canonical_resolution(loc: str, canonical: str, elsewhere: bool) -> None:
    assert (canonical_elsewhere(loc, Head((), canonical, None, None)) is not None) is elsewhere


def test_a_canonical_resolves_against_base_href() -> None:
    assert canonical_elsewhere(f"{BASE}/x/y/", Head((), "y/", "/x/", None)) is None
    assert canonical_elsewhere(f"{BASE}/x/y/", Head((), "y/", "/other/", None)) == f"{BASE}/other/y/"


def test_page_canonical_elsewhere(offline_site: Site) -> None:
    site = offline_site
    site.write(urlset({"/print/a/": "2024-05-01", "/a/": "2024-05-01"}))
    page(site, "print/a/index.html", '<link rel="canonical" href="/a/">')
    page(site, "a/index.html", '<link rel="canonical" href="/a/">')
    result = check(site)
    assert result.code == 1 and findings(result, "page-canonical-elsewhere") == [f"{BASE}/print/a/"]
    assert f"names {BASE}/a/ as its canonical URL; list that one instead" in result.out


# -- page-redirect ----------------------------------------------------------------------
@pytest.mark.parametrize(
    ("content", "target"),
    [
        ("0; url=/new/", f"{BASE}/new/"),
        ("0;URL='https://other.example/'", "https://other.example/"),
        ('5, url="/new/"', f"{BASE}/new/"),
        ("0; /new/", f"{BASE}/new/"),
        ("300", None),  # reloads itself
        ("0; url=/a/", None),  # to itself
        ("", None),
    ],
)
def test_refresh_targets(content: str, target: str | None) -> None:
    assert refresh_target(f"{BASE}/a/", Head((), None, None, content)) == target


def test_page_redirect_by_stub_and_by_redirects_file(offline_site: Site) -> None:
    site = offline_site
    listed = dict.fromkeys(["/stub/", "/moved/x/", "/shadowed/", "/forced/", "/spa/x/"], "2024-05-01")
    site.write(urlset(listed))
    page(site, "stub/index.html", '<meta http-equiv="refresh" content="0; url=/new/"><link rel="canonical" href="/new/">')
    site.build_pages(["/shadowed/", "/forced/", "/spa/x/"])
    (site.public / "_redirects").write_text(
        "/moved/*  /elsewhere/:splat  301\n/shadowed/  /s2/  302\n/forced/  /f2/  302!\n/spa/*  /index.html  200\n/c/ /d/ 301 Country=us\n"
    )
    result = check(site)
    assert sorted(findings(result, "page-redirect")) == [f"{BASE}/forced/", f"{BASE}/moved/x/", f"{BASE}/stub/"]
    assert "page-missing" not in fired(result)  # a redirected URL is said once, as a redirect
    assert "page-canonical-elsewhere" not in fired(result)  # the stub is said once, as a redirect
    assert "is a redirect stub (meta refresh) to" in result.out and "_redirects sends this path to /elsewhere/x/" in result.out


def test_a_redirect_whose_target_has_a_query_is_a_redirect() -> None:
    redirects = Redirects.parse("/old/  /new/?ref=old  301\n/store id=:id  /shop/:id  301\n")
    assert redirects.target(f"{BASE}/old/", has_file=False) == "/new/?ref=old"
    assert redirects.target(f"{BASE}/store", has_file=False) is None  # a rule on query parameters: not every request


def test_redirect_rules() -> None:
    redirects = Redirects.parse("/blog/:slug  /posts/:slug\n/q id=:id /y 301\nhttps://old.example/* https://new.example/:splat 301!\n")
    assert redirects.target(f"{BASE}/blog/hi", has_file=False) == "/posts/hi"  # 301 by default, :slug filled in
    assert redirects.target(f"{BASE}/blog/hi/more", has_file=False) is None  # :slug is one segment
    assert redirects.target(f"{BASE}/q", has_file=False) is None  # only with a query
    assert redirects.target("https://old.example/a", has_file=True) == "https://new.example/a"
    assert redirects.target(f"{BASE}/a", has_file=True) is None


# -- page-missing -------------------------------------------------------------------------
def test_page_missing_is_a_warning_naming_the_files_looked_for(offline_site: Site) -> None:
    site = offline_site
    site.write(urlset({"/here/": "2024-05-01", "/gone/": "2024-05-01", "/file.pdf": "2024-05-01", "/about": "2024-05-01"}))
    site.build_pages(["/here/"])
    (site.public / "file.pdf").write_bytes(b"%PDF-1.4")
    page(site, "about.html", "")
    result = check(site)
    assert result.code == 0 and findings(result, "page-missing") == [f"{BASE}/gone/"]
    assert "looked for gone/index.html, gone.html, gone" in result.out


@pytest.mark.parametrize("site_dir", [True, False])
def test_no_url_reaches_a_file_outside_the_build(offline_site: Site, tmp_path: Path, site_dir: bool) -> None:
    site = offline_site
    (tmp_path / "secret").mkdir()
    (tmp_path / "secret" / "index.html").write_text('<meta name="robots" content="noindex">')
    (site.public / "link").symlink_to(tmp_path / "secret")
    (site.public / "inside").mkdir()
    (site.public / "inside" / "index.html").write_text('<meta name="robots" content="noindex">')
    (site.public / "alias").symlink_to(site.public / "inside")  # a link that stays inside is followed
    page(site, "index.html", "")
    listed = {"/../secret/": "2024-05-01", "/link/": "2024-05-01", "/%2e%2e/secret/": "2024-05-01", "/alias/": "2024-05-01"}
    site.write(urlset(listed))
    result = check(site) if site_dir else site.check()  # the scanned build, and the one looked up page by page
    assert findings(result, "page-noindex") == [f"{BASE}/alias/"]
    assert len(findings(result, "page-missing")) == 3


@pytest.mark.parametrize("site_dir", [True, False])
def test_a_page_file_that_is_a_link_a_fifo_or_a_folder(offline_site: Site, tmp_path: Path, site_dir: bool) -> None:
    """Each page is opened with no look at the file first (site/folder.py::SiteFolder.open_page):
    a link to a page inside the build is read, one to a file outside is not, a FIFO named
    index.html is no page and never blocks the run (without O_NONBLOCK its open waits for a
    writer for ever), nor is a folder named index.html."""
    site = offline_site
    (tmp_path / "secret.html").write_text('<meta name="robots" content="noindex">')
    page(site, "inside/index.html", '<meta name="robots" content="noindex">')
    for name in ("linked", "outside", "fifo", "folder"):
        (site.public / name).mkdir()
    (site.public / "linked" / "index.html").symlink_to(site.public / "inside" / "index.html")
    (site.public / "outside" / "index.html").symlink_to(tmp_path / "secret.html")
    os.mkfifo(site.public / "fifo" / "index.html")
    (site.public / "folder" / "index.html").mkdir()
    page(site, "index.html", "")
    site.write(urlset({f"/{name}/": "2024-05-01" for name in ("linked", "outside", "fifo", "folder")}))
    result = check(site) if site_dir else site.check()
    assert findings(result, "page-noindex") == [f"{BASE}/linked/"]
    assert sorted(findings(result, "page-missing")) == [f"{BASE}/fifo/", f"{BASE}/folder/", f"{BASE}/outside/"]


# -- url-robots-disallowed --------------------------------------------------------------
ROBOTS = """# a real file's shapes
User-agent: *
Disallow: /private/
Allow: /private/press/
Disallow: /*.pdf$
Disallow: /*?sessionid=

User-agent: Bingbot
User-agent: msnbot
Disallow: /no-bing/

User-agent: GPTBot
Disallow: /
"""


@pytest.mark.parametrize(
    ("path", "blocked"),
    [
        ("/", []),
        ("/private/x", ["YandexBot", "SeznamBot", "Yeti", "YepBot", "Amazonbot"]),  # bingbot has its own group
        ("/private/press/x", []),  # the longer allow wins
        ("/files/a.pdf", ["YandexBot", "SeznamBot", "Yeti", "YepBot", "Amazonbot"]),
        ("/files/a.pdf?x=1", []),  # $ anchors the end
        ("/cart?sessionid=1", ["YandexBot", "SeznamBot", "Yeti", "YepBot", "Amazonbot"]),
        ("/no-bing/x", ["bingbot"]),
        ("/robots.txt", []),
    ],
)
def test_robots_txt_is_read_as_rfc_9309_reads_it(path: str, blocked: list[str]) -> None:
    assert Robots.parse(ROBOTS).blocking(BASE + path) == blocked


def test_robots_longest_match_and_ties() -> None:
    robots = Robots.parse("User-agent: *\nAllow: /a\nDisallow: /a/\nDisallow: /b\nAllow: /b\n")
    assert robots.allows("bingbot", f"{BASE}/a") and not robots.allows("bingbot", f"{BASE}/a/x")
    assert robots.allows("bingbot", f"{BASE}/b/x")  # a tie goes to allow
    assert Robots.parse("User-agent: bingbot\nDisallow:\n\nUser-agent: *\nDisallow: /\n").blocking(f"{BASE}/x") == [
        "YandexBot",
        "SeznamBot",
        "Yeti",
        "YepBot",
        "Amazonbot",
    ]  # an empty Disallow allows everything for its group
    assert Robots.parse("User-agent: *\nDisallow: /caf%C3%A9/\n").blocking(f"{BASE}/café/x") != []


def test_url_robots_disallowed(offline_site: Site) -> None:
    site = offline_site
    site.write(urlset({"/private/a/": "2024-05-01", "/public/b/": "2024-05-01"}))
    site.build_pages(["/private/a/", "/public/b/"])
    (site.public / "robots.txt").write_text("User-agent: *\nDisallow: /private/\n")
    result = check(site)
    assert result.code == 1 and findings(result, "url-robots-disallowed") == [f"{BASE}/private/a/"]
    assert "keeps bingbot, YandexBot, SeznamBot, Yeti, YepBot, Amazonbot away from it" in result.out


def test_a_robots_txt_naming_another_sitemap_gets_a_note(offline_site: Site) -> None:
    site = offline_site
    site.write(urlset({"/": "2024-05-01"}))
    site.build_pages(["/"])
    (site.public / "robots.txt").write_text(f"User-agent: *\nAllow: /\nSitemap: {BASE}/sitemap_index.xml\n")
    result = check(site)
    assert result.code == 0 and f"robots.txt names {BASE}/sitemap_index.xml as the sitemap, not /sitemap.xml" in result.out


# -- url-tracking-params ----------------------------------------------------------------
@pytest.mark.parametrize(
    ("loc", "found"),
    [
        (f"{BASE}/a/?utm_source=news&utm_medium=mail", ["utm_source", "utm_medium"]),
        (f"{BASE}/a/?gclid=abc", ["gclid"]),
        (f"{BASE}/a/?page=2&fbclid=x", ["fbclid"]),
        (f"{BASE}/a/?MSCLKID=1", ["MSCLKID"]),
        (f"{BASE}/a/?mc_cid=1&mc_eid=2", ["mc_cid", "mc_eid"]),
        (f"{BASE}/a/?page=2", []),
        (f"{BASE}/utm_source/", []),  # in the path, not the query
        (f"{BASE}/a/?q=utm_source", []),  # a value, not a name
        (f"{BASE}/a/#utm_source=x", []),
    ],
)
def test_tracking_params(loc: str, found: list[str]) -> None:
    assert tracking_params(loc) == found


def test_url_tracking_params_needs_no_build(offline_site: Site) -> None:
    offline_site.write(urlset({"/a/?utm_source=x": "2024-05-01", "/b/?page=2": "2024-05-01"}))
    result = offline_site.check()
    assert result.code == 1 and findings(result, "url-tracking-params") == [f"{BASE}/a/?utm_source=x"]
    assert "list the URL without them" in result.out


# -- what a deploy added or changed ----------------------------------------------------------
def test_page_rules_judge_what_the_deploy_added_or_changed(site: Site) -> None:
    listed = pages(3)
    site.write(urlset(listed))
    site.build_pages(listed)
    assert site.run("--site-dir", str(site.public)).code == 0
    page(site, "p/0/index.html", '<meta name="robots" content="noindex">')  # the file changed, its lastmod did not
    result = site.check("--site-dir", str(site.public))
    assert "page-noindex" not in fired(result)  # not announced this deploy, not judged
    listed["/p/0/"] = "2024-06-01T00:00:00Z"
    site.write(urlset(listed))
    result = site.check("--site-dir", str(site.public))
    assert result.code == 1 and findings(result, "page-noindex") == [f"{BASE}/p/0/"]


def test_each_page_rule_can_be_turned_off(offline_site: Site) -> None:
    site = offline_site
    site.write(urlset({"/a/": "2024-05-01"}))
    page(site, "a/index.html", '<meta name="robots" content="noindex">')
    result = check(site, "--rule", "page-noindex=warn")
    assert result.code == 0 and "warn[page-noindex]" in result.out
    (site.root / "notify-changes.toml").write_text('[rules]\n"page-noindex" = "off"\n')
    result = check(site)
    assert result.code == 0 and "page-noindex" not in fired(result)


# -- reading heads ----------------------------------------------------------------------------
def test_a_head_is_read_with_an_html_parser_and_cut_at_its_end() -> None:
    head = read_head(
        b"<!DOCTYPE html><HTML><HEAD><!-- <meta name=robots content=noindex> -->"
        b"<META NAME=Robots CONTENT='NoIndex'><link rel='alternate canonical' href='/c/'>"
        b"<script>var x = '<link rel=canonical href=/wrong/>';</script></HEAD>"
        b"<body><meta name=robots content=none><link rel=canonical href=/body/></body>"
    )
    assert head.robots == (("robots", "NoIndex"),) and head.canonical == "/c/"
    assert noindex_meta(head) == ('<meta name="robots" content="NoIndex">', EVERY_CRAWLER)
    assert read_head(b"") == Head((), None, None, None) and read_head(b"\x00\xff garbage") is not None


@pytest.mark.parametrize(
    "page",
    [
        b'<html><head><script>var s = "</head><body>";</script><meta name="robots" content="noindex"></head><body></body></html>',
        b'<html><head><!-- </head> <body> --><meta name="robots" content="noindex"></head><body></body></html>',
        b"<html><head><style>/* </head> */</style><meta name=robots content=noindex></head>",
        b"<meta name=robots content=noindex><p>a head without its tags: the parser implies it</p>",
        # broken markup is read as browsers read it, not refused
        b'<html><head><title>a & b</title></p><meta name="robots" content="noindex"></head><body></body></html>',
        b"<html><head><meta name=robots content=noindex></html></head>",
    ],
)
def test_the_head_ends_where_the_html_parser_says(page: bytes) -> None:
    """A '</head>' inside a script's string, a comment or a style is not the head's end."""
    assert noindex_meta(read_head(page)) == ('<meta name="robots" content="noindex">', EVERY_CRAWLER)


@pytest.mark.parametrize(
    "page",
    [
        b"<html><head><title>t</title><body><meta name=robots content=noindex></body>",  # no </head>: <body> ends it
        b"<html><head><title>t</title></head><p>text</p><meta name=robots content=noindex>",  # a body tag ends it
    ],
)
def test_a_meta_after_the_head_is_not_the_heads(page: bytes) -> None:
    assert noindex_meta(read_head(page)) is None


def test_a_head_longer_than_the_limit_is_cut() -> None:
    late = b"<head>" + b"<meta name=x content=y>" * (HEAD_LIMIT // 20) + b'<meta name="robots" content="noindex"></head>'
    assert noindex_meta(read_head(late)) is None


@pytest.mark.parametrize(("past", "seen"), [(0, True), (1, False)])
def test_the_head_limit_is_64_kib_to_the_byte(past: int, seen: bool) -> None:
    """A noindex whose last byte is the 65,536th is read; one byte later it is cut."""
    meta = b'<meta name="robots" content="noindex">'
    page = b"<head>" + b" " * (64 * 1024 - len(b"<head>") - len(meta) + past) + meta + b"</head>"
    assert (noindex_meta(read_head(page)) is not None) is seen


def test_same_page() -> None:
    assert same_page(f"{BASE}/a/", f"{BASE}/a/index.html")
    assert same_page("https://x.org/", "https://x.org")
    assert same_page("https://x.org:443/a", "https://X.org/a/")
    assert not same_page("https://x.org/a", "http://x.org/a")
    assert not same_page("https://x.org/a?x=1", "https://x.org/a?x=2")


def test_a_page_read_for_its_fingerprint_alone_has_its_head_read_when_asked(offline_site: Site) -> None:
    """A recorded page whose lastmod did not move is hashed, not parsed; when the deploy asks
    for its head after all (its bytes changed), the head is parsed then."""
    from notifier.site.folder import SiteFolder
    from notifier.site.pages import PageReader
    from notifier.store import new_record

    site = offline_site
    site.build_pages(["/a/"])
    page(site, "a/index.html", '<meta name="robots" content="noindex">')
    reader = PageReader(SiteFolder.scan(site.public))
    loc = f"{BASE}/a/"
    assert set(reader.fingerprints([(loc, "2024-05-01", 0, 1)], {loc: new_record(lastmod="2024-05-01")})) == {loc}
    reader.read_heads([loc])
    assert reader.heads[loc].robots, reader.heads


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs two cores to start workers")
@pytest.mark.usefixtures("forking")
def test_pages_read_on_worker_processes_give_what_one_process_gives(offline_site: Site) -> None:
    from notifier.site.folder import SiteFolder
    from notifier.site.pages import PageReader
    from notifier.workers import Workers

    site = offline_site
    listed = [f"/p/{n}/" for n in range(1500)]
    site.build_pages(listed[:1400])
    page(site, "p/7/index.html", '<meta name="robots" content="noindex">')
    page(site, "p/8/index.html", '<link rel="canonical" href="/p/9/">')
    rows = [(BASE + loc, "2024-05-01", 0, n) for n, loc in enumerate(listed)]
    build = SiteFolder.scan(site.public)
    serial = PageReader(build)
    with Workers(2) as workers:
        parallel = PageReader(build, workers)
        assert parallel.fingerprints(rows, {}) == serial.fingerprints(rows, {})
        assert workers.started  # the pool did the work, and is still usable
    assert parallel.heads == serial.heads and parallel.missing == serial.missing
    assert len(serial.missing) == 100 and sum(bool(head.robots) for head in serial.heads.values()) == 1
    assert {loc for loc, head in serial.heads.items() if head.canonical} == {f"{BASE}/p/8/"}


def test_a_build_without_a_single_listed_page_is_one_finding(offline_site: Site, tmp_path: Path) -> None:
    site = offline_site
    listed = pages(25)
    site.write(urlset(listed))
    wrong = tmp_path / "src"
    wrong.mkdir()
    (wrong / "sitemap.xml").write_bytes((site.public / "sitemap.xml").read_bytes())
    result = site.check("--site-dir", str(wrong), "--rule", "key-file-missing=off")
    assert result.out.count("warn[page-missing]") == 1
    assert "none of the 25 URLs has a page file in" in result.out and "is it the build output root?" in result.out
    site.build_pages(list(listed)[:1])  # one page there: each missing one is said
    assert "warn[page-missing] … and 4 more like this" in check(site).out  # 24 missing: the text report lists 20


@pytest.mark.parametrize(
    ("loc", "file"),
    [
        (f"{BASE}/", "index.html"),
        (BASE, "index.html"),
        (f"{BASE}/a/", "a/index.html"),
        (f"{BASE}/a", "a/index.html"),  # a folder's index before a file of that name
        (f"{BASE}/b", "b.html"),
        (f"{BASE}/b/", "b.html"),
        (f"{BASE}/c.pdf", "c.pdf"),
        (f"{BASE}/caf%C3%A9/", "café/index.html"),
        (f"{BASE}/a/?page=2#top", "a/index.html"),
        (f"{BASE}/a/../a/", None),  # no path is normalised into another
        (f"{BASE}/%2e%2e/x/", None),
        (f"{BASE}/missing/", None),
    ],
)
def test_the_url_to_file_mapping(loc: str, file: str | None, tmp_path: Path) -> None:
    from notifier.site.folder import SiteFolder

    names = ["index.html", "a/index.html", "a.html", "b.html", "c.pdf", "café/index.html", "x/index.html"]
    for name in names:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(name)
    (tmp_path / "b").mkdir()  # a folder without an index: b.html serves /b/
    for build in (SiteFolder.of(tmp_path, names), SiteFolder.scan(tmp_path), SiteFolder.unscanned(tmp_path)):
        assert build.page_file(loc) == file, build


def test_the_build_scanned_on_a_worker_process_is_the_build_scanned_here(offline_site: Site) -> None:
    from notifier.site.pages import BuiltSite
    from notifier.workers import Workers

    site = offline_site
    site.build_pages(["/a/", "/b/c/"])
    (site.public / "robots.txt").write_text("User-agent: *\nDisallow: /b/\n")
    here = BuiltSite.load(site.public)
    with Workers(2) as workers:
        there = BuiltSite.load(site.public, workers)
        assert list(there.folder.hashes or []) == list(here.folder.hashes or [])  # the worker hashes paths as this process does
    assert there.folder.page_file(f"{BASE}/b/c/") == "b/c/index.html" and there.folder.page_file(f"{BASE}/x/") is None
    assert there.robots is not None and there.robots.blocking(f"{BASE}/b/c/") != [] and there.headers is None


def test_a_build_scanned_by_another_interpreter_answers_the_same(offline_site: Site) -> None:
    """A fresh interpreter (spawn, another PYTHONHASHSEED) hashes the build's paths as this
    one does: fork is not what makes a scan on a worker right."""
    import concurrent.futures
    import multiprocessing

    from notifier.site.folder import SiteFolder

    site = offline_site
    site.build_pages(["/a/", "/b/c/"])
    spawned = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(1, mp_context=spawned) as pool:
        there = pool.submit(SiteFolder.scan, site.public).result()
    assert list(there.hashes or []) == list(SiteFolder.scan(site.public).hashes or [])
    assert there.page_file(f"{BASE}/b/c/") == "b/c/index.html" and there.page_file(f"{BASE}/x/") is None


def test_the_sitemap_robots_txt_is_held_against_is_the_one_deployed_at_its_public_url(offline_site: Site) -> None:
    """--sitemap-url says where the file is served: robots.txt naming that URL needs no note,
    wherever the file lies in the build; naming the file's own path then gets one."""
    site = offline_site
    path = site.write(urlset({"/": "2024-05-01"}), "maps/main.xml")
    site.build_pages(["/"])
    (site.public / "robots.txt").write_text(f"User-agent: *\nAllow: /\nSitemap: {BASE}/sitemap.xml\n")
    served = site.run("--site-dir", str(site.public), "--sitemap-url", f"{BASE}/sitemap.xml", command="check", sitemap=str(path))
    assert served.code == 0 and "robots.txt names" not in served.out, served.out
    (site.public / "robots.txt").write_text(f"User-agent: *\nAllow: /\nSitemap: {BASE}/maps/main.xml\n")
    elsewhere = site.run("--site-dir", str(site.public), "--sitemap-url", f"{BASE}/sitemap.xml", command="check", sitemap=str(path))
    assert f"robots.txt names {BASE}/maps/main.xml as the sitemap, not /sitemap.xml" in elsewhere.out, elsewhere.out


def test_with_every_page_rule_off_the_build_still_shows_what_did_not_change(offline_site: Site) -> None:
    """--site-dir is read for the pages' fingerprints too: a lastmod that moved on a page whose
    bytes did not is held back, whatever the page rules' levels."""
    site = offline_site
    site.write(urlset({"/a/": "2024-05-01"}))
    site.build_pages(["/a/"])
    off = [f"--rule={rule}=off" for rule in ("page-noindex", "page-canonical-elsewhere", "page-redirect", "page-missing")]
    off += ["--rule=url-robots-disallowed=off"]
    assert site.run("--site-dir", str(site.public), *off).code == 0
    site.write(urlset({"/a/": "2024-06-01"}))  # the build clock moved the date, the page is the same bytes
    result = check(site, *off)
    assert result.code == 0 and "held back" in result.out and "0 changed" in result.out, result.out


def test_without_site_dir_one_page_rule_off_leaves_the_others_reading_the_build(offline_site: Site) -> None:
    """The sitemap's folder holds the home page, so it is the build: the page rules that are on
    read it, whichever others are off."""
    site = offline_site
    site.write(urlset({"/": "2024-05-01", "/gone/": "2024-05-01"}))
    site.build_pages(["/"])
    result = site.check("--rule", "page-noindex=off")
    assert findings(result, "page-missing") == [f"{BASE}/gone/"], result.out


@pytest.mark.parametrize("count", [19, 20])
def test_from_twenty_urls_a_build_with_none_of_their_pages_is_one_finding(offline_site: Site, count: int) -> None:
    """Twenty judged URLs and not one page file: a wrong --site-dir, said once with the first URL
    as the example; nineteen are each a missing page."""
    site = offline_site
    listed = {f"/p/{n}/": "2024-05-01" for n in range(count)}
    site.write(urlset(listed))
    (site.public / "index.html").write_text("<html><head></head></html>")  # a build, without these pages
    result = check(site)
    found = findings(result, "page-missing")
    if count == 20:
        said = f"[page-missing] (all URLs): none of the 20 URLs has a page file in {site.public} (e.g. {BASE}/p/0/:"
        assert found == [] and said in result.out and result.out.count("page-missing") == 1, result.out
    else:
        assert found == [f"{BASE}/p/{n}/" for n in range(count)], result.out


def test_the_path_a_build_is_served_under_comes_from_the_sitemaps_public_url(tmp_path: Path) -> None:
    """The build's sitemap.xml at https://host/project/sitemap.xml: the build is served under
    project/, and its pages are found without it; a URL outside it, or a public URL that does
    not end as the sitemap lies in the build, changes nothing."""
    from notifier.site.folder import SiteFolder, served_under

    build = tmp_path / "site"
    (build / "maps").mkdir(parents=True)
    (build / "green").mkdir()
    (build / "green" / "index.html").write_text("<html></html>")
    sitemap = str(build / "maps" / "sitemap.xml")
    assert served_under(sitemap, build, "https://h.org/project/maps/sitemap.xml") == "project"
    assert served_under(sitemap, build, "https://h.org/maps/sitemap.xml") == ""
    assert served_under(sitemap, build, "https://h.org/project/sitemap.xml") == ""  # not where the build has it
    assert served_under(sitemap, build, None) == "" and served_under("https://h.org/project/sitemap.xml", build, "https://h.org/x") == ""
    assert served_under(str(build / "sitemap.xml"), None, "https://h.org/a%20b/sitemap.xml") == "a b"
    folder = SiteFolder.scan(build, "project")
    assert folder.page_file("https://h.org/project/green/") == "green/index.html"
    assert folder.page_file("https://h.org/green/") == "green/index.html"  # outside the path: as it is
    assert folder.page_file("https://h.org/projectgreen/") is None
    assert folder.candidates("https://h.org/project/") == ("index.html",)


def test_a_site_served_under_a_path_reads_its_index_parts_and_pages_without_it(offline_site: Site) -> None:
    """An index at https://host/project/sitemap.xml lists https://host/project/pages.xml, which
    the build has at pages.xml: with --sitemap-url the part and every page are found."""
    site = offline_site
    site.write(index({f"{BASE}/project/pages.xml": None}))
    site.write(urlset({f"{BASE}/project/": "2024-05-01", f"{BASE}/project/tea/": "2024-05-02"}), "pages.xml")
    (site.public / "tea").mkdir()
    for page in (site.public / "index.html", site.public / "tea" / "index.html"):
        page.write_text("<!DOCTYPE html><html><head><title>t</title></head><body>tea</body></html>")
    lost = site.check("--site-dir", str(site.public))
    assert lost.code == 2 and "index part" in lost.err and "not found at" in lost.err, lost.err
    placed = site.check("--site-dir", str(site.public), "--sitemap-url", f"{BASE}/project/sitemap.xml")
    assert placed.code == 0 and "page-missing" not in placed.out, placed.out + placed.err


def test_a_build_served_under_a_folder_nothing_named_is_one_finding_naming_the_sitemap_url(offline_site: Site) -> None:
    """MkDocs' site_url https://host/project/ (or Sphinx's html_baseurl with a path) puts
    project/ before every URL, and the build has its pages without it: one finding saying
    the --sitemap-url that maps them, not a page-missing line a page; given, every page is
    found. A page whose only match would be the home page is no such folder."""
    site = offline_site
    locs = {f"{BASE}/project/": "2024-05-01", **{f"{BASE}/project/p/{n}/": "2024-05-02" for n in range(3)}}
    site.write(urlset(locs))
    site.build_pages(locs)  # their canonicals name the URLs served; moved to where the build has them
    shutil.copytree(site.public / "project", site.public, dirs_exist_ok=True)
    shutil.rmtree(site.public / "project")
    lost = site.check("--site-dir", str(site.public))
    assert lost.code == 0 and lost.out.count("warn[page-missing]") == 1, lost.out
    said = (
        f"none of the 4 URLs has a page file in {site.public.resolve()}, but each has one without /project/ "
        f"(e.g. {BASE}/project/: index.html): the build is served under /project/"
    )
    assert said in lost.out and f"pass --sitemap-url {BASE}/project/sitemap.xml" in lost.out, lost.out
    placed = site.check("--site-dir", str(site.public), "--sitemap-url", f"{BASE}/project/sitemap.xml")
    assert placed.code == 0 and "page-missing" not in placed.out, placed.out + placed.err
    site.write(urlset({f"{BASE}/gone/": "2024-05-01"}))  # one page, truly missing: "gone/" as a folder would map it to the home page
    single = site.check("--site-dir", str(site.public), "--state", str(site.root / "other.json"))
    assert f"warn[page-missing] {BASE}/gone/: no page file" in single.out and "--sitemap-url" not in single.out, single.out
