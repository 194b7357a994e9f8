"""RSS 2.0 and Atom 1.0 feeds read as sitemaps (the Sitemaps protocol accepts both): from a
path, a URL and as parts of an index, with the XML path's strictness; their dates take
part in the diff like lastmods."""

from __future__ import annotations

import datetime as dt
import email.utils
import re
from collections.abc import Mapping
from xml.sax.saxutils import escape

import pytest
from hypothesis import given
from hypothesis import strategies as st

from notifier.dates import parse_w3c, rfc822_to_w3c
from notifier.sitemap.reader import read_sitemap
from tests.conftest import BASE, Result, Site, index, urlset
from tests.fakeindexnow import FakeIndexNow

ATOM = "http://www.w3.org/2005/Atom"


def rss(items: Mapping[str, str | None], date_tag: str = "pubDate") -> str:
    rows = "".join(
        f"<item><title>t</title><link>{escape(loc if '://' in loc else BASE + loc)}</link>"
        + (f"<{date_tag}>{date}</{date_tag}>" if date is not None else "")
        + "<description>&lt;p&gt;text&lt;/p&gt;</description></item>\n"
        for loc, date in items.items()
    )
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n<rss version="2.0" xmlns:atom="http://www.w3.org/2005/Atom" '
        'xmlns:dc="http://purl.org/dc/elements/1.1/">\n<channel><title>Blog</title>'
        f"<link>{BASE}/</link><description>d</description>\n{rows}</channel></rss>\n"
    )


def atom(entries: Mapping[str, str | None]) -> str:
    rows = "".join(
        f'<entry><title>t</title><id>urn:{n}</id><link rel="edit" href="{BASE}/edit/{n}"/>'
        f'<link rel="alternate" type="text/html" href="{escape(loc if "://" in loc else BASE + loc)}"/>'
        + (f"<updated>{date}</updated>" if date is not None else "")
        + "</entry>\n"
        for n, (loc, date) in enumerate(entries.items())
    )
    return f'<?xml version="1.0" encoding="utf-8"?>\n<feed xmlns="{ATOM}"><title>Blog</title><id>urn:feed</id>\n{rows}</feed>\n'


def test_an_rss_item_without_a_date_has_no_lastmod_whatever_else_it_holds(offline_site: Site) -> None:
    path = offline_site.write(rss({"/a/": None, "/b/": "Wed, 01 May 2024 10:00:00 +0000"}), "feed.xml")
    assert [(entry.loc, entry.lastmod) for entry in read_sitemap(str(path)).entries] == [
        (BASE + "/a/", None),
        (BASE + "/b/", "2024-05-01T10:00:00Z"),
    ]


def test_an_atom_feed_names_its_site_by_its_alternate_link_not_its_self_link(offline_site: Site) -> None:
    """Atom's feed-level ``rel="self"`` is where the feed is served (often a feed service's
    host); the site is the link with ``rel="alternate"`` or no rel."""
    mirror = [f"https://mirror.feed-host.net/{n}/" for n in range(2)]
    for alternate in (f'<link rel="alternate" href="{BASE}/"/>', f'<link href="{BASE}/"/>'):
        feed = atom(dict.fromkeys([*mirror, "/a/"], "2024-05-01T10:00:00Z")).replace(
            "<id>urn:feed</id>", f'<id>urn:feed</id><link rel="self" href="https://mirror.feed-host.net/blog"/>{alternate}'
        )
        path = offline_site.write(feed, "feed.xml")
        result = offline_site.run(command="check", sitemap=str(path))
        flagged = re.findall(r"^error\[url-out-of-scope\] (\S+):", result.out, re.MULTILINE)
        assert result.code == 1 and flagged == mirror, result.out  # the site's own entry is in scope, however few


def added(result: Result) -> int:
    match = re.search(r"^(\d+) added, (\d+) changed", result.out, re.MULTILINE)
    assert match is not None, result.out
    return int(match.group(1))


