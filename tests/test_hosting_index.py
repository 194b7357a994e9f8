"""The index of ``_redirects`` and ``_headers`` rules answers as trying every rule in order (#39, point 7).

A site migration writes thousands of rules; a URL is tried only against those that may match
it. The reference here is the plain linear scan the module used before: every rule's regex in
the file's order, the first match deciding a redirect and every match adding its headers.
"""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from notifier.site.hosting import PLATFORMS, REDIRECT_STATUSES, Headers, Pattern, Redirects
from notifier.site.hosting_platforms import FULL_URL
from tests.conftest import BASE, HOST

NETLIFY, CLOUDFLARE = PLATFORMS["netlify"], PLATFORMS["cloudflare-pages"]


# -- the reference: every rule tried, in order ------------------------------------------------------
def linear_matches(patterns: list[Pattern], url: str) -> list[tuple[int, dict[str, str]]]:
    found = []
    for number, pattern in enumerate(patterns):
        hit = pattern.match(url)
        if hit is not None:
            found.append((number, {name: value for name, value in hit.groupdict().items() if value is not None}))
    return found


def linear_target(redirects: Redirects, url: str, has_file: bool) -> str | None:
    for rule in redirects.rules:
        found = rule.pattern.match(url)
        if found is not None:
            if has_file and not rule.forced and redirects.platform.shadowing:
                return None
            return _reference_filled(rule.target, found) if rule.status in REDIRECT_STATUSES else None
    return None


def _reference_filled(target: str, found: re.Match[str]) -> str:
    values = {name: value for name, value in found.groupdict().items() if value is not None}
    values.setdefault("splat", "")
    return re.sub(r":([A-Za-z_][A-Za-z0-9_]*)", lambda match: values.get(match.group(1), match.group(0)), target)


def linear_robots_tag(headers: Headers, url: str) -> list[str]:
    values: list[str] = []
    for pattern, block in headers.blocks:
        if pattern.match(url) is not None:
            if "!x-robots-tag" in block:
                values = []
            if "x-robots-tag" in block:
                values = [*([] if headers.platform.last_header_wins else values), block["x-robots-tag"]]
    return values


# -- generated rules and URLs: few spellings, so that rules and URLs meet often -----------------------
SEGMENTS = ["a", "b", "ab", "A", "café", "caf%C3%A9", "%41", "x.y", "x:y", "1", "%2F", ""]
PIECES = [*SEGMENTS, "*", ":slug", ":splat", ":n", "a*", "*b", ":slug.html", "a:n"]
ORIGINS = [
    "",
    f"http://{HOST}",
    f"https://{HOST}",
    f"HTTP://{HOST.upper()}",
    "http://:sub.shop-site.org",
    "https://*.org",
    "http://*.shop-site.org",
    "http://other.org",
    f"http://{HOST}:8080",
    "http://café.org",
]
HOSTS = [HOST, "sub.shop-site.org", "other.org", f"{HOST}:8080", "WWW.Shop-Site.org", "café.org"]

SOURCE = st.builds(
    lambda origin, pieces, end, slash: (origin + ("/" if origin or slash else "") + "/".join(pieces) + end) or "/",
    st.sampled_from(ORIGINS),
    st.lists(st.sampled_from(PIECES), max_size=4),
    st.sampled_from(["", "/", "/*", "*", "//"]),
    st.booleans(),  # the leading slash (a source may omit it)
)
TARGET = st.sampled_from(["/t/:splat", "/t/:slug/:n", "/x/", "https://new.org/:splat", "/:sub/:splat", "/y/?from=:slug"])
STATUS = st.sampled_from(["301", "302", "307", "200", "404", "410", "451", "301!", "302!", "", "999", "301 Country=us"])
NOTE = st.sampled_from(["", " # moved"])
REDIRECT_LINE = st.builds(lambda source, target, status, note: f"{source} {target} {status}{note}", SOURCE, TARGET, STATUS, NOTE)
HEADER_LINE = st.sampled_from(
    ["X-Robots-Tag: noindex", "X-Robots-Tag: nosnippet", "! X-Robots-Tag", "!X-Robots-Tag", "X-Frame-Options: DENY", "x-robots-tag: none"]
)
HEADER_BLOCK = st.builds(
    lambda source, lines: "\n".join([source, *(f"  {line}" for line in lines)]), SOURCE, st.lists(HEADER_LINE, max_size=3)
)
PATH = st.builds(
    lambda segments, slash, query: "/" + "/".join(segments) + slash + query,
    st.lists(st.sampled_from([segment for segment in SEGMENTS if segment]), max_size=4),
    st.sampled_from(["", "/"]),
    st.sampled_from(["", "?q=1", "#top"]),
)
URL = st.builds(lambda scheme, host, path: f"{scheme}://{host}{path}", st.sampled_from(["http", "https"]), st.sampled_from(HOSTS), PATH)


