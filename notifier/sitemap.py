"""Read a built sitemap: a urlset, a sitemap index and its parts, gzip, or plain text.

The reader never hands lxml a path or a URL: it reads the bytes itself, with a cap on
what it reads and on what it decompresses, and feeds them to a strict, streaming parser
that refuses any DOCTYPE, resolves no entity and never touches the network. Memory
grows with the number of URLs, not with the size of the files.
"""

from __future__ import annotations

import array
import concurrent.futures
import concurrent.futures.process
import contextlib
import dataclasses
import itertools
import multiprocessing
import os
import threading
import urllib.parse
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from lxml import etree

from notifier.dates import timestamps
from notifier.errors import InputError
from notifier.source import CHUNK, Source, file_digest, is_inside, is_url, same_site
from notifier.urlhash import make_index
from notifier.urls import irregular, origins_of, split_url

MAX_URLS_PER_FILE = 50_000  # sitemaps.org: at most 50,000 URLs per file, 50,000 parts per index
MAX_INDEX_DEPTH = 2  # an index inside an index is a finding; one more level is refused

NS_09 = "http://www.sitemaps.org/schemas/sitemap/0.9"
NS_084 = "http://www.google.com/schemas/sitemap/0.84"  # the old namespace, read like 0.9
NAMESPACES = (NS_09, NS_084, "")

_WHITESPACE = b" \t\r\n"
# What XML calls white space (https://www.w3.org/TR/xml/#NT-S): only it is trimmed from a
# loc or a lastmod. str.strip() would also take U+00A0, U+2003 or U+0085 away in silence,
# and url-invalid must see them.
XML_SPACE = " \t\r\n"
_BOM = b"\xef\xbb\xbf"


class Entry(NamedTuple):
    """One ``<url>`` of the sitemap (or one line of a plain-text sitemap)."""

    loc: str
    lastmod: str | None
    file: int  # index into Sitemap.files
    line: int


Row = tuple[str, str | None, int, int]  # an Entry as a plain tuple: (loc, lastmod, file, line)
make_entry = tuple.__new__  # Entry(...) without the Python-level constructor: once per URL


class Finding(NamedTuple):
    """Something the reader saw that a verification rule judges (see rules.py)."""

    rule: str
    url: str
    message: str


@dataclass
class SitemapFile:
    """One file read: the root sitemap or an index part."""

    name: str  # as the user would recognise it: the path or URL
    kind: str  # "urlset", "index" or "text"
    url_count: int = 0
    digest: str = ""  # BLAKE2b of the raw bytes, to notice an unchanged part
    public_url: str | None = None  # the URL an index listed it under
    key: str = ""  # stable identity across deploys: the path under the site dir, or the URL
    skipped: bool = False  # its bytes equal the recorded ones: not parsed, its URLs come from the state
    # worked out where it was parsed (on every core for an index's parts):
    origins: list[str] = field(default_factory=list)  # scheme://host of its URLs, first seen first
    irregular: list[str] = field(default_factory=list)  # its URLs that are not plain (urls.irregular)
    index: bytes | None = None  # store.make_index of its URLs (ReadOptions.index)
    stamps: array.array[float] | None = None  # dates.timestamps of its entries' lastmods (ReadOptions.stamps)


@dataclass
class Sitemap:
    """Everything read from SITEMAP and its parts, in document order."""

    entries: list[Entry] = field(default_factory=list)
    files: list[SitemapFile] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    root_url: str | None = None  # the sitemap's public URL when known
    # when set, each urlset or text file's entries go here as soon as it is read, in
    # document order, instead of into ``entries``; None stands for a file not read
    sink: Callable[[SitemapFile, Sequence[Row] | None], None] | None = field(default=None, repr=False)


class _Part(NamedTuple):
    loc: str
    line: int


@dataclass(frozen=True)
class ReadOptions:
    """How to find the bytes: where the build lives, how long to wait for a server."""

    site_dir: Path | None = None
    request_timeout: float = 30.0
    progress: Callable[[str], None] | None = None
    known_digests: Mapping[str, str] | None = None  # key -> digest of parts recorded last deploy
    index: bool = False  # make each file's index of URL fingerprints (a run that records them)
    stamps: bool = False  # parse each file's lastmods (a first run: every URL is added, every date judged)


