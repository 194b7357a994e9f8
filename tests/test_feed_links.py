"""Feeds read as RFC 4287, RFC 3986 and RFC 2822 say (issue #40, item 11): a relative link
resolved against ``xml:base``, the IANA IRI of ``alternate``, and RFC 2822's obsolete dates.
Each minimal input has the answer beside it, and feedparser 6.0.14's (the reference) where
it differs, with the reason."""

from __future__ import annotations

import re

import pytest

from notifier.dates import rfc822_to_w3c
from notifier.sitemap.items import resolve
from notifier.sitemap.reader import read_sitemap
from tests.conftest import BASE, Site, index

ATOM = "http://www.w3.org/2005/Atom"


def _links(site: Site, feed: str, name: str = "feed.xml") -> list[str]:
    return [entry.loc for entry in read_sitemap(str(site.write(feed, name))).entries]


def _atom(entries: str, base: str = ' xml:base="http://example.org/blog/"') -> str:
    return f'<feed xmlns="{ATOM}"{base}><title>t</title>{entries}</feed>'


@pytest.mark.parametrize(
    ("entry", "link", "reference"),
    [
        # xml:base nests: the entry's is resolved against the feed's (feedparser alike)
        ('<entry xml:base="2024/"><link href="a/"/></entry>', "http://example.org/blog/2024/a/", "same"),
        # the link's own xml:base applies to its href (feedparser alike)
        ('<entry><link xml:base="/x/" href="b"/></entry>', "http://example.org/x/b", "same"),
        # RFC 4287 4.2.7.2: a registered name stands for the IANA IRI; feedparser takes no link
        ('<entry><link rel="http://www.iana.org/assignments/relation/alternate" href="c"/></entry>', "http://example.org/blog/c", None),
        ('<entry><link rel="ALTERNATE" href="e"/></entry>', "http://example.org/blog/e", "same"),
        # XML white space around the href is trimmed, as around every loc; feedparser keeps the trailing one
        ('<entry><link href=" d "/></entry>', "http://example.org/blog/d", "http://example.org/blog/d "),
        # RFC 3986 keeps an empty query; feedparser (urljoin) drops the "?"
        ('<entry><link href="../../c/./d?"/></entry>', "http://example.org/c/d?", "http://example.org/c/d"),
        # an absolute href is taken as written, whatever the base
        ('<entry><link href="https://other.org/a/../b"/></entry>', "https://other.org/a/../b", "same"),
        ('<entry><link href="//other.org/x"/></entry>', "http://other.org/x", "same"),
        # an edit link is no page; an empty rel names no relation (feedparser alike)
        ('<entry><link rel="edit" href="edit/1"/><link rel="" href="f"/><link href="g"/></entry>', "http://example.org/blog/g", "same"),
    ],
)
def test_an_atom_link_is_resolved_against_xml_base(offline_site: Site, entry: str, link: str, reference: str | None) -> None:
    assert _links(offline_site, _atom(entry)) == [link]


def test_an_rss_link_is_resolved_against_xml_base_too(offline_site: Site) -> None:
    """XML Base is XML's, not Atom's: RSS ``<link>`` and ``<atom:link>`` in an item alike
    (feedparser: the same three URLs)."""
    feed = (
        f'<rss version="2.0" xml:base="http://example.org/blog/" xmlns:atom="{ATOM}"><channel><title>t</title><link>home/</link>'
        '<item xml:base="2024/"><link>a/</link></item>'
        '<item><atom:link rel="alternate" href="b/"/></item><item><atom:link href="c/"/></item></channel></rss>'
    )
    assert _links(offline_site, feed) == ["http://example.org/blog/2024/a/", "http://example.org/blog/b/", "http://example.org/blog/c/"]


