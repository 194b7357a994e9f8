"""What an item of a sitemap or feed says, where a mutant of sitemap/items.py once went
unnoticed (issue #44): the child written twice that a finding names, a feed's RFC 822 date
only where RSS puts it, RFC 3986's dot segments in every branch of a resolution, and stamp's
reading of a file larger than the parser's 1 MiB bites."""

from __future__ import annotations

import pytest
from lxml import etree

from notifier.errors import InputError
from notifier.sitemap.items import ATOM, NS_09, feed_item, readings, resolve
from notifier.sitemap.reader import read_sitemap
from tests.conftest import BASE, Site, index

CHUNK = 1 << 20  # the bites _events feeds the parser
RFC_822 = "Wed, 01 May 2024 12:00:00 GMT"
DC = "http://purl.org/dc/elements/1.1/"


def test_a_url_with_two_locs_and_two_lastmods_is_said_to_have_two_locs(offline_site: Site) -> None:
    """The loc is what the URL is, so two locs are the finding (url-invalid) even when the
    lastmod is written twice as well. Fails if ``repeated or "lastmod"`` becomes
    ``"lastmod"`` in sitemap/items.py::url_item."""
    sitemap = (
        f'<urlset xmlns="{NS_09}"><url><loc>{BASE}/a/</loc><loc>{BASE}/b/</loc>'
        "<lastmod>2024-05-01</lastmod><lastmod>2024-05-02</lastmod></url></urlset>"
    )
    found = read_sitemap(str(offline_site.write(sitemap))).findings
    assert [(finding.rule, finding.url) for finding in found] == [("url-invalid", f"{BASE}/a/")]
    assert "two <loc> in one <url>; only the first was read" in found[0].message


@pytest.mark.parametrize(
    ("item", "tag"),
    [
        (f'<entry xmlns="{ATOM}"><link href="{BASE}/a/"/><updated>{RFC_822}</updated></entry>', f"{{{ATOM}}}updated"),
        (f'<item xmlns:dc="{DC}"><link>{BASE}/a/</link><dc:date>{RFC_822}</dc:date></item>', f"{{{DC}}}date"),
    ],
)
def test_an_rfc_822_date_is_read_only_from_pub_date(item: str, tag: str) -> None:
    """Atom's <updated> and <dc:date> are W3C Datetimes: an RFC 822 date there stays as
    written, for lastmod-invalid to say so; it is not turned into the W3C Datetime it would
    be in a <pubDate>. Fails if ``written is not None and date_tag == "pubDate"`` becomes
    ``written is not None`` in sitemap/items.py::feed_item."""
    read = feed_item(etree.fromstring(item), "")
    assert (read.loc, read.date_tag) == (f"{BASE}/a/", tag)
    assert read.lastmod == read.written == RFC_822


def test_an_rfc_822_updated_is_lastmod_invalid(offline_site: Site) -> None:
    """The same, as check reports it (the pubDate beside it, in RSS, is a lastmod)."""
    feed = f'<feed xmlns="{ATOM}"><title>t</title><entry><link href="{BASE}/a/"/><updated>{RFC_822}</updated></entry></feed>'
    result = offline_site.run(command="check", sitemap=str(offline_site.write(feed, "atom.xml")))
    assert result.code == 1 and f"error[lastmod-invalid] {BASE}/a/: " in result.out


@pytest.mark.parametrize(
    ("base", "reference", "target"),
    [
        # 5.2.2: a reference with a scheme has its own dot segments removed (fails if
        # ``path = _remove_dot_segments(path)`` under ``scheme is not None`` is removed)
        ("http://a/b/c/d;p?q", "http://x/a/../b/./c", "http://x/b/c"),
        ("http://a/b", "x:../a", "x:a"),  # a leading "../" of a path that is no "/..."
        ("http://a/b", "x:../ab", "x:ab"),  # fails if ``path[3:]`` becomes ``path[4:]``
        ("http://a/b", "x:..", "x:"),  # fails if ``path = ""`` for "." or ".." goes (a loop) or raises
        ("http://a/b", "x:.", "x:"),
        # ... and so has one with an authority (the same, under ``authority is not None``)
        ("http://a/b/c/d;p?q", "//g/x/../y", "http://g/y"),
        # 5.2.3: a base with an authority and an empty path merges as "/" + the reference
        # (fails if ``base_authority is not None`` becomes ``is None``, or ``base_path == ""``
        # compares with another text)
        ("http://a", "g", "http://a/g"),
        ("http://a?q", "g/../h", "http://a/h"),
        # ... and one without an authority, as the base's path up to its last "/": nothing
        # (fails if the ``base_authority is not None and`` side is dropped)
        ("urn:", "g", "urn:g"),
        ("urn:", "..", "urn:"),
        # 5.2.4: a one-character segment ("/") before "/.." is the one removed (fails if
        # ``path.find("/", 1)`` becomes ``path.find("/", 2)`` in _remove_dot_segments)
        ("http://a/b/c", "/a//../x", "http://a/a/x"),
    ],
)
def test_dot_segments_go_in_every_branch_of_a_resolution(base: str, reference: str, target: str) -> None:
    assert resolve(base, reference) == target