def read_sitemap(
    location: str,
    options: ReadOptions = ReadOptions(),
    sink: Callable[[SitemapFile, Sequence[Row] | None], None] | None = None,
) -> Sitemap:
    """Read SITEMAP (a path or an http(s) URL) and, for an index, every part it lists.

    With ``sink``, each file's entries are handed over as soon as the file is read (see
    ``Sitemap.sink``) and ``entries`` stays empty: memory then holds one file at a time.
    """
    sitemap = Sitemap(sink=sink)
    remote = is_url(location)
    if remote:
        sitemap.root_url = location
        base_dir = None
    else:
        path = Path(location)
        base_dir = (options.site_dir or path.parent).resolve()
        if options.site_dir is not None and not base_dir.is_dir():
            raise InputError(f"--site-dir {options.site_dir}: no such folder; pass the build output root")
    visited: set[str] = set()
    _read_one(location, None, sitemap, options, base_dir, visited, depth=0)
    return sitemap


def _read_one(
    location: str,
    public_url: str | None,
    sitemap: Sitemap,
    options: ReadOptions,
    base_dir: Path | None,
    visited: set[str],
    depth: int,
    above: tuple[tuple[str, str], ...] = (),
) -> None:
    """Read one file; ``above``: (key, location) of each index that led here, the root first."""
    key = location if is_url(location) else str(Path(location).resolve())
    if key in visited:
        raise InputError(f"{location}: the sitemap index lists this file twice or lists itself; fix the index")
    visited.add(key)
    if options.progress is not None:
        options.progress(f"reading {location}")
    raw = Source(location, options.request_timeout)
    file_no = len(sitemap.files)
    info = SitemapFile(name=location, kind="urlset", public_url=public_url, key=_file_key(location, base_dir))
    sitemap.files.append(info)
    known = options.known_digests.get(info.key) if options.known_digests else None
    if known is not None and not is_url(location) and file_digest(location) == known:
        info.digest, info.skipped = known, True  # same bytes as last deploy: nothing to parse
        if sitemap.sink is not None:
            sitemap.sink(info, None)
        return
    start = len(sitemap.entries)
    chunks = raw.chunks()
    first = next(chunks, b"")
    if raw.is_text and raw.text_by_content_type and first.lstrip(_BOM + _WHITESPACE).startswith(b"<"):
        raw.is_text = False  # XML served as text/plain by a misconfigured server is still XML
    chunks = itertools.chain([first], chunks)
    if raw.is_text:
        info.kind = "text"
        _parse_text(chunks, location, file_no, sitemap)
    else:
        parts = _parse_xml(chunks, location, file_no, sitemap, info)
        if info.kind == "index":
            if depth > 0:
                sitemap.findings.append(
                    Finding("sitemap-limits", public_url or location, "an index inside an index; list its parts in the top index")
                )
            resolved = [_resolve_part(part, location, public_url, sitemap, base_dir) for part in parts]
            chain = (*above, (key, location))
            _refuse_cycles(resolved, chain)
            if depth + 1 >= MAX_INDEX_DEPTH + 1:
                raise InputError(f"{location}: sitemap indexes nested more than {MAX_INDEX_DEPTH} deep; flatten them")
            if depth == 0 and base_dir is not None and len(resolved) >= 2 and _workers() >= 2:
                _read_parts_in_parallel(resolved, sitemap, options, base_dir, visited, chain)
            else:
                for part_location, part_url in resolved:
                    _read_one(part_location, part_url, sitemap, options, base_dir, visited, depth + 1, chain)
    info.digest = raw.digest()
    if info.kind != "index":
        entries = sitemap.entries[start:]
        describe(info, entries, options)
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


