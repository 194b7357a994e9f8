"""What notifier/site/pages.py does that the mutation run found no test stating (#44): a file that
cannot be read has no fingerprint, a page of exactly 8 MiB is still scrubbed of generator stamps,
a larger one is hashed whole and as a live page's bytes are, and pages are read here when the
workers' pool breaks. Each test names the edit it catches; the edits that cannot change what a
user sees are in scripts/mutants-equivalent.txt with their reasons."""

from __future__ import annotations

import concurrent.futures
import concurrent.futures.process
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import notifier.site.pages as pages_module
from notifier.site.folder import SiteFolder
from notifier.site.pages import (
    GENERATOR_STAMPS,
    PAGE_LIMIT,
    PageReader,
    file_fingerprint,
    fingerprint_bytes,
    has_comment,
    without_generator_stamps,
)
from notifier.workers import Workers
from tests.conftest import BASE

SCRUBBED = 8 << 20  # a page up to 8 MiB is scrubbed of generator stamps (written out: the tests must fail when the limit moves)


def _page(size: int, stamp: bytes = b"<!-- Begin Jekyll SEO tag v2.8.0 -->", tail: bytes = b"") -> bytes:
    """``size`` bytes of a page holding ``stamp``, ending with ``tail``."""
    start = b"<!DOCTYPE html><html><head>" + stamp + b"</head><body>"
    return start + b"x" * (size - len(start) - len(tail)) + tail


# -- _read_page -----------------------------------------------------------------------------------
def test_a_file_that_cannot_be_read_has_no_fingerprint(tmp_path: Path) -> None:
    """file_fingerprint (the build's page for --verify-live) of a path that cannot be opened is
    None, not an error. Fails if ``return _UNREAD`` after ``except OSError`` in
    site/pages.py::_read_page is made a raise."""
    assert file_fingerprint(str(tmp_path / "gone.html")) is None
    assert file_fingerprint(str(tmp_path)) is None  # a folder: no page either


# -- _fingerprint and fingerprint_bytes ---------------------------------------------------------------
def test_a_page_of_exactly_eight_mib_is_scrubbed_of_generator_stamps(tmp_path: Path) -> None:
    """A page of exactly _SCRUBBED bytes differing only in its jekyll-seo-tag version is the same
    page, from its file and from a live answer's bytes. Fails if ``len(page) <= _SCRUBBED``
    becomes ``<`` in site/pages.py::_fingerprint, or ``len(data) <= _SCRUBBED`` becomes ``<`` in
    site/pages.py::fingerprint_bytes."""
    old, new = _page(SCRUBBED), _page(SCRUBBED, b"<!-- Begin Jekyll SEO tag v2.8.1 -->")
    assert len(old) == len(new) == SCRUBBED
    (tmp_path / "old.html").write_bytes(old)
    (tmp_path / "new.html").write_bytes(new)
    assert file_fingerprint(str(tmp_path / "old.html")) == file_fingerprint(str(tmp_path / "new.html"))
    assert fingerprint_bytes(old) == fingerprint_bytes(new)
    bigger, other = _page(SCRUBBED + 1), _page(SCRUBBED + 1, b"<!-- Begin Jekyll SEO tag v2.8.1 -->")
    assert fingerprint_bytes(bigger) != fingerprint_bytes(other)  # past 8 MiB the bytes are hashed as they are
    (tmp_path / "bigger.html").write_bytes(bigger)
    (tmp_path / "other.html").write_bytes(other)
    assert file_fingerprint(str(tmp_path / "bigger.html")) != file_fingerprint(
        str(tmp_path / "other.html")
    )  # (edits: _SCRUBBED 9 or 16 MiB)
    assert PAGE_LIMIT == SCRUBBED + 1


def test_a_file_over_eight_mib_is_hashed_whole_as_its_live_bytes_are(tmp_path: Path) -> None:
    """A file past _SCRUBBED is hashed as it streams, every byte of it, to the fingerprint the
    same bytes served live give (a 16-byte digest). Fails if ``hasher.update(chunk)`` is left
    out or made a raise, or ``digest_size=16`` becomes 17 for the streamed hash, in
    site/pages.py::_fingerprint; or the raw hash's ``digest_size=16`` becomes 17 in
    site/pages.py::fingerprint_bytes."""
    data, edited = _page(SCRUBBED + 100, tail=b"end"), _page(SCRUBBED + 100, tail=b"END")
    (tmp_path / "a.bin").write_bytes(data)
    (tmp_path / "b.bin").write_bytes(edited)
    fingerprint = file_fingerprint(str(tmp_path / "a.bin"))
    assert fingerprint == fingerprint_bytes(data) and fingerprint is not None and len(fingerprint) == 32
    assert file_fingerprint(str(tmp_path / "b.bin")) == fingerprint_bytes(edited) != fingerprint  # the last bytes count


