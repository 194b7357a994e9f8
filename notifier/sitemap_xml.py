"""An XML sitemap or sitemap index, streamed through a strict parser.

The parser refuses any DOCTYPE (checked on the bytes before libxml2 sees them), resolves
no entity and never touches the network; what was read is dropped as it goes, so memory
stays flat whatever the file's size.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from lxml import etree

from notifier.errors import InputError
from notifier.sitemap_files import Entry, Finding, IndexPart, Sitemap, SitemapFile, make_entry
from notifier.source import CHUNK

NS_09 = "http://www.sitemaps.org/schemas/sitemap/0.9"
NS_084 = "http://www.google.com/schemas/sitemap/0.84"  # the old namespace, read like 0.9
NAMESPACES = (NS_09, NS_084, "")
_TAGS = [f"{{{ns}}}{name}" if ns else name for ns in NAMESPACES for name in ("urlset", "sitemapindex", "url", "sitemap")]

WHITESPACE_BYTES = b" \t\r\n"
# What XML calls white space (https://www.w3.org/TR/xml/#NT-S): only it is trimmed from a
# loc or a lastmod. str.strip() would also take U+00A0, U+2003 or U+0085 away in silence,
# and url-invalid must see them.
XML_SPACE = " \t\r\n"
BOM = b"\xef\xbb\xbf"


def parse_xml(chunks: Iterator[bytes], location: str, file_no: int, sitemap: Sitemap, info: SitemapFile) -> list[IndexPart]:
    """Stream one XML sitemap file; entries go to ``sitemap``, an index's parts are returned."""
    return _XmlFile(location, file_no, sitemap, info).read(chunks)


class _XmlFile:
    """One XML file being read: the root it turned out to have, and where the parser is."""

    def __init__(self, location: str, file_no: int, sitemap: Sitemap, info: SitemapFile) -> None:
        self.location, self.file_no, self.sitemap, self.info = location, file_no, sitemap, info
        self.parser = etree.XMLPullParser(
            events=("start", "end"),
            tag=_TAGS,
            resolve_entities=False,  # never expand an entity, internal or external
            no_network=True,
            load_dtd=False,
            dtd_validation=False,
            huge_tree=False,
            remove_comments=True,
            remove_pis=True,
            collect_ids=False,
        )
        self.parts: list[IndexPart] = []
        self.root_seen = False
        self.is_index = False
        self.item_tag = self.loc_tag = self.lastmod_tag = ""
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
        if not self.root_seen:
            tag = root.tag if isinstance(root.tag, str) else "?"
            local = tag.rpartition("}")[2]
            namespace = tag[1:].partition("}")[0] if tag.startswith("{") else "none"
            raise InputError(
                f"{location}: root element <{local}> (namespace {namespace}) is not a sitemap; "
                f"expected <urlset> or <sitemapindex> in {NS_09}"
            )
        return self.parts

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
        if local not in ("urlset", "sitemapindex") or element.getparent() is not None:
            raise InputError(f"{self.location}: <{local}> is not a sitemap root (expected <urlset> or <sitemapindex>)")
        prefix = f"{namespace}}}" if namespace else ""
        self.is_index = local == "sitemapindex"
        self.info.kind = "index" if self.is_index else "urlset"
        self.item_tag = prefix + ("sitemap" if self.is_index else "url")
        self.loc_tag, self.lastmod_tag = prefix + "loc", prefix + "lastmod"

    def _handle(self, events: Iterable[tuple[str, Any]]) -> None:
        """The parser's events since the last chunk: one entry (or index part) per item.
        Runs once per URL: what it needs is held in locals."""
        item_tag, loc_tag, lastmod_tag = self.item_tag, self.loc_tag, self.lastmod_tag
        entries, file_no, info, line, is_index = self.sitemap.entries, self.file_no, self.info, self.last_line, self.is_index
        parent = None
        for event, element in events:
            if not self.root_seen:
                if event == "start":
                    self._root(element)
                    item_tag, loc_tag, lastmod_tag, is_index = self.item_tag, self.loc_tag, self.lastmod_tag, self.is_index
                continue
            if event != "end":
                line = _line(element)
                continue
            if element.tag != item_tag:
                continue
            loc = lastmod = None  # the first <loc> and <lastmod> children ("" when empty):
            repeated = ""  # walking the children beats findtext twice
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
            line = _line(element)
            if repeated:
                self._repeated(loc, line, repeated)
            if not loc:
                self.sitemap.findings.append(
                    Finding("url-invalid", f"{self.location}:{line}", f"<{item_tag.rpartition('}')[2]}> without a <loc>")
                )
            elif is_index:
                self.parts.append(IndexPart(loc, line))
            else:
                entries.append(make_entry(Entry, (loc, lastmod, file_no, line)))
            info.url_count += 1
            parent = element.getparent()
        self.last_line = line
        if parent is not None:  # memory stays flat: what was read goes, in one cut per chunk fed
            del parent[:-1]  # the last child may be an element still being parsed

    def _repeated(self, loc: str | None, line: int, repeated: str) -> None:
        """An item with two <loc> or two <lastmod>: the first is read, and it is said."""
        rule = "url-invalid" if repeated == "loc" else "lastmod-invalid"
        what = f"{self.location}, line {line}: two <{repeated}> in one <url>; only the first was read"
        self.sitemap.findings.append(Finding(rule, loc or f"{self.location}:{line}", what))


def _prolog_ends(data: bytes, location: str) -> bool:
    """True once ``data`` reaches the root element; raises on a DOCTYPE or a non-UTF-8 encoding.

    The DOCTYPE check happens here, on bytes, before the parser is fed: an external DTD
    or entity must never be opened, whatever libxml2's own settings would do.
    """
    if data[:2] in (b"\xff\xfe", b"\xfe\xff") or b"\x00" in data[:4]:
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
