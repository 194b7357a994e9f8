"""Where Netlify and Cloudflare Pages read ``_headers``, ``_redirects`` and ``netlify.toml`` apart (#40 items 3-10).

Each test holds the issue's minimal input beside the reference's answer, and an honest rule
beside it. The references: Netlify's parsers (netlify/build ``packages/headers-parser``,
``packages/redirect-parser``) and its redirect engine libredirect (as the issue's differential run
answered); Cloudflare's workers-sdk (``parseRedirects``, ``parseHeaders``, ``validateURL``,
``constants``, and the asset server's ``generateRulesMatcher``). A rule a host never applies is
said once in the report's notes, and fails nothing.
"""

from __future__ import annotations

import json

import pytest

from notifier.site.hosting import PLATFORMS, Headers, Redirects, toml_status
from notifier.site.hosting_platforms import (
    DYNAMIC_LIMIT,
    FULL_URL,
    HEADER_LIMIT,
    HOST_NAME,
    INDEX_LOOP,
    NAMED_TWICE,
    SPLAT_NOT_LAST,
    STATIC_LIMIT,
    STATUS,
    skipped_notes,
)
from tests.conftest import BASE, Site, urlset

NETLIFY, CLOUDFLARE = PLATFORMS["netlify"], PLATFORMS["cloudflare-pages"]


def _target(text: str, path: str, platform: str, has_file: bool = False) -> str | None:
    return Redirects.parse(text, PLATFORMS[platform]).target(path if "://" in path else BASE + path, has_file)


def _reasons(text: str, platform: str) -> list[str]:
    return [each.reason for each in Redirects.parse(text, PLATFORMS[platform]).skipped]


# -- item 3: Netlify, the last matching _headers block gives a header's value ----------------------
def test_netlify_sends_the_last_matching_blocks_value_of_a_header() -> None:
    """Netlify: ``/*  X-Robots-Tag: noindex`` then ``/public/*  X-Robots-Tag: all`` sends ``/public/a``
    only ``all`` (headers-parser merge.ts: a header given again for a path "overrides (does not
    concatenate)"). Cloudflare Pages sends both (the asset server appends a header set again)."""
    text = "/*\n  X-Robots-Tag: noindex\n/public/*\n  X-Robots-Tag: all\n"
    assert Headers.parse(text, NETLIFY).robots_tag(f"{BASE}/public/a") == ["all"]  # the reference: all
    assert Headers.parse(text, NETLIFY).robots_tag(f"{BASE}/private/a") == ["noindex"]  # only /* matches
    assert Headers.parse(text, CLOUDFLARE).robots_tag(f"{BASE}/public/a") == ["noindex", "all"]
    again = "/a\n  X-Robots-Tag: noindex\n/a\n  Cache-Control: max-age=60\n"  # a path twice: merged on Netlify
    assert Headers.parse(again, NETLIFY).robots_tag(f"{BASE}/a") == ["noindex"]
    assert Headers.parse(again, CLOUDFLARE).robots_tag(f"{BASE}/a") == []  # replaced (constructHeaders: rules[path])


def test_a_public_section_open_to_the_engines_passes_on_netlify(offline_site: Site) -> None:
    offline_site.write(urlset({"/public/a/": "2024-05-01", "/draft/": "2024-05-01"}))
    offline_site.build_pages(["/", "/public/a/", "/draft/"])
    (offline_site.public / "_headers").write_text("/*\n  X-Robots-Tag: noindex\n/public/*\n  X-Robots-Tag: all\n")
    result = offline_site.check("--site-dir", str(offline_site.public))
    assert result.code == 1 and f"page-noindex] {BASE}/draft/" in result.out and "/public/a/" not in result.out, result.out
    result = offline_site.check("--site-dir", str(offline_site.public), "--platform", "cloudflare-pages")
    assert f"page-noindex] {BASE}/public/a/" in result.out, result.out  # both values are sent there


# -- item 4: Netlify, a splat that is not the end of the path matches nothing ----------------------
@pytest.mark.parametrize(("text", "path"), [("/a/*/ /new/:splat 302", "/a/b/"), ("/*/:id /x/:id 301", "/en/7")])
def test_netlify_matches_nothing_with_a_splat_before_the_end(text: str, path: str) -> None:
    """libredirect: ``/a/*/ /new/:splat 302`` and ``/*/:id`` match no request (the issue's differential run)."""
    assert _target(text, path, "netlify") is None  # the reference: not redirected
    assert _reasons(text, "netlify") == [SPLAT_NOT_LAST]
    assert _target("/a/* /new/:splat 302", "/a/b/", "netlify") == "/new/b/"  # a splat at the end


