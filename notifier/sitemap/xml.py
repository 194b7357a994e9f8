"""An XML sitemap or sitemap index, streamed through a strict parser.

The parser refuses any DOCTYPE (checked on the bytes before libxml2 sees them), resolves
no entity and never touches the network; what was read is dropped as it goes, so memory
stays flat whatever the file's size.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import Any

from lxml import etree

from notifier.errors import InputError
from notifier.sitemap.files import Entry, Finding, IndexPart, Sitemap, SitemapFile, make_entry
from notifier.sitemap.items import ATOM, NS_09, document_url, feed_item, feed_link, pull_parser, trimmed, url_item
from notifier.sitemap.source import CHUNK
from notifier.urls import credentials, without_password

XHTML_LINK = "{http://www.w3.org/1999/xhtml}link"  # <xhtml:link rel="alternate" hreflang href>
NEWS = "http://www.google.com/schemas/sitemap-news/0.9"  # a Google News sitemap: the last two days' articles
NEWS_TAG, NEWS_DATE = f"{{{NEWS}}}news", f"{{{NEWS}}}publication_date"
CHANGEFREQS = frozenset(("always", "hourly", "daily", "weekly", "monthly", "yearly", "never"))
VALUE_FINDINGS = 20  # sitemap-values findings one file gives one by one; the rest are counted

WHITESPACE_BYTES = b" \t\r\n"
BOM = b"\xef\xbb\xbf"


def parse_xml(chunks: Iterator[bytes], location: str, file_no: int, sitemap: Sitemap, info: SitemapFile) -> list[IndexPart]:
    """Stream one XML sitemap file; entries go to ``sitemap``, an index's parts are returned."""
    return _XmlFile(location, file_no, sitemap, info).read(chunks)