# -- PageReader._run ----------------------------------------------------------------------------------
class _BrokenPool(concurrent.futures.Executor):
    """A pool whose worker died: a submit raises, as ProcessPoolExecutor's does once it knows,
    or (``answers`` > 0) that many batches are answered first and every later one fails (a
    worker killed mid-read)."""

    def __init__(self, answers: int = 0) -> None:
        self.answers = answers
        self.sent: list[tuple[str, ...]] = []

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> concurrent.futures.Future[Any]:
        if self.answers == 0:
            raise concurrent.futures.process.BrokenProcessPool("a worker died")
        self.sent.append(args[0])
        future: concurrent.futures.Future[Any] = concurrent.futures.Future()
        if len(self.sent) <= self.answers:
            future.set_result(fn(*args, **kwargs))
        else:
            future.set_exception(concurrent.futures.process.BrokenProcessPool("a worker died"))
        return future


def test_pages_are_read_here_when_the_workers_pool_breaks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A worker killed mid-read (for memory): the pages are read in this process, each found or
    missing as it is, and the run's later steps work here. Fails if ``self.workers.broken()`` in
    site/pages.py::PageReader._run is made a raise."""
    monkeypatch.setattr(pages_module, "_BATCH", 1)  # two pages, two batches: the pool is used
    (tmp_path / "a.html").write_text("<html><head><title>a</title></head></html>")
    workers = Workers(1)
    reader = PageReader(SiteFolder.unscanned(tmp_path), workers)
    found = reader._read([f"{BASE}/a", f"{BASE}/b"], True, lambda _: True, _BrokenPool())
    assert list(found) == [f"{BASE}/a"] and found[f"{BASE}/a"] == file_fingerprint(str(tmp_path / "a.html"))
    assert reader.missing == {f"{BASE}/b"} and workers.pool() is None and not workers.started


def test_a_worker_dying_after_some_batches_leaves_no_page_unread_or_read_twice(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Five batches of one page; the pool answers the first two, then its worker dies: the
    three not answered are read here, each page once, and every fingerprint, head and missing
    URL is what one process alone finds. Fails if the batches not answered are passed over
    (``sent[answered:]``), read again from the first (``sent``), or the ones not yet sent lost."""
    monkeypatch.setattr(pages_module, "_BATCH", 1)
    for name in "acd":
        (tmp_path / f"{name}.html").write_text(f'<html><head><meta name="robots" content="noindex"><title>{name}</title></head></html>')
    locs = [f"{BASE}/{name}" for name in "abcde"]
    alone = PageReader(SiteFolder.unscanned(tmp_path))
    expected = alone._read(locs, True, lambda _: True, None)
    read: list[str] = []
    read_batch = pages_module._read_batch

    def counted(run: tuple[str, str, int], part: tuple[str, ...], whole: bool, wanted: bytes) -> Any:
        read.extend(part)
        return read_batch(run, part, whole, wanted)

    monkeypatch.setattr(pages_module, "_read_batch", counted)
    reader = PageReader(SiteFolder.unscanned(tmp_path), Workers(1))
    pool = _BrokenPool(answers=2)
    found = reader._read(locs, True, lambda _: True, pool)
    assert read == locs  # each once, in order: two by the pool, three here
    assert found == expected and list(found) == [f"{BASE}/a", f"{BASE}/c", f"{BASE}/d"]
    assert reader.missing == alone.missing == {f"{BASE}/b", f"{BASE}/e"}
    assert reader.heads == alone.heads and all(head.robots for head in reader.heads.values()) and len(reader.heads) == 3
    assert len(pool.sent) == 5  # every batch was sent before the first answer was waited for


def test_every_generator_stamp_is_a_comment_and_a_page_without_one_is_looked_through_once() -> None:
    """without_generator_stamps looks for ``<!--`` first and returns a page without any as it is
    (one scan, not one a generator): that holds only while every stamp's pattern is a comment.
    The honest page beside the stamped ones: a page with a comment but no stamp keeps its bytes.
    Fails if the ``<!--`` test becomes ``in`` (a stamped page is then kept whole), or when a
    stamp that is no comment is added to GENERATOR_STAMPS (the shortcut would skip it)."""
    for marker, pattern in GENERATOR_STAMPS.values():
        assert pattern.pattern.startswith(b"<!--") and marker not in b"<!--"
    mkdocs = b"<p>x</p><!--\nMkDocs version : 1.6.1\nBuild Date UTC : 2026-12-07 01:00:00.123456+00:00\n-->"
    jekyll = b"<head><!-- Begin Jekyll SEO tag v2.8.0 --><title>t</title></head>"
    assert without_generator_stamps(mkdocs) == b"<p>x</p>"
    assert without_generator_stamps(jekyll) == b"<head><title>t</title></head>"
    plain, commented = b"<p>Build Date UTC</p>", b"<!-- a note --><p>Build Date UTC</p>"
    assert without_generator_stamps(plain) is plain and without_generator_stamps(commented) == commented


