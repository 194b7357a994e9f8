"""What notifier/pipeline/diff.py does that the mutation run found no test stating (#44): a news
file read this deploy counts for nothing in mass-removal however it is compared (row by row, in
one sweep, on a worker), a check with --site-dir compares every part here (its pages'
fingerprints hold pages back), and no parsed dates are None, not a short array. Each test names
the edit it catches; the edits that cannot change what a user sees are in
scripts/mutants-equivalent.txt with their reasons."""

from __future__ import annotations

import os

import pytest

from notifier.pipeline.diff import compute_diff
from notifier.sitemap.files import Entry
from notifier.store import State
from tests.conftest import BASE, NS, Site, index, pages, urlset

NEWS = "http://www.google.com/schemas/sitemap-news/0.9"
TWO_CORES = pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs two cores to start workers")


def _news(articles: dict[str, str]) -> str:
    items = "".join(
        f"<url><loc>{BASE}{path}</loc><news:news><news:publication><news:name>Tea Times</news:name>"
        f"<news:language>en</news:language></news:publication><news:publication_date>{published}</news:publication_date>"
        f"<news:title>{path}</news:title></news:news></url>"
        for path, published in articles.items()
    )
    return f'<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="{NS}" xmlns:news="{NEWS}">{items}</urlset>'


def _site(site: Site, articles: dict[str, str], regular: dict[str, str | None]) -> None:
    site.write(index({"/news.xml": None, "/pages.xml": None}))
    site.write(_news(articles), "news.xml")
    site.write(urlset(regular), "pages.xml")


ARTICLES = {f"/news/{n}/": f"2026-06-{n + 1:02d}T08:00:00Z" for n in range(12)}
FRESH = {f"/news/{n}/": f"2026-06-{n + 1:02d}T08:00:00Z" for n in range(12, 14)}
VANISHED = "sitemap.xml: 10 of 40 recorded URLs vanished (over 20%)"


def _news_aged_out_and_a_quarter_of_the_pages_gone(site: Site) -> None:
    """12 articles and 40 pages recorded; then the articles age out for two new ones and 10
    pages go: 10 of the 40 regular pages is over 20 %, 10 of all 52 recorded URLs is not."""
    _site(site, ARTICLES, pages(40))
    assert site.run().code == 0
    _site(site, FRESH, pages(30))


# -- the news file's recorded URLs, left out of mass-removal ----------------------------------------------
def test_a_run_leaves_a_read_news_files_recorded_urls_out_of_mass_removal(site: Site) -> None:
    """A run compares the news file row by row: its 12 recorded articles are not counted among
    the recorded URLs mass-removal weighs. Fails if ``result.news_recorded += len(recorded)`` is
    removed in pipeline/diff.py::DiffBuilder.add_file."""
    _news_aged_out_and_a_quarter_of_the_pages_gone(site)
    result = site.run()
    assert result.code == 1 and "error[mass-removal]" in result.out and VANISHED in result.out, result.out


def test_a_check_leaves_a_read_news_files_recorded_urls_out_of_mass_removal(site: Site) -> None:
    """A check in one process compares a recorded file in one sweep: the same count. Fails if
    ``result.news_recorded += len(recorded)`` is removed in
    pipeline/diff.py::DiffBuilder._compare_in_bulk."""
    _news_aged_out_and_a_quarter_of_the_pages_gone(site)
    result = site.check("--jobs", "1")
    assert result.code == 1 and "error[mass-removal]" in result.out and VANISHED in result.out, result.out


@TWO_CORES
@pytest.mark.usefixtures("forking")
def test_a_check_on_workers_leaves_a_news_files_recorded_urls_out_of_mass_removal(site: Site) -> None:
    """A check's workers compare the parts they parse: the news file's count comes back with it.
    Fails if ``self.result.news_recorded += old.count`` is removed in
    pipeline/diff.py::DiffBuilder.take."""
    _news_aged_out_and_a_quarter_of_the_pages_gone(site)
    result = site.check("--jobs", "2")
    assert result.code == 1 and "error[mass-removal]" in result.out and VANISHED in result.out, result.out


# -- DiffBuilder.ask ---------------------------------------------------------------------------------
@TWO_CORES
@pytest.mark.usefixtures("forking")
def test_a_check_with_site_dir_on_workers_still_holds_back_pages_whose_bytes_did_not_change(site: Site) -> None:
    """With --site-dir every page is fingerprinted, which only this process does: no part is
    compared on a worker, and a lastmod moved on an unchanged page is held back, not changed.
    Fails if ``self.fingerprints is not None`` is dropped from the first condition of
    pipeline/diff.py::DiffBuilder.ask."""
    listed = pages(40)
    locs = list(listed)
    parts = [{loc: listed[loc] for loc in locs[:20]}, {loc: listed[loc] for loc in locs[20:]}]
    site.build_pages(listed)
    site.write(index({"/part-0.xml": None, "/part-1.xml": None}))
    for number, part in enumerate(parts):
        site.write(urlset(part), f"part-{number}.xml")
    assert site.run("--site-dir", str(site.public)).code == 0
    parts[1][locs[25]] = "2024-09-01T10:00:00Z"  # the build clock moved it; the page is the same bytes
    site.write(urlset(parts[1]), "part-1.xml")
    result = site.check("--site-dir", str(site.public), "--jobs", "2")
    assert result.code == 0 and "1 URL held back, not announced" in result.out and "0 changed" in result.out, result.out


# -- DiffBuilder._all_new -----------------------------------------------------------------------------
def test_a_first_diff_of_unparsed_dates_has_no_stamps() -> None:
    """compute_diff reads no dates: the added URLs' stamps are None (the rules parse them),
    never an array shorter than the URLs. Fails if ``added.stamps = None`` is removed in
    pipeline/diff.py::DiffBuilder._all_new."""
    entries = [Entry(f"{BASE}/a/", "2024-05-01", 0, 1), Entry(f"{BASE}/b/", "2024-05-02", 0, 2)]
    diff = compute_diff(entries, State(), endpoints=[])
    assert diff.added.locs == [f"{BASE}/a/", f"{BASE}/b/"] and diff.added.stamps is None