def _refuse_cycles(resolved: list[tuple[str, str | None]], chain: tuple[tuple[str, str], ...]) -> None:
    """An index that lists one of the indexes that led to it makes a cycle: say so, naming them."""
    keys = [key for key, _ in chain]
    for part_location, _ in resolved:
        key = part_location if is_url(part_location) else str(Path(part_location).resolve())
        if key in keys:
            names = [location for _, location in chain[keys.index(key) :]]
            if len(names) == 1:
                raise InputError(f"{names[0]}: the sitemap index lists itself (a cycle of one); remove that <sitemap> entry")
            raise InputError(
                f"sitemap indexes list each other in a cycle: {' -> '.join([*names, names[0]])}; list the parts once, in one index"
            )


def describe(info: SitemapFile, entries: Sequence[Entry], options: ReadOptions = ReadOptions()) -> SitemapFile:
    """Work out what the diff and the rules want to know of a file read: its origins, its
    irregular URLs, and as ``options`` ask, its index of URL fingerprints and parsed dates."""
    locs = [entry.loc for entry in entries]
    info.origins = origins_of(locs)
    info.irregular = irregular(locs)
    if options.index:
        info.index = make_index(locs)
    if options.stamps:
        info.stamps = timestamps([entry.lastmod for entry in entries])
    return info


def _workers() -> int:
    """How many processes may parse parts: the usable cores, but one in a threaded process,
    where fork could copy a lock some other thread holds (a Python program using the API)."""
    if threading.active_count() > 1:
        return 1
    return min(len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1), 8)


def _read_parts_in_parallel(
    resolved: list[tuple[str, str | None]],
    sitemap: Sitemap,
    options: ReadOptions,
    base_dir: Path,
    visited: set[str],
    above: tuple[tuple[str, str], ...],
) -> None:
    """Parse an index's local parts on every core: the parse is most of a run's time.

    Each worker reads one part into a Sitemap of its own, exactly as the serial reader
    would; the results are merged in index order, so nothing depends on which finished
    first. Workers ignore interrupts: the main process decides, and stops them.
    """
    for part_location, _ in resolved:
        key = str(Path(part_location).resolve())
        if key in visited:
            raise InputError(f"{part_location}: the sitemap index lists this file twice or lists itself; fix the index")
        visited.add(key)
    if options.progress is not None:
        options.progress(f"reading {len(resolved)} parts on {_workers()} cores")
    worker_options = dataclasses.replace(options, progress=None)
    context = multiprocessing.get_context("fork")
    with concurrent.futures.ProcessPoolExecutor(max_workers=_workers(), mp_context=context, initializer=_quiet_worker) as pool:
        # Part i most likely becomes file number ``first + i`` (one file a part): the worker
        # numbers its entries so, and they need no rebuilding here unless a part was an index.
        first = len(sitemap.files)
        jobs: list[concurrent.futures.Future[tuple[list[SitemapFile], list[Row], list[Finding]]] | None] = [
            pool.submit(_read_part_job, location, url, worker_options, base_dir, set(visited), first + number, above)
            for number, (location, url) in enumerate(resolved)
        ]
        try:
            for number in range(len(jobs)):
                job, jobs[number] = jobs[number], None  # a finished future holds its result: let it go
                assert job is not None
                try:
                    files, rows, findings = job.result()
                except concurrent.futures.process.BrokenProcessPool:
                    # a worker died (killed for memory, say): read the rest here, one by one
                    pool.shutdown(wait=False, cancel_futures=True)
                    for location, url in resolved[number:]:
                        visited.discard(str(Path(location).resolve()))
                        _read_one(location, url, sitemap, options, base_dir, visited, 1, above)
                    return
                offset = len(sitemap.files)
                sitemap.files.extend(files)
                if offset != first + number:
                    shift = offset - first - number
                    rows = [(loc, lastmod, file_no + shift, line) for loc, lastmod, file_no, line in rows]
                sitemap.findings.extend(findings)
                if sitemap.sink is None:
                    sitemap.entries.extend(map(Entry._make, rows))
                else:  # the sink takes plain tuples: no Entry object per URL
                    _hand_over(sitemap, offset, rows)
        except BaseException:
            pool.shutdown(wait=False, cancel_futures=True)
            raise


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