@pytest.mark.parametrize(
    ("data", "found"),
    [
        (b"<!DOCTYPE html><p>Tea!</p>", False),
        (b"<!DOCTYPE html><!-- a note -->", True),
        (b"<!--first", True),  # at the very start: data[-1:3] is no slice of it
        (b"!--", False),  # no "<" before the "!"
        (b"Wow! " * 40 + b"<!-- late -->", True),  # past the "!"s looked at one by one: the plain search
        (b"Wow! " * 40, False),
        (b"<!DOCTYPE html><!- not a comment -->", False),
    ],
)
def test_a_comment_is_found_wherever_it_is(data: bytes, found: bool) -> None:
    """has_comment agrees with ``b"<!--" in data`` on every shape: the first "!", the start of
    the page, many "!"s before it. Fails if its loop's bound, its slice or its fallback changes."""
    assert has_comment(data) is found is (b"<!--" in data)


# -- _read_up_to and _read_open ------------------------------------------------------------------------
def test_a_file_read_in_short_pieces_is_read_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A file system that answers a read with fewer bytes than asked (FUSE, NFS, a network
    share) still gives the whole page, and its fingerprint is the page's: each read of this
    test returns at most 1,000 bytes. Fails if in site/pages.py::_read_up_to the loop's
    ``pieces.append(piece)`` or ``got += len(piece)`` is left out, or its ``and`` becomes ``or``."""
    data = _page(70_000, tail=b"the end")  # more than HEAD_LIMIT (64 KiB): two calls of _read_up_to
    (tmp_path / "a.html").write_bytes(data)
    real_read = os.read

    def short(fd: int, size: int) -> bytes:
        return real_read(fd, min(size, 1000))

    expected = file_fingerprint(str(tmp_path / "a.html"))
    monkeypatch.setattr(os, "read", short)
    assert file_fingerprint(str(tmp_path / "a.html")) == expected == fingerprint_bytes(data)
    fd = os.open(str(tmp_path / "a.html"), os.O_RDONLY)
    try:
        assert pages_module._read_up_to(fd, 5000, len(data)) == data[:5000]  # no more than asked for
        assert pages_module._read_up_to(fd, 1 << 20, len(data)) == data[5000:]  # to the end
    finally:
        os.close(fd)


def _open_descriptors() -> int:
    return len(list(Path("/proc/self/fd").iterdir()))


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="counts descriptors in /proc")
def test_reading_pages_leaves_no_file_open(tmp_path: Path) -> None:
    """Two thousand pages read (fingerprint and head), and as many folders named like a page
    (``x/index.html`` a folder, no page): afterwards as many descriptors are open as before (a
    build of 200,000 pages would otherwise end at the system's limit). Fails if ``os.close(fd)``
    is left out in site/pages.py::_read_open or in site/folder.py::_regular."""
    for n in range(2000):
        (tmp_path / "p" / str(n)).mkdir(parents=True)
        (tmp_path / "p" / str(n) / "index.html").write_text(f"<html><head><title>{n}</title></head></html>")
        (tmp_path / "q" / str(n) / "index.html").mkdir(parents=True)
    locs = [f"{BASE}/{folder}/{n}/" for folder in "pq" for n in range(2000)]
    before = _open_descriptors()
    reader = PageReader(SiteFolder.unscanned(tmp_path))
    found = reader._read(locs, True, lambda loc: "/p/" in loc, None)
    assert len(found) == 2000 and len(reader.missing) == 2000 and len(reader.heads) == 2000
    assert _open_descriptors() == before


def test_a_page_that_cannot_be_read_has_no_head(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A page file the build has but that cannot be read (an I/O error): neither missing nor an
    honest head, just unread (edit: ``_UNREAD``'s ``read`` made True, which files it as a head that says nothing)."""
    (tmp_path / "a.html").write_text("<html><head><title>a</title></head></html>")
    (tmp_path / "b.html").write_text("<html><head><title>b</title></head></html>")
    real = pages_module._read_up_to

    def failing(fd: int, limit: int, size: int) -> bytes:
        if os.readlink(f"/proc/self/fd/{fd}").endswith("b.html"):
            raise OSError(5, "Input/output error")
        return real(fd, limit, size)

    monkeypatch.setattr(pages_module, "_read_up_to", failing)
    reader = PageReader(SiteFolder.unscanned(tmp_path))
    reader.read_heads([f"{BASE}/a", f"{BASE}/b"])
    assert list(reader.heads) == [f"{BASE}/a"] and reader.missing == set()
