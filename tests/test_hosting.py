"""``_headers``, ``_redirects`` and ``netlify.toml`` as Netlify and Cloudflare Pages apply them (#17, points 2, 9-12).

Each platform's behaviours are a table of cases from its documentation; a site test shows each
one end to end.
"""

from __future__ import annotations

import re

import pytest

from notifier.site.hosting import PLATFORMS, Headers, Redirects, detect_platform
from tests.conftest import BASE, Site, urlset

NETLIFY, CLOUDFLARE = PLATFORMS["netlify"], PLATFORMS["cloudflare-pages"]
HTTPS = BASE.replace("http://", "https://")

# (platform, _redirects, url, a file is built there, where it is redirected (None: not))
REDIRECTS = [
    # both
    ("both", "/old /new/ 301", "/old", False, "/new/"),
    ("both", "/old /new/", "/old", False, "/new/"),  # 301 by default
    ("both", "/spa/* /index.html 200", "/spa/x", False, None),  # a rewrite
    ("both", "/blog/:slug /posts/:slug 301", "/blog/hi", False, "/posts/hi"),  # placeholders filled in
    ("both", "/blog/:slug /posts/:slug 301", "/blog/hi/more", False, None),  # :slug is one segment
    ("both", "/a/* /b/:splat 302", "/a/x/y", False, "/b/x/y"),
    ("both", "old /new/ 301", "/old", False, "/new/"),  # a source without its leading slash
    ("both", "/café /tea/ 301", "/caf%C3%A9", False, "/tea/"),  # raw Unicode against the encoded URL
    ("both", "/caf%c3%a9 /tea/ 301", "/café", False, "/tea/"),
    ("both", "\ufeff/old /new/ 301", "/old", False, "/new/"),  # a byte-order mark
    ("both", "/store id=:id /shop/:id 301", "/store", False, None),  # a query condition: not judged
    ("both", "/c/ /d/ 301 Country=us", "/c/", False, None),  # a country condition
    # Netlify
    ("netlify", "/old /new/ 301", "/old", True, None),  # shadowed by the built file
    ("netlify", "/old /new/ 301!", "/old", True, "/new/"),  # forced
    ("netlify", "/old /x/ 301\n/old /y/ 301!", "/old", True, None),  # a shadowed first match ends the search
    ("netlify", "/blog/* /news/:splat 301", "/blog", False, "/news/"),  # /blog/* matches /blog
    ("netlify", "/a/ /b/ 301", "/a", False, "/b/"),  # /a/ matches /a
    ("netlify", "/a /b/ 301", "/a/", False, "/b/"),  # and /a matches /a/
    ("netlify", "/old /new/ 301 # moved in 2024", "/old", False, "/new/"),  # a trailing comment
    ("netlify", "/gone /404.html 404", "/gone", False, None),  # a 404 rule is no redirect
    # Cloudflare Pages
    ("cloudflare-pages", "/old /new/ 301", "/old", True, "/new/"),  # applies where a file is built
    ("cloudflare-pages", "/blog/* /news/:splat 301", "/blog", False, None),  # exact paths
    ("cloudflare-pages", "/a/ /b/ 301", "/a", False, None),
    ("cloudflare-pages", "/old /new/ 301!", "/old", False, None),  # ! makes the line invalid
    ("cloudflare-pages", "/old /new/ 301 # moved", "/old", False, None),  # so does a trailing comment
    ("cloudflare-pages", "/gone /404.html 404\n/gone /else/ 301", "/gone", False, "/else/"),  # a 404 rule is dropped
]


@pytest.mark.parametrize(("where", "text", "path", "has_file", "target"), REDIRECTS)
def test_redirects(where: str, text: str, path: str, has_file: bool, target: str | None) -> None:
    for name in ("netlify", "cloudflare-pages") if where == "both" else (where,):
        assert Redirects.parse(text, PLATFORMS[name]).target(BASE + path, has_file) == target, name


