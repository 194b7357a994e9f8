"""What notifier/pipeline/matching.py does that the mutation run found no test stating (#44):
a URL that moved to another file of the index keeps its record there: when it was first seen
and last submitted, with its new lastmod. Each test names the edit it catches."""

from __future__ import annotations

import datetime as dt

from tests.conftest import BASE, Site, index, recorded_urls, run_at, urlset

T0 = dt.datetime(2030, 6, 1, 12, 0, tzinfo=dt.UTC)


def _build(site: Site, first: dict[str, str | None], second: dict[str, str | None]) -> None:
    site.write(urlset(first), "sitemaps/a.xml")
    site.write(urlset(second), "sitemaps/b.xml")
    site.write(index({"/sitemaps/a.xml": None, "/sitemaps/b.xml": None}))


def test_a_url_moved_to_another_file_keeps_its_record_there(site: Site) -> None:
    """Moved from a.xml to b.xml a day later, unchanged: not announced, and recorded as first
    seen and submitted on the first day; moved again with a new date: announced, that date
    recorded. fails if ``self.records[item.loc] = renew(record, item.lastmod, item.fingerprint)``
    is removed in pipeline/matching.py::Matching._match_new_urls (a fresh record, first seen
    on the day it moved, never submitted, would take its place)"""
    assert site.fake is not None
    _build(site, {"/a/": "2024-05-01", "/x/": "2024-05-01"}, {"/b/": "2024-05-01"})
    assert run_at(site, T0).exit_code == 0
    first = recorded_urls(site.state)[f"{BASE}/x/"]
    assert first["first_seen"] == "2030-06-01T12:00:00Z" and first["last_submitted"] == "2030-06-01T12:00:00Z"
    site.fake.posts.clear()
    _build(site, {"/a/": "2024-05-01"}, {"/b/": "2024-05-01", "/x/": "2024-05-01"})
    moved = run_at(site, T0 + dt.timedelta(days=1))
    assert moved.exit_code == 0 and site.fake.posts == []
    record = recorded_urls(site.state)[f"{BASE}/x/"]
    assert record == first | {"part": 1}
    _build(site, {"/a/": "2024-05-01", "/x/": "2024-05-09"}, {"/b/": "2024-05-01"})
    back = run_at(site, T0 + dt.timedelta(days=2))
    assert back.exit_code == 0 and site.fake.delivered() == [f"{BASE}/x/"]
    again = recorded_urls(site.state)[f"{BASE}/x/"]
    assert again == {"lastmod": "2024-05-09", "first_seen": "2030-06-01T12:00:00Z", "last_submitted": "2030-06-03T12:00:00Z", "part": 0}
