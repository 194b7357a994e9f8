"""Built pages, each read once: its content fingerprint (with ``--site-dir``) and what its
``<head>`` says about being indexed (robots meta, canonical, base, refresh).

A page is read whole only to fingerprint it; the head alone (where the HTML parser ends it,
or HEAD_LIMIT bytes) is parsed, with lxml's HTML parser, and only for the pages whose
verdict can matter: those the deploy may add or change. Many files are read and hashed
on every core, in worker processes, and each worker finds the page files it reads: the
build is not scanned first. A scan (a listing of every folder, 0.87 s of CPU at 50,000
page folders, on one worker while the other waited) cost half as much again as reading and
hashing the pages. A page file is opened where its folder was looked at, with no ``lstat``
of it first, and read with plain ``os.read`` calls (``SiteFolder.open_page``): an ``lstat``
and a buffered file object cost a fifth of a worker's time at 50,000 pages of 8 KB.
"""

from __future__ import annotations

import concurrent.futures
import concurrent.futures.process
import functools
import hashlib
import itertools
import os
import re
import tomllib
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple, TypeVar

from notifier.errors import InputError
from notifier.paths import cannot
from notifier.site.folder import SiteFolder
from notifier.site.head import HEAD_LIMIT, NO_HEAD, Head, noteworthy, read_head
from notifier.site.hosting import DEFAULT_PLATFORM, PLATFORMS, Headers, Platform, Redirects
from notifier.site.robots import Robots
from notifier.sitemap.files import Row
from notifier.store import Record, lastmod_of
from notifier.workers import Workers

_BATCH = 512  # pages a worker reads per task
_READERS = itertools.count()  # tells one reader's lookups from another's in a worker that outlives a run
_SLICE = 8192  # pages of one sitemap file handed out at a time
_CHUNK = 1 << 20  # bytes hashed at a time: memory stays flat whatever a listed file weighs


class Page(NamedTuple):
    read: bool  # False: the file could not be read
    fingerprint: str | None  # when read whole
    head: Head | None  # when its head was wanted and says something (None: nothing noteworthy)


_UNREAD = Page(False, None, None)

# What a generator writes into a page on every build, or with every release of itself, that
# is no content: a page differing only there is the same page. Each is found by its literal
# marker first (at C speed), then cut out; a page without any is hashed as its bytes are.
GENERATOR_STAMPS: dict[str, tuple[bytes, re.Pattern[bytes]]] = {
    # MkDocs' mkdocs and readthedocs themes, on the home page: "<!--\nMkDocs version : 1.6.1\nBuild Date UTC : ...\n-->"
    "mkdocs": (b"Build Date UTC", re.compile(rb"<!--\s*MkDocs version\s*:[^<>]{0,200}?Build Date UTC\s*:[^<>]{0,100}?-->")),
    # jekyll-seo-tag (GitHub Pages' default), on every page: "<!-- Begin Jekyll SEO tag v2.8.0 -->"
    "jekyll": (b"Jekyll SEO tag v", re.compile(rb"<!-- Begin Jekyll SEO tag v[\w.]{1,20} -->")),
}
_SCRUBBED = 8 << 20  # bytes: a page up to this is held to cut its stamps out; a larger file (a video) is hashed as it streams


_BANGS_LOOKED_AT = 16  # "!"s checked one by one before the page is searched for "<!--" as a whole


def has_comment(data: bytes) -> bool:
    """Whether ``data`` holds ``<!--``. A page has few "!"s (its ``<!DOCTYPE``, a comment's, a
    sentence's), and finding the next one is a memchr: about 0.8 µs for a page of 8 KB, where
    ``b"<!--" in data`` skips through it in steps of four (5 µs, a sixth of reading a page).
    A page of many "!"s is searched the plain way after the first few."""
    at = data.find(b"!")
    for _ in range(_BANGS_LOOKED_AT):
        if at < 0:
            return False
        if data[at - 1 : at + 3] == b"<!--":
            return True
        at = data.find(b"!", at + 1)
    return b"<!--" in data