def test_a_full_url_rule_applies_to_its_own_scheme_and_host() -> None:
    rule = f"http://{BASE[7:]}/* {HTTPS}/:splat 301!"
    redirects = Redirects.parse(rule, NETLIFY)
    assert redirects.target(f"{HTTPS}/a/", has_file=True) is None  # https: the rule is for http
    assert redirects.target(f"{BASE}/a/", has_file=True) == f"{HTTPS}/a/"  # the target as the host sends it
    assert redirects.target("http://other.org/a/", has_file=True) is None


# (platform, _headers, path, X-Robots-Tag values sent)
HEADERS = [
    ("both", "/a/*\n  X-Robots-Tag: noindex", "/a/x", ["noindex"]),
    ("both", "/a/*\n  X-Robots-Tag: noindex\n  X-Robots-Tag: noarchive", "/a/x", ["noindex, noarchive"]),  # both values
    ("cloudflare-pages", "/a/*\n  X-Robots-Tag: noindex\n/a/*\n  X-Frame-Options: DENY", "/a/x", []),  # the later block replaces it
    ("netlify", "/a/*\n  X-Robots-Tag: noindex\n/a/*\n  X-Frame-Options: DENY", "/a/x", ["noindex"]),  # merged (merge.ts)
    ("cloudflare-pages", "/a/*\n  X-Robots-Tag: noindex\n/*\n  X-Robots-Tag: nosnippet", "/a/x", ["noindex", "nosnippet"]),  # two paths
    ("netlify", "/a/*\n  X-Robots-Tag: noindex\n/*\n  X-Robots-Tag: nosnippet", "/a/x", ["nosnippet"]),  # the last wins (#40 item 3)
    ("both", "/a/*\nX-Robots-Tag: noindex", "/a/x", ["noindex"]),  # an unindented header line
    ("both", "/a/*\n  X-Robots-Tag: noindex\n  /b/*\n  X-Robots-Tag: none", "/b/x", ["none"]),  # an indented path line
    ("both", "/a/*\n  X-Robots-Tag: noindex\n  /b/*\n  X-Robots-Tag: none", "/a/x", ["noindex"]),
    ("both", "\ufeff/a/*\n  X-Robots-Tag: noindex", "/a/x", ["noindex"]),  # a byte-order mark
    ("both", "/café/*\n  X-Robots-Tag: noindex", "/caf%C3%A9/x", ["noindex"]),  # raw Unicode
    ("cloudflare-pages", "/*\n  X-Robots-Tag: noindex\n/a/*\n  ! X-Robots-Tag", "/a/x", []),  # detached
    ("netlify", "/*\n  X-Robots-Tag: noindex\n/a/*\n  ! X-Robots-Tag", "/a/x", ["noindex"]),  # Netlify knows no detach
]


@pytest.mark.parametrize(("where", "text", "path", "values"), HEADERS)
def test_headers(where: str, text: str, path: str, values: list[str]) -> None:
    for name in ("netlify", "cloudflare-pages") if where == "both" else (where,):
        assert Headers.parse(text, PLATFORMS[name]).robots_tag(BASE + path) == values, name


@pytest.mark.parametrize(
    ("env", "platform"),
    [({"CF_PAGES": "1"}, "cloudflare-pages"), ({"NETLIFY": "true"}, "netlify"), ({}, None), ({"NETLIFY": "false"}, None)],
)
def test_the_platform_is_detected_from_its_build_environment(env: dict[str, str], platform: str | None) -> None:
    assert detect_platform(env) == platform


# -- on a site ------------------------------------------------------------------------------------
def _deploy(site: Site, redirects: str, *args: str, built: tuple[str, ...] = ("/old/",)) -> str:
    site.write(urlset({"/old/": "2024-05-01", "/new/": "2024-05-01"}))
    site.build_pages(["/", "/new/", *built])
    (site.public / "_redirects").write_text(redirects)
    result = site.check("--site-dir", str(site.public), *args)
    assert result.code in (0, 1), result.err  # a verdict, never an error or a crash
    return result.out


def _redirected(out: str) -> list[str]:
    return re.findall(r"^error\[page-redirect\] (\S+):", out, re.MULTILINE)


