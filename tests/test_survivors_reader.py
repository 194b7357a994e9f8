"""What notifier/sitemap/reader.py does that the mutation run found no test stating (#44): the
URL its findings name, the steps of a two-part index, a loc's password hidden in the entries,
how an index part's loc is read (``https:part.xml``, ``//host``, a password, an unjoinable one),
an unchanged gzip file that no longer unpacks, and, on workers, how deep indexes may nest and
which files a condenser is given. Each test names the edit it catches."""

from __future__ import annotations

import gzip
import os
from pathlib import Path
from typing import Any

import pytest

import notifier.sitemap.reader
from notifier.errors import InputError
from notifier.sitemap.files import Condense, ReadOptions, Row, SitemapFile
from notifier.sitemap.reader import read_sitemap
from notifier.sitemap.source import file_digest
from notifier.urls import without_password
from notifier.workers import Workers
from tests.conftest import BASE, HOST, Site, index, pages, urlset
from tests.fakeindexnow import FakeIndexNow

needs_two_cores = pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs two cores to start workers")


def _index_of(*locs: str) -> str:
    """A sitemap index listing each loc exactly as written."""
    rows = "".join(f"  <sitemap><loc>{loc}</loc></sitemap>\n" for loc in locs)
    return f'<?xml version="1.0" encoding="UTF-8"?>\n<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n{rows}</sitemapindex>\n'


# -- _Walk.read --------------------------------------------------------------------------------
def test_an_index_inside_an_index_listed_by_a_relative_loc_is_named_by_its_path(offline_site: Site) -> None:
    """fails if ``public_url or location`` loses its second side in sitemap/reader.py::_Walk.read
    (the finding would name None)"""
    site = offline_site
    site.write(_index_of("maps/sub.xml"))
    sub = site.write(index({"/part.xml": None}), "maps/sub.xml")
    site.write(urlset(pages(2)), "part.xml")
    sitemap = read_sitemap(str(site.sitemap))
    nested = [(finding.url, finding.message) for finding in sitemap.findings if finding.rule == "sitemap-limits"]
    assert nested == [(str(sub), "an index inside an index; list its parts in the top index")]


def test_a_part_over_the_url_limit_is_named_by_its_public_url(offline_site: Site, monkeypatch: pytest.MonkeyPatch) -> None:
    """fails if the over-the-limit finding's ``public_url or location`` loses its first side in
    sitemap/reader.py::_Walk.read (it would name the local path)"""
    monkeypatch.setattr(notifier.sitemap.reader, "MAX_URLS_PER_FILE", 2)
    site = offline_site
    site.write(index({"/part.xml": None}))
    site.write(urlset(pages(3)), "part.xml")
    findings = read_sitemap(str(site.sitemap)).findings
    assert [(each.rule, each.url) for each in findings] == [("sitemap-limits", f"{BASE}/part.xml")]
    assert findings[0].message == "3 URLs in one file, over the limit of 2; split it"


def test_each_part_of_a_two_part_index_is_a_step(offline_site: Site) -> None:
    """fails if ``len(resolved) > 1`` becomes ``> 2`` in sitemap/reader.py::_Walk.read"""
    site = offline_site
    site.write(index({"/a.xml": None, "/b.xml": None}))
    site.write(urlset(pages(1)), "a.xml")
    site.write(urlset(pages(1, prefix="/q/")), "b.xml")
    steps: list[str] = []
    read_sitemap(str(site.sitemap), ReadOptions(step=steps.append))
    root = site.public.resolve()
    assert steps == [f"reading part 1/2: {root / 'a.xml'}", f"reading part 2/2: {root / 'b.xml'}"]


def test_a_locs_password_is_hidden_in_the_entries_read(offline_site: Site) -> None:
    """fails if ``sitemap.entries[start:] = entries`` is left out in sitemap/reader.py::_Walk.read"""
    secret = f"http://admin:hunter2@{HOST}/a/"
    offline_site.write(urlset({secret: "2024-05-01", "/b/": "2024-05-01"}))
    locs = [entry.loc for entry in read_sitemap(str(offline_site.sitemap)).entries]
    assert locs == [without_password(secret), f"{BASE}/b/"] and "hunter2" not in locs[0]


# -- _Walk._resolve_part -----------------------------------------------------------------------
def test_an_index_part_with_a_scheme_and_no_host_is_no_absolute_url(offline_site: Site) -> None:
    """fails if ``split.scheme in ("http", "https") and bool(split.netloc)`` loses its second side
    in sitemap/reader.py::_Walk._resolve_part"""
    site = offline_site
    site.write(_index_of("https:part.xml"))
    site.write(urlset(pages(1)), "part.xml")
    sitemap = read_sitemap(str(site.sitemap))
    assert [(each.rule, each.url) for each in sitemap.findings] == [("url-invalid", "https:part.xml")]
    assert sitemap.files[1].public_url is None


def test_an_index_parts_password_is_in_no_public_url(offline_site: Site) -> None:
    """fails if ``part = part._replace(loc=shown)`` is left out in
    sitemap/reader.py::_Walk._resolve_part (the part's public URL would keep the password)"""
    site = offline_site
    secret = f"http://admin:hunter2@{HOST}/part.xml"
    site.write(_index_of(secret))
    site.write(urlset(pages(1)), "part.xml")
    sitemap = read_sitemap(str(site.sitemap))
    assert sitemap.files[1].public_url == without_password(secret) and "hunter2" not in without_password(secret)
    assert [each.url for each in sitemap.findings] == [without_password(secret)]