def spelled(source: str, values: list[str]) -> str:
    """A URL path a source matches: each * and :name given a value, and an origin of its own."""
    path = re.sub(r"https?://[^/]*", "", source, count=1, flags=re.IGNORECASE)
    filled = re.sub(r"\*|:[A-Za-z_][A-Za-z0-9_]*", lambda _: values.pop() if values else "v", path)
    return filled if filled.startswith("/") else "/" + filled


@st.composite
def urls_for(draw: st.DrawFn, sources: list[str]) -> list[str]:
    """Generated URLs, and URLs spelled after the sources (so that most rules match some)."""
    urls = draw(st.lists(URL, max_size=8))
    for source in sources:
        values = draw(st.lists(st.sampled_from(["a", "b/c", "x.y", "café", ""]), min_size=4, max_size=4))
        urls.append(f"{draw(st.sampled_from(['http', 'https']))}://{draw(st.sampled_from(HOSTS))}{spelled(source, values)}")
    return urls


@settings(max_examples=200)
@given(st.lists(REDIRECT_LINE, max_size=12), st.data())
def test_redirects_answer_as_every_rule_tried_in_order(lines: list[str], data: st.DataObject) -> None:
    for platform in PLATFORMS.values():
        redirects = Redirects.parse("\n".join(lines), platform)
        for url in data.draw(urls_for([line.split()[0] for line in lines])):
            assert [(id(rule), found) for rule, found in redirects._matches(url)] == [
                (id(redirects.rules[number]), found) for number, found in linear_matches([rule.pattern for rule in redirects.rules], url)
            ], (platform.name, url)
            for has_file in (False, True):
                assert redirects.target(url, has_file) == linear_target(redirects, url, has_file), (platform.name, url, has_file)


@settings(max_examples=200)
@given(st.lists(HEADER_BLOCK, max_size=12), st.data())
def test_headers_answer_as_every_block_tried_in_order(blocks: list[str], data: st.DataObject) -> None:
    for platform in PLATFORMS.values():
        headers = Headers.parse("\n".join(blocks), platform)
        for url in data.draw(urls_for([block.split()[0] for block in blocks])):
            assert headers.robots_tag(url) == linear_robots_tag(headers, url), (platform.name, url)


@given(st.lists(st.tuples(SOURCE, TARGET), max_size=6), st.lists(URL, max_size=6))
def test_netlify_toml_rules_added_after_a_lookup_are_tried(entries: list[tuple[str, str]], urls: list[str]) -> None:
    """The index of the rules read so far is not kept once netlify.toml's are added."""
    redirects = Redirects.parse("/first /one/ 301\n", NETLIFY)
    headers = Headers.parse("/first\n  X-Robots-Tag: noindex\n", NETLIFY)
    assert redirects.target(f"{BASE}/first", has_file=False) == "/one/" and headers.robots_tag(f"{BASE}/first") == ["noindex"]
    redirects.add_toml([{"from": source, "to": target, "force": True} for source, target in entries])
    headers.add_toml([{"for": source, "values": {"X-Robots-Tag": target}} for source, target in entries])
    for url in [*urls, *(f"{BASE}{spelled(source, [])}" for source, _ in entries)]:
        assert redirects.target(url, has_file=True) == linear_target(redirects, url, has_file=True), url
        assert headers.robots_tag(url) == linear_robots_tag(headers, url), url