def _quiet_worker() -> None:
    """A parse worker leaves SIGINT and SIGTERM to the main process (CI signals the whole
    process group): killed in the middle of sending its result, it would leave the pool's
    manager thread waiting forever for the rest, and the run could never exit. It finishes
    its part, sends it whole, and stops when the main process shuts the pool down. Should
    the main process die, the kernel kills the worker too (Linux: PR_SET_PDEATHSIG)."""
    import ctypes
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    with contextlib.suppress(Exception):
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # 1 = PR_SET_PDEATHSIG


def _read_part_job(
    location: str,
    public_url: str | None,
    options: ReadOptions,
    base_dir: Path,
    visited: set[str],
    base: int,
    above: tuple[tuple[str, str], ...],
) -> tuple[list[SitemapFile], list[Row], list[Finding]]:
    part = Sitemap()
    visited.discard(str(Path(location).resolve()))
    _read_one(location, public_url, part, options, base_dir, visited, 1, above)
    # plain tuples cross the process boundary several times faster than NamedTuples
    return part.files, [(loc, lastmod, file_no + base, line) for loc, lastmod, file_no, line in part.entries], part.findings


def _file_key(location: str, base_dir: Path | None) -> str:
    if base_dir is None or is_url(location):
        return location
    path = Path(location).resolve()
    return path.relative_to(base_dir).as_posix() if is_inside(path, base_dir) else str(path)


def _resolve_part(
    part: _Part, index_location: str, index_url: str | None, sitemap: Sitemap, base_dir: Path | None
) -> tuple[str, str | None]:
    """Where to read an index part from: the local build, or the web for a remote index."""
    split = split_url(part.loc)
    if split.scheme not in ("http", "https") or not split.netloc:
        sitemap.findings.append(
            Finding("url-invalid", part.loc, f"{index_location}, line {part.line}: index part loc is not an absolute URL")
        )
    if base_dir is None:  # a remote index: fetch its parts from where it points, on its own site only
        url = urllib.parse.urljoin(index_url or index_location, part.loc)
        if not is_url(url):
            raise InputError(f"{index_location}, line {part.line}: cannot fetch index part {part.loc!r}")
        root = sitemap.root_url or index_location
        if not same_site(root, url):
            raise InputError(
                f"{index_location}, line {part.line}: index part {url} is not on the sitemap's host ({split_url(root).netloc}); "
                "the Sitemaps protocol keeps parts on the sitemap's own site, and notify-changes fetches nothing else"
            )
        return url, url
    if split.scheme or split.netloc or split.path.startswith("/"):
        relative = split.path  # from the site root (a root-relative loc too)
    else:  # a relative loc (Hugo with an empty baseURL, static exporters): beside the index
        index_dir = Path(index_location).resolve().parent
        relative = str((index_dir / split.path).relative_to(base_dir)) if is_inside(index_dir, base_dir) else split.path
    candidate = (base_dir / urllib.parse.unquote(relative).lstrip("/")).resolve()
    if not is_inside(candidate, base_dir):
        raise InputError(
            f"{index_location}, line {part.line}: index part {part.loc!r} points outside the site dir {base_dir}; refusing to read it"
        )
    if not candidate.is_file():
        raise InputError(
            f"{index_location}, line {part.line}: index part {part.loc} not found at {candidate}; "
            "build it, or pass --site-dir with the build output root"
        )
    public = part.loc if split.scheme and split.netloc else None
    return str(candidate), public


def _parse_text(chunks: Iterator[bytes], location: str, file_no: int, sitemap: Sitemap) -> None:
    data = b"".join(chunks)  # at most MAX_FILE_BYTES, checked by the source
    if data.startswith(_BOM):
        data = data[len(_BOM) :]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data[: error.start].count(b"\n") + 1
        raise InputError(f"{location}, line {line}: not UTF-8 text; a sitemap must be UTF-8") from None
    if "\x00" in text:
        line = text[: text.index("\x00")].count("\n") + 1
        raise InputError(f"{location}, line {line}: contains a NUL byte; this is not a text sitemap")
    info = sitemap.files[file_no]
    for number, raw_line in enumerate(text.splitlines(), start=1):
        loc = raw_line.strip(XML_SPACE)
        if loc:
            sitemap.entries.append(Entry(loc, None, file_no, number))
            info.url_count += 1


