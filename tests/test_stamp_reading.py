"""``stamp`` reads each page's URL and date as the reader does, and writes a date where the
reader reads it (issue #40, item 12). Each input is the minimal one; the answer beside it is
the reader's own: stamped, the file reads back with the page's date."""

from __future__ import annotations

import pytest

from notifier.dates import parse_w3c
from notifier.sitemap.reader import read_sitemap
from tests.conftest import BASE, NS, Site
from tests.test_history import Repo
from tests.test_stamp import BUILD_CLOCK, stamp

COMMIT = "2025-04-02T08:00:00Z"
PAGE = f"{BASE}/posts/tea/"
ATOM = "http://www.w3.org/2005/Atom"


@pytest.fixture
def tea(offline_site: Site) -> Site:
    """One page, /posts/tea/, whose source's last commit is COMMIT."""
    Repo(offline_site.root).commit({"content/posts/tea.md": "---\ntitle: Tea\n---\n"}, COMMIT)
    (offline_site.root / "notify-changes.toml").write_text('[history]\npreset = "hugo"\n')
    return offline_site


def _read_back(site: Site) -> list[tuple[str, object]]:
    return [(entry.loc, parse_w3c(entry.lastmod) if entry.lastmod else None) for entry in read_sitemap(str(site.sitemap)).entries]


def _atom(entry: str, base: str = "") -> str:
    return f'<feed xmlns="{ATOM}"{base}><title>Tea</title><entry><title>Tea</title>{entry}</entry></feed>'


def _rss(item: str) -> str:
    return f'<rss version="2.0" xmlns:atom="{ATOM}"><channel><title>Tea</title><item><title>Tea</title>{item}</item></channel></rss>'


def _urlset(url: str) -> str:
    return f'<urlset xmlns="{NS}"><url>{url}</url></urlset>'


@pytest.mark.parametrize(
    ("feed", "stamped"),
    [
        # a link written with an end tag: the new <updated> goes after it, not inside
        (_atom(f'<link href="{PAGE}"></link><id>tea</id>'), f'<link href="{PAGE}"></link><updated>{COMMIT}</updated><id>'),
        # an href with white space around it, as the reader trims it
        (_atom(f'<link href=" {PAGE} "/>'), f'<link href=" {PAGE} "/><updated>{COMMIT}</updated>'),
        # an attribute holding ">" before the href
        (_atom(f'<link title="a > b" href="{PAGE}"/>'), f'<link title="a > b" href="{PAGE}"/><updated>{COMMIT}</updated>'),
        # the IANA IRI of alternate, and a link relative to xml:base
        (
            _atom('<link rel="http://www.iana.org/assignments/relation/alternate" href="tea/"/>', f' xml:base="{BASE}/posts/"'),
            f'href="tea/"/><updated>{COMMIT}</updated>',
        ),
        # an entry's own <updated>, not its <source>'s (the reader reads the entry's children)
        (
            _atom(
                f'<source><id>s</id><updated>2020-01-01T00:00:00Z</updated></source><link href="{PAGE}"/><updated>{BUILD_CLOCK}</updated>'
            ),
            f'<updated>2020-01-01T00:00:00Z</updated></source><link href="{PAGE}"/><updated>{COMMIT}</updated>',
        ),
        # an RSS item whose only page link is <atom:link rel="alternate">
        (
            _rss(f'<atom:link rel="alternate" href="{PAGE}"/><guid>tea</guid>'),
            f'<atom:link rel="alternate" href="{PAGE}"/><pubDate>Wed, 02 Apr 2025 08:00:00 +0000</pubDate><guid>',
        ),
        # a loc holding a comment, a processing instruction, a CDATA section
        (_urlset(f"<loc>{BASE}/posts/<!-- x -->tea/</loc>"), f"<!-- x -->tea/</loc><lastmod>{COMMIT}</lastmod>"),
        (_urlset(f"<loc>{BASE}/posts/<?pi x?>tea/</loc><lastmod/>"), f"<?pi x?>tea/</loc><lastmod>{COMMIT}</lastmod>"),
        (_urlset(f"<loc><![CDATA[{BASE}/posts/]]>tea/</loc>"), f"tea/</loc><lastmod>{COMMIT}</lastmod>"),
    ],
)
def test_stamp_reads_the_page_as_the_reader_and_writes_the_date_where_it_reads_it(tea: Site, feed: str, stamped: str) -> None:
    tea.write(feed)
    assert _read_back(tea) == [(PAGE, parse_w3c(BUILD_CLOCK) if BUILD_CLOCK in feed else None)]
    result = stamp(tea)
    assert result.code == 0 and "rewrote 1 date(s) in 1 file(s)" in result.out, result.out + result.err
    assert stamped in tea.sitemap.read_text()
    assert _read_back(tea) == [(PAGE, parse_w3c(COMMIT))]
    assert "rewrote 0 date(s)" in stamp(tea).out  # and it stamps to itself


def test_a_loc_after_a_no_break_space_is_no_page_for_stamp_either(tea: Site) -> None:
    """The reader keeps U+00A0 (XML white space is only space, tab, CR and LF), and
    url-invalid names it; stamp, trimming alike, maps no page and says so."""
    feed = _urlset(f"<loc>\u00a0{PAGE}</loc><lastmod>{BUILD_CLOCK}</lastmod>")
    tea.write(feed)
    result = stamp(tea)
    assert result.code == 0 and "rewrote 0 date(s)" in result.out and "1 page(s) left as they were" in result.out, result.out
    assert tea.sitemap.read_text() == feed
    assert "error[url-invalid]" in tea.check().out


def test_an_index_listing_its_parts_by_relative_locs_takes_their_dates(tea: Site) -> None:
    """A static exporter's index (Yoast through Staatic: ``<loc>post-sitemap.xml</loc>``):
    the reader finds the part beside the index, and stamp dates it from that part."""
    tea.write(_urlset(f"<loc>{PAGE}</loc><lastmod>{BUILD_CLOCK}</lastmod>"), "posts/post-sitemap.xml")
    tea.write(
        f'<sitemapindex xmlns="{NS}"><sitemap><loc>posts/post-sitemap.xml</loc><lastmod>{BUILD_CLOCK}</lastmod></sitemap></sitemapindex>'
    )
    result = stamp(tea)
    assert result.code == 0 and "rewrote 2 date(s) in 2 file(s)" in result.out, result.out + result.err
    assert f"<loc>posts/post-sitemap.xml</loc><lastmod>{COMMIT}</lastmod>" in tea.sitemap.read_text()


def test_an_item_naming_no_page_keeps_the_others_in_step(tea: Site) -> None:
    """Items without a page (an empty loc, a self-closed url) are read and passed over; the
    next one is still stamped where it is."""
    tea.write(f'<urlset xmlns="{NS}"><url/><url><loc> </loc><lastmod>x</lastmod></url><url><loc>{PAGE}</loc></url></urlset>')
    assert stamp(tea).code == 0
    assert tea.sitemap.read_text().endswith(f"<url><loc>{PAGE}</loc><lastmod>{COMMIT}</lastmod></url></urlset>")