def without_generator_stamps(data: bytes) -> bytes:
    """A page's bytes without the comments ``GENERATOR_STAMPS`` knows (each a comment: a page
    with none is looked through once, not once a generator)."""
    if not has_comment(data):
        return data
    for marker, pattern in GENERATOR_STAMPS.values():
        if marker in data:
            data = pattern.sub(b"", data)
    return data


def _read_page(path: str, whole: bool, loc: str | None) -> Page:
    """One read of the file at ``path`` (see ``_read_open``)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)  # a FIFO: an error, never a wait
        size = os.fstat(fd).st_size
    except OSError:
        return _UNREAD
    return _read_open(fd, size, whole, loc)


def _read_open(fd: int, size: int, whole: bool, loc: str | None) -> Page:
    """One read of the open file ``fd`` (``size`` bytes when opened), closed after: whole to
    fingerprint it, else only as far as its head goes; its head parsed when ``loc`` is given
    (and kept only when it says something). Plain ``os.read`` calls: a buffered file object
    costs half as much again as the read itself for a page of a few kilobytes."""
    digest = None
    try:
        data = _read_up_to(fd, HEAD_LIMIT, size)  # the head's bytes at most are kept: a 2 GB video listed is hashed, not held
        if whole:
            digest = _fingerprint(fd, data, size)
    except OSError:
        return _UNREAD
    finally:
        os.close(fd)
    if loc is None:
        return Page(True, digest, None)
    head = read_head(data)
    return Page(True, digest, head if noteworthy(loc, head) else None)


def _read_up_to(fd: int, limit: int, size: int) -> bytes:
    """Up to ``limit`` bytes of ``fd``: one read when the file is no larger than ``size`` said
    (no second read to find its end), more while a read comes back short."""
    first = os.read(fd, limit)
    if not first or len(first) >= min(limit, size):  # the end, or as much as was asked for
        return first
    pieces = [first]
    got = len(first)
    while got < limit and (piece := os.read(fd, limit - got)):
        pieces.append(piece)
        got += len(piece)
    return b"".join(pieces)


def _fingerprint(fd: int, head: bytes, size: int) -> str:
    """The content fingerprint of the file ``fd`` reads, ``head`` its first bytes: of its
    bytes without a generator's stamps (``without_generator_stamps``) when it is page-sized."""
    page = head + _read_up_to(fd, _SCRUBBED - len(head) + 1, size - len(head)) if len(head) == HEAD_LIMIT else head
    if len(page) <= _SCRUBBED:
        return hashlib.blake2b(without_generator_stamps(page), digest_size=16).hexdigest()
    hasher = hashlib.blake2b(page, digest_size=16)
    while chunk := os.read(fd, _CHUNK):
        hasher.update(chunk)
    return hasher.hexdigest()


def fingerprint_bytes(data: bytes) -> str:
    """The content fingerprint of a whole page held in memory (a live page's answer), the same
    as ``_fingerprint`` gives its file: a served page is compared with the build's."""
    if len(data) <= _SCRUBBED:
        return hashlib.blake2b(without_generator_stamps(data), digest_size=16).hexdigest()
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def file_fingerprint(path: str) -> str | None:
    """The content fingerprint of the file at ``path``, or None when it cannot be read."""
    return _read_page(path, True, None).fingerprint


PAGE_LIMIT = _SCRUBBED + 1  # bytes of a live page read to fingerprint it: a larger one is fingerprinted raw, and differs


_looking: list[tuple[tuple[str, str, int], SiteFolder]] = []  # this process's lookups for the run reading now


class _Answer(NamedTuple):
    """A worker's answer for one batch of URLs, by their places in the batch: plain lists of
    strings and numbers pickle faster than a tuple a page (and make no object a page here)."""

    prints: list[str | None]  # each URL's fingerprint, None when not read whole (or not read, or no file)
    missing: list[int]  # the URLs the build has no page file for
    heads: list[tuple[int, Head | None]]  # the wanted heads of the pages read (None: nothing noteworthy)


def _batched(items: Iterable[str], size: int) -> Iterator[tuple[str, ...]]:
    """``items`` ``size`` at a time (itertools.batched, from Python 3.12)."""
    it = iter(items)
    while part := tuple(itertools.islice(it, size)):
        yield part


