"""robots.txt as RFC 9309 and the IndexNow engines' crawlers read it (#17, points 1-8).

A table of RFC 9309 cases written here, then a property test that holds notifier/site/robots.py to
protego (the parser Scrapy uses), with every disagreement listed and explained.
"""

from __future__ import annotations

import re

import protego  # a test dependency: the reference parser
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from notifier.site.robots import INDEXNOW_CRAWLERS, Robots
from tests.conftest import BASE, Site, urlset

ALL = list(INDEXNOW_CRAWLERS)


def blocked(text: str, path: str) -> list[str]:
    return Robots.parse(text).blocking(BASE + path)


# -- RFC 9309, case by case ---------------------------------------------------------------------
CASES = [
    # (robots.txt, path, crawlers kept away, what it shows)
    ("User-agent: *\nDisallow: /a\n", "/a/b", ALL, "a prefix"),
    ("User-agent: *\nDisallow: /a\n", "/b", [], "another path"),
    ("User-agent: *\nDisallow: /a\nAllow: /a/b\n", "/a/b/c", [], "the longest match wins"),
    ("User-agent: *\nAllow: /a/b\nDisallow: /a/\n", "/a/b/c", [], "in any order"),
    ("User-agent: *\nDisallow: /a/b\nAllow: /a/\n", "/a/b", ALL, "the longer disallow wins"),
    ("User-agent: *\nDisallow: /a\nAllow: /a\n", "/a", [], "allow on a tie"),
    ("User-agent: *\nDisallow: /*.pdf$\n", "/x/y.pdf", ALL, "* and $"),
    ("User-agent: *\nDisallow: /*.pdf$\n", "/x/y.pdf?v=1", [], "$ ends the path"),
    ("User-agent: *\nDisallow: /a$b\n", "/a$b/c", ALL, "a $ inside is a literal $"),
    ("User-agent: *\nDisallow: /a%2Ab\n", "/a*b", ALL, "%2A is a literal star (section 2.2.3)"),
    ("User-agent: *\nDisallow: /a%2Ab\n", "/aXb", [], "... not a wildcard"),
    ("User-agent: *\nDisallow: /a%24\n", "/a$", ALL, "%24 is a literal dollar"),
    ("User-agent: *\nDisallow: /a%24\n", "/a", [], "... not an anchor"),
    ("User-agent: *\nDisallow: /a%2Fb\n", "/a/b", [], "%2F is not / (RFC 3986)"),
    ("User-agent: *\nDisallow: /a%2fb\n", "/a%2Fb", ALL, "escapes compare in any case"),
    ("User-agent: *\nDisallow: /%7Euser\n", "/~user/x", ALL, "an unreserved escape is its character"),
    ("User-agent: *\nDisallow: /caf%C3%A9\n", "/café", ALL, "UTF-8 octets, escaped or not"),
    ("User-agent: *\nDisallow: /caf%E9\n", "/caf%E9/", ALL, "an escape that is not UTF-8 is an octet"),
    ("User-agent: *\nDisallow: /café\n", "/caf%E9", [], "... not the UTF-8 é"),
    ("User-agent: *\nDisallow: /login?returnUrl=%2Fadmin\n", "/login?returnUrl=%2fadmin", ALL, "a query's escapes too"),
    ("\ufeffUser-agent: *\nDisallow: /\n", "/x", ALL, "a byte-order mark is skipped"),
    ("User-agent: *\r\nDisallow: /a\r\n", "/a", ALL, "CRLF line ends"),
    ("User-agent: *\rDisallow: /a\r", "/a", ALL, "CR line ends"),
    ("User-agent: *\nDisallow: /a # a comment\n", "/a", ALL, "a comment after a rule"),
    ("user-AGENT: *\nDISALLOW: /a\n", "/a", ALL, "keys in any case"),
    ("User-agent: *\nDisallow:\n", "/a", [], "an empty disallow allows all"),
    ("User-agent: *\nDisallow: /\n", "/robots.txt", [], "robots.txt itself is always allowed"),
    ("User-agent: Bingbot/2.0\nDisallow: /\n", "/a", ["bingbot"], "a user agent is its product token"),
    ("User-agent: BINGBOT\nDisallow: /\n", "/a", ["bingbot"], "in any case"),
    ("User-agent: msnbot\nDisallow: /\n", "/a", ["bingbot"], "Bing obeys an msnbot group"),
    ("User-agent: bingbot\nAllow: /\n\nUser-agent: msnbot\nDisallow: /\n", "/a", [], "... its own first"),
    ("User-agent: Yandex\nDisallow: /\n", "/a", ["YandexBot"], "Yandex obeys a Yandex group"),
    ("User-agent: amazonbot\nDisallow: /\n", "/a", ["Amazonbot"], "Amazonbot takes part in IndexNow"),
    ("User-agent: bingbot\nUser-agent: yeti\nDisallow: /\n", "/a", ["bingbot", "Yeti"], "a group of two agents"),
    ("User-agent: *\nDisallow: /a\n\nUser-agent: *\nDisallow: /b\n", "/b", ALL, "groups of one agent combine"),
    ("User-agent: bingbot\nDisallow: /b\n\nUser-agent: *\nDisallow: /\n", "/a", ALL[1:], "an own group replaces *'s"),
    ("User-agent: bingbot\nCrawl-delay: 2\n\nUser-agent: *\nDisallow: /\n", "/a", ALL[1:], "a Crawl-delay group is its own"),
    ("User-agent: yandex\nClean-param: ref /\nUser-agent: *\nDisallow: /\n", "/a", ALL[:1] + ALL[2:], "Clean-param too"),
    ("User-agent: *\nUser-agent: bingbot\nDisallow: /\n", "/a", ALL, "agents before a rule share it"),
    ("Disallow: /\nUser-agent: *\nAllow: /\n", "/a", [], "a rule before any group is ignored"),
    ("User-agent: *\nSitemap: /s.xml\nDisallow: /\n", "/a", ALL, "a sitemap line does not end a group"),
    ("User-agent: bingbot\nHost: example.org\nUser-agent: yandex\nDisallow: /\n", "/a", ["bingbot", "YandexBot"], "nor an unknown line"),
    ("User-agent: *\nDisallow: /a*b*c*d\n", "/axbxcxd", ALL, "three stars"),
    ("User-agent: *\nDisallow: /a*b*c*d\n", "/axbxd", [], "... each piece in its turn: no c, no match"),
    ("User-agent: *\nDisallow: */secret*\n", "/secret/a", ALL, "a leading star matches nothing"),
    ("User-agent: *\nDisallow: */secret\n", "/secret", ALL, "... before the last piece too"),
    ("User-agent: *\nDisallow: /a*b$\n", "/ab", ALL, "a star matches nothing before an anchored end"),
    ("User-agent: *\nDisallow: /a*b$\n", "/ab/", [], "... which is the end"),
]