def test_a_remote_index_part_that_cannot_be_joined_is_refused_in_a_line(fake: FakeIndexNow) -> None:
    """fails if ``join_url(...) or ""`` loses its ``""`` in sitemap/reader.py::_Walk._resolve_part
    (a traceback)"""
    fake.sites[HOST]["/sitemap.xml"] = _index_of("http://[::1/part.xml").encode()
    with pytest.raises(
        InputError, match=r"^http://www\.shop-site\.org/sitemap\.xml, line 3: cannot fetch index part 'http://\[::1/part\.xml'$"
    ):
        read_sitemap(f"{BASE}/sitemap.xml")


def test_an_index_part_of_a_host_and_no_path_is_looked_for_at_the_site_root(offline_site: Site) -> None:
    """fails if ``split.scheme or split.netloc or ...`` loses its second side in
    sitemap/reader.py::_Walk._resolve_part (``//host`` would be looked for beside the index)"""
    site = offline_site
    maps = site.write(_index_of(f"//{HOST}"), "maps/index.xml")
    with pytest.raises(InputError, match=r"index part //www\.shop-site\.org not found at (\S+); ") as raised:
        read_sitemap(str(maps), ReadOptions(site_dir=site.public))
    assert f"not found at {site.public.resolve()}; " in str(raised.value)


# -- _declares_news ----------------------------------------------------------------------------
def test_an_unchanged_gzip_file_that_does_not_unpack_is_no_news_sitemap(offline_site: Site) -> None:
    """fails if ``return False`` (the file cannot be unpacked) raises in
    sitemap/reader.py::_declares_news"""
    whole = gzip.compress(urlset(pages(50)).encode())
    path = offline_site.write(whole[: len(whole) // 2], "sitemap.xml.gz")  # cut short
    sitemap = read_sitemap(str(path), known={"sitemap.xml.gz": file_digest(str(path))})
    assert sitemap.files[0].skipped and not sitemap.files[0].news


# -- on workers --------------------------------------------------------------------------------
@needs_two_cores
def test_an_index_three_deep_is_refused_when_its_parts_are_read_on_workers(offline_site: Site, forking: None) -> None:
    """fails if ``depth == 0 and ...`` loses its first side in sitemap/reader.py::_Walk.read (the
    nested index's parts would go to workers, which read them one level too shallow)"""
    site = offline_site
    site.write(index({"/sub.xml": None}))
    site.write(index({"/a.xml": None, "/deep.xml": None}), "sub.xml")
    site.write(urlset(pages(1)), "a.xml")
    site.write(index({"/b.xml": None}), "deep.xml")
    site.write(urlset(pages(1, prefix="/q/")), "b.xml")
    with Workers(2) as workers, pytest.raises(InputError, match=r"deep\.xml: sitemap indexes nested more than 2 deep; flatten them$"):
        read_sitemap(str(site.sitemap), ReadOptions(workers=workers))


def _condensed(info: SitemapFile, rows: list[Row], data: Any) -> object:
    """A worker's condensed form of any file: its name and row count (pickled by name)."""
    return (info.name, len(rows))


class _Taking:
    """A condenser that asks every part to be condensed, and takes what it is given."""

    def __init__(self) -> None:
        self.taken: list[tuple[str, str]] = []

    def ask(self, key: str) -> Condense | None:
        return Condense(_condensed, None)

    def take(self, info: SitemapFile, condensed: object) -> bool:
        self.taken.append((info.kind, Path(info.name).name))
        return True


@needs_two_cores
def test_a_condenser_is_given_urlsets_never_an_empty_index(offline_site: Site, forking: None) -> None:
    """fails if ``... and files[0].kind != "index" and ...`` loses that side in
    sitemap/reader.py::_read_part_job (an index part of no parts would be condensed)"""
    site = offline_site
    site.write(index({"/empty.xml": None, "/a.xml": None}))
    site.write(index({}), "empty.xml")
    site.write(urlset(pages(2)), "a.xml")
    condenser = _Taking()
    with Workers(2) as workers:
        sitemap = read_sitemap(str(site.sitemap), ReadOptions(workers=workers), condenser=condenser)
    assert condenser.taken == [("urlset", "a.xml")]
    assert [each.kind for each in sitemap.files] == ["index", "index", "urlset"]


@needs_two_cores
def test_a_part_after_an_index_part_is_read_again_here_not_condensed(offline_site: Site, forking: None) -> None:
    """fails if ``offset == first + number and ...`` loses its first side in
    sitemap/reader.py::_Walk._read_parts_in_parallel (the part after a nested index is numbered
    one file later than its worker thought: taking its condensed form would lose its URLs)"""
    site = offline_site
    site.write(index({"/sub.xml": None, "/a.xml": None}))
    site.write(index({"/b.xml": None}), "sub.xml")
    site.write(urlset(pages(1, prefix="/q/")), "b.xml")
    site.write(urlset(pages(2)), "a.xml")
    condenser = _Taking()
    with Workers(2) as workers:
        sitemap = read_sitemap(str(site.sitemap), ReadOptions(workers=workers), condenser=condenser)
    assert condenser.taken == []
    assert sorted(entry.loc for entry in sitemap.entries) == [f"{BASE}/p/0/", f"{BASE}/p/1/", f"{BASE}/q/0/"]
    assert [Path(each.name).name for each in sitemap.files] == ["sitemap.xml", "sub.xml", "b.xml", "a.xml"]
