"""What notifier/commands/stamp.py does that a mutation run found no test stating (#44): a
date written before the page's loc (the first child of its item), in a page and in an index,
a date added to an item of a prefixed sitemap, and an index part none of whose pages has a
date. Each test names the edit it catches."""

from __future__ import annotations

import lxml.etree

from tests.conftest import BASE, NS, Site
from tests.test_history import Repo
from tests.test_stamp import BUILD_CLOCK, stamp

CHANGED = "2025-04-02T08:00:00Z"


def _history(site: Site) -> None:
    Repo(site.root).commit({"content/posts/tea.md": "---\ntitle: Tea\n---\n"}, CHANGED)
    (site.root / "notify-changes.toml").write_text('[history]\npreset = "hugo"\n')


def test_a_lastmod_before_the_loc_is_rewritten_in_place(offline_site: Site) -> None:
    """fails if ``reading.date_at >= 0`` becomes ``>`` or ``>= 1`` in _edit (a lastmod that is
    its item's first child would get a second one added after the loc)"""
    _history(offline_site)
    sitemap = f'<urlset xmlns="{NS}"><url><lastmod>{BUILD_CLOCK}</lastmod><loc>{BASE}/posts/tea/</loc></url></urlset>\n'
    offline_site.write(sitemap)
    assert stamp(offline_site).code == 0
    assert offline_site.sitemap.read_text() == sitemap.replace(BUILD_CLOCK, CHANGED)


def test_an_index_lastmod_before_the_loc_is_rewritten_in_place(offline_site: Site) -> None:
    """fails if ``reading.date_at < 0`` becomes ``<=`` or ``< 1`` in _stamp_index (a part's
    lastmod written first would be left with the build's clock)"""
    _history(offline_site)
    offline_site.write(
        f'<urlset xmlns="{NS}"><url><loc>{BASE}/posts/tea/</loc><lastmod>{BUILD_CLOCK}</lastmod></url></urlset>\n', "pages.xml"
    )
    index = f'<sitemapindex xmlns="{NS}"><sitemap><lastmod>{BUILD_CLOCK}</lastmod><loc>{BASE}/pages.xml</loc></sitemap></sitemapindex>\n'
    offline_site.write(index)
    assert stamp(offline_site).code == 0
    assert offline_site.sitemap.read_text() == index.replace(BUILD_CLOCK, CHANGED)


def test_an_index_part_with_no_dated_page_is_left_and_the_next_part_stamped(offline_site: Site) -> None:
    """fails if the ``continue`` for a part with no date raises in _stamp_index"""
    _history(offline_site)
    offline_site.write(f'<urlset xmlns="{NS}"><url><loc>{BASE}/unknown/</loc></url></urlset>\n', "other.xml")
    offline_site.write(
        f'<urlset xmlns="{NS}"><url><loc>{BASE}/posts/tea/</loc><lastmod>{BUILD_CLOCK}</lastmod></url></urlset>\n', "pages.xml"
    )
    index = (
        f'<sitemapindex xmlns="{NS}"><sitemap><loc>{BASE}/other.xml</loc><lastmod>{BUILD_CLOCK}</lastmod></sitemap>'
        f"<sitemap><loc>{BASE}/pages.xml</loc><lastmod>{BUILD_CLOCK}</lastmod></sitemap></sitemapindex>\n"
    )
    offline_site.write(index)
    assert stamp(offline_site).code == 0
    assert offline_site.sitemap.read_text() == index.replace(f"pages.xml</loc><lastmod>{BUILD_CLOCK}", f"pages.xml</loc><lastmod>{CHANGED}")


def test_a_date_added_to_a_prefixed_sitemap_takes_the_items_prefix(offline_site: Site) -> None:
    """fails if ``block.span.name.rpartition(":")[0]`` takes another piece in _edit (the new
    element would be named ``<::lastmod>`` or ``<:lastmod>``: no XML)"""
    _history(offline_site)
    sitemap = f'<sm:urlset xmlns:sm="{NS}"><sm:url><sm:loc>{BASE}/posts/tea/</sm:loc></sm:url></sm:urlset>\n'
    offline_site.write(sitemap)
    assert stamp(offline_site).code == 0
    assert offline_site.sitemap.read_text() == sitemap.replace("</sm:loc>", f"</sm:loc><sm:lastmod>{CHANGED}</sm:lastmod>")
    assert lxml.etree.fromstring(offline_site.sitemap.read_bytes()) is not None  # well-formed