@pytest.mark.parametrize(("text", "path", "kept", "why"), CASES, ids=[case[3] for case in CASES])
def test_rfc_9309(text: str, path: str, kept: list[str], why: str) -> None:
    assert blocked(text, path) == kept, why


def test_a_robots_txt_names_the_sitemap_when_any_of_its_sitemap_lines_does() -> None:
    robots = Robots.parse(f"Sitemap: {BASE}/news.xml\nSitemap: {BASE}/sitemap.xml\n")
    assert robots.names("/sitemap.xml") and robots.names("/news.xml") and not robots.names("/other.xml")
    assert Robots.parse("User-agent: *\nDisallow:\n").names("/any.xml")  # one naming none names no other either


@pytest.mark.parametrize(
    ("rule", "length", "kept"),
    [("Allow: *****************/****.js", 31, []), ("Disallow: /*a*a*a*a*a*b", 244, []), ("Disallow: /*/*/*/*/*/*.php", 2000, [])],
)
def test_a_wildcard_rule_that_stalls_a_backtracking_matcher_is_answered(rule: str, length: int, kept: list[str]) -> None:
    """Each of these took a backtracking regex seconds to hours for one URL (the speed itself:
    scripts/bench_robots.py); the greedy walk answers at once."""
    robots = Robots.parse(f"User-agent: *\nDisallow: /\n{rule}\n" if rule.startswith("Allow") else f"User-agent: *\n{rule}\n")
    path = "/" + "a" * (length - 1)
    assert robots.blocking(BASE + path) == (ALL if rule.startswith("Allow") else kept)


def test_a_non_utf8_escape_in_a_rule_or_a_url_is_no_traceback(offline_site: Site) -> None:
    offline_site.write(urlset({"/caf%E9/": "2024-05-01", "/ok/": "2024-05-01"}))
    offline_site.build_pages(["/", "/ok/"])
    (offline_site.public / "caf%E9").mkdir()
    (offline_site.public / "caf%E9" / "index.html").write_text("<html><head></head></html>")
    (offline_site.public / "robots.txt").write_text("User-agent: *\nDisallow: /caf%E9/\nDisallow: /%FF\n")
    result = offline_site.check("--site-dir", str(offline_site.public))
    assert result.code == 1 and f"error[url-robots-disallowed] {BASE}/caf%E9/" in result.out, result.out + result.err


