"""``notify-changes stamp`` on files a build really leaves: a damaged ``.gz`` beside the
sitemap, a sitemap not in UTF-8, a text sitemap in an index. Each test names the mutants of
scripts/mutate.py it kills (#44)."""

from __future__ import annotations

import os

from tests.conftest import BASE, Site
from tests.test_stamp import BUILD_CLOCK, INDEX, built, files, stamp

__all__ = ["built"]  # the fixture, from test_stamp


def test_a_damaged_gz_beside_the_sitemap_is_left_alone(built: Site) -> None:
    """Kills _gzip_copy's ``return None`` raised: a half-written sitemap.xml.gz (a build
    killed, a sync cut short) is neither a copy to stamp nor a reason to fail."""
    damaged = b"\x1f\x8b\x08\x00" + b"cut short"
    (built.public / "sitemap.xml.gz").write_bytes(damaged)
    result = stamp(built)
    assert result.code == 0, result.err
    assert (built.public / "sitemap.xml.gz").read_bytes() == damaged
    assert "sitemap.xml.gz" not in result.out


def test_a_sitemap_not_in_utf_8_is_refused_in_one_line_and_left(built: Site) -> None:
    """Kills _read's ``data.decode("utf-8")`` left out: a Latin-1 sitemap (declared so, which
    the reader accepts) would be rewritten as UTF-8 under a Latin-1 declaration."""
    text = INDEX.replace('encoding="UTF-8"', 'encoding="ISO-8859-1"').replace(f"{BASE}/feed.xml", f"{BASE}/caf\xe9.xml")
    built.sitemap.write_bytes(text.encode("latin-1"))
    built.write(built.public.joinpath("feed.xml").read_text(), "caf\xe9.xml")
    before = files(built)
    result = stamp(built)
    assert result.code == 2, result.out
    assert result.err.strip().endswith("not UTF-8; stamp rewrites UTF-8 sitemaps only (the protocol asks for UTF-8)")
    assert len(result.err.strip().splitlines()) == 1
    assert files(built) == before


def test_a_text_sitemap_in_an_index_is_read_and_left_as_it_is(built: Site) -> None:
    """Kills _stamp_files' ``continue`` for a text file raised: a sitemap.txt has no dates to stamp."""
    urls = f"{BASE}/about/\n{BASE}/posts/tea/\n"
    built.write(urls, "urls.txt")
    built.write(
        INDEX.replace(
            "</sitemapindex>", f"  <sitemap><loc>{BASE}/urls.txt</loc><lastmod>{BUILD_CLOCK}</lastmod></sitemap>\n</sitemapindex>"
        )
    )
    os.chdir(built.root)
    result = stamp(built)
    assert result.code == 0, result.err
    assert (built.public / "urls.txt").read_text() == urls


def test_a_gzip_part_with_bytes_after_its_end_is_one_line_not_a_crash(built: Site) -> None:
    """Bytes after a gzip member's end (a copy appended to, a transfer padded): the reader stops
    at the member's end, stamp's whole-file read refuses it in one line, exit 2, naming the
    files it had rewritten before (each whole; it said "cannot read it (None)", gzip's error
    having no strerror). The part itself is left as it was."""
    part = built.public / "pages.xml.gz"
    damaged = part.read_bytes() + b"\x00\x00padding"
    part.write_bytes(damaged)
    result = stamp(built)
    assert result.code == 2, (result.out, result.err)
    line = result.err.strip()
    assert len(line.splitlines()) == 1 and "pages.xml.gz: cannot read it (" in line and "(None)" not in line
    assert "); build the site again" in line  # a damaged gzip is a build's to remake, not a file to give access to
    assert "stamp had rewritten " in line and line.endswith("run stamp again once that is fixed")
    assert part.read_bytes() == damaged


def test_a_source_file_with_no_date_and_no_commit_leaves_its_page(built: Site) -> None:
    """content/posts/milk.md written, not committed, no date in its front matter: the page is
    left as it was and named (kills ``given is not None and`` dropped from ContentDates.of,
    which unpacked the missing date: exit 70)."""
    (built.root / "content" / "posts" / "milk.md").write_text("---\ntitle: Milk\n---\n")
    result = stamp(built)
    assert result.code == 0, result.err
    assert "2 page(s) left as they were" in result.out