def test_an_xml_base_with_dot_segments_is_normalized(offline_site: Site) -> None:
    """An absolute ``xml:base`` is resolved against the URL the feed is served at like any
    reference: its dot segments go, and an empty link names that base (the case where no
    merge removes them later)."""
    feed = f'<feed xmlns="{ATOM}" xml:base="http://example.org/a/../b/"><title>t</title><entry><link href=""/></entry></feed>'
    offline_site.write(feed, "feeds/atom.xml")
    offline_site.write(index({"/feeds/atom.xml": None}))
    assert [entry.loc for entry in read_sitemap(str(offline_site.sitemap)).entries] == ["http://example.org/b/"]


def _big(count: int, width: int) -> tuple[bytes, list[str]]:
    """A urlset of ``count`` items, each ``width`` bytes long (so that one of them can be made
    to straddle a 1 MiB bite), and their locs."""
    head = f'<urlset xmlns="{NS_09}">\n'
    locs, rows = [], []
    for number in range(count):
        row = f"<url><loc>{BASE}/{number}/</loc><lastmod>2024-05-01</lastmod></url>"
        pad = width - len(row) - 1
        loc = f"{BASE}/{number}/{'x' * pad}"
        locs.append(loc)
        rows.append(f"<url><loc>{loc}</loc><lastmod>2024-05-01</lastmod></url>\n")
    return (head + "".join(rows) + "</urlset>\n").encode(), locs


def test_stamp_reads_every_item_of_a_file_larger_than_one_bite() -> None:
    """A 1.5 MiB sitemap is fed to the parser in 1 MiB bites, each once and all of them; the
    item that straddles the first bite's end is read whole (at its end, not its start).
    Fails if in sitemap/items.py::_events the slice ``start : start + (1 << 20)`` loses a
    bound or either ``1 << 20`` changes; or if in ::readings ``event == "end"`` becomes
    ``!=``, or ``del parent[:-1]`` becomes ``del parent[:]``."""
    width = 1000
    data, locs = _big(1536, width)
    head = data.index(b"<url>")
    straddling = (CHUNK - head) // width
    assert head + straddling * width < CHUNK < head + (straddling + 1) * width - 60  # its <lastmod> is in the second bite
    found = readings(data, "", "sitemap.xml")
    assert [reading.loc for reading in found] == locs
    assert {(reading.date, reading.page_at, reading.date_at) for reading in found} == {("2024-05-01", 0, 1)}


def test_a_file_cut_short_is_not_well_formed() -> None:
    """The parser is closed after the last bite, so a file missing its end is refused, not
    read as the items before the cut. Fails if ``parser.close()`` is left out in
    sitemap/items.py::_events."""
    with pytest.raises(InputError, match=r"^sitemap\.xml: not well-formed XML \(.*\); fix it, then run stamp again$"):
        readings(f'<urlset xmlns="{NS_09}"><url><loc>{BASE}/a/</loc></url>'.encode(), "", "sitemap.xml")


def test_an_element_an_item_lacks_is_at_minus_one() -> None:
    """Reading's documented "-1: none" for an item without a date (or a page). Fails if
    ``-1`` becomes ``-2`` in sitemap/items.py::_index."""
    rss = f"<rss><channel><item><link>{BASE}/a/</link></item><item><pubDate>{RFC_822}</pubDate></item></channel></rss>"
    found = readings(rss.encode(), "", "feed.xml")
    assert [(reading.loc, reading.page_at, reading.date_at) for reading in found] == [(f"{BASE}/a/", 0, -1), (None, -1, 0)]


@pytest.mark.parametrize(
    ("given", "left"),
    [("../a/b", "a/b"), ("./a", "a"), (".", ""), ("..", ""), ("../../a", "a"), ("/a/b/../../..", "/")],
)
def test_relative_dot_segments_at_the_start_are_removed_as_rfc_3986_5_2_4_step_a_says(given: str, left: str) -> None:
    """A path that starts with ``../`` or ``./``, or is only ``.`` or ``..`` (reachable when a base
    has no path), loses those segments (edits: ``path = path[3:]`` or ``path = ""`` removed, which
    loops for ever; ``3:`` losing its lower bound)."""
    from notifier.sitemap.items import _remove_dot_segments

    assert _remove_dot_segments(given) == left
