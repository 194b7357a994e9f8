"""Built pages, each read once: its content fingerprint (with ``--site-dir``) and what its
``<head>`` says about being indexed (robots meta, canonical, base, refresh).

A page is read whole only to fingerprint it; the head alone (up to ``</head>``, ``<body>``
or HEAD_LIMIT bytes) is parsed, with lxml's HTML parser, and only for the pages whose
verdict can matter: those the deploy may add or change. Files are read and hashed on
every core (hashlib and libxml2 let go of the GIL while they work).
"""

from __future__ import annotations

import concurrent.futures
import hashlib
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from notifier.build import Build
from notifier.head import HEAD_LIMIT, NO_HEAD, Head, noteworthy, read_head
from notifier.hosting import Headers, Redirects
from notifier.robots import Robots
from notifier.sitemap_files import Row
from notifier.store import Record, lastmod_of

_BATCH = 256  # pages a worker reads per task


class Page(NamedTuple):
    fingerprint: str | None
    head: Head | None


def _read_page(path: str, whole: bool, head: bool) -> Page:
    """One read of one file: whole to fingerprint it, else only as far as its head goes."""
    try:
        with open(path, "rb") as handle:
            data = handle.read() if whole else handle.read(HEAD_LIMIT)
    except OSError:
        return Page(None, None)
    digest = hashlib.blake2b(data, digest_size=16).hexdigest() if whole else None
    return Page(digest, read_head(data) if head else None)


def _read_batch(jobs: Sequence[tuple[str, bool, bool]]) -> list[Page]:
    return [_read_page(*job) for job in jobs]


class PageReader:
    """The pages of one build, read at most once each during a run.

    ``heads`` holds the head facts of every page parsed; ``missing`` the URLs asked for
    that the build has no page file for.
    """

    def __init__(self, build: Build, workers: int | None = None) -> None:
        self.build = build
        self.heads: dict[str, Head] = {}
        self.missing: set[str] = set()
        self.workers = workers or min(len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 2, 8)

    def _read(self, locs: Iterable[str], whole: bool, wants_head: Callable[[str], bool]) -> dict[str, Page]:
        root = str(self.build.root) + os.sep
        todo: list[tuple[str, str, bool]] = []
        for loc in locs:
            relative = self.build.page_file(loc)
            if relative is None:
                self.missing.add(loc)
            else:
                todo.append((loc, relative, wants_head(loc)))
        jobs = [(root + relative, whole, head) for _, relative, head in todo]
        batches = [jobs[start : start + _BATCH] for start in range(0, len(jobs), _BATCH)]
        if len(batches) > 1 and self.workers > 1:
            with concurrent.futures.ThreadPoolExecutor(max_workers=self.workers) as pool:
                pages = [page for batch in pool.map(_read_batch, batches) for page in batch]
        else:
            pages = [page for batch in batches for page in _read_batch(batch)]
        found: dict[str, Page] = {}
        for (loc, _, head), page in zip(todo, pages, strict=True):
            found[loc] = page
            if head and page.head is not None:  # an honest head is kept as the one NO_HEAD: memory stays flat
                self.heads[loc] = page.head if noteworthy(loc, page.head) else NO_HEAD
        return found

    def fingerprints(self, entries: Sequence[Row], recorded: Mapping[str, Record]) -> dict[str, str]:
        """loc -> fingerprint of its page file, for one sitemap file's entries; in the same
        read, the heads of the pages whose lastmod is new or moved (the deploy may announce them)."""

        def may_change(loc: str) -> bool:
            record = recorded.get(loc)
            return record is None or lastmod_of(record) != lastmods.get(loc) or lastmods.get(loc) is None

        lastmods = {entry[0]: entry[1] for entry in entries}
        pages = self._read(lastmods, True, may_change)
        return {loc: page.fingerprint for loc, page in pages.items() if page.fingerprint is not None}

    def read_heads(self, locs: Iterable[str]) -> None:
        """Parse the heads of ``locs`` not read yet (the deploy's added and changed pages)."""
        self._read([loc for loc in locs if loc not in self.heads and loc not in self.missing], False, lambda _: True)


@dataclass
class BuiltSite:
    """What the page rules look at: the build, its pages as read, its robots.txt, and the
    host's ``_headers`` and ``_redirects`` (Netlify, Cloudflare Pages) when it has them."""

    build: Build
    reader: PageReader
    robots: Robots | None = None
    headers: Headers | None = None
    redirects: Redirects | None = None

    @classmethod
    def load(cls, root: Path) -> BuiltSite:
        build = Build.scan(root)
        robots, headers, redirects = build.read_text("robots.txt"), build.read_text("_headers"), build.read_text("_redirects")
        return cls(
            build,
            PageReader(build),
            Robots.parse(robots) if robots is not None else None,
            Headers.parse(headers) if headers is not None else None,
            Redirects.parse(redirects) if redirects is not None else None,
        )
