"""``notify-changes stamp`` on the shapes real files take: a page without a date element, a
prefixed namespace, an index of indexes, the order it names the files in, and a file it
cannot write (issue #22)."""

from __future__ import annotations

import pytest

import notifier
from tests.conftest import BASE, NS, Site
from tests.test_history import Repo
from tests.test_stamp import BUILD_CLOCK, stamp

COMMIT = "2025-04-02T08:00:00Z"


def _rss(*items: str) -> str:
    return '<rss version="2.0"><channel><title>Tea</title>' + "".join(f"<item>{item}</item>" for item in items) + "</channel></rss>"


@pytest.fixture
def tea(offline_site: Site) -> Site:
    """One page, /posts/tea/, whose source's last commit is COMMIT."""
    Repo(offline_site.root).commit({"content/posts/tea.md": "---\ntitle: Tea\n---\n"}, COMMIT)
    (offline_site.root / "notify-changes.toml").write_text('[history]\npreset = "hugo"\n')
    return offline_site


def test_a_page_without_a_date_element_gets_one_right_after_its_page_element(tea: Site) -> None:
    tea.write(f'<urlset xmlns="{NS}"><url><loc>{BASE}/posts/tea/</loc><changefreq>monthly</changefreq></url></urlset>')
    atom = tea.write(
        '<feed xmlns="http://www.w3.org/2005/Atom"><title>Tea</title>'
        f'<entry><title>Tea</title><link href="{BASE}/posts/tea/"/><id>tag:tea</id></entry></feed>',
        "atom.xml",
    )
    rss = tea.write(_rss(f"<title>Tea</title><link>{BASE}/posts/tea/</link><guid>tea</guid>"), "feed.xml")
    assert stamp(tea).code == 0
    assert f"<url><loc>{BASE}/posts/tea/</loc><lastmod>{COMMIT}</lastmod><changefreq>" in tea.sitemap.read_text()
    for feed in (atom, rss):
        assert notifier.stamp(feed, cwd=tea.root).changes, feed
    assert f'<link href="{BASE}/posts/tea/"/><updated>{COMMIT}</updated><id>' in atom.read_text()
    assert f"<link>{BASE}/posts/tea/</link><pubDate>Wed, 02 Apr 2025 08:00:00 +0000</pubDate><guid>" in rss.read_text()


def test_a_sitemap_and_an_index_written_with_a_namespace_prefix_are_stamped(tea: Site) -> None:
    tea.write(
        f'<sm:urlset xmlns:sm="{NS}"><sm:url><sm:loc>{BASE}/posts/tea/</sm:loc><sm:lastmod>{BUILD_CLOCK}</sm:lastmod></sm:url></sm:urlset>',
        "pages.xml",
    )
    tea.write(
        f'<sm:sitemapindex xmlns:sm="{NS}"><sm:sitemap><sm:loc>{BASE}/pages.xml</sm:loc>'
        f"<sm:lastmod>{BUILD_CLOCK}</sm:lastmod></sm:sitemap></sm:sitemapindex>"
    )
    assert stamp(tea).code == 0
    assert f"<sm:loc>{BASE}/posts/tea/</sm:loc><sm:lastmod>{COMMIT}</sm:lastmod>" in (tea.public / "pages.xml").read_text()
    assert f"<sm:loc>{BASE}/pages.xml</sm:loc><sm:lastmod>{COMMIT}</sm:lastmod>" in tea.sitemap.read_text()


def test_an_index_of_indexes_takes_the_newest_date_of_the_index_it_lists(tea: Site) -> None:
    tea.write(f'<urlset xmlns="{NS}"><url><loc>{BASE}/posts/tea/</loc><lastmod>{BUILD_CLOCK}</lastmod></url></urlset>', "pages.xml")
    tea.write(
        f'<sitemapindex xmlns="{NS}"><sitemap><loc>{BASE}/pages.xml</loc><lastmod>{BUILD_CLOCK}</lastmod></sitemap></sitemapindex>',
        "inner.xml",
    )
    tea.write(f'<sitemapindex xmlns="{NS}"><sitemap><loc>{BASE}/inner.xml</loc><lastmod>{BUILD_CLOCK}</lastmod></sitemap></sitemapindex>')
    result = stamp(tea)
    assert result.code == 0, result.err
    assert f"<loc>{BASE}/inner.xml</loc><lastmod>{COMMIT}</lastmod>" in tea.sitemap.read_text()


def test_an_rss_date_that_opens_its_item_is_read_as_rfc_822_and_kept_when_right(tea: Site) -> None:
    feed = _rss(f"<pubDate>Wed, 02 Apr 2025 08:00:00 +0000</pubDate><title>Tea</title><link>{BASE}/posts/tea/</link>")
    tea.write(feed)
    result = stamp(tea)
    assert result.code == 0 and "rewrote 0 date(s) in 0 file(s); 1 already named their content's date" in result.out, result.out
    assert tea.sitemap.read_text() == feed


def test_a_feed_entry_naming_no_page_is_left_as_it_was(tea: Site) -> None:
    """An RSS item with a guid and no link, an Atom entry whose only link is its edit link:
    no page, so no date to take; the entries that name a page are stamped."""
    rss = _rss(
        "<title>Note</title><guid>note-1</guid><pubDate>Mon, 30 Nov 2026 09:41:07 +0000</pubDate>",
        f"<title>Tea</title><link>{BASE}/posts/tea/</link><pubDate>Mon, 30 Nov 2026 09:41:07 +0000</pubDate>",
    )
    atom = (
        '<feed xmlns="http://www.w3.org/2005/Atom"><title>Tea</title>'
        f'<entry><link rel="edit" href="{BASE}/api/1"/><updated>{BUILD_CLOCK}</updated></entry></feed>'
    )
    tea.write(rss)
    result = stamp(tea)
    assert result.code == 0 and "rewrote 1 date(s) in 1 file(s)" in result.out, result.out
    assert tea.sitemap.read_text() == rss.replace(
        "</link><pubDate>Mon, 30 Nov 2026 09:41:07 +0000", "</link><pubDate>Wed, 02 Apr 2025 08:00:00 +0000"
    )
    tea.write(atom)
    assert "rewrote 0 date(s) in 0 file(s)" in stamp(tea).out and tea.sitemap.read_text() == atom
