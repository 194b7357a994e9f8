"""News sitemaps and feed dates (#17, points 16 and 17): a news sitemap lists two days of
articles, so what leaves it is not removed; RFC 2822's trailing comments are dates."""

from __future__ import annotations

import gzip
import json

import pytest

from notifier.dates import rfc822_to_w3c
from tests.conftest import BASE, NS, Site, index, pages, recorded_urls, urlset

NEWS = "http://www.google.com/schemas/sitemap-news/0.9"


def news_sitemap(articles: dict[str, str], *, lastmod: bool = False) -> str:
    """A Google News sitemap: each article with its <news:publication_date>, no <lastmod>."""
    items = "".join(
        f"<url><loc>{BASE}{path}</loc>{f'<lastmod>{published}</lastmod>' if lastmod else ''}<news:news>"
        "<news:publication><news:name>Tea Times</news:name><news:language>en</news:language></news:publication>"
        f"<news:publication_date>{published}</news:publication_date><news:title>{path}</news:title></news:news></url>"
        for path, published in articles.items()
    )
    return f'<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="{NS}" xmlns:news="{NEWS}">{items}</urlset>'


def _site(site: Site, articles: dict[str, str], regular: dict[str, str | None]) -> None:
    site.write(index({"/news.xml": None, "/pages.xml": None}))
    site.write(news_sitemap(articles), "news.xml")
    site.write(urlset(regular), "pages.xml")


ARTICLES = {f"/news/{n}/": f"2026-06-{n + 1:02d}T08:00:00Z" for n in range(12)}


def test_articles_that_age_out_of_the_news_sitemap_are_not_removals(site: Site) -> None:
    assert site.fake is not None
    _site(site, ARTICLES, pages(3))
    assert site.run("--initial", "submit").code == 0
    site.fake.posts.clear()
    fresh = {f"/news/{n}/": f"2026-06-{n + 1:02d}T08:00:00Z" for n in range(12, 14)}
    _site(site, fresh, pages(3))  # two days later: twelve articles aged out, two new ones
    checked = site.check()  # a check reads the news file another way (its recorded URLs in one sweep): the same verdict
    assert checked.code == 0 and "mass-removal" not in checked.out and "0 removed" in checked.out, checked.out
    assert "12 URLs left the news sitemap and no other file lists them" in checked.out
    result = site.run()
    assert result.code == 0 and "mass-removal" not in result.out, result.out
    assert sorted(site.fake.delivered()) == sorted(BASE + path for path in fresh)  # nothing announced as removed
    assert "12 URLs left the news sitemap and no other file lists them" in result.out
    assert "0 removed" in result.out


def test_an_article_still_listed_by_another_file_just_moved(site: Site) -> None:
    assert site.fake is not None
    _site(site, ARTICLES, pages(3))
    assert site.run().code == 0
    _site(site, {}, pages(3) | dict(ARTICLES))  # the articles now live in the regular sitemap only
    result = site.run()
    assert result.code == 0 and "left the news sitemap" not in result.out and site.fake.delivered() == [], result.out


def test_a_regular_sitemap_that_loses_its_pages_is_still_a_mass_removal(site: Site) -> None:
    _site(site, ARTICLES, pages(20))
    assert site.run().code == 0
    _site(site, ARTICLES, pages(5))  # 15 of the 20 regular pages gone; the news file counts for nothing
    result = site.run()
    assert result.code == 1 and "error[mass-removal]" in result.out and "15 of 20 recorded URLs vanished" in result.out, result.out


def test_an_unchanged_gzipped_news_sitemap_still_counts_for_nothing(site: Site) -> None:
    """The news file's bytes are as recorded, so it is not parsed again: its namespace is looked
    for in its first bytes, gunzipped."""

    def build(regular: dict[str, str | None]) -> None:
        site.write(index({"/news.xml.gz": None, "/pages.xml": None}))
        (site.public / "news.xml.gz").write_bytes(gzip.compress(news_sitemap(ARTICLES).encode(), mtime=0))
        site.write(urlset(regular), "pages.xml")

    build(pages(20))
    assert site.run().code == 0
    build(pages(5))
    result = site.run()
    assert result.code == 1 and "15 of 20 recorded URLs vanished" in result.out, result.out


def test_with_site_dir_an_article_whose_page_is_gone_is_removed(site: Site) -> None:
    assert site.fake is not None
    _site(site, ARTICLES, pages(3))
    site.build_pages(["/", *ARTICLES, *pages(3)])
    assert site.run("--site-dir", str(site.public)).code == 0
    site.fake.posts.clear()
    (site.public / "news" / "0" / "index.html").unlink()  # retracted: its page is gone from the build
    _site(site, {}, pages(3))
    result = site.run("--site-dir", str(site.public))
    assert result.code == 0, result.out
    assert site.fake.delivered() == [f"{BASE}/news/0/"]  # announced as removed; the eleven others are still built
    assert "11 URLs left the news sitemap and no other file lists them (their pages are still built)" in result.out