class _XmlFile:
    """One XML file being read: the root it turned out to have, and where the parser is."""

    def __init__(self, location: str, file_no: int, sitemap: Sitemap, info: SitemapFile) -> None:
        self.location, self.file_no, self.sitemap, self.info = location, file_no, sitemap, info
        self.parser = pull_parser()
        self.base = document_url(info)  # the base of a feed's relative links
        self.parts: list[IndexPart] = []
        self.root_seen = False
        self.is_index = self.is_feed = False
        self.item_tag = self.loc_tag = self.lastmod_tag = self.changefreq_tag = self.priority_tag = ""
        self.bad_values = 0
        self.last_line = 1  # where the parser was, should it stop without saying
        self.head = b""  # the file's first bytes, to recognise what it is when it is not XML

    def read(self, chunks: Iterator[bytes]) -> list[IndexPart]:
        location = self.location
        prolog = b""  # held back until it is known to have no DOCTYPE: libxml2 never sees one
        first, prolog_done, fed = True, False, False
        try:
            for chunk in chunks:
                if first:
                    self.head, first = chunk[:64], False
                    chunk = _strip_prolog(chunk, location, self.sitemap, self.info)
                    if not chunk:
                        continue
                if not prolog_done:
                    prolog += chunk
                    if not _prolog_ends(prolog, location):
                        if len(prolog) > CHUNK:
                            raise InputError(f"{location}: over 1 MB before the root element; this is not a sitemap")
                        continue
                    prolog_done, chunk, prolog = True, prolog, b""
                    self._judge_encoding(chunk)
                fed = True
                self.parser.feed(chunk)
                self._handle(self.parser.read_events())
            if prolog:
                fed = True
                self.parser.feed(prolog)
            if not fed:
                raise InputError(f"{location}: the file is empty; the build wrote no sitemap")
            root = self.parser.close()
            self._handle(self.parser.read_events())
        except etree.XMLSyntaxError as error:
            raise self._failure(error) from None
        if self.bad_values > VALUE_FINDINGS:
            self.sitemap.findings.append(
                Finding("sitemap-values", self.info.public_url or location, f"and {self.bad_values - VALUE_FINDINGS} more such values")
            )
        if not self.root_seen:
            tag = root.tag if isinstance(root.tag, str) else "?"
            local = tag.rpartition("}")[2]
            namespace = tag[1:].partition("}")[0] if tag.startswith("{") else "none"
            raise InputError(
                f"{location}: root element <{local}> (namespace {namespace}) is not a sitemap; "
                f"expected <urlset> or <sitemapindex> in {NS_09}, or an RSS 2.0 or Atom feed"
            )
        return self.parts

    def _judge_encoding(self, prolog: bytes) -> None:
        encoding = declared_encoding(prolog.lstrip(WHITESPACE_BYTES))
        if encoding is not None and encoding.lower() not in ("utf-8", "utf8"):
            self.sitemap.findings.append(
                Finding(
                    "sitemap-encoding",
                    self.info.public_url or self.location,
                    f'the XML declaration says encoding="{encoding}"; the Sitemaps protocol requires UTF-8: '
                    "make the generator write UTF-8 and declare it",
                )
            )

    def _failure(self, error: etree.XMLSyntaxError) -> InputError:
        location = self.location
        if self.head.lstrip(BOM + WHITESPACE_BYTES).startswith((b"http://", b"https://")):
            return InputError(
                f"{location}: not XML but a list of URLs, one a line: that is a text sitemap; name it .txt (e.g. sitemap.txt)"
            )
        reason = " ".join((error.msg or "syntax error").split(", line ")[0].split())
        if error.lineno:
            where = f"line {error.lineno}"
        else:  # libxml2 stopped without saying where: an undefined entity such as &nbsp;, or cut-off data
            where = f"after line {self.last_line}"
            reason = f"{reason}: an entity XML does not define, such as &nbsp;, or cut-off data"
        return InputError(
            f"{location}, {where}: not well-formed XML ({reason}); fix the sitemap generator (notify-changes never guesses at broken XML)"
        )

    def _root(self, element: Any) -> None:
        """The first element: a urlset or a sitemap index, in a namespace of its own."""
        self.root_seen = True
        if getattr(element.getroottree().docinfo, "doctype", ""):
            raise InputError(f"{self.location}: has a <!DOCTYPE>; sitemaps never need one and it is refused for safety")
        namespace, _, local = element.tag.rpartition("}")
        if element.getparent() is None and element.tag in ("rss", f"{{{ATOM}}}feed"):
            self.is_feed = True  # a feed is read as a urlset: its items' links and dates
            self.info.kind = "urlset"
            self.item_tag = "item" if local == "rss" else f"{{{ATOM}}}entry"
            return
        if local not in ("urlset", "sitemapindex") or element.getparent() is not None:
            raise InputError(f"{self.location}: <{local}> is not a sitemap root (expected <urlset> or <sitemapindex>)")
        prefix = f"{namespace}}}" if namespace else ""
        if not namespace:  # (another namespace is not a sitemap at all: refused before this)
            self.sitemap.findings.append(
                Finding(
                    "sitemap-namespace",
                    self.info.public_url or self.location,
                    f'<{local}> has no namespace; search engines read a sitemap in {NS_09}: write <{local} xmlns="{NS_09}">',
                )
            )
        self.is_index = local == "sitemapindex"
        self.info.kind = "index" if self.is_index else "urlset"
        self.info.news = NEWS in (element.nsmap or {}).values()
        self.item_tag = prefix + ("sitemap" if self.is_index else "url")
        self.loc_tag, self.lastmod_tag = prefix + "loc", prefix + "lastmod"
        self.changefreq_tag, self.priority_tag = prefix + "changefreq", prefix + "priority"

    def _handle(self, events: Iterable[tuple[str, Any]]) -> None:
        """The parser's events since the last chunk: one entry (or index part) per item.
        Runs once per URL: what it needs is held in locals."""
        item_tag, loc_tag, lastmod_tag = self.item_tag, self.loc_tag, self.lastmod_tag
        entries, file_no, info, line, is_index = self.sitemap.entries, self.file_no, self.info, self.last_line, self.is_index
        is_feed, plain = self.is_feed, self.sitemap.plain
        last = None  # the last item read: its parent is cut once per chunk, not per URL
        read = 0
        for event, element in events:
            if not self.root_seen:
                if event == "start":
                    self._root(element)
                    item_tag, loc_tag, lastmod_tag, is_index = self.item_tag, self.loc_tag, self.lastmod_tag, self.is_index
                    is_feed = self.is_feed
                continue
            if event != "end":
                line = element.sourceline or 0  # (inline: once per URL)
                continue
            if element.tag != item_tag:
                continue
            if is_feed and info.site_url is None:
                info.site_url = _site_link(element.getparent(), self.base) or ""  # read once, at the first item
            if is_feed:
                loc, lastmod = feed_item(element, self.base)[:2]
                repeated, others = "", None
            else:
                loc, lastmod, repeated, others = url_item(element, loc_tag, lastmod_tag)[:4]
            line = element.sourceline or 0
            if others is not None and lastmod is None:
                lastmod = _news_date(others)
            if others is not None and loc:
                self._other_children(loc, line, others)
            if repeated:
                self._repeated(loc, line, repeated)
            if not loc:
                what = f"<{item_tag.rpartition('}')[2]}> without a <{'link' if self.is_feed else 'loc'}>"
                self.sitemap.findings.append(Finding("url-invalid", f"{self.location}:{line}", what))
            elif is_index:
                self.parts.append(IndexPart(loc, line))
            elif plain:  # a worker's read: a plain Row (see Sitemap.plain)
                entries.append((loc, lastmod, file_no, line))  # type: ignore[arg-type]
            else:
                entries.append(make_entry(Entry, (loc, lastmod, file_no, line)))
            read += 1
            last = element
        info.url_count += read
        self.last_line = line
        parent = last.getparent() if last is not None else None
        if parent is not None:  # memory stays flat: what was read goes, in one cut per chunk fed
            del parent[:-1]  # the last child may be an element still being parsed

    def _other_children(self, loc: str, line: int, children: list[Any]) -> None:
        """What else a <url> says: its changefreq and priority (judged against the protocol)
        and its hreflang alternates (kept for hreflang-broken)."""
        for child in children:
            tag = child.tag
            if tag == XHTML_LINK:
                if (child.get("rel") or "").strip().lower() == "alternate" and child.get("hreflang"):
                    # a password in either is on no channel after (#39 item 4): the loc's, as the reader hides it
                    href = without_password(trimmed(child.get("href")))
                    self.info.alternates.setdefault(without_password(loc), []).append((child.get("hreflang") or "", href))
            elif tag == self.changefreq_tag:
                value = trimmed(child.text)
                if value not in CHANGEFREQS:
                    self._bad_value(loc, line, f"<changefreq>{value}</changefreq> is not one of {', '.join(sorted(CHANGEFREQS))}")
            elif tag == self.priority_tag:
                value = trimmed(child.text)
                if not _priority_ok(value):
                    self._bad_value(loc, line, f"<priority>{value}</priority> is not a number from 0.0 to 1.0")

    def _bad_value(self, loc: str, line: int, what: str) -> None:
        self.bad_values += 1
        if self.bad_values <= VALUE_FINDINGS:
            self.sitemap.findings.append(Finding("sitemap-values", loc, f"{self.location}, line {line}: {what}; engines ignore it"))

    def _repeated(self, loc: str | None, line: int, repeated: str) -> None:
        """An item with two <loc> or two <lastmod>: the first is read, and it is said."""
        rule = "url-invalid" if repeated == "loc" else "lastmod-invalid"
        what = f"{self.location}, line {line}: two <{repeated}> in one <url>; only the first was read"
        self.sitemap.findings.append(Finding(rule, loc or f"{self.location}:{line}", what))


