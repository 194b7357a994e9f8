"""Read a built sitemap: a urlset, a sitemap index and its parts, gzip, or plain text.

This module walks an index and its parts (in parallel for a local build); each file's
format is read by ``xml`` or ``text``, what they hand over is defined in
``files``.

The reader never hands lxml a path or a URL: it reads the bytes itself, with a cap on
what it reads and on what it decompresses, and feeds them to a strict, streaming parser
that refuses any DOCTYPE, resolves no entity and never touches the network. Memory
grows with the number of URLs, not with the size of the files.
"""

from __future__ import annotations

import concurrent.futures
import concurrent.futures.process
import dataclasses
import gzip
import itertools
import urllib.parse
import zlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import cast

from notifier.errors import InputError
from notifier.paths import is_inside, is_url
from notifier.paths import resolved as _real
from notifier.sitemap.files import (
    MAX_URLS_PER_FILE,
    Condense,
    Condenser,
    Entry,
    Finding,
    IndexPart,
    ReadOptions,
    Row,
    Sitemap,
    SitemapFile,
    facts_of,
    hide_passwords,
    make_entry,
)
from notifier.sitemap.items import NS_084, NS_09, XML_SPACE
from notifier.sitemap.source import Source, file_digest, same_site
from notifier.sitemap.text import parse_text as _parse_text
from notifier.sitemap.xml import BOM, NEWS, WHITESPACE_BYTES
from notifier.sitemap.xml import parse_xml as _parse_xml
from notifier.urls import credentials, join_url, split_url, under_base, userinfo, without_password
from notifier.workers import Workers

__all__ = [
    "MAX_URLS_PER_FILE",
    "NS_084",
    "NS_09",
    "XML_SPACE",
    "Entry",
    "Finding",
    "ReadOptions",
    "Row",
    "Sitemap",
    "SitemapFile",
    "facts_of",
    "make_entry",
    "read_sitemap",
]

MAX_INDEX_DEPTH = 2  # an index inside an index is a finding; one more level is refused


def read_sitemap(
    location: str,
    options: ReadOptions = ReadOptions(),
    sink: Callable[[SitemapFile, Sequence[Row] | None], None] | None = None,
    *,
    known: Mapping[str, str] | None = None,
    condenser: Condenser | None = None,
) -> Sitemap:
    """Read SITEMAP (a path or an http(s) URL) and, for an index, every part it lists.

    With ``sink``, each file's entries are handed over as soon as the file is read (see
    ``Sitemap.sink``) and ``entries`` stays empty: memory then holds one file at a time.
    ``known``: file key -> the digest recorded last deploy; a local file with those bytes
    is not parsed (``SitemapFile.skipped``). ``condenser``: what the workers that read an
    index's parts may hand over instead of a file's rows (see ``Condenser``).
    """
    sitemap = Sitemap(sink=sink)
    remote = is_url(location)
    if remote:
        # basic auth (https://user:pw@staging/sitemap.xml): the sitemap is named without it
        # in every message, report, state and log; it goes only in its own site's requests
        location, auth = credentials(location)
        options = dataclasses.replace(options, auth=auth) if auth is not None else options
        sitemap.root_url = location
        base_dir = None
    else:
        path = Path(location)
        base_dir = _real(options.site_dir or path.parent)
        if options.site_dir is not None and not base_dir.is_dir():
            raise InputError(f"--site-dir {options.site_dir}: no such folder; pass the build output root")
    _Walk(options, known or {}, base_dir, sitemap, condenser=condenser).read(location, None, 0, ())
    return sitemap