def test_a_block_given_again_after_a_lookup_replaces_the_earlier_one() -> None:
    """Cloudflare Pages (constructHeaders: ``rules[path]`` assigned again keeps its first place)."""
    headers = Headers.parse("/a/*\n  X-Robots-Tag: noindex\n/*\n  X-Frame-Options: DENY\n", CLOUDFLARE)
    assert headers.robots_tag(f"{BASE}/a/x") == ["noindex"]
    headers.add_toml([{"for": "/a/*", "values": {"X-Robots-Tag": "nosnippet"}}])
    assert headers.robots_tag(f"{BASE}/a/x") == ["nosnippet"]


# -- what a lookup tries ---------------------------------------------------------------------------
def _compiled(patterns: list[Pattern]) -> list[int]:
    """The patterns whose regex was compiled: those a URL was tried against."""
    return [number for number, pattern in enumerate(patterns) if "regex" in vars(pattern)]


def test_a_url_is_tried_only_against_the_rules_that_may_match_it() -> None:
    """5,000 moved pages and 500 moved sections: a URL is looked up, not matched 5,500 times."""
    lines = [f"/old/page-{n}/ /new/page-{n}/ 301" for n in range(5000)]
    lines += [f"/section-{n}/* /new/section-{n}/:splat 301" for n in range(500)]
    lines += ["/blog/:year/:slug /posts/:slug 301", "/* /index.html 200"]
    redirects = Redirects.parse("\n".join(lines), NETLIFY)
    patterns = [rule.pattern for rule in redirects.rules]
    assert redirects.target(f"{BASE}/old/page-4321", has_file=False) == "/new/page-4321/"
    assert _compiled(patterns) == []  # a literal source is found by its path: no regex at all
    assert redirects.target(f"{BASE}/section-42/a/b", has_file=False) == "/new/section-42/a/b"
    assert _compiled(patterns) == [5004, 5042]  # /section-4/* begins alike (and does not match); /* comes later
    assert redirects.target(f"{BASE}/blog/2024/hi", has_file=False) == "/posts/hi"
    assert redirects.target(f"{BASE}/elsewhere/", has_file=False) is None  # the SPA fallback: a rewrite
    assert _compiled(patterns) == [5004, 5042, 5500, 5501]
    headers = Headers.parse("".join(f"/old/page-{n}/\n  X-Robots-Tag: noindex\n" for n in range(5000)) + "/*\n  X-Frame-Options: DENY\n")
    blocks = [pattern for pattern, _ in headers.blocks]
    assert headers.robots_tag(f"{BASE}/old/page-7/") == ["noindex"] and headers.robots_tag(f"{BASE}/else/") == []
    assert _compiled(blocks) == [5000]


def test_a_star_in_the_host_of_a_full_url_rule_is_read() -> None:
    """A name in both the host and the path (two stars) made a regex that cannot compile: the run crashed.
    Netlify reads it, the path's * its :splat (a :name in the host it drops, #40 item 5); Cloudflare
    Pages skips a full-URL _redirects source (item 7), and in _headers two stars never match (item 9)."""
    text = "https://*.old.org/* https://new.org/:splat 301\nhttps://:sub.x.org/:sub/* https://y.org/:sub/:splat 301\n"
    redirects = Redirects.parse(text, NETLIFY)
    assert redirects.target("https://www.old.org/a/b", has_file=False) == "https://new.org/a/b"
    assert redirects.target("https://en.x.org/fr/c", has_file=False) is None
    assert Headers.parse("https://*.old.org/*\n  X-Robots-Tag: noindex\n", NETLIFY).robots_tag("https://a.old.org/b") == ["noindex"]
    redirects = Redirects.parse(text, CLOUDFLARE)
    assert redirects.rules == [] and [each.reason for each in redirects.skipped] == [FULL_URL, FULL_URL]
    assert Headers.parse("https://*.old.org/*\n  X-Robots-Tag: noindex\n", CLOUDFLARE).robots_tag("https://a.old.org/b") == []
    headers = Headers.parse("https://:sub.old.org/*\n  X-Robots-Tag: noindex\n", CLOUDFLARE)
    assert headers.robots_tag("https://a.old.org/b") == ["noindex"]