# -- item 5: Netlify, a :placeholder in a full-URL source's host drops the rule --------------------
def test_netlify_drops_a_full_url_source_with_a_placeholder_in_its_host() -> None:
    """redirect-parser normalize.js parses a full-URL source with ``new URL``, which refuses
    ``https://:sub.example.com/*`` (``:sub.example.com`` is no port): the rule is dropped."""
    text = "https://:sub.shop-site.org/* https://shop-site.org/:sub/:splat 301!"
    assert _target(text, "https://en.shop-site.org/a", "netlify") is None  # the reference: dropped
    assert _reasons(text, "netlify") == [HOST_NAME]
    honest = "https://old.shop-site.org/* https://shop-site.org/:splat 301!"
    assert _target(honest, "https://old.shop-site.org/a", "netlify") == "https://shop-site.org/a"
    port = "https://old.shop-site.org:8443/* https://shop-site.org/:splat 301!"  # a port is no placeholder
    assert _reasons(port, "netlify") == []


# -- item 6: netlify.toml, a status as a string or a float is read ---------------------------------
@pytest.mark.parametrize(
    ("status", "read"),
    [(301, 301), ("302", 302), (301.0, 301), ("301!", 301), (" 308", 308), (307.9, 307), ("moved", None), (True, None), ([301], None)],
)
def test_netlify_toml_status_is_read_as_netlifys_parser_reads_it(status: object, read: int | None) -> None:
    """redirect-parser status.js: ``Number.parseInt(status)``, an integer or the rule is invalid."""
    assert toml_status(status) == read


