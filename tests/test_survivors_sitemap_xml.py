"""What notifier/sitemap/xml.py says that the mutation run found no test stating (#44): an
index part's findings name the URL the index lists it under, an undefined entity's message says
what it likely is, a feed's own site link is only one before its first item, an
<xhtml:link> without rel is no alternate (and no crash), and a repeated <lastmod> in a <url>
without <loc> is named by file and line. Each test names the edit it catches."""

from __future__ import annotations

import pytest

from notifier.errors import InputError
from notifier.sitemap.reader import read_sitemap
from notifier.sitemap.source import CHUNK
from tests.conftest import BASE, NS, Site, index

PART = f"{BASE}/part.xml"
XHTML = "http://www.w3.org/1999/xhtml"


def _part_findings(site: Site, part: str) -> dict[str, list[str]]:
    """The findings of reading an index that lists ``part`` (written as public/part.xml) under
    its public URL: rule -> the URLs they name."""
    site.write(index({"/part.xml": None}))
    site.write(part.encode("latin-1"), "part.xml")
    found: dict[str, list[str]] = {}
    for finding in read_sitemap(str(site.sitemap)).findings:
        found.setdefault(finding.rule, []).append(finding.url)
    return found


def test_a_parts_encoding_and_namespace_findings_name_its_public_url(offline_site: Site) -> None:
    """fails if ``self.info.public_url or self.location`` loses its first side in
    sitemap/xml.py::_XmlFile._judge_encoding or ::_XmlFile._root"""
    part = f'<?xml version="1.0" encoding="ISO-8859-1"?>\n<urlset><url><loc>{BASE}/a/</loc></url></urlset>\n'
    found = _part_findings(offline_site, part)
    assert found["sitemap-encoding"] == [PART]
    assert found["sitemap-namespace"] == [PART]


def test_the_count_of_a_parts_further_bad_values_names_its_public_url(offline_site: Site) -> None:
    """The first twenty name their URLs; "and 2 more such values" names the file, as the index
    lists it. fails if ``self.info.public_url or location`` loses its first side in
    sitemap/xml.py::_XmlFile.read"""
    rows = "".join(f"<url><loc>{BASE}/p{n}/</loc><priority>5</priority></url>" for n in range(22))
    found = _part_findings(offline_site, f'<urlset xmlns="{NS}">{rows}</urlset>')
    assert found["sitemap-values"] == [f"{BASE}/p{n}/" for n in range(20)] + [PART]


def test_an_undefined_entity_is_said_to_be_the_likely_cause(offline_site: Site) -> None:
    """libxml2 says only "no element found", at no line: the message names what it likely is.
    fails if ``reason = f"{reason}: an entity XML does not define, ..."`` is removed in
    sitemap/xml.py::_XmlFile._failure"""
    offline_site.write(f'<?xml version="1.0"?>\n<urlset xmlns="{NS}"><url><loc>{BASE}/caf&nbsp;/</loc></url></urlset>\n')
    with pytest.raises(InputError) as raised:
        read_sitemap(str(offline_site.sitemap))
    assert str(raised.value) == (
        f"{offline_site.sitemap}, after line 2: not well-formed XML (no element found: an entity XML does not define, "
        "such as &nbsp;, or cut-off data); fix the sitemap generator (notify-changes never guesses at broken XML)"
    )


def test_a_feeds_site_link_is_read_once_at_its_first_item(offline_site: Site) -> None:
    """A feed with no site link where its first item ends (here: none in its first MiB, the
    first chunk read) has none: a channel <link> further on, past other items, is not taken.
    fails if ``_site_link(element.getparent(), self.base) or ""`` loses ``or ""`` in
    sitemap/xml.py::_XmlFile._handle (the link would be looked for again at every item)"""
    items = "".join(f"<item><link>{BASE}/p/{n}/</link></item>" for n in range(CHUNK // 40))
    feed = f'<rss version="2.0"><channel><title>t</title>{items}<link>http://other.example/</link><item><link>{BASE}/b/</link></item></channel></rss>'
    assert len(feed) > CHUNK
    read = read_sitemap(str(offline_site.write(feed, "feed.xml")))
    assert read.entries[-1].loc == f"{BASE}/b/" and len(read.entries) == CHUNK // 40 + 1
    assert read.files[0].site_url == ""
    first = feed.replace("<title>t</title>", "<title>t</title><link>http://other.example/</link>", 1)
    assert read_sitemap(str(offline_site.write(first, "feed.xml"))).files[0].site_url == "http://other.example/"


def test_an_xhtml_link_without_rel_is_no_alternate(offline_site: Site) -> None:
    """fails (an AttributeError on None) if ``child.get("rel") or ""`` loses ``or ""`` in
    sitemap/xml.py::_XmlFile._other_children"""
    offline_site.write(
        f'<urlset xmlns="{NS}" xmlns:xhtml="{XHTML}"><url><loc>{BASE}/en/</loc>'
        f'<xhtml:link hreflang="de" href="{BASE}/de/"/><xhtml:link rel="alternate" hreflang="fr" href="{BASE}/fr/"/>'
        "</url></urlset>"
    )
    read = read_sitemap(str(offline_site.sitemap))
    assert read.files[0].alternates == {f"{BASE}/en/": [("fr", f"{BASE}/fr/")]}


def test_two_lastmods_in_a_url_without_loc_are_named_by_file_and_line(offline_site: Site) -> None:
    """fails if ``loc or f"{self.location}:{line}"`` loses its second side in
    sitemap/xml.py::_XmlFile._repeated"""
    offline_site.write(f'<urlset xmlns="{NS}">\n<url>\n<lastmod>2024-05-01</lastmod><lastmod>2024-05-02</lastmod>\n</url>\n</urlset>\n')
    read = read_sitemap(str(offline_site.sitemap))
    where = f"{offline_site.sitemap}:2"
    assert sorted(read.findings) == sorted(
        [
            ("lastmod-invalid", where, f"{offline_site.sitemap}, line 2: two <lastmod> in one <url>; only the first was read"),
            ("url-invalid", where, "<url> without a <loc>"),
        ]
    )