def changed(result: Result) -> int:
    match = re.search(r"^(\d+) added, (\d+) changed", result.out, re.MULTILINE)
    assert match is not None, result.out
    return int(match.group(2))


@pytest.mark.parametrize(
    ("text", "w3c"),
    [
        ("Wed, 01 May 2024 12:00:00 +0200", "2024-05-01T12:00:00+02:00"),
        ("Wed, 01 May 2024 12:00:00 GMT", "2024-05-01T12:00:00Z"),
        ("01 May 2024 12:00 -0000", "2024-05-01T12:00:00Z"),
        ("Wed, 1 May 24 12:00:00 EDT", "2024-05-01T12:00:00-04:00"),
        ("Fri, 01 Jan 99 00:00:00 PST", "1999-01-01T00:00:00-08:00"),
        ("Thu, 01 May 2024 12:00:00 GMT", None),  # 1 May 2024 was a Wednesday
        ("Wed, 31 Apr 2024 12:00:00 GMT", None),
        ("Wed, 01 May 2024 24:00:00 GMT", None),
        ("Wed, 01 May 2024 12:00:00 +0260", None),
        ("Wed, 01 May 2024 12:00:00 XYZ", None),
        ("Wed, 01 Mai 2024 12:00:00 GMT", None),
        ("2024-05-01T12:00:00Z", None),
        ("Wed, 01 May 2024", None),
        ("", None),
    ],
)
def test_rfc_822_dates_are_parsed_strictly(text: str, w3c: str | None) -> None:
    assert rfc822_to_w3c(text) == w3c


@given(st.datetimes(min_value=dt.datetime(1950, 1, 1), max_value=dt.datetime(9999, 12, 30)), st.integers(-23 * 60, 23 * 60))
def test_rfc_822_round_trip(moment: dt.datetime, offset_minutes: int) -> None:
    zone = dt.timezone(dt.timedelta(minutes=offset_minutes))
    instant = moment.replace(microsecond=0, tzinfo=zone)
    written = email.utils.format_datetime(instant)
    converted = rfc822_to_w3c(written)
    assert converted is not None and parse_w3c(converted) == instant


@pytest.mark.parametrize("kind", ["rss", "atom", "rss-atom-updated", "rss-dc-date"])
def test_a_feed_is_read_as_a_sitemap(offline_site: Site, kind: str) -> None:
    items = {"/posts/a/": "2024-05-01T12:00:00Z", "/posts/b/": "2024-05-02T08:30:00+02:00"}
    if kind == "rss":
        feed = rss({"/posts/a/": "Wed, 01 May 2024 12:00:00 GMT", "/posts/b/": "Thu, 02 May 2024 08:30:00 +0200"})
    elif kind == "atom":
        feed = atom(items)
    else:
        feed = rss(items, "atom:updated" if kind == "rss-atom-updated" else "dc:date")
    path = offline_site.write(feed, "feed.xml")
    sitemap = read_sitemap(str(path))
    assert [(entry.loc, parse_w3c(entry.lastmod or "")) for entry in sitemap.entries] == [
        (BASE + loc, parse_w3c(date)) for loc, date in items.items()
    ]
    assert sitemap.files[0].kind == "urlset"


def test_a_feed_takes_part_in_the_diff(site: Site) -> None:
    feed = {"/posts/a/": "Wed, 01 May 2024 12:00:00 GMT", "/posts/b/": "Thu, 02 May 2024 08:30:00 GMT"}
    site.write(rss(feed), "feed.xml")
    feed_path = str(site.public / "feed.xml")
    first = site.run(sitemap=feed_path)
    assert first.code == 0 and added(first) == 2
    again = site.run(sitemap=feed_path)
    assert again.code == 0 and added(again) == 0 and changed(again) == 0  # an unchanged feed announces nothing
    feed["/posts/b/"] = "Fri, 03 May 2024 09:00:00 GMT"
    feed["/posts/c/"] = "Fri, 03 May 2024 10:00:00 GMT"
    site.write(rss(feed), "feed.xml")
    third = site.run(sitemap=feed_path)
    assert third.code == 0 and added(third) == 1 and changed(third) == 1
    assert site.fake is not None and sorted(site.fake.delivered()[-2:]) == [f"{BASE}/posts/b/", f"{BASE}/posts/c/"]