def _parse_xml(chunks: Iterator[bytes], location: str, file_no: int, sitemap: Sitemap, info: SitemapFile) -> list[_Part]:
    """Stream one XML sitemap file; entries go to ``sitemap``, an index's parts are returned."""
    tags = [f"{{{ns}}}{name}" if ns else name for ns in NAMESPACES for name in ("urlset", "sitemapindex", "url", "sitemap")]
    parser = etree.XMLPullParser(
        events=("start", "end"),
        tag=tags,
        resolve_entities=False,  # never expand an entity, internal or external
        no_network=True,
        load_dtd=False,
        dtd_validation=False,
        huge_tree=False,
        remove_comments=True,
        remove_pis=True,
        collect_ids=False,
    )
    parts: list[_Part] = []
    root_seen = False
    loc_tag = lastmod_tag = item_tag = ""
    is_index = False
    entries = sitemap.entries
    first = True
    fed = False

    last_line = 1
    head = b""  # the file's first bytes, to recognise what it is when it is not XML

    def fail(error: etree.XMLSyntaxError) -> InputError:
        reason = " ".join((error.msg or "syntax error").split(", line ")[0].split())
        if error.lineno:
            where = f"line {error.lineno}"
        else:  # libxml2 stopped without saying where: an undefined entity such as &nbsp;, or cut-off data
            where = f"after line {last_line}"
            reason = f"{reason}: an entity XML does not define, such as &nbsp;, or cut-off data"
        if head.lstrip(_BOM + _WHITESPACE).startswith((b"http://", b"https://")):
            return InputError(
                f"{location}: not XML but a list of URLs, one a line: that is a text sitemap; name it .txt (e.g. sitemap.txt)"
            )
        return InputError(
            f"{location}, {where}: not well-formed XML ({reason}); fix the sitemap generator (notify-changes never guesses at broken XML)"
        )

    def handle(events: Iterable[tuple[str, Any]]) -> None:
        nonlocal root_seen, loc_tag, lastmod_tag, item_tag, is_index, last_line
        parent = None
        for event, element in events:
            if not root_seen:
                if event != "start":
                    continue
                root_seen = True
                if getattr(element.getroottree().docinfo, "doctype", ""):
                    raise InputError(f"{location}: has a <!DOCTYPE>; sitemaps never need one and it is refused for safety")
                namespace, _, local = element.tag.rpartition("}")
                namespace = namespace[1:]
                if local not in ("urlset", "sitemapindex") or element.getparent() is not None:
                    raise InputError(f"{location}: <{local}> is not a sitemap root (expected <urlset> or <sitemapindex>)")
                prefix = f"{{{namespace}}}" if namespace else ""
                is_index = local == "sitemapindex"
                info.kind = "index" if is_index else "urlset"
                item_tag = prefix + ("sitemap" if is_index else "url")
                loc_tag, lastmod_tag = prefix + "loc", prefix + "lastmod"
                continue
            if event != "end":
                last_line = _line(element)  # where the parser was, should it stop without saying
                continue
            if element.tag != item_tag:
                continue
            loc = lastmod = None  # the first <loc> and <lastmod> children ("" when empty); this loop
            repeated = ""  # runs once per URL: walking the children beats findtext twice
            for child in element:
                tag = child.tag
                if tag == loc_tag:
                    if loc is None:
                        loc = (child.text or "").strip(XML_SPACE)
                    else:
                        repeated = "loc"
                elif tag == lastmod_tag:
                    if lastmod is None:
                        lastmod = (child.text or "").strip(XML_SPACE)
                    else:
                        repeated = repeated or "lastmod"
            line = last_line = _line(element)
            if repeated:
                rule = "url-invalid" if repeated == "loc" else "lastmod-invalid"
                sitemap.findings.append(
                    Finding(
                        rule,
                        loc or f"{location}:{line}",
                        f"{location}, line {line}: two <{repeated}> in one <url>; only the first was read",
                    )
                )
            if not loc:
                sitemap.findings.append(Finding("url-invalid", f"{location}:{line}", f"<{item_tag.rpartition('}')[2]}> without a <loc>"))
            elif is_index:
                parts.append(_Part(loc, line))
            else:
                entries.append(make_entry(Entry, (loc, lastmod, file_no, line)))
            info.url_count += 1
            parent = element.getparent()
        if parent is not None:  # memory stays flat: what was read goes, in one cut per chunk fed
            del parent[:-1]  # the last child may be an element still being parsed

    prolog = b""  # held back until it is known to have no DOCTYPE: libxml2 never sees one
    prolog_done = False
    try:
        for chunk in chunks:
            if first:
                head = chunk[:64]
                chunk = _strip_prolog(chunk, location, sitemap, info)
                first = False
                if not chunk:
                    continue
            if not prolog_done:
                prolog += chunk
                if not _prolog_ends(prolog, location):
                    if len(prolog) > CHUNK:
                        raise InputError(f"{location}: over 1 MB before the root element; this is not a sitemap")
                    continue
                prolog_done, chunk, prolog = True, prolog, b""
            fed = True
            parser.feed(chunk)
            handle(parser.read_events())
        if prolog:
            fed = True
            parser.feed(prolog)
        if not fed:
            raise InputError(f"{location}: the file is empty; the build wrote no sitemap")
        root = parser.close()
        handle(parser.read_events())
    except etree.XMLSyntaxError as error:
        raise fail(error) from None
    if not root_seen:
        tag = root.tag if isinstance(root.tag, str) else "?"
        local = tag.rpartition("}")[2]
        namespace = tag[1:].partition("}")[0] if tag.startswith("{") else "none"
        raise InputError(
            f"{location}: root element <{local}> (namespace {namespace}) is not a sitemap; expected <urlset> or <sitemapindex> in {NS_09}"
        )
    return parts