def test_a_relative_base_is_resolved_against_the_url_the_feed_is_served_at(offline_site: Site) -> None:
    """RFC 3986 5.1: the outermost base is the document's URL (here the one the index lists
    the feed under). feedparser, given the feed's Content-Location, resolves alike. A local
    feed whose URL is not known keeps a relative link relative: url-invalid says so."""
    offline_site.write(_atom('<entry><link href="a/"/></entry>', ' xml:base="sub/"'), "feeds/atom.xml")
    offline_site.write(index({"/feeds/atom.xml": None}))
    assert [entry.loc for entry in read_sitemap(str(offline_site.sitemap)).entries] == [f"{BASE}/feeds/sub/a/"]
    assert _links(offline_site, _atom('<entry><link href="a/"/></entry>', ' xml:base="sub/"')) == ["sub/a/"]
    result = offline_site.run(command="check", sitemap=str(offline_site.public / "feed.xml"))
    assert result.code == 1 and "error[url-invalid] sub/a/" in result.out


def test_a_feeds_own_site_link_is_resolved_alike(offline_site: Site) -> None:
    """The feed-level alternate names the site (its scope): read by the same function, so a
    relative one is resolved too, and the entries on another host are the ones out of scope."""
    mirror = [f"https://mirror.feed-host.net/{n}/" for n in range(2)]
    entries = "".join(f'<entry><link href="{loc}"/></entry>' for loc in [*mirror, f"{BASE}/a/"])
    feed = _atom(f'<link href="/"/>{entries}', f' xml:base="{BASE}/blog/"')
    result = offline_site.run(command="check", sitemap=str(offline_site.write(feed, "feed.xml")))
    assert re.findall(r"^error\[url-out-of-scope\] (\S+):", result.out, re.MULTILINE) == mirror, result.out


# RFC 3986 5.4: the base and every example, normal and abnormal, with the RFC's answers.
RFC_3986_BASE = "http://a/b/c/d;p?q"
RFC_3986_EXAMPLES = {
    "g:h": "g:h", "g": "http://a/b/c/g", "./g": "http://a/b/c/g", "g/": "http://a/b/c/g/", "/g": "http://a/g",
    "//g": "http://g", "?y": "http://a/b/c/d;p?y", "g?y": "http://a/b/c/g?y", "#s": "http://a/b/c/d;p?q#s",
    "g#s": "http://a/b/c/g#s", "g?y#s": "http://a/b/c/g?y#s", ";x": "http://a/b/c/;x", "g;x": "http://a/b/c/g;x",
    "g;x?y#s": "http://a/b/c/g;x?y#s", "": "http://a/b/c/d;p?q", ".": "http://a/b/c/", "./": "http://a/b/c/",
    "..": "http://a/b/", "../": "http://a/b/", "../g": "http://a/b/g", "../..": "http://a/", "../../": "http://a/",
    "../../g": "http://a/g", "../../../g": "http://a/g", "../../../../g": "http://a/g", "/./g": "http://a/g",
    "/../g": "http://a/g", "g.": "http://a/b/c/g.", ".g": "http://a/b/c/.g", "g..": "http://a/b/c/g..",
    "..g": "http://a/b/c/..g", "./../g": "http://a/b/g", "./g/.": "http://a/b/c/g/", "g/./h": "http://a/b/c/g/h",
    "g/../h": "http://a/b/c/h", "g;x=1/./y": "http://a/b/c/g;x=1/y", "g;x=1/../y": "http://a/b/c/y",
    "g?y/./x": "http://a/b/c/g?y/./x", "g?y/../x": "http://a/b/c/g?y/../x", "g#s/./x": "http://a/b/c/g#s/./x",
    "g#s/../x": "http://a/b/c/g#s/../x", "http:g": "http:g",
}  # fmt: skip


@pytest.mark.parametrize(("reference", "target"), sorted(RFC_3986_EXAMPLES.items()))
def test_references_resolve_as_rfc_3986_section_5_4_says(reference: str, target: str) -> None:
    assert resolve(RFC_3986_BASE, reference) == target