def test_a_feed_is_a_part_of_an_index(offline_site: Site) -> None:
    offline_site.write(atom({"/posts/a/": "2024-05-01T12:00:00Z"}), "atom.xml")
    offline_site.write(urlset({"/": "2024-05-01"}), "pages.xml")
    offline_site.write(index({"/pages.xml": None, "/atom.xml": None}))
    result = offline_site.check()
    assert result.code == 0 and added(result) == 2


def test_a_malformed_pub_date_is_lastmod_invalid(offline_site: Site) -> None:
    path = offline_site.write(rss({"/a/": "Thu, 01 May 2024 12:00:00 GMT", "/b/": "Wed, 01 May 2024 12:00:00 GMT"}), "feed.xml")
    result = offline_site.run(command="check", sitemap=str(path))
    assert result.code == 1
    assert re.findall(r"^error\[lastmod-invalid\] (\S+): ", result.out, re.MULTILINE) == [f"{BASE}/a/"]
    assert "a valid RFC 822 date (e.g. Wed" in result.out


def test_a_feed_keeps_the_xml_paths_strictness(offline_site: Site) -> None:
    doctype = rss({"/a/": None}).replace("<rss", '<!DOCTYPE rss [<!ENTITY x "y">]>\n<rss', 1)
    path = offline_site.write(doctype, "feed.xml")
    result = offline_site.run(command="check", sitemap=str(path))
    assert result.code == 2 and "DOCTYPE" in result.err
    no_link = rss({"/a/": None}).replace(f"<link>{BASE}/a/</link>", "")
    path = offline_site.write(no_link, "feed.xml")
    result = offline_site.run(command="check", sitemap=str(path))
    assert result.code == 1 and "<item> without a <link>" in result.out


def test_an_rss_1_0_or_other_document_is_still_refused(offline_site: Site) -> None:
    path = offline_site.write('<?xml version="1.0"?><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"/>', "feed.xml")
    result = offline_site.run(command="check", sitemap=str(path))
    assert result.code == 2 and "or an RSS 2.0 or Atom feed" in result.err


dates = st.datetimes(min_value=dt.datetime(2000, 1, 1), max_value=dt.datetime(2030, 1, 1)).map(
    lambda moment: moment.replace(microsecond=0, tzinfo=dt.UTC)
)


@pytest.mark.slow
@given(st.dictionaries(st.from_regex(r"/[a-z]{1,8}/[a-z0-9]{0,6}", fullmatch=True), st.none() | dates, max_size=20))
def test_a_feed_reads_as_the_same_sitemap(tmp_path_factory: pytest.TempPathFactory, pages: dict[str, dt.datetime | None]) -> None:
    """Property: a site's pages written as a sitemap, an Atom feed and an RSS feed read alike."""
    folder = tmp_path_factory.mktemp("feeds")
    w3c = {loc: moment.strftime("%Y-%m-%dT%H:%M:%SZ") if moment else None for loc, moment in pages.items()}
    (folder / "sitemap.xml").write_text(urlset(w3c))
    (folder / "atom.xml").write_text(atom(w3c))
    (folder / "rss.xml").write_text(rss({loc: email.utils.format_datetime(moment) if moment else None for loc, moment in pages.items()}))

    def read(name: str) -> list[tuple[str, dt.datetime | None]]:
        return [(entry.loc, parse_w3c(entry.lastmod) if entry.lastmod else None) for entry in read_sitemap(str(folder / name)).entries]

    assert read("atom.xml") == read("sitemap.xml") == read("rss.xml")