def _declares_news(path: str) -> bool:
    """Whether an unparsed local file's root declares the news namespace (it comes first)."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(4096)
            if head.startswith(b"\x1f\x8b"):
                handle.seek(0)
                with gzip.open(handle) as unpacked:
                    head = unpacked.read(4096)
    except (OSError, EOFError, zlib.error):
        return False
    return NEWS.encode() in head


def _identity(location: str) -> str:
    """What makes two listings the same file: the URL, or the real path of a local file."""
    return location if is_url(location) else str(_real(location))


def _refuse_cycles(resolved: list[tuple[str, str | None]], chain: tuple[tuple[str, str], ...]) -> None:
    """An index that lists one of the indexes that led to it makes a cycle: say so, naming them."""
    keys = [key for key, _ in chain]
    for part_location, _ in resolved:
        key = _identity(part_location)
        if key in keys:
            names = [location for _, location in chain[keys.index(key) :]]
            if len(names) == 1:
                raise InputError(f"{names[0]}: the sitemap index lists itself (a cycle of one); remove that <sitemap> entry")
            raise InputError(
                f"sitemap indexes list each other in a cycle: {' -> '.join([*names, names[0]])}; list the parts once, in one index"
            )


def _hand_over(sitemap: Sitemap, offset: int, rows: list[Row]) -> None:
    """Give the sink the files a worker read (one, or an index's parts), each with its entries."""
    assert sitemap.sink is not None
    by_file: dict[int, list[Row]] = {}
    if rows and rows[0][2] == rows[-1][2]:
        by_file[rows[0][2]] = rows
    else:
        for row in rows:
            by_file.setdefault(row[2], []).append(row)
    for file_no in range(offset, len(sitemap.files)):
        info = sitemap.files[file_no]
        if info.kind != "index":
            sitemap.sink(info, None if info.skipped else by_file.get(file_no, []))


def _read_part_job(
    walk: tuple[ReadOptions, Mapping[str, str], Path, set[str]],
    location: str,
    public_url: str | None,
    base: int,
    above: tuple[tuple[str, str], ...],
    condense: Condense | None,
) -> tuple[list[SitemapFile], list[Row], list[Finding], object | None]:
    """On a worker: read one part of an index into a Sitemap of its own; a urlset or text
    file read (not left unread) is then condensed when the main process asked for it."""
    options, known, base_dir, visited = walk
    part = Sitemap(plain=True, first_file=base)
    visited.discard(str(_real(location)))
    _Walk(options, known, base_dir, part, visited).read(location, public_url, 1, above)
    rows = cast(list[Row], part.entries)
    files = part.files
    if condense is not None and len(files) == 1 and files[0].kind != "index" and not files[0].skipped:
        condensed = condense.work(files[0], rows, condense.data)
        if condensed is not None:
            return files, [], part.findings, condensed
    return files, rows, part.findings, None


def _file_key(location: str, base_dir: Path | None) -> str:
    if base_dir is None:  # a sitemap on the web, and its parts
        return location
    path = _real(location)
    return path.relative_to(base_dir).as_posix() if is_inside(path, base_dir) else str(path)


@dataclass
class _Walk:
    """One read of a sitemap and the parts of its indexes: what reading each file shares.
    ``visited``: the identity of every file read, so that a file listed twice, or an index
    listing itself, is refused."""

    options: ReadOptions
    known: Mapping[str, str]  # file key -> digest recorded last deploy
    base_dir: Path | None  # the local build (None: a remote sitemap)
    sitemap: Sitemap  # what is read so far
    visited: set[str] = field(default_factory=set)
    condenser: Condenser | None = None

    def read(self, location: str, public_url: str | None, depth: int, above: tuple[tuple[str, str], ...]) -> None:
        """Read one file; ``above``: (key, location) of each index that led here, the root first."""
        sitemap, options, base_dir, visited = self.sitemap, self.options, self.base_dir, self.visited
        key = _identity(location)
        if key in visited:
            raise InputError(f"{location}: the sitemap index lists this file twice or lists itself; fix the index")
        visited.add(key)
        if options.progress is not None and depth == 0:  # an index's parts are counted by their loop
            options.progress(f"reading {location}")
        raw = Source(location, options.request_timeout, options.auth)
        file_no = sitemap.first_file + len(sitemap.files)
        info = SitemapFile(name=location, kind="urlset", public_url=public_url, key=_file_key(location, base_dir))
        sitemap.files.append(info)
        known = self.known.get(info.key)
        if known is not None and not is_url(location) and file_digest(location) == known:
            info.digest, info.skipped = known, True  # same bytes as last deploy: nothing to parse
            info.news = _declares_news(location)
            if sitemap.sink is not None:
                sitemap.sink(info, None)
            return
        start = len(sitemap.entries)
        chunks = raw.chunks()
        first = next(chunks, b"")
        if raw.is_text and raw.text_by_content_type and first.lstrip(BOM + WHITESPACE_BYTES).startswith(b"<"):
            raw.is_text = False  # XML served as text/plain by a misconfigured server is still XML
        chunks = itertools.chain([first], chunks)
        if raw.is_text:
            info.kind = "text"
            _parse_text(chunks, location, file_no, sitemap, info)
        else:
            parts = _parse_xml(chunks, location, file_no, sitemap, info)
            if info.kind == "index":
                if depth > 0:
                    sitemap.findings.append(
                        Finding("sitemap-limits", public_url or location, "an index inside an index; list its parts in the top index")
                    )
                resolved = [self._resolve_part(part, location, public_url) for part in parts]
                chain = (*above, (key, location))
                _refuse_cycles(resolved, chain)
                if depth + 1 >= MAX_INDEX_DEPTH + 1:
                    raise InputError(f"{location}: sitemap indexes nested more than {MAX_INDEX_DEPTH} deep; flatten them")
                workers = options.workers if depth == 0 and base_dir is not None and len(resolved) >= 2 else None
                if workers is not None and base_dir is not None and workers.pool() is not None:
                    self._read_parts_in_parallel(workers, resolved, chain)
                else:
                    for number, (part_location, part_url) in enumerate(resolved, start=1):
                        if options.step is not None and len(resolved) > 1:  # one part: a short read, said by nothing
                            options.step(f"reading part {number}/{len(resolved)}: {part_location}")
                        self.read(part_location, part_url, depth + 1, chain)
        info.digest = raw.digest()
        if info.kind != "index":
            entries = sitemap.entries[start:]
            info.facts = facts_of(entries, options.wanted)
            if info.facts.irregular and hide_passwords(entries, info.facts):
                info.facts = facts_of(entries, options.wanted)
                sitemap.entries[start:] = entries
            if sitemap.sink is not None:
                del sitemap.entries[start:]
                sitemap.sink(info, entries)
        if info.url_count > MAX_URLS_PER_FILE:
            what = "parts" if info.kind == "index" else "URLs"
            sitemap.findings.append(
                Finding(
                    "sitemap-limits",
                    public_url or location,
                    f"{info.url_count} {what} in one file, over the limit of {MAX_URLS_PER_FILE}; split it",
                )
            )

    def _read_parts_in_parallel(self, workers: Workers, resolved: list[tuple[str, str | None]], above: tuple[tuple[str, str], ...]) -> None:
        """Parse an index's local parts on every core: the parse is most of a run's time.

        Each worker reads one part into a Sitemap of its own, exactly as the serial reader
        would; the results are merged in index order, so nothing depends on which finished
        first. Workers ignore interrupts: the main process decides, and stops them.
        """
        sitemap, options, base_dir, visited = self.sitemap, self.options, self.base_dir, self.visited
        assert base_dir is not None  # parts read in parallel are local files
        for part_location, _ in resolved:
            key = str(_real(part_location))
            if key in visited:
                raise InputError(f"{part_location}: the sitemap index lists this file twice or lists itself; fix the index")
            visited.add(key)
        pool = workers.pool()
        assert pool is not None  # the caller asked
        if options.progress is not None:
            options.progress(f"reading {len(resolved)} parts on {workers.count} cores")
        # what a worker needs of this walk: no callbacks, no pool, no sitemap read so far
        walk = (dataclasses.replace(options, progress=None, step=None, workers=None), self.known, base_dir, set(visited))
        # Part i most likely becomes file number ``first + i`` (one file a part): the worker
        # numbers its entries so, and they need no rebuilding here unless a part was an index.
        first = len(sitemap.files)
        jobs: dict[int, concurrent.futures.Future[tuple[list[SitemapFile], list[Row], list[Finding], object | None]]] = {}
        condenser = self.condenser

        def submit(number: int) -> None:
            if number < len(resolved):
                location, url = resolved[number]
                condense = condenser.ask(_file_key(location, base_dir)) if condenser is not None else None
                jobs[number] = pool.submit(_read_part_job, walk, location, url, first + number, above, condense)

        # a few parts ahead of the one being compared, not all: a finished part waits in memory
        # until its turn, and the pool may be hashing page files for the parts already in
        ahead = workers.count
        for number in range(ahead):
            submit(number)
        try:
            for number in range(len(resolved)):
                job = jobs.pop(number)  # a finished future holds its result: let it go
                try:
                    submit(number + ahead)  # (a pool a worker's death broke refuses new work too)
                    files, rows, findings, condensed = job.result()
                except concurrent.futures.process.BrokenProcessPool:
                    # a worker died (killed for memory, say): read the rest here, one by one
                    workers.broken()
                    for location, url in resolved[number:]:
                        visited.discard(str(_real(location)))
                        self.read(location, url, 1, above)
                    return
                offset = len(sitemap.files)
                urls = len(rows) if condensed is None else files[0].url_count
                if condensed is None:
                    self._take_rows(offset, files, rows, findings, shift=offset - first - number)
                elif offset == first + number and condenser is not None and condenser.take(files[0], condensed):
                    sitemap.files.extend(files)
                    sitemap.findings.extend(findings)
                else:  # refused (or its rows would need numbering again): read again here, and handed over row by row
                    visited.discard(str(_real(resolved[number][0])))
                    self.read(*resolved[number], 1, above)
                if options.step is not None:
                    count = f"{urls:,} URL" + "s" * (urls != 1)
                    what = "unchanged since the last deploy" if all(each.skipped for each in files) else count
                    options.step(f"read part {number + 1}/{len(resolved)}: {resolved[number][0]}, {what}")
        except BaseException:  # the pool's owner (the run's Workers) kills its workers: waiting could hang
            jobs.clear()
            raise

    def _take_rows(self, offset: int, files: list[SitemapFile], rows: list[Row], findings: list[Finding], *, shift: int) -> None:
        """A worker's files, findings and rows, merged in (its rows numbered again when an
        earlier part turned out to be several files)."""
        sitemap = self.sitemap
        sitemap.files.extend(files)
        if shift:
            rows = [(loc, lastmod, file_no + shift, line) for loc, lastmod, file_no, line in rows]
        sitemap.findings.extend(findings)
        if sitemap.sink is None:
            sitemap.entries.extend(map(Entry._make, rows))
        else:  # the sink takes plain tuples: no Entry object per URL
            _hand_over(sitemap, offset, rows)

    def _resolve_part(self, part: IndexPart, index_location: str, index_url: str | None) -> tuple[str, str | None]:
        """Where to read an index part from: the local build, or the web for a remote index."""
        sitemap, base_dir = self.sitemap, self.base_dir
        split = split_url(part.loc)
        absolute = split.scheme in ("http", "https") and bool(split.netloc)
        if not absolute:
            sitemap.findings.append(
                Finding("url-invalid", part.loc, f"{index_location}, line {part.line}: index part loc is not an absolute URL")
            )
        if userinfo(part.loc) is not None:  # its password is on no channel, and never sent to the part's host
            shown = without_password(part.loc)
            if base_dir is None:
                raise InputError(
                    f"{index_location}, line {part.line}: index part {shown} holds a user name or password before its host "
                    "(its password not shown); list parts without it: they are fetched with the sitemap's own credentials"
                )
            sitemap.findings.append(
                Finding(
                    "url-invalid",
                    shown,
                    f"{index_location}, line {part.line}: index part loc holds a user name or password before its host "
                    "(its password not shown); a public URL carries none: remove it",
                )
            )
            part = part._replace(loc=shown)
        if base_dir is None:  # a remote index: fetch its parts from where it points, on its own site only
            url = join_url(index_url or index_location, part.loc) or ""
            if not is_url(url):
                raise InputError(f"{index_location}, line {part.line}: cannot fetch index part {part.loc!r}")
            root = sitemap.root_url
            assert root is not None  # read_sitemap sets it to a remote sitemap's URL
            if not same_site(root, url):
                raise InputError(
                    f"{index_location}, line {part.line}: index part {url} is not on the sitemap's host ({split_url(root).netloc}); "
                    "the Sitemaps protocol keeps parts on the sitemap's own site, and notify-changes fetches nothing else"
                )
            return url, url
        if split.scheme or split.netloc or split.path.startswith("/"):
            # from the site root (a root-relative loc too), without the path the build is served under
            relative = under_base(urllib.parse.unquote(split.path).strip("/"), self.options.base)
        else:  # a relative loc (Hugo with an empty baseURL, static exporters): beside the index
            index_dir = _real(index_location).parent
            beside = str((index_dir / split.path).relative_to(base_dir)) if is_inside(index_dir, base_dir) else split.path
            relative = urllib.parse.unquote(beside)
        candidate = _real(base_dir / relative.lstrip("/"))
        if not is_inside(candidate, base_dir):
            raise InputError(
                f"{index_location}, line {part.line}: index part {part.loc!r} points outside the site dir {base_dir}; refusing to read it"
            )
        if not candidate.is_file():
            raise InputError(
                f"{index_location}, line {part.line}: index part {part.loc} not found at {candidate}; "
                "build it, or pass --site-dir with the build output root (and --sitemap-url for a site served under a path)"
            )
        public = part.loc if absolute else None
        return str(candidate), public