def _folder_of(run: tuple[str, str, int]) -> SiteFolder:
    """This process's unscanned view of the build ``run`` (root, base, reader) reads: what it
    looked at is remembered for that reader only (a later run sees the build as it is then)."""
    if not _looking or _looking[0][0] != run:
        _looking[:] = [(run, SiteFolder.unscanned(Path(run[0]), run[1]))]
    return _looking[0][1]


def _read_batch(run: tuple[str, str, int], locs: Sequence[str], whole: bool, wanted: bytes) -> _Answer:
    """The pages of ``locs``: whole (fingerprints) or only their heads; ``wanted[n]`` says
    whether the head of ``locs[n]`` is parsed."""
    folder = _folder_of(run)
    answer = _Answer([], [], [])
    prints, missing, heads = answer
    for n, loc in enumerate(locs):
        opened = folder.open_page(loc)
        if opened is None:
            missing.append(n)
            prints.append(None)
            continue
        page = _read_open(*opened, whole, loc if wanted[n] else None)
        prints.append(page.fingerprint)
        if wanted[n] and page.read:
            heads.append((n, page.head))
    return answer


class PageReader:
    """The pages of one build, read at most once each during a run, on the run's worker
    processes when there are many (see notifier/workers.py for why not threads).

    ``heads`` holds the head facts of every page parsed (NO_HEAD when it says nothing a
    rule acts on); ``missing`` the URLs asked for that the build has no page file for.
    """

    def __init__(self, folder: SiteFolder, workers: Workers | None = None) -> None:
        self.folder = folder
        self.workers = workers or Workers(1)
        self.heads: dict[str, Head] = {}
        self.missing: set[str] = set()
        self._run_key = (str(folder.root), folder.base, next(_READERS))

    def _read(
        self, locs: Iterable[str], whole: bool, wants_head: Callable[[str], bool], pool: concurrent.futures.Executor | None
    ) -> dict[str, str]:
        """Read the pages of ``locs`` (each at most once, whole when ``whole``), keeping the heads
        ``wants_head`` asks for and the URLs without a page file; loc -> fingerprint of those read whole."""
        found: dict[str, str] = {}
        batches = ((part, bytes(map(wants_head, part))) for part in _batched(locs, _BATCH))
        for part, (prints, missing, heads) in self._run(batches, whole, pool):
            for n, head in heads:  # an honest head is kept as the one NO_HEAD: memory stays flat
                self.heads[part[n]] = head or NO_HEAD
            if whole:
                found.update((loc, fingerprint) for loc, fingerprint in zip(part, prints, strict=True) if fingerprint is not None)
            for n in missing:
                self.missing.add(part[n])
        return found

    def _run(
        self, batches: Iterator[tuple[tuple[str, ...], bytes]], whole: bool, pool: concurrent.futures.Executor | None
    ) -> Iterator[tuple[tuple[str, ...], _Answer]]:
        """Each batch with its worker's answer: on the workers when there are two batches or
        more, each sent as soon as it is made (``map`` would make every batch before it sends
        the first, and a worker would wait for this process); read here when a worker dies (the
        batches not yet answered, and the rest)."""
        read = functools.partial(_read_batch, self._run_key)
        opening = list(itertools.islice(batches, 2))
        source = itertools.chain(opening, batches)
        sent: list[tuple[tuple[str, ...], bytes]] = []  # in the order sent: answered in that order
        answered = 0
        if pool is not None and len(opening) > 1:
            futures: list[concurrent.futures.Future[_Answer]] = []
            try:
                for part, wanted in source:
                    sent.append((part, wanted))
                    futures.append(pool.submit(read, part, whole, wanted))
                for (part, _), future in zip(sent, futures, strict=True):
                    answer = future.result()
                    answered += 1
                    yield part, answer
                return
            except (concurrent.futures.process.BrokenProcessPool, RuntimeError):
                self.workers.broken()  # a worker died, or the pool was shut: read here, one by one
                for future in futures:
                    future.cancel()
        for part, wanted in itertools.chain(sent[answered:], source):  # those not answered, then those not sent
            yield part, read(part, whole, wanted)

    def fingerprints(self, entries: Sequence[Row], recorded: Mapping[str, Record]) -> dict[str, str]:
        """loc -> fingerprint of its page file, for one sitemap file's entries; in the same
        read, the heads of the pages whose lastmod is new or moved (the deploy may announce them)."""

        lastmods: dict[str, str | None] = {}

        def may_change(loc: str) -> bool:
            record = recorded.get(loc)
            return record is None or lastmod_of(record) != lastmods.get(loc) or lastmods.get(loc) is None

        found: dict[str, str] = {}
        for start in range(0, len(entries), _SLICE):  # a slice at a time: the jobs and answers stay small
            lastmods = {entry[0]: entry[1] for entry in entries[start : start + _SLICE]}
            found.update(self._read(lastmods, True, may_change, self.workers.pool()))
        return found

    def read_heads(self, locs: Iterable[str]) -> None:
        """Parse the heads of ``locs`` not read yet (the deploy's added and changed pages)."""
        todo = [loc for loc in locs if loc not in self.heads and loc not in self.missing]
        # the run's workers when they are up (--site-dir), or worth starting (a first run: every page)
        many = self.workers.started or len(todo) >= 4 * _BATCH
        self._read(todo, False, lambda _: True, self.workers.pool() if many else None)