# -- Google's reading (#40 items 1-2): its answer beside protego's ----------------------------------
# (robots.txt, crawler, path, Google's answer: may it fetch, protego's answer when it differs from Google's)
GOOGLE = [
    # a user agent that begins with * but is not * alone: Google's robots.cc takes the run of
    # [a-zA-Z_-] at its start as the token, empty here, so the group is no crawler's
    ("User-agent: *WordPress*\nDisallow: /\n", "bingbot", "/a", True, None),
    ("User-agent: *Yeti*\nDisallow: /\n", "Yeti", "/a", True, False),  # protego finds yeti inside *Yeti*
    ("User-agent: *MJ12bot*\nDisallow: /\n\nUser-agent: *\nDisallow: /tmp/\n", "bingbot", "/a", True, None),
    ("User-agent: *WordPress*\nDisallow: /\n\nUser-agent: *\nDisallow: /private\n", "bingbot", "/private", False, None),
    # * before white space is still the global group (robots.cc); protego reads a crawler named "* bingbot"
    ("User-agent: * bingbot\nDisallow: /\n", "YandexBot", "/a", False, True),
    # a trailing empty query is part of the URL robots.txt matches (robots.cc GetPathParamsQuery)
    ("User-agent: *\nDisallow: /page?\n", "bingbot", "/page?", False, None),
    ("User-agent: *\nDisallow: /page?\n", "bingbot", "/page", True, None),
    ("User-agent: *\nDisallow: /page$\n", "bingbot", "/page?", True, None),
    ("User-agent: *\nDisallow: /page?$\n", "bingbot", "/page?#top", False, None),
    ("User-agent: *\nDisallow: /*?\n", "bingbot", "/?", False, None),
]


@pytest.mark.parametrize(("text", "crawler", "path", "google", "protego_says"), GOOGLE)
def test_robots_reads_as_google_reads(text: str, crawler: str, path: str, google: bool, protego_says: bool | None) -> None:
    """Each minimal input with Google's answer; protego's answer is the same, or the one noted."""
    assert Robots.parse(text).allows(crawler, BASE + path) == google
    assert protego.Protego.parse(text).can_fetch(BASE + path, crawler) == (google if protego_says is None else protego_says)


def test_a_wordpress_agent_group_that_disallows_all_keeps_no_engine_away(offline_site: Site) -> None:
    """asb.co.nz's and stuff.co.nz's robots.txt: ``User-agent: *WordPress*`` then ``Disallow: /``
    had read as every crawler's group, failing every URL of the deploy."""
    offline_site.write(urlset({"/a/": "2024-05-01"}))
    offline_site.build_pages(["/", "/a/"])
    (offline_site.public / "robots.txt").write_text("User-agent: *WordPress*\nDisallow: /\n\nUser-agent: *\nDisallow: /wp-admin/\n")
    result = offline_site.check("--site-dir", str(offline_site.public))
    assert result.code == 0 and "robots" not in result.out, result.out + result.err


# -- an engine kept away is a note; every engine kept away is an error -----------------------------
def test_a_site_that_keeps_one_engine_away_deploys_with_a_note(offline_site: Site) -> None:
    """Announcing a URL one engine may not crawl harms no one: that engine does not crawl it."""
    offline_site.write(urlset({f"/p/{n}/": "2024-05-01" for n in range(3)}))
    offline_site.build_pages(["/", *(f"/p/{n}/" for n in range(3))])
    (offline_site.public / "robots.txt").write_text("User-agent: YandexBot\nDisallow: /\n\nUser-agent: *\nAllow: /\n")
    result = offline_site.check("--site-dir", str(offline_site.public))
    assert result.code == 0 and "url-robots-disallowed" not in result.out, result.out
    notes = [line for line in result.out.splitlines() if "keeps YandexBot away" in line]
    assert len(notes) == 1 and "from 3 URLs this deploy announces" in notes[0], result.out