def test_cloudflare_pages_applies_a_redirect_where_a_file_is_built(offline_site: Site, monkeypatch: pytest.MonkeyPatch) -> None:
    assert _redirected(_deploy(offline_site, "/old/ /new/ 301\n")) == []  # Netlify: the built file is served
    monkeypatch.setenv("CF_PAGES", "1")
    assert _redirected(_deploy(offline_site, "/old/ /new/ 301\n")) == [f"{BASE}/old/"]  # detected
    monkeypatch.delenv("CF_PAGES")
    assert _redirected(_deploy(offline_site, "/old/ /new/ 301\n", "--platform", "cloudflare-pages")) == [f"{BASE}/old/"]
    (offline_site.root / "nc.toml").write_text('platform = "cloudflare-pages"\n')
    assert _redirected(_deploy(offline_site, "/old/ /new/ 301\n", "--config", str(offline_site.root / "nc.toml"))) == [f"{BASE}/old/"]


def test_a_force_https_rule_fails_only_the_http_urls_it_redirects(offline_site: Site) -> None:
    rule = f"http://{BASE[7:]}/* {HTTPS}/:splat 301!\n"
    out = _deploy(offline_site, rule)
    assert _redirected(out) == [f"{BASE}/old/", f"{BASE}/new/"]  # this sitemap lists http:// URLs: they are redirected
    assert f"_redirects sends this path to {HTTPS}/old/;" in out  # the target filled in, not :splat
    offline_site.write(urlset({f"{HTTPS}/old/": "2024-05-01"}))
    result = offline_site.check("--site-dir", str(offline_site.public), "--rule", "url-out-of-scope=off")
    assert _redirected(result.out) == [], result.out  # the https URLs are where the rule sends them