def test_feeds_by_url_alone_and_in_a_remote_index(fake: FakeIndexNow) -> None:
    host = f"127.0.0.1:{fake.port}"
    fake.sites[host] = {
        "/feed.rss": rss({"/a/": "Wed, 01 May 2024 12:00:00 GMT"}).encode(),  # answered as text/plain: still XML
        "/atom.xml": atom({"/b/": "2024-05-02T00:00:00Z", "/c/": "2024-05-03T00:00:00Z"}).encode(),
        "/index.xml": index({f"{fake.url}/feed.rss": None, "atom.xml": None}).encode(),
    }
    assert [entry.loc for entry in read_sitemap(f"{fake.url}/feed.rss").entries] == [f"{BASE}/a/"]
    assert [entry.lastmod for entry in read_sitemap(f"{fake.url}/atom.xml").entries] == ["2024-05-02T00:00:00Z", "2024-05-03T00:00:00Z"]
    assert len(read_sitemap(f"{fake.url}/index.xml").entries) == 3


def test_a_feed_over_the_size_cap_is_refused(offline_site: Site, monkeypatch: pytest.MonkeyPatch) -> None:
    import notifier.sitemap.source

    monkeypatch.setattr(notifier.sitemap.source, "MAX_FILE_BYTES", 4096)
    path = offline_site.write(rss({f"/p{n}/": "Wed, 01 May 2024 12:00:00 GMT" for n in range(100)}), "feed.xml")
    result = offline_site.run(command="check", sitemap=str(path))
    assert result.code == 2 and "over the sitemap limit of 4096 bytes" in result.err


@pytest.mark.parametrize(
    ("zone", "offset"),
    [("UT", "Z"), ("GMT", "Z"), ("Z", "Z"), ("EST", "-05:00"), ("EDT", "-04:00"), ("CST", "-06:00"), ("CDT", "-05:00"),
     ("MST", "-07:00"), ("MDT", "-06:00"), ("PST", "-08:00"), ("PDT", "-07:00"), ("+0000", "Z"), ("-0000", "Z"),
     ("+0530", "+05:30"), ("-2359", "-23:59"), ("+2400", None), ("+0060", None), ("XST", None), ("A", "Z")],
)  # fmt: skip
def test_rfc_822_zones(zone: str, offset: str | None) -> None:
    assert rfc822_to_w3c(f"Wed, 01 May 2024 12:00:00 {zone}") == (f"2024-05-01T12:00:00{offset}" if offset else None)


@pytest.mark.parametrize(
    ("text", "w3c"),
    [("01 Jan 49 00:00 GMT", "2049-01-01T00:00:00Z"), ("01 Jan 50 00:00 GMT", "1950-01-01T00:00:00Z"),
     ("29 Feb 2024 00:00 GMT", "2024-02-29T00:00:00Z"), ("29 Feb 2023 00:00 GMT", None),
     *[(f"01 {month} 2024 00:00 GMT", f"2024-{number:02d}-01T00:00:00Z") for number, month in
       enumerate(["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"], start=1)],
     *[(f"{day}, 0{number} Jan 2024 00:00 GMT", f"2024-01-0{number}T00:00:00Z") for number, day in
       enumerate(["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"], start=1)],
     ("Mon, 02 Jan 2024 00:00 GMT", None), ("Sun, 01 Jan 2024 00:00 GMT", None),
     ("01 Jan 2024 23:59:59 GMT", "2024-01-01T23:59:59Z"), ("01 Jan 2024 23:60 GMT", None),
     ("01 Jan 2024 23:59:60 GMT", "2024-01-01T23:59:59Z")],  # a leap second (RFC 2822 3.3)
)  # fmt: skip
def test_rfc_822_years_months_weekdays_and_clock(text: str, w3c: str | None) -> None:
    assert rfc822_to_w3c(text) == w3c