def _site_link(container: Any, base: str) -> str | None:
    """The site a feed names as its own: RSS's ``<channel><link>``, Atom's feed-level
    ``<link rel="alternate">`` (or a link without ``rel``), among the elements before its
    first item."""
    found = feed_link(container, base) if container is not None else None
    # a staging site's credentials in it (http://admin:pw@host/) name no other site, and are shown nowhere
    return (credentials(found[0])[0] or None) if found is not None else None


def _news_date(children: list[Any]) -> str | None:
    """A news article's ``<news:publication_date>``: its date when the <url> has no lastmod."""
    for child in children:
        if child.tag == NEWS_TAG:
            published = child.findtext(NEWS_DATE)
            return trimmed(published) if published is not None else None
    return None


def _priority_ok(value: str) -> bool:
    """A sitemap priority: a decimal number from 0.0 to 1.0 (``0``, ``.5``, ``1.0``)."""
    if not value or value.strip("0123456789.") or value.count(".") > 1 or value == ".":
        return False
    return 0.0 <= float(value) <= 1.0


_ENCODING = re.compile(rb"<\?xml\s[^>]*?encoding\s*=\s*[\"']([^\"']*)[\"']")


def declared_encoding(data: bytes) -> str | None:
    """The encoding an XML declaration at the start of ``data`` names, or None."""
    match = _ENCODING.match(data)
    return match.group(1).decode("ascii", errors="replace") if match else None


def _prolog_ends(data: bytes, location: str) -> bool:
    """True once ``data`` reaches the root element; raises on a DOCTYPE or a non-UTF-8 encoding.

    The DOCTYPE check happens here, on bytes, before the parser is fed: an external DTD
    or entity must never be opened, whatever libxml2's own settings would do.
    """
    if b"\x00" in data[:4]:  # its first character, "<" or a space, in two or four bytes (a BOM's or not)
        raise InputError(f"{location}: encoded in UTF-16 or UTF-32; a sitemap must be UTF-8")
    pos, size = 0, len(data)
    while True:
        while pos < size and data[pos] in WHITESPACE_BYTES:
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
            if data[pos + len(head) :].lstrip()[:4].lower() == b"html":  # <!DOCTYPE html>, in any case and spacing
                raise InputError(f"{location}: is an HTML page, not a sitemap; check the path and what the build wrote there")
            raise InputError(f"{location}: has a <!DOCTYPE>; sitemaps never need one and it is refused for safety")
        # False when the chunk ends inside what may be a DOCTYPE
        return not (len(head) < 9 and b"<!DOCTYPE".startswith(head))


def _strip_prolog(chunk: bytes, location: str, sitemap: Sitemap, info: SitemapFile) -> bytes:
    """Tolerate a BOM or whitespace before ``<?xml`` (a warning), which strict parsers refuse."""
    stripped = chunk
    had_bom = stripped.startswith(BOM)
    if had_bom:
        stripped = stripped[len(BOM) :]
    body = stripped.lstrip(WHITESPACE_BYTES)
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