def test_a_news_article_without_a_lastmod_is_dated_by_its_publication_date(offline_site: Site) -> None:
    offline_site.write(news_sitemap({"/news/a/": "2026-06-01T08:00:00+02:00"}))
    result = offline_site.check("--format", "json")
    assert result.code == 0 and "lastmod-missing" not in result.out, result.out
    from notifier.sitemap.reader import read_sitemap

    (entry,) = read_sitemap(str(offline_site.sitemap)).entries
    assert entry.lastmod == "2026-06-01T08:00:00+02:00"
    offline_site.write(
        news_sitemap({"/news/a/": "2026-06-01T08:00:00Z"}, lastmod=True).replace(
            "<lastmod>2026-06-01T08:00:00Z", "<lastmod>2026-06-02T08:00:00Z"
        )
    )
    (entry,) = read_sitemap(str(offline_site.sitemap)).entries
    assert entry.lastmod == "2026-06-02T08:00:00Z"  # a lastmod, when there is one, wins


@pytest.mark.parametrize(
    ("text", "w3c"),
    [
        ("Fri, 14 Mar 2025 10:20:00 +0100 (CET)", "2025-03-14T10:20:00+01:00"),  # RFC 2822's comment
        ("Fri, 14 Mar 2025 10:20:00 +0000 (UTC)", "2025-03-14T10:20:00Z"),
        ("Fri, 14 Mar 2025 10:20:00 +0100  ( Central European Time ) ", "2025-03-14T10:20:00+01:00"),
        ("Fri, 14 Mar 2025 10:20:00 (CET)", None),  # a comment is no zone
        ("Fri, 14 Mar 2025 10:20:00 +0100 (CET", None),
    ],
)
def test_an_rfc_2822_date_with_a_trailing_comment(text: str, w3c: str | None) -> None:
    assert rfc822_to_w3c(text) == w3c


def test_a_feed_date_with_a_comment_is_no_lastmod_invalid(offline_site: Site) -> None:
    feed = (
        '<?xml version="1.0"?><rss version="2.0"><channel><title>t</title>'
        f"<link>{BASE}/</link><item><link>{BASE}/a/</link><pubDate>Fri, 14 Mar 2025 10:20:00 +0100 (CET)</pubDate></item>"
        "</channel></rss>"
    )
    offline_site.write(feed)
    result = offline_site.check()
    assert result.code == 0 and "lastmod-invalid" not in result.out, result.out


# -- the same for any sitemap: a URL is removed only when its page left the build too ----
def test_with_site_dir_a_url_that_left_the_sitemap_while_its_page_is_built_is_unlisted_not_removed(site: Site) -> None:
    """A sitemap that lists some of the pages (an incremental build's): the URLs it dropped
    whose page files are still in the build are unlisted, said so, and never announced as
    removed; the one whose page is gone too is removed."""
    assert site.fake is not None
    listed = pages(12)
    site.build_pages(["/", *listed])
    site.write(urlset(listed))
    assert site.run("--site-dir", str(site.public)).code == 0
    site.fake.posts.clear()
    dropped = [f"/p/{n}/" for n in range(3)]
    (site.public / "p" / "0" / "index.html").unlink()  # deleted: its page is gone from the build
    site.write(urlset({loc: lastmod for loc, lastmod in listed.items() if loc not in dropped}))
    checked = site.check("--site-dir", str(site.public), "--format", "json")
    report = json.loads(checked.out)
    assert checked.code == 0 and report["urls"]["removed"] == [f"{BASE}/p/0/"], checked.out
    said = f"2 URLs left the sitemap while the build still has their pages (e.g. {BASE}/p/1/): unlisted, not announced as removed"
    assert any(note.startswith(said) for note in report["notes"]), report["notes"]
    # a check records nothing: what the run will do, and how to announce a removal before it
    ahead = next(note for note in report["notes"] if note.startswith(said))
    assert "no longer recorded" not in ahead and "a run stops recording them" in ahead, ahead
    assert "delete their page files before that run" in ahead, ahead
    result = site.run("--site-dir", str(site.public))
    assert result.code == 0 and said in result.out, result.out
    # the run dropped their records: deleting the page files now would announce nothing, and it says so
    assert "no longer recorded, so no later run announces them as removed" in result.out, result.out
    assert "delete their page files to announce a removal" not in result.out, result.out
    assert site.fake.delivered() == [f"{BASE}/p/0/"]
    assert "1 removed" in result.out, result.out
    site.fake.posts.clear()
    again = site.run("--site-dir", str(site.public))  # no longer recorded: said once, never announced later
    assert again.code == 0 and "unlisted" not in again.out and site.fake.delivered() == [], again.out
    (site.public / "p" / "1" / "index.html").unlink()  # deleted after the run that dropped it: no removal, as the note said
    gone = site.run("--site-dir", str(site.public))
    assert gone.code == 0 and "0 removed" in gone.out and site.fake.delivered() == [], gone.out


def test_a_run_its_findings_fail_says_the_unlisted_are_still_recorded(site: Site) -> None:
    """A run that fails records nothing: the unlisted URLs keep their records, and the note
    says which run will drop them, not that this one did."""
    listed = pages(12)
    site.build_pages(["/", *listed])
    site.write(urlset(listed))
    assert site.run("--site-dir", str(site.public)).code == 0
    kept = {loc: lastmod for loc, lastmod in listed.items() if loc != "/p/1/"}
    site.write(urlset(kept | {"/p/2/": "2099-01-01T00:00:00Z"}))  # a date in the future: lastmod-future fails the run
    failed = site.run("--site-dir", str(site.public))
    assert failed.code == 1 and "lastmod-future" in failed.out, failed.out
    assert "no longer recorded" not in failed.out and "the first run that passes stops recording them" in failed.out, failed.out
    assert f"{BASE}/p/1/" in recorded_urls(site.state)  # still recorded
