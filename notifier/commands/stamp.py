"""``notify-changes stamp``: rewrite a built sitemap's lastmods from the content's history.

Each page's date comes from its source file, found with ``[history]``: a modification
field of its front matter, else the author time of the source's last commit (one ``git
log`` pass for the whole site), else its publication date (a ``date`` field, the ``{date}``
in its file name), else the entry is left as it is and reported. A lastmod that already names that date (the same instant, or the same
day) is left alone, so a stamped sitemap stamps to itself, on any clone.

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
import html
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from notifier.dates import UTC, parse_w3c, rfc822_to_w3c
from notifier.errors import InputError, Interrupted, UsageError
from notifier.history.git import SourceDates, agrees
from notifier.paths import is_url
from notifier.settings import Settings
from notifier.sitemap.files import SitemapFile
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
    result = StampResult()
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
    latest: dict[str, str] = {}  # a part's public URL and its path -> the latest lastmod it holds
    for info in reversed(files):  # parts before the index that lists them
        if info.kind == "text":
            continue
        path = Path(info.name)
        text, gzipped = _read(path)
        if info.kind == "index":
            new_text, newest = _stamp_index(text, info.name, latest, result)
        else:
            new_text, newest = _stamp_pages(text, info.name, dates, result)
        if newest is not None:  # the index names the part by its URL (or, for a local one, by its path)
            latest[info.name] = latest[info.public_url or info.name] = newest
        if new_text != text:
            result.files.append(info.name)
            copy = _gzip_copy(path, text) if not gzipped else None  # MkDocs writes sitemap.xml.gz beside it
            if copy is not None:
                result.files.append(str(copy))
            if not dry_run:
                _replace(path, new_text.encode("utf-8"), gzipped=gzipped)
                written.append(info.name)
                if copy is not None:
                    _replace(copy, new_text.encode("utf-8"), gzipped=True)
                    written.append(str(copy))


# -- one file --------------------------------------------------------------------------
def _gzip_copy(path: Path, text: str) -> Path | None:
    """``FILE.gz`` beside ``path`` when it holds the same sitemap: it is stamped alike."""
    copy = path.with_name(path.name + ".gz")
    try:
        return copy if copy.is_file() and gzip.decompress(copy.read_bytes()) == text.encode("utf-8") else None
    except (OSError, EOFError, gzip.BadGzipFile):
        return None


def _read(path: Path) -> tuple[str, bool]:
    """The file's text, and whether it was gzip-compressed."""
    try:
        raw = path.read_bytes()
        gzipped = raw[:2] == b"\x1f\x8b"
        return (gzip.decompress(raw) if gzipped else raw).decode("utf-8"), gzipped
    except OSError as error:
        raise InputError(f"{path}: cannot read it ({error.strerror})") from None
    except UnicodeDecodeError:
        raise InputError(f"{path}: not UTF-8; stamp rewrites UTF-8 sitemaps only (the protocol asks for UTF-8)") from None


_BLOCK = re.compile(r"<(?P<prefix>[\w.-]+:)?(?P<tag>url|item|entry)\b[^>]*>(?P<body>.*?)</(?P=prefix)?(?P=tag)\s*>", re.DOTALL)
_PART = re.compile(r"<(?P<prefix>[\w.-]+:)?sitemap\b[^>]*>(?P<body>.*?)</(?P=prefix)?sitemap\s*>", re.DOTALL)


# Comments and CDATA sections hold text, not elements: a date in a comment, or a <pubDate>
# inside a feed item's CDATA description, is never stamped. The patterns run on the text
# with those hidden (blanked, every offset kept); what they find is read from the text itself.
_HIDDEN = re.compile(r"<!--.*?-->|<!\[CDATA\[.*?\]\]>", re.DOTALL)


def _mask(text: str) -> str:
    def blank(found: re.Match[str]) -> str:
        whole = found.group(0)
        if whole.startswith("<!--"):
            return " " * len(whole)
        return "<![CDATA[" + " " * (len(whole) - 12) + "]]>"  # a CDATA date stays an element's text

    return _HIDDEN.sub(blank, text)


class _Found:
    """A match made on the masked text, read from the text itself (the offsets are the same)."""

    def __init__(self, match: re.Match[str], text: str) -> None:
        self.match, self.text = match, text

    def group(self, name: int | str) -> str:
        return self.text[self.match.start(name) : self.match.end(name)] if self.match.start(name) >= 0 else ""

    def start(self, name: int | str = 0) -> int:
        return self.match.start(name)

    def end(self, name: int | str = 0) -> int:
        return self.match.end(name)

    def masked(self, name: int | str) -> str:
        return self.match.group(name) or ""


def _each(pattern: re.Pattern[str], text: str, stamp: Callable[[_Found], str]) -> str:
    """``pattern.sub(stamp, text)``, matching only real elements (not in comments or CDATA)."""
    pieces, last = [], 0
    for match in pattern.finditer(_mask(text)):
        pieces += [text[last : match.start()], stamp(_Found(match, text))]
        last = match.end()
    pieces.append(text[last:])
    return "".join(pieces)


