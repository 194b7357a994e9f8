"""``notify-changes stamp``: rewrite a built sitemap's lastmods from the content's history.

Each page's date comes from its source file, found with ``[history]``: a modification
field of its front matter, else the author time of the source's last commit (one ``git
log`` pass for the whole site), else its publication date (a ``date`` field, the ``{date}``
in its file name), else the entry is left as it is and reported. A lastmod that already names that date (the same instant, or the same
day) is left alone, so a stamped sitemap stamps to itself, on any clone.

Each item's page and date are read as the reader reads them (``sitemap/items.py``), and a
date is written in the element the reader takes it from (``stamp_text.py`` finds where).
Files are rewritten in place, only where a date changes: the date's text between its tags
is replaced and every other byte stays (a ``.gz`` part is recompressed, its content kept
byte for byte); each file is written to a temporary file beside it, flushed, and renamed
over the old one. Sitemaps (``<lastmod>``), indexes (a part's ``<lastmod>`` becomes the
latest of its pages), RSS (``<atom:updated>``, ``<dc:date>``, else ``<pubDate>`` in RFC 822)
and Atom (``<updated>``) are stamped; text sitemaps carry no dates.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import email.utils
import glob
import gzip
import zlib
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from notifier.commands.stamp_text import Block, blocks
from notifier.dates import UTC, parse_w3c, rfc822_to_w3c
from notifier.errors import InputError, Interrupted, UsageError
from notifier.history.git import SourceDates, agrees
from notifier.paths import cannot, is_url
from notifier.settings.settings import Settings
from notifier.sitemap.files import SitemapFile
from notifier.sitemap.items import ATOM_UPDATED, Reading, document_url, readings
from notifier.sitemap.reader import ReadOptions, read_sitemap
from notifier.store.durable import write_atomic
from notifier.workers import Workers


@dataclass
class Restamp:
    """One lastmod stamp rewrites: in which file, for which URL, from what to what, and why."""

    file: str
    loc: str
    old: str | None
    new: str
    why: str


@dataclass
class StampResult:
    """What :func:`notifier.stamp` changed (or, in a dry run, would change)."""

    changes: list[Restamp] = field(default_factory=list)
    files: list[str] = field(default_factory=list)  # files rewritten (or, in a dry run, to rewrite)
    unmapped: list[str] = field(default_factory=list)  # pages with no source file, or none with a date
    kept: int = 0  # entries whose lastmod already names the content's date
    warnings: list[str] = field(default_factory=list)  # what git warned of while reading the history

    def lines(self, *, dry_run: bool = False) -> list[str]:
        """What ``notify-changes stamp`` prints: each date changed (a diff), then the counts."""
        return list(describe(self, dry_run=dry_run))


# Front-matter fields that say when a page was published, not when it last changed; so does
# a date in its file name (a Jekyll post). A lastmod is the last change: an explicit
# modification field (lastmod, last_modified_at, modified, updated, last_update) first,
# else the last commit, else the publication date. `check` accepts any of them.
PUBLICATION_FIELDS = frozenset({"date", "pubdate", "publishdate", "published", "created", "date_published", "publication_date"})


class ContentDates:
    """A page's date from its source: a modification field of its front matter, else its
    last commit, else its publication date (a ``date`` field, the file name's date)."""

    def __init__(self, settings: Settings) -> None:
        history = settings.history
        if history is None:
            raise UsageError(
                'stamp takes each page\'s date from its source file: configure [history] first, e.g. preset = "hugo" '
                "(see the README's [history] section)"
            )
        self.sources = SourceDates(history.sources, history.repo or Path.cwd(), history.fields, history.ignore_revs, settings.base_path)

    def of(self, loc: str) -> tuple[str, str] | None:
        """(the date, where it came from), or None when the source is unknown or undated."""
        found = self.sources.finder.find(loc)
        if found is None:
            return None
        source, name_date = found
        _, given = self.sources.given(source, name_date)
        span = self.sources.spans.get(source)
        modified = given is not None and given[0] is not None and given[0].lower() not in PUBLICATION_FIELDS
        if given is not None and (modified or span is None):
            field, date = given
            return date, f"{field} in {source}" if field else f"the file name {source}"
        if span is not None:  # a post edited after it was published: its edits are its last change
            return span.newest[0].strftime("%Y-%m-%dT%H:%M:%SZ"), f"the last commit of {source}"
        return None


def stamp_sitemap(settings: Settings, *, dry_run: bool) -> StampResult:
    if is_url(settings.sitemap):
        raise UsageError(f"stamp rewrites the built files: give the sitemap's path in the build, not {settings.sitemap}")
    dates = ContentDates(settings)
    with Workers(settings.jobs) as workers:  # strict: a broken file is exit 2
        options = ReadOptions(
            site_dir=settings.site_dir, base=settings.base_path, request_timeout=settings.request_timeout, workers=workers
        )
        sitemap = read_sitemap(settings.sitemap, options)
    result = StampResult(warnings=list(dates.sources.warnings))
    if not dry_run:
        _remove_leftovers(Path(info.name) for info in sitemap.files)
    written: list[str] = []
    try:
        _stamp_files(sitemap.files, dates, result, written, dry_run=dry_run)
    except KeyboardInterrupt:
        done = f"rewrote {', '.join(written)}" if written else "rewrote no file"
        raise Interrupted(
            f"stamp interrupted: it {done}; every file is whole (each is replaced at once) and the others are as they were: run stamp again"
        ) from None
    except InputError as error:
        if not written:
            raise
        rewritten = ", ".join(written)
        message = f"{error}; stamp had rewritten {rewritten} before it (each whole): run stamp again once that is fixed"
        raise InputError(message) from None
    order = {info.name: number for number, info in enumerate(sitemap.files)}
    result.changes.sort(key=lambda change: order[change.file])  # in the sitemap's order; within a file, as it reads
    result.files.sort(key=lambda name: order[name] if name in order else order[name.removesuffix(".gz")])  # a gzip copy after its file
    return result


def _remove_leftovers(paths: Iterable[Path]) -> None:
    """The temporary files a killed stamp left beside the files it rewrites (they would be
    published with the build): only ours, by their name."""
    for path in paths:
        for leftover in path.parent.glob(f".{glob.escape(path.name)}.*.tmp"):  # and those of its .gz copy
            with contextlib.suppress(OSError):
                leftover.unlink()


def _stamp_files(files: Sequence[SitemapFile], dates: ContentDates, result: StampResult, written: list[str], *, dry_run: bool) -> None:
    parts = _parts_of(files)
    latest: dict[int, str] = {}  # a file's number -> the latest lastmod it holds
    for number in reversed(range(len(files))):  # parts before the index that lists them
        info = files[number]
        if info.kind == "text":
            continue
        path = Path(info.name)
        data, gzipped = _read(path)
        text, found = data.decode("utf-8"), readings(data, document_url(info), info.name)
        if info.kind == "index":
            new_text, newest = _stamp_index(text, info.name, found, [latest.get(part) for part in parts[number]], result)
        else:
            new_text, newest = _stamp_pages(text, info.name, found, dates, result)
        if newest is not None:
            latest[number] = newest
        if new_text != text:
            result.files.append(info.name)
            copy = _gzip_copy(path, data) if not gzipped else None  # MkDocs writes sitemap.xml.gz beside it
            if copy is not None:
                result.files.append(str(copy))
            if not dry_run:
                _replace(path, new_text.encode("utf-8"), gzipped=gzipped)
                written.append(info.name)
                if copy is not None:
                    _replace(copy, new_text.encode("utf-8"), gzipped=True)
                    written.append(str(copy))


def _parts_of(files: Sequence[SitemapFile]) -> dict[int, list[int]]:
    """Each index's parts, by file number, in the order it lists them. The reader read every
    file in that order (an index, then each part and the parts of a part), and a part for
    every item with a loc, however relative: so they are told apart as the reader resolved
    them, not by comparing URLs with paths."""
    counts = {}
    for number, info in enumerate(files):
        if info.kind == "index":
            data, _ = _read(Path(info.name))
            counts[number] = sum(1 for reading in readings(data, document_url(info), info.name) if reading.loc)
    parts: dict[int, list[int]] = {}

    def walk(number: int) -> int:  # the number of the file after this one's parts
        following = number + 1
        if number in counts:
            listed = parts[number] = []
            for _ in range(counts[number]):
                listed.append(following)
                following = walk(following)
        return following

    if files and walk(0) != len(files):
        raise InputError(f"{files[0].name}: an index changed while stamp read it; run stamp again")
    return parts


# -- one file --------------------------------------------------------------------------
def _gzip_copy(path: Path, data: bytes) -> Path | None:
    """``FILE.gz`` beside ``path`` when it holds the same sitemap: it is stamped alike."""
    copy = path.with_name(path.name + ".gz")
    try:
        return copy if copy.is_file() and gzip.decompress(copy.read_bytes()) == data else None
    except (OSError, EOFError, zlib.error):  # damaged or cut short (a build killed): no copy of it
        return None


def _read(path: Path) -> tuple[bytes, bool]:
    """The file's bytes (decompressed), UTF-8, and whether it was gzip-compressed."""
    try:
        raw = path.read_bytes()
        gzipped = raw[:2] == b"\x1f\x8b"
        data = gzip.decompress(raw) if gzipped else raw
        data.decode("utf-8")
        return data, gzipped
    except (EOFError, zlib.error, gzip.BadGzipFile) as error:  # a gzip file cut short or damaged since the reader read it
        raise InputError(f"{path}: cannot read it ({error or 'cut short'}); build the site again") from None
    except OSError as error:
        raise InputError(f"{path}: {cannot('read it', error)}") from None
    except UnicodeDecodeError:
        raise InputError(f"{path}: not UTF-8; stamp rewrites UTF-8 sitemaps only (the protocol asks for UTF-8)") from None


Edit = tuple[int, int, str]  # the text from one offset to another, and what it becomes


Wanted = list[tuple[int, Reading, str]]  # the items whose date changes: their number, reading and new date


def _edited(text: str, name: str, found: list[Reading], wanted: Wanted) -> str:
    """``text`` with each wanted date written where the reader reads it. The tags are
    scanned only when a date changes: a stamped file stamps to itself at the cost of a read."""
    if not wanted:
        return text
    spans = blocks(text, {found[0].tag})
    if len(spans) != len(found):
        raise AssertionError(f"{name}: the reader read {len(found)} items, stamp's scan found {len(spans)}")
    pieces, last = [], 0
    for number, reading, date in wanted:
        start, end, value = _edit(spans[number], reading, date)
        pieces += [text[last:start], value]
        last = end
    pieces.append(text[last:])
    return "".join(pieces)


def _stamp_pages(text: str, name: str, found: list[Reading], dates: ContentDates, result: StampResult) -> tuple[str, str | None]:
    wanted: Wanted = []
    newest: list[str] = []
    for number, reading in enumerate(found):
        loc, old = reading.loc, reading.date
        if not loc:  # an item naming no page: url-invalid says so
            continue
        old_w3c = rfc822_to_w3c(old) if old is not None and reading.date_tag == "pubDate" else old
        given = dates.of(loc)
        if given is None:
            result.unmapped.append(loc)
            if old_w3c is not None:
                newest.append(old_w3c)
            continue
        date, why = given
        newest.append(date)
        instant = parse_w3c(old_w3c) if old_w3c is not None else None
        if old_w3c is not None and instant is not None and agrees(old_w3c, instant, date):
            result.kept += 1
            continue
        result.changes.append(Restamp(name, loc, old, date, why))
        wanted.append((number, reading, date))
    return _edited(text, name, found, wanted), _latest(newest)


def _edit(block: Block, reading: Reading, date: str) -> Edit:
    """The date written where the reader reads it: in its element, or in a new one right
    after the element naming the page (after its end tag: ``<link ...></link>``)."""
    value = _rfc822(date) if reading.date_tag == "pubDate" else _rfc3339(date) if reading.date_tag == ATOM_UPDATED else date
    if reading.date_at >= 0:
        element = block.children[reading.date_at]
        if element.empty:  # <lastmod/>
            return element.start, element.end, f"<{element.name}>{value}</{element.name}>"
        return element.content, element.close, value
    prefix = block.span.name.rpartition(":")[0]
    local = reading.date_tag.rpartition("}")[2]
    tag = f"{prefix}:{local}" if prefix and reading.date_tag.startswith("{") else local  # in the item's namespace
    after = block.children[reading.page_at].end
    return after, after, f"<{tag}>{value}</{tag}>"


def _moment(date: str) -> dt.datetime:
    instant = parse_w3c(date)
    assert instant is not None, "content dates are W3C Datetimes"
    return instant


def _rfc3339(date: str) -> str:
    return date if "T" in date else f"{date}T00:00:00Z"


def _rfc822(date: str) -> str:
    instant = _moment(date)
    return email.utils.format_datetime(instant if instant.tzinfo else instant.replace(tzinfo=UTC))


def _latest(dates: list[str]) -> str | None:
    best: tuple[dt.datetime, str] | None = None
    for date in dates:
        instant = parse_w3c(date)
        if instant is not None and (best is None or instant > best[0]):
            best = (instant, date)
    return best[1] if best else None


def _stamp_index(text: str, name: str, found: list[Reading], part_dates: list[str | None], result: StampResult) -> tuple[str, str | None]:
    """An index: each part's ``<lastmod>`` (where it has one) becomes the latest of its pages."""
    wanted: Wanted = []
    newest: list[str] = []
    listed = iter(part_dates)  # one a part: an item with a loc
    for number, reading in enumerate(found):
        if not reading.loc:
            continue
        date = next(listed)
        if date is None:
            continue
        newest.append(date)
        if reading.date_at < 0 or reading.date == date:
            continue
        result.changes.append(Restamp(name, reading.loc, reading.date, date, "the latest lastmod of the part"))
        wanted.append((number, reading, date))
    return _edited(text, name, found, wanted), _latest(newest)


def _replace(path: Path, data: bytes, *, gzipped: bool) -> None:
    """Write ``data`` (gzip-compressed again when the file was, reproducibly) over ``path``, atomically."""
    write_atomic(path, [gzip.compress(data, mtime=0) if gzipped else data], f".{path.name}.", failed=_not_rewritten)


def _not_rewritten(path: Path, reason: str, *, begun: bool) -> InputError:
    return InputError(f"{path}: cannot rewrite it ({reason}); {'it was left as it was' if begun else 'make its folder writable'}")


def describe(result: StampResult, *, dry_run: bool) -> Iterator[str]:
    """The lines ``stamp`` prints: each date it changes (a diff), then the counts."""
    current = None
    for change in result.changes:
        if change.file != current:
            current = change.file
            yield f"--- {change.file}"
            yield f"+++ {change.file} ({'would be ' if dry_run else ''}stamped)"
        yield f"  {change.loc}"
        yield f"-   {change.old if change.old is not None else '(no lastmod)'}"
        yield f"+   {change.new}   ({change.why})"
    verb = "would rewrite" if dry_run else "rewrote"
    yield (f"stamp: {verb} {len(result.changes)} date(s) in {len(result.files)} file(s); {result.kept} already named their content's date")
    if result.unmapped:
        yield (
            f"stamp: {len(result.unmapped)} page(s) left as they were: no source file with a date or a commit "
            f"(e.g. {result.unmapped[0]}): commit its source file, date it in its front matter, or add a [history] "
            "sources template for pages that have none"
        )
    if result.warnings:
        said = "; ".join(result.warnings)
        yield f"stamp: git warned while reading the history ({said}); the dates it gave may be wrong until what git names is fixed"