def test_a_site_that_keeps_every_engine_away_fails(offline_site: Site) -> None:
    offline_site.write(urlset({"/p/0/": "2024-05-01"}))
    offline_site.build_pages(["/", "/p/0/"])
    (offline_site.public / "robots.txt").write_text("User-agent: YandexBot\nAllow: /\n\nUser-agent: *\nDisallow: /p/\n")
    result = offline_site.check("--site-dir", str(offline_site.public))
    assert result.code == 0 and "keeps bingbot, SeznamBot, Yeti, YepBot, Amazonbot away from 1 URL" in result.out  # Yandex may
    (offline_site.public / "robots.txt").write_text("User-agent: *\nDisallow: /p/\n")
    result = offline_site.check("--site-dir", str(offline_site.public))
    assert result.code == 1 and f"error[url-robots-disallowed] {BASE}/p/0/" in result.out, result.out


def test_a_noindex_meta_for_one_engine_is_a_note_and_for_all_an_error(offline_site: Site) -> None:
    offline_site.write(urlset({"/a/": "2024-05-01", "/b/": "2024-05-01"}))
    offline_site.build_pages(["/"])
    for path, meta in (("a", '<meta name="yandex" content="noindex">'), ("b", '<meta name="robots" content="noindex">')):
        (offline_site.public / path).mkdir()
        (offline_site.public / path / "index.html").write_text(f"<html><head>{meta}</head><body></body></html>")
    result = offline_site.check("--site-dir", str(offline_site.public))
    assert re.findall(r"^error\[page-noindex\] (\S+):", result.out, re.MULTILINE) == [f"{BASE}/b/"]
    assert f"a robots meta keeps YandexBot away from 1 URL this deploy announces (e.g. {BASE}/a/)" in result.out


# -- held to protego --------------------------------------------------------------------------------

_AGENTS = ["*", "*WordPress*", "*Yeti*", "* bingbot"]
_AGENTS += ["bingbot", "Bingbot", "msnbot", "YandexBot", "Yandex", "SeznamBot", "Yeti", "YepBot", "Amazonbot", "GPTBot"]
_PATHS = ["/", "/a", "/a?", "/a/", "/a/b", "/ab", "/a.pdf", "/a?x=1", "/a/b.php", "/%7Ea", "/~a", "/a%2Fb", "/b", "/*", "/a$"]
_PATTERNS = ["/", "/a", "/a/", "/a*", "/*.pdf$", "/a$", "/*b", "/a/*.php", "/~a", "/%7ea", "/a?x", "", "*", "/a%2Fb", "/b"]


@st.composite
def robots_files(draw: st.DrawFn) -> str:
    lines = []
    for _ in range(draw(st.integers(1, 4))):
        for agent in draw(st.lists(st.sampled_from(_AGENTS), min_size=1, max_size=2)):
            lines.append(f"User-agent: {agent}")
        for _ in range(draw(st.integers(0, 4))):
            lines.append(f"{draw(st.sampled_from(['Allow', 'Disallow']))}: {draw(st.sampled_from(_PATTERNS))}")
        lines.append("")
    return "\n".join(lines)


def _documented_difference(text: str, crawler: str, path: str) -> str | None:
    """Why the two parsers may disagree on this file for this crawler and path, or None."""
    if "$" in path or "*" in path:
        return "a literal $ or * in the URL is %24 or %2A (RFC 9309 2.2.3); protego takes it for the rule's anchor or wildcard"
    agents = {line.split(":", 1)[1].strip().lower() for line in text.splitlines() if line.lower().startswith("user-agent")}
    if any(agent.startswith("*") and agent != "*" for agent in agents):
        return "a user agent beginning with * is * before white space, else no crawler's (Google); protego finds names inside it"
    if crawler == "bingbot" and "msnbot" in agents and "bingbot" not in agents:
        return "Bing obeys an msnbot group (protego knows no fallback)"
    return None


CHECKED: dict[str, int] = {"cases": 0, "agreed": 0, "documented": 0}


@pytest.mark.slow
@settings(max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=robots_files(), path=st.sampled_from(_PATHS))
def test_robots_agrees_with_protego(text: str, path: str) -> None:
    ours = Robots.parse(text)
    theirs = protego.Protego.parse(text)
    for crawler in INDEXNOW_CRAWLERS:
        CHECKED["cases"] += 1
        mine, reference = ours.allows(crawler, BASE + path), theirs.can_fetch(BASE + path, crawler)
        if mine == reference:
            CHECKED["agreed"] += 1
            continue
        why = _documented_difference(text, crawler, path)
        assert why is not None, f"{crawler} {path}: ours {mine}, protego {reference}\n{text}"
        CHECKED["documented"] += 1