def test_a_reference_without_a_base_stays_as_written() -> None:
    assert resolve("", "../a/") == "../a/"
    assert resolve("sub/", "a/") == "sub/a/"  # a relative base: merged, still relative


@pytest.mark.parametrize(
    ("text", "w3c", "feedparser"),
    [
        # RFC 2822 4.3: military zones "SHOULD all be considered equivalent to -0000" (UTC,
        # the offset unknown): RFC 822 gave their signs backwards. feedparser reads A as -1,
        # N as +1, and any other unknown zone (J too) as UTC.
        ("Wed, 01 May 2024 12:00:00 A", "2024-05-01T12:00:00Z", "2024-05-01T13:00:00Z"),
        ("Wed, 01 May 2024 12:00:00 N", "2024-05-01T12:00:00Z", "2024-05-01T11:00:00Z"),
        ("Wed, 01 May 2024 12:00:00 k", "2024-05-01T12:00:00Z", "2024-05-01T12:00:00Z"),
        ("Wed, 01 May 2024 12:00:00 J", None, "2024-05-01T12:00:00Z"),  # J is no zone
        # RFC 2822 3.3: second 60 is a leap second (read as :59, on its day and minute); feedparser: none
        ("Sat, 31 Dec 2016 23:59:60 GMT", "2016-12-31T23:59:59Z", None),
        ("Sat, 31 Dec 2016 23:60:00 GMT", None, None),
        # RFC 2822 4.3: a three-digit year is 1900 later; feedparser: the year 124
        ("Wed, 01 May 124 12:00:00 GMT", "2024-05-01T12:00:00Z", "0124-05-01T12:00:00Z"),
        # two digits: 00-49 are 20YY, 50-99 19YY; feedparser: below 90 is 20YY (and ignores the weekday)
        ("Sun, 01 May 60 12:00:00 GMT", "1960-05-01T12:00:00Z", "2060-05-01T12:00:00Z"),
        ("Sat, 01 Jan 00 00:00 +0000", "2000-01-01T00:00:00Z", "2000-01-01T00:00:00Z"),
        # RFC 2822 3.2.3: comments nest, hold quoted pairs, and stand wherever CFWS does
        ("Fri, 14 Mar 2025 10:20:00 +0100 (CET (Central (European)) Time)", "2025-03-14T10:20:00+01:00", "2025-03-14T09:20:00Z"),
        ("Fri, (x) 14 Mar 2025 10:20:00 +0100", "2025-03-14T10:20:00+01:00", None),
        ("Fri, 14(x)Mar(y)2025 10:20:00 +0100(CET)", "2025-03-14T10:20:00+01:00", None),
        ("Fri, 14 Mar 2025 10:20:00 +0100 (a \\) b)", "2025-03-14T10:20:00+01:00", "2025-03-14T09:20:00Z"),
        ("Fri, 14 Mar 2025 10:20:00 +0100 (a ) b)", None, "2025-03-14T09:20:00Z"),  # one ")" too many
        ("Fri, 14 Mar 2025 10:20:00 +0100 ((CET)", None, "2025-03-14T09:20:00Z"),
        # the obsolete syntax's white space around the comma and the colons
        ("Fri , 14 Mar 2025 10 : 20 : 00 +0100", "2025-03-14T10:20:00+01:00", None),
    ],
)
def test_rfc_2822_obsolete_dates(text: str, w3c: str | None, feedparser: str | None) -> None:
    assert rfc822_to_w3c(text) == w3c


def test_an_rss_date_in_the_obsolete_syntax_is_a_lastmod(offline_site: Site) -> None:
    feed = (
        '<rss version="2.0"><channel><title>t</title><link>http://example.org/</link>'
        "<item><link>http://example.org/a/</link><pubDate>Sat, 31 Dec 2016 23:59:60 (leap (second)) Z</pubDate></item>"
        "</channel></rss>"
    )
    (entry,) = read_sitemap(str(offline_site.write(feed, "feed.xml"))).entries
    assert entry.lastmod == "2016-12-31T23:59:59Z"