def test_netlify_toml_redirects_and_headers_are_read_on_netlify(offline_site: Site, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(offline_site.root)
    (offline_site.root / "netlify.toml").write_text(
        '[build]\npublish = "public"\n\n[[redirects]]\nfrom = "/new/"\nto = "/newer/"\nstatus = 301\nforce = true\n\n'
        '[[redirects]]\nfrom = "/old/"\nto = "/x/"\nconditions = {Country = ["us"]}\n\n'
        '[[headers]]\nfor = "/old/*"\n[headers.values]\nX-Robots-Tag = "noindex"\n'
    )
    out = _deploy(offline_site, "")
    assert _redirected(out) == [f"{BASE}/new/"] and "error[page-noindex] " + f"{BASE}/old/" in out, out
    out = _deploy(offline_site, "", "--platform", "cloudflare-pages")
    assert _redirected(out) == [] and "page-noindex" not in out  # Cloudflare Pages does not read netlify.toml


def test_a_broken_netlify_toml_is_one_line(offline_site: Site, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(offline_site.root)
    (offline_site.root / "netlify.toml").write_text("[[redirects]\n")
    offline_site.write(urlset({"/new/": "2024-05-01"}))
    offline_site.build_pages(["/", "/new/"])
    result = offline_site.check("--site-dir", str(offline_site.public))
    assert result.code == 2 and "netlify.toml: not valid TOML" in result.err and result.err.count("\n") == 1, result.err


# -- the edges of the line syntax (what the mutation run found unstated) ---------------------------
@pytest.mark.parametrize(
    ("text", "path", "target"),
    [
        ("/a/*/b/* /x/:splat 301", "/a/1/b/2", None),  # two stars: nowhere (Netlify: not last, #40 item 4; Cloudflare: item 9)
        ("/a/* /b/:other 301", "/a/x", "/b/:other"),  # a placeholder the source does not have stays as written
        ("/only", "/only", None),  # a source without a target is no rule
        ("/a/:slug /b/:slug 301", "/a/hi", "/b/hi"),
        ("/p/:n /q/:n 301", "/p/5", "/q/5"),  # a one-letter placeholder is a placeholder
    ],
)
def test_redirect_line_edges(text: str, path: str, target: str | None) -> None:
    for platform in PLATFORMS.values():
        assert Redirects.parse(text, platform).target(BASE + path, has_file=False) == target, platform.name


@pytest.mark.parametrize(
    ("text", "path", "targets"),
    [
        ("/:lang/:lang/x /y/:lang 301", "/en/fr/x", ("/y/en", None)),  # a name twice: the first is its value; Cloudflare: never
        ("/docs/*: /x/ 301", "/docs/a:", (None, "/x/")),  # a colon after a star is a colon; on Netlify the star is not last
    ],
)
def test_redirect_line_edges_by_platform(text: str, path: str, targets: tuple[str | None, str | None]) -> None:
    assert tuple(Redirects.parse(text, platform).target(BASE + path, False) for platform in (NETLIFY, CLOUDFLARE)) == targets


def test_a_detach_line_may_omit_its_space_and_a_later_block_keeps_the_earlier_place() -> None:
    """Cloudflare Pages: constructHeaders assigns ``rules[path]`` again, which keeps the path's first place."""
    assert Headers.parse("/*\n  X-Robots-Tag: noindex\n/a/*\n  !X-Robots-Tag\n", CLOUDFLARE).robots_tag(f"{BASE}/a/x") == []
    text = "/a/*\n  X-Robots-Tag: noindex\n/*\n  ! X-Robots-Tag\n/a/*\n  X-Robots-Tag: nosnippet\n"
    assert Headers.parse(text, CLOUDFLARE).robots_tag(f"{BASE}/a/x") == []  # /a/* (now nosnippet), then /* detaches it
    assert Headers.parse(text, CLOUDFLARE).robots_tag(f"{BASE}/b/x") == []
    assert Headers.parse(text.replace("! X-Robots-Tag", "X-Frame-Options: DENY"), CLOUDFLARE).robots_tag(f"{BASE}/a/x") == ["nosnippet"]


def test_malformed_netlify_toml_entries_are_skipped(offline_site: Site, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(offline_site.root)
    (offline_site.root / "netlify.toml").write_text(
        '[[redirects]]\nto = "/x/"\n\n[[redirects]]\nfrom = "/old/"\n\n[[redirects]]\nfrom = "/new/"\nto = "/y/"\nstatus = "301"\n\n'
        '[[headers]]\n[headers.values]\nX-Robots-Tag = "noindex"\n\n[[headers]]\nfor = "/old/*"\nvalues = "noindex"\n'
    )
    _deploy(offline_site, "")
    result = offline_site.check("--site-dir", str(offline_site.public))
    assert result.code == 0 and _redirected(result.out) == [] and "page-noindex" not in result.out, result.out + result.err


def test_netlify_toml_rules_on_a_query_or_conditions_or_with_an_unknown_status_are_skipped() -> None:
    """A rule for some requests only (a query, a country, a role) is not judged; one whose status
    Netlify does not take is skipped, and does not hide the next rule for its path."""
    redirects = Redirects.parse("", NETLIFY)
    redirects.add_toml(
        [
            {"from": "/a", "to": "/x/", "query": {"id": ":id"}},
            {"from": "/c", "to": "/x/", "conditions": {"Country": ["US"]}},
            {"from": "/e", "to": "/x/", "status": 999},
            {"from": "/e", "to": "/f/"},
        ]
    )
    assert [redirects.target(f"{BASE}{path}", has_file=False) for path in ("/a", "/c", "/e")] == [None, None, "/f/"]


@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
def test_every_redirect_status_redirects(status: int) -> None:
    for platform in PLATFORMS.values():
        assert Redirects.parse(f"/a /b/ {status}\n", platform).target(f"{BASE}/a", has_file=False) == "/b/"


@pytest.mark.parametrize(
    ("status", "netlify", "cloudflare"), [(200, None, None), (404, None, "/b/"), (410, None, "/b/"), (451, None, "/b/")]
)
def test_a_status_a_platform_takes_ends_the_search_and_one_it_refuses_is_skipped(
    status: int, netlify: str | None, cloudflare: str | None
) -> None:
    """A valid 200, 404, 410 or 451 rule matches first and is no redirect; Cloudflare Pages refuses all but 200."""
    text = f"/a /other {status}\n/a /b/ 301\n"
    assert Redirects.parse(text, NETLIFY).target(f"{BASE}/a", has_file=False) == netlify
    assert Redirects.parse(text, CLOUDFLARE).target(f"{BASE}/a", has_file=False) == cloudflare


def test_a_two_word_line_on_query_parameters_is_no_rule() -> None:
    assert Redirects.parse("/store id=:id\n", NETLIFY).target(f"{BASE}/store", has_file=False) is None
