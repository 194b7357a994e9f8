"""[announce] alternates (issue #41, item 8): a changed page's hreflang alternates (the
sitemap's xhtml:link, or the page's head with --site-dir) are announced with it when they are
in scope and not held out; the report says which were added and why."""

from __future__ import annotations

import json

from tests.conftest import BASE, Site

EN, DE, FR = "/en/tea/", "/de/tee/", "/fr/the/"
OLD = "2024-05-01T10:00:00Z"
NEW = "2024-06-01T10:00:00Z"


def _sitemap(lastmods: dict[str, str], links: dict[str, dict[str, str]] | None = None) -> str:
    """A urlset whose pages name each other as alternates (or ``links``: loc -> hreflang -> href)."""
    every = links if links is not None else {loc: {"en": EN, "de": DE, "fr": FR} for loc in lastmods}
    rows = []
    for loc, lastmod in lastmods.items():
        alternates = "".join(
            f'<xhtml:link rel="alternate" hreflang="{language}" href="{href if "://" in href else BASE + href}"/>'
            for language, href in every.get(loc, {}).items()
        )
        rows.append(f"<url><loc>{BASE}{loc}</loc><lastmod>{lastmod}</lastmod>{alternates}</url>")
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" '
        'xmlns:xhtml="http://www.w3.org/1999/xhtml">\n' + "\n".join(rows) + "\n</urlset>\n"
    )


def _baseline(site: Site, links: dict[str, dict[str, str]] | None = None) -> None:
    site.write(_sitemap({EN: OLD, DE: OLD, FR: OLD}, links))
    assert site.run().code == 0


def test_a_changed_pages_alternates_are_announced_with_it(site: Site) -> None:
    assert site.fake is not None
    _baseline(site)
    site.write(_sitemap({EN: NEW, DE: OLD, FR: OLD}))
    result = site.run("--alternates", "--format", "json")
    assert result.code == 0, result.err
    assert sorted(site.fake.delivered()) == sorted(BASE + loc for loc in (EN, DE, FR))
    report = json.loads(result.out)
    assert report["changed"] == 1 and report["alternates"] == 2 and report["submitted"] == 3
    assert report["policy"]["alternates"] == {
        BASE + DE: f"the de alternate of {BASE}{EN} (the sitemap's xhtml:link)",
        BASE + FR: f"the fr alternate of {BASE}{EN} (the sitemap's xhtml:link)",
    }
    assert report["why"][BASE + DE] == {"reason": "alternate", "alternate_of": BASE + EN, "hreflang": "de"}


def test_by_default_only_the_changed_page_is_announced(site: Site) -> None:
    assert site.fake is not None
    _baseline(site)
    site.write(_sitemap({EN: NEW, DE: OLD, FR: OLD}))
    result = site.run("--format", "json")
    assert result.code == 0 and site.fake.delivered() == [BASE + EN]
    assert json.loads(result.out)["alternates"] == 0


def test_an_alternate_out_of_scope_or_held_out_is_not_announced_and_the_report_says_so(site: Site) -> None:
    assert site.fake is not None
    links = {EN: {"de": DE, "fr": FR, "es": "/es/te/", "ja": "https://www.shop-site.jp/ja/tea/"}}
    _baseline(site, links)
    site.write(_sitemap({EN: NEW, DE: OLD, FR: OLD}, links))
    result = site.run("--alternates", "--exclude", "/fr/**", "--rule", "hreflang-broken=off")
    assert result.code == 0, result.err
    assert sorted(site.fake.delivered()) == [BASE + DE, BASE + EN]
    assert "1 hreflang alternate announced with the changed pages" in result.out
    assert "3 hreflang alternates of the changed pages not announced: " in result.out
    assert "2 not in the sitemap or on another host" in result.out and "1 held out by [announce] patterns" in result.out


def test_an_alternate_changed_itself_is_announced_once_as_changed(site: Site) -> None:
    assert site.fake is not None
    _baseline(site)
    site.write(_sitemap({EN: NEW, DE: NEW, FR: OLD}))
    result = site.run("--alternates", "--format", "json")
    report = json.loads(result.out)
    assert sorted(site.fake.delivered()) == sorted(BASE + loc for loc in (EN, DE, FR))
    assert report["changed"] == 2 and list(report["policy"]["alternates"]) == [BASE + FR]


def test_with_site_dir_the_page_head_gives_the_alternates(site: Site) -> None:
    assert site.fake is not None
    site.write(_sitemap({EN: OLD, DE: OLD, FR: OLD}, links={}))
    heads = {
        EN: f'<link rel="alternate" hreflang="de" href="{DE}"><link rel="alternate" hreflang="fr" href="../../fr/the/">',
        DE: f'<link rel="alternate" hreflang="en" href="{EN}">',
        FR: f'<link rel="alternate" hreflang="en" href="{EN}">',
    }
    for loc, head in heads.items():
        site.build_pages([loc], head=head)
    assert site.run("--site-dir", str(site.public)).code == 0
    site.write(_sitemap({EN: NEW, DE: OLD, FR: OLD}, links={}))
    page = site.public / "en" / "tea" / "index.html"
    page.write_text(page.read_text().replace("<p>", "<p>New: "))
    result = site.run("--site-dir", str(site.public), "--alternates", "--format", "json")
    assert result.code == 0, result.err
    assert sorted(site.fake.delivered()) == sorted(BASE + loc for loc in (EN, DE, FR))
    assert json.loads(result.out)["policy"]["alternates"][BASE + FR] == f"the fr alternate of {BASE}{EN} (its page's head)"


def test_the_announce_table_turns_it_on(site: Site) -> None:
    assert site.fake is not None
    (site.root / "notify-changes.toml").write_text("[announce]\nalternates = true\n")
    _baseline(site)
    site.write(_sitemap({EN: NEW, DE: OLD, FR: OLD}))
    assert site.run("--config", str(site.root / "notify-changes.toml")).code == 0
    assert len(site.fake.delivered()) == 3
    (site.root / "notify-changes.toml").write_text('[announce]\nalternates = "yes"\n')
    result = site.run("--config", str(site.root / "notify-changes.toml"))
    assert result.code == 2 and "[announce] alternates: 'yes' must be true or false" in result.err