def test_netlify_toml_redirects_with_a_string_or_float_status_are_reported(offline_site: Site, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(offline_site.root)
    (offline_site.root / "netlify.toml").write_text(
        '[[redirects]]\nfrom = "/a/"\nto = "/x/"\nstatus = "302"\n\n[[redirects]]\nfrom = "/b/"\nto = "/y/"\nstatus = 301.0\n\n'
        '[[redirects]]\nfrom = "/c/"\nto = "/z/"\nstatus = "moved"\n'
    )
    offline_site.write(urlset({"/a/": "2024-05-01", "/b/": "2024-05-01", "/c/": "2024-05-01"}))
    offline_site.build_pages(["/"])
    result = offline_site.check("--site-dir", str(offline_site.public), "--format", "json")
    report = json.loads(result.out)
    redirected = sorted(each["url"] for each in report["violations"] if each["rule"] == "page-redirect")
    assert redirected == [f"{BASE}/a/", f"{BASE}/b/"], result.out  # the reference: both redirect; "moved" is no status
    assert [note for note in report["notes"] if note.startswith("netlify.toml:")] == [
        f"netlify.toml: Netlify {STATUS}: 1 rule (e.g. [[redirects]] 3: from = '/c/', status = 'moved'), not judged"
    ]


# -- item 7: Cloudflare Pages, a full-URL source is invalid ----------------------------------------
def test_cloudflare_pages_skips_a_full_url_source() -> None:
    """validateURL: "Only relative URLs are allowed. Skipping absolute URL …" (an https:// source; an
    http:// one is read as the path ``/http://…``, which no page has)."""
    text = f"https://{BASE[7:]}/* /new/:splat 301\nhttp://{BASE[7:]}/* /new/:splat 301\n/old/ /new/ 301\n"
    assert _target(text, f"https://{BASE[7:]}/a", "cloudflare-pages") is None  # the reference: skipped
    assert _target(text, f"{BASE}/a", "cloudflare-pages") is None
    assert _target(text, f"{BASE}/http:/{BASE[6:]}/a", "cloudflare-pages") == "/new/a"  # the path it is read as
    assert _target(text, "/old/", "cloudflare-pages") == "/new/"  # a relative source
    assert _reasons(text, "cloudflare-pages") == [FULL_URL]
    assert _target(text, f"https://{BASE[7:]}/a", "netlify") == "/new/a"  # Netlify applies it


# -- item 8: Cloudflare Pages, a source ending in / or /* sent to /index(.html) is a loop ----------
LOOPS = [("/blog/ /index 301", "/blog/"), ("/docs/* /index.html 302", "/docs/a"), ("/ /index.html 301", "/")]


@pytest.mark.parametrize(("text", "path"), LOOPS)
def test_cloudflare_pages_drops_a_rule_to_index_as_a_loop(text: str, path: str) -> None:
    """parseRedirects: "Infinite loop detected in this rule and has been ignored" (the asset server
    strips /index and .html, and the request comes back to the rule)."""
    assert _target(text, path, "cloudflare-pages") is None  # the reference: dropped
    assert _reasons(text, "cloudflare-pages") == [INDEX_LOOP]
    assert _target(text, path, "netlify") is not None  # Netlify redirects it


def test_a_rule_to_index_that_is_no_loop_is_kept_on_cloudflare_pages() -> None:
    assert _target("/blog/ /home/ 301", "/blog/", "cloudflare-pages") == "/home/"
    assert _target("/blog/ https://other.org/index.html 301", "/blog/", "cloudflare-pages") == "https://other.org/index.html"
    assert _target("/blog /index.html 301", "/blog", "cloudflare-pages") == "/index.html"  # the source does not end in /


# -- item 9: Cloudflare Pages, two splats or a placeholder named twice never match -----------------
@pytest.mark.parametrize(
    ("text", "path"),
    [("/a/*/b/* /x/:splat 301", "/a/1/b/2"), ("/:lang/:lang/x /y/:lang 301", "/en/fr/x"), ("/f/*/:splat /g/:splat 301", "/f/a/b")],
)
def test_cloudflare_pages_never_matches_a_name_given_twice(text: str, path: str) -> None:
    """generateRulesMatcher: each * is a ``(?<splat>…)`` group and each :name a ``(?<name>…)``; a
    group named twice does not compile, and the rule is filtered out."""
    assert _target(text, path, "cloudflare-pages") is None  # the reference: never matches
    assert _reasons(text, "cloudflare-pages") == [NAMED_TWICE]
    assert _target("/a/:x/b/* /x/:x/:splat 301", "/a/1/b/2", "cloudflare-pages") == "/x/1/2"  # each name once


def test_cloudflare_pages_never_applies_a_headers_block_with_a_name_given_twice() -> None:
    """parseHeaders: "Multiple wildcards (*) are not supported in a single rule"; a :name twice does not compile."""
    for path in ("/a/*/b/*", "/:x/:x"):
        headers = Headers.parse(f"{path}\n  X-Robots-Tag: noindex\n/ok/*\n  X-Robots-Tag: noarchive\n", CLOUDFLARE)
        assert headers.robots_tag(f"{BASE}/a/1/b/2") == [] and headers.robots_tag(f"{BASE}/z/z") == []
        assert headers.robots_tag(f"{BASE}/ok/1") == ["noarchive"]  # the next block is read
        assert [each.reason for each in headers.skipped] == [NAMED_TWICE]
    assert Headers.parse("/a/*/b/*\n  X-Robots-Tag: noindex\n", NETLIFY).robots_tag(f"{BASE}/a/1/b/2") == ["noindex"]


# -- item 10: Cloudflare Pages reads 2,000 static and 100 dynamic redirects ------------------------
def test_cloudflare_pages_skips_static_redirects_past_2000() -> None:
    """parseRedirects: "Maximum number of static rules supported is 2000. Skipping line." (constants.ts)."""
    text = "\n".join(f"/p{n} /q{n} 301" for n in range(2001))
    assert _target(text, "/p1999", "cloudflare-pages") == "/q1999"
    assert _target(text, "/p2000", "cloudflare-pages") is None  # the reference: the 2,001st is skipped
    assert _target(text, "/p2000", "netlify") == "/q2000"
    redirects = Redirects.parse(text, CLOUDFLARE)
    assert skipped_notes(redirects.skipped, CLOUDFLARE) == [
        f"_redirects: Cloudflare Pages {STATIC_LIMIT}: 1 rule (e.g. line 2001: /p2000 /q2000 301), not judged"
    ]


def test_cloudflare_pages_skips_the_rest_of_the_file_past_100_dynamic_redirects() -> None:
    """parseRedirects: "Maximum number of dynamic rules supported is 100. Skipping remaining … lines of
    file"; after the first dynamic rule every rule counts as dynamic (canCreateStaticRule)."""
    lines = ["/static /s/ 301", *(f"/d{n}/* /e{n}/:splat 301" for n in range(99)), "/late /l/ 301", "/d99/* /e99/ 301", "", "/last /x/ 301"]
    text = "\n".join(lines)
    assert _target(text, "/static", "cloudflare-pages") == "/s/" and _target(text, "/d98/a", "cloudflare-pages") == "/e98/a"
    assert _target(text, "/late", "cloudflare-pages") == "/l/"  # the 100th dynamic
    assert _target(text, "/d99/a", "cloudflare-pages") is None and _target(text, "/last", "cloudflare-pages") is None  # the reference
    assert _target(text, "/last", "netlify") == "/x/"
    redirects = Redirects.parse(text, CLOUDFLARE)
    assert skipped_notes(redirects.skipped, CLOUDFLARE) == [
        f"_redirects: Cloudflare Pages {DYNAMIC_LIMIT}: 2 rules (e.g. line 102: /d99/* /e99/ 301), not judged"
    ]


def test_a_line_cloudflare_pages_cannot_read_is_not_counted() -> None:
    """A line of 4 tokens or with a full-URL source is invalid before it is counted; one with a bad status is counted."""
    bad = ["/a /b 301 Country=us", "https://x.org/a /b 301"] * 1500  # 3,000 lines that count for nothing
    text = "\n".join([*bad, *(f"/p{n} /q{n} 301" for n in range(2000))])
    assert _target(text, "/p1999", "cloudflare-pages") == "/q1999"
    counted = "\n".join([*(f"/p{n} /q{n} 301!" for n in range(2000)), "/last /x/ 301"])  # ! is invalid there, after counting
    assert _target(counted, "/last", "cloudflare-pages") is None


def test_cloudflare_pages_reads_100_headers_rules() -> None:
    """parseHeaders: "Maximum number of rules supported is 100. Skipping remaining … lines of file",
    checked at each path line before the rule open there is kept: that rule is lost too."""
    blocks = [f"/p{n}\n  X-Robots-Tag: noindex\n" for n in range(102)]
    headers = Headers.parse("".join(blocks), CLOUDFLARE)
    assert headers.robots_tag(f"{BASE}/p99") == ["noindex"]  # the 100th rule
    assert headers.robots_tag(f"{BASE}/p100") == [] and headers.robots_tag(f"{BASE}/p101") == []  # the reference: skipped
    assert skipped_notes(headers.skipped, CLOUDFLARE) == [
        f"_headers: Cloudflare Pages {HEADER_LIMIT}: 2 rules (e.g. line 201: /p100), not judged"
    ]
    last = Headers.parse("".join(blocks[:101]), CLOUDFLARE)
    assert last.robots_tag(f"{BASE}/p100") == ["noindex"]  # 101 blocks: the last is kept at the end of the file
    assert Headers.parse("".join(blocks), NETLIFY).robots_tag(f"{BASE}/p101") == ["noindex"]
    empty = ["/empty\n", "/p/:x/:x\n  X-Robots-Tag: noindex\n"] * 60  # neither is a rule Cloudflare counts
    assert Headers.parse("".join([*empty, *blocks[:100]]), CLOUDFLARE).robots_tag(f"{BASE}/p99") == ["noindex"]


# -- on a site: said once, and an honest deploy passes ---------------------------------------------
def test_rules_a_host_never_applies_are_one_note_each_and_fail_nothing(offline_site: Site) -> None:
    offline_site.write(urlset({"/a/": "2024-05-01", "/b/": "2024-05-01"}))
    offline_site.build_pages(["/", "/a/", "/b/"])
    rules = "https://old.org/* /a/:splat 301\nhttps://older.org/* /a/:splat 301\n/x/* /index.html 200\n/y/*/z/* /w/ 301\n"
    (offline_site.public / "_redirects").write_text(rules)
    (offline_site.public / "_headers").write_text("/q/*/r/*\n  X-Robots-Tag: noindex\n")
    result = offline_site.check("--site-dir", str(offline_site.public), "--platform", "cloudflare-pages", "--format", "json")
    assert result.code == 0 and "Traceback" not in result.err, result.out + result.err
    notes = [note for note in json.loads(result.out)["notes"] if note.startswith(("_redirects:", "_headers:"))]
    assert notes == [
        f"_redirects: Cloudflare Pages {FULL_URL}: 2 rules (e.g. line 1: https://old.org/* /a/:splat 301), not judged",
        f"_redirects: Cloudflare Pages {INDEX_LOOP}: 1 rule (e.g. line 3: /x/* /index.html 200), not judged",
        f"_redirects: Cloudflare Pages {NAMED_TWICE}: 1 rule (e.g. line 4: /y/*/z/* /w/ 301), not judged",
        f"_headers: Cloudflare Pages {NAMED_TWICE}: 1 rule (e.g. line 1: /q/*/r/*), not judged",
    ]
    (offline_site.public / "_redirects").write_text("/old/ /a/ 301\n")  # honest files: no note
    (offline_site.public / "_headers").write_text("/*\n  X-Frame-Options: DENY\n")
    result = offline_site.check("--site-dir", str(offline_site.public), "--platform", "cloudflare-pages", "--format", "json")
    assert result.code == 0 and not [note for note in json.loads(result.out)["notes"] if note.startswith(("_redirects", "_headers"))]