_HostRules = TypeVar("_HostRules", Headers, Redirects)


class BuiltSite:
    """What the page rules look at: the build, its pages as read, its robots.txt, and the
    host's ``_headers`` and ``_redirects`` (Netlify, Cloudflare Pages) when it has them."""

    def __init__(self, reader: PageReader, platform: Platform = PLATFORMS[DEFAULT_PLATFORM], project: Path | None = None) -> None:
        self.reader = reader
        self.platform = platform
        self.project = project  # where netlify.toml is looked for (the repository), on Netlify

    @classmethod
    def load(
        cls,
        root: Path,
        workers: Workers | None = None,
        *,
        every_page: bool = True,
        platform: str = DEFAULT_PLATFORM,
        project: Path | None = None,
        base: str = "",
    ) -> BuiltSite:
        """``every_page``: every page will be read (fingerprints): the run's workers are forked
        now, while the sitemap is parsed. Each page is looked up where it is read, never by a
        scan of the build (see the module's docstring). ``base``: the URL path the build is
        served under."""
        if every_page and workers is not None:
            workers.pool()
        return cls(PageReader(SiteFolder.unscanned(root, base), workers), PLATFORMS[platform], project)

    @property
    def folder(self) -> SiteFolder:
        return self.reader.folder

    @functools.cached_property
    def robots(self) -> Robots | None:
        text = self.folder.read_text("robots.txt")
        return Robots.parse(text) if text is not None else None

    @functools.cached_property
    def headers(self) -> Headers | None:
        return self._host_rules(Headers, "_headers", "headers")

    @functools.cached_property
    def redirects(self) -> Redirects | None:
        return self._host_rules(Redirects, "_redirects", "redirects")  # Netlify applies _redirects first, then netlify.toml

    def host_notes(self) -> list[str]:
        """What the host never applies of its ``_redirects``, ``_headers`` and netlify.toml, a note a cause."""
        return [note for rules in (self.redirects, self.headers) if rules is not None for note in rules.notes()]

    def _host_rules(self, kind: type[_HostRules], file: str, table: str) -> _HostRules | None:
        """The build's ``file`` and netlify.toml's ``[[table]]`` as one set of rules; None when neither exists."""
        text = self.folder.read_text(file)
        toml = self._netlify_toml.get(table)
        if text is None and not isinstance(toml, list):
            return None
        rules = kind.parse(text or "", self.platform)
        if isinstance(toml, list):
            rules.add_toml(toml)
        return rules

    @functools.cached_property
    def _netlify_toml(self) -> dict[str, Any]:
        """The repository's netlify.toml on Netlify ({} when there is none)."""
        path = self.project / "netlify.toml" if self.project is not None else None
        if not self.platform.netlify_toml or path is None or not path.is_file():
            return {}
        try:
            with path.open("rb") as handle:
                return tomllib.load(handle)
        except tomllib.TOMLDecodeError as error:
            raise InputError(f"{path}: not valid TOML ({error}); Netlify refuses it too") from None
        except OSError as error:
            raise InputError(f"{path}: {cannot('read it', error)}") from None