def _prolog_ends(data: bytes, location: str) -> bool:
    """True once ``data`` reaches the root element; raises on a DOCTYPE or a non-UTF-8 encoding.

    The DOCTYPE check happens here, on bytes, before the parser is fed: an external DTD
    or entity must never be opened, whatever libxml2's own settings would do.
    """
    if data[:2] in (b"\xff\xfe", b"\xfe\xff") or b"\x00" in data[:4]:
        raise InputError(f"{location}: encoded in UTF-16 or UTF-32; a sitemap must be UTF-8")
    pos, size = 0, len(data)
    while True:
        while pos < size and data[pos] in _WHITESPACE:
            pos += 1
        if pos >= size:
            return False
        if data.startswith(b"<?", pos) or data.startswith(b"<!--", pos):
            closer = b"?>" if data[pos + 1] == 0x3F else b"-->"
            end = data.find(closer, pos + 2)
            if end < 0:
                return False
            pos = end + len(closer)
            continue
        head = data[pos : pos + 9].upper()
        if head == b"<!DOCTYPE":
            if data[pos + 9 : pos + 14].strip().lower().startswith(b"html"):
                raise InputError(f"{location}: is an HTML page, not a sitemap; check the path and what the build wrote there")
            raise InputError(f"{location}: has a <!DOCTYPE>; sitemaps never need one and it is refused for safety")
        # False when the chunk ends inside what may be a DOCTYPE
        return not (len(head) < 9 and b"<!DOCTYPE".startswith(head))


def _line(element: Any) -> int:
    return int(getattr(element, "sourceline", 0) or 0)


def _strip_prolog(chunk: bytes, location: str, sitemap: Sitemap, info: SitemapFile) -> bytes:
    """Tolerate a BOM or whitespace before ``<?xml`` (a warning), which strict parsers refuse."""
    stripped = chunk
    had_bom = stripped.startswith(_BOM)
    if had_bom:
        stripped = stripped[len(_BOM) :]
    body = stripped.lstrip(_WHITESPACE)
    leading_space = len(body) != len(stripped)
    if had_bom or (leading_space and body.startswith(b"<?xml")):
        what = "a byte-order mark" if had_bom else "whitespace"
        if had_bom and leading_space:
            what = "a byte-order mark and whitespace"
        sitemap.findings.append(
            Finding(
                "xml-prolog",
                info.public_url or location,
                f"{what} before the XML declaration; strict parsers at search engines reject it",
            )
        )
        return body
    if not body:
        return b""
    return stripped