def _element(body: _Found, name: str) -> _Found | None:
    """The first ``<name>`` (``name`` may carry its prefix) in a block's body: its text as group 1."""
    found = re.search(rf"<{name}\b[^>]*>(.*?)</{name}\s*>", body.masked("body"), re.DOTALL)
    return _Found(found, body.group("body")) if found is not None else None


def _text(value: str) -> str:
    value = value.strip()
    if value.startswith("<![CDATA[") and value.endswith("]]>"):
        return value[9:-3].strip()
    return html.unescape(value)


def _stamp_pages(text: str, name: str, dates: ContentDates, result: StampResult) -> tuple[str, str | None]:
    newest: list[str] = []

    def stamp(block: _Found) -> str:
        prefix, tag = block.group("prefix") or "", block.group("tag")
        located = _locate(prefix, tag, block)
        if located is None:
            return block.group(0)
        loc, date_element, write, (anchor, new_element) = located
        given = dates.of(loc)
        old = _text(date_element.group(1)) if date_element is not None else None
        if given is None:
            result.unmapped.append(loc)
            if old is not None:
                newest.append(old)
            return block.group(0)
        date, why = given
        old_w3c = _as_w3c(tag, date_element)
        newest.append(date)
        instant = parse_w3c(old_w3c) if old_w3c is not None else None
        if old_w3c is not None and instant is not None and agrees(old_w3c, instant, date):
            result.kept += 1
            return block.group(0)
        result.changes.append(Restamp(name, loc, old, date, why))
        whole, offset = block.group(0), block.start("body") - block.start()
        if date_element is None:  # no date element yet (<url> without <lastmod>, <item> without <pubDate>): one after the page's
            cut = offset + anchor
            return whole[:cut] + f"<{new_element}>{write(date)}</{new_element}>" + whole[cut:]
        return whole[: offset + date_element.start(1)] + write(date) + whole[offset + date_element.end(1) :]

    return _each(_BLOCK, text, stamp), _latest(newest)


Writer = Callable[[str], str]
Anchor = tuple[int, str]  # where a missing date element goes (after the page's element, in the body), and its name


def _locate(prefix: str, tag: str, body: _Found) -> tuple[str, _Found | None, Writer, Anchor] | None:
    """A block's page URL, the element holding its date, how a date is written there, and
    where a date element goes when there is none."""
    if tag == "url":
        loc = _element(body, f"{prefix}loc")
        if loc is None:
            return None
        return _text(loc.group(1)), _element(body, f"{prefix}lastmod"), lambda date: date, (loc.end(), f"{prefix}lastmod")
    if tag == "entry":  # Atom: the page is the link with rel="alternate", or with no rel
        for match in re.finditer(r"<(?:[\w.-]+:)?link\b([^>]*?)/?>", body.masked("body")):
            link = _Found(match, body.group("body"))
            rel = re.search(r"""\brel\s*=\s*(["'])(.*?)\1""", link.group(1))
            href = re.search(r"""\bhref\s*=\s*(["'])(.*?)\1""", link.group(1))
            if href is not None and (rel is None or rel.group(2) == "alternate"):
                updated = _element(body, f"{prefix}updated")
                return html.unescape(href.group(2)), updated, _rfc3339, (link.end(), f"{prefix}updated")
        return None
    item_link = _element(body, "link")  # RSS
    if item_link is None:
        return None
    anchor = (item_link.end(), "pubDate")
    for name in ("[\\w.-]+:updated", "dc:date"):
        found = re.search(rf"<({name})\b[^>]*>(.*?)</\1\s*>", body.masked("body"), re.DOTALL)
        if found is not None:
            return _text(item_link.group(1)), _element(body, re.escape(found.group(1))), lambda date: date, anchor
    return _text(item_link.group(1)), _element(body, "pubDate"), _rfc822, anchor


def _as_w3c(tag: str, element: _Found | None) -> str | None:
    """The date an element holds, as a W3C Datetime (an RSS ``<pubDate>`` is RFC 822)."""
    if element is None:
        return None
    old = _text(element.group(1))
    if tag == "item" and element.group(0).startswith("<pubDate"):
        return rfc822_to_w3c(old)
    return old


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


def _stamp_index(text: str, name: str, latest: dict[str, str], result: StampResult) -> tuple[str, str | None]:
    newest: list[str] = []

    def stamp(block: _Found) -> str:
        prefix = block.group("prefix") or ""
        loc = _element(block, f"{prefix}loc")
        date_element = _element(block, f"{prefix}lastmod")
        if loc is None or date_element is None:
            return block.group(0)
        part = _text(loc.group(1))
        date = latest.get(part)
        old = _text(date_element.group(1))
        if date is None or old == date:
            return block.group(0)
        newest.append(date)
        result.changes.append(Restamp(name, part, old, date, "the latest lastmod of the part"))
        start = block.start("body") - block.start()
        whole = block.group(0)
        return whole[: start + date_element.start(1)] + date + whole[start + date_element.end(1) :]

    return _each(_PART, text, stamp), _latest(newest)


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
            f"(e.g. {result.unmapped[0]}); add a [history] sources template for them"
        )
