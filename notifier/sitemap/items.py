"""What one item of an XML sitemap or feed says: its page's URL, its date and the elements
holding them. One reading, for the reader (``xml.py``) and for ``stamp``, which writes each
date where the reader will read it.

A URL is an element's text or an attribute's value with XML white space trimmed, and only
it: ``str.strip()`` would also take U+00A0, U+2003 or U+0085 away in silence, and
url-invalid must see them. The parser has merged the text around a comment, a processing
instruction or a CDATA section and resolved the references. A feed's link is resolved
against its ``xml:base`` (RFC 4287 section 2, XML Base: each ``xml:base`` is itself resolved
against the base enclosing it, the outermost against the URL the feed is served at), by
RFC 3986 section 5.2.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any, NamedTuple

from lxml import etree

from notifier.dates import rfc822_to_w3c
from notifier.errors import InputError
from notifier.paths import is_url
from notifier.sitemap.files import SitemapFile

NS_09 = "http://www.sitemaps.org/schemas/sitemap/0.9"
NS_084 = "http://www.google.com/schemas/sitemap/0.84"  # the old namespace, read like 0.9
NAMESPACES = (NS_09, NS_084, "")
ATOM = "http://www.w3.org/2005/Atom"
ATOM_LINK, ATOM_UPDATED, ATOM_FEED, ATOM_ENTRY = (f"{{{ATOM}}}{name}" for name in ("link", "updated", "feed", "entry"))
DC_DATE = "{http://purl.org/dc/elements/1.1/}date"
XML_BASE = "{http://www.w3.org/XML/1998/namespace}base"
# RFC 4287 4.2.7.2: a registered relation's name stands for this IRI with the name appended
IANA_RELATIONS = "http://www.iana.org/assignments/relation/"
ALTERNATE = ("alternate", IANA_RELATIONS + "alternate")
# the elements the parser reports: the roots and their items
TAGS = [f"{{{ns}}}{name}" if ns else name for ns in NAMESPACES for name in ("urlset", "sitemapindex", "url", "sitemap")]
TAGS += ["rss", "item", ATOM_FEED, ATOM_ENTRY]  # feeds: RSS 2.0 and Atom 1.0

# What XML calls white space (https://www.w3.org/TR/xml/#NT-S): only it is trimmed.
XML_SPACE = " \t\r\n"


def trimmed(text: str | None) -> str:
    """A loc, a link or a date as written: XML white space around it trimmed."""
    return text.strip(XML_SPACE) if text else ""


def pull_parser() -> Any:
    """The strict parser every sitemap is read with: no entity expanded, no network, no DTD,
    memory bounded; comments and processing instructions dropped (their text is no value)."""
    return etree.XMLPullParser(
        events=("start", "end"),
        tag=TAGS,
        resolve_entities=False,  # never expand an entity, internal or external
        no_network=True,
        load_dtd=False,
        dtd_validation=False,
        huge_tree=False,
        remove_comments=True,
        remove_pis=True,
        collect_ids=False,
    )


def document_url(info: SitemapFile) -> str:
    """The URL a file is served at, when known: the base of a feed's relative links."""
    return info.public_url or (info.name if is_url(info.name) else "")


UrlItem = tuple[str | None, str | None, str, list[Any] | None, Any, Any]


def url_item(element: Any, loc_tag: str, lastmod_tag: str) -> UrlItem:
    """A sitemap's ``<url>`` (or an index's ``<sitemap>``): its first ``<loc>`` and
    ``<lastmod>`` ("" when empty, None when absent), the name of a child written twice, its
    other children (``<changefreq>``, ``<xhtml:link>``...), and the two elements.
    Runs once per URL: walking the children beats findtext twice."""
    loc = lastmod = None
    loc_element = lastmod_element = None
    repeated = ""
    others: list[Any] | None = None
    for child in element:
        tag = child.tag
        if tag == loc_tag:
            if loc_element is None:
                loc, loc_element = trimmed(child.text), child
            else:
                repeated = "loc"
        elif tag == lastmod_tag:
            if lastmod_element is None:
                lastmod, lastmod_element = trimmed(child.text), child
            else:
                repeated = repeated or "lastmod"
        elif tag is not None:
            if others is None:
                others = []
            others.append(child)
    return loc, lastmod, repeated, others, loc_element, lastmod_element


class FeedItem(NamedTuple):
    """An RSS ``<item>`` or an Atom ``<entry>``: its page and its date, and where each is."""

    loc: str | None  # the page's URL, resolved ("" for an empty link, None for none)
    lastmod: str | None  # the date as a lastmod: a <pubDate> as the W3C Datetime of its instant
    written: str | None  # the date as written
    page: Any  # the element naming the page
    dated: Any  # the element holding the date
    date_tag: str  # that element's tag, or the one a date is written in when there is none


def is_alternate(rel: str | None) -> bool:
    """RFC 4287 4.2.7.2: a link without ``rel`` is ``alternate``, and so is the IANA
    registry's IRI for it; a registered name in any case (as feedparser reads it)."""
    return rel is None or rel.lower() in ALTERNATE


def feed_link(element: Any, base: str) -> tuple[str, Any] | None:
    """The first child that names the page of an RSS item or channel (``<link>``) or of an
    Atom entry or feed (``<link rel="alternate">``, also in RSS), resolved against its
    ``xml:base`` and ``base`` (the document's URL); and that child."""
    for child in element:
        tag = child.tag
        if tag == "link":
            value = trimmed(child.text)
        elif tag == ATOM_LINK and is_alternate(child.get("rel")):
            value = trimmed(child.get("href"))
        else:
            continue
        if _SCHEME.match(value) is None:  # relative: an absolute one is taken as written
            value = resolve(base_of(child, base), value)
        return value, child
    return None


def feed_item(element: Any, base: str) -> FeedItem:
    """An RSS ``<item>`` or Atom ``<entry>``: its page link, and its date as a lastmod.

    RSS: the date from ``<atom:updated>`` or ``<dc:date>`` (W3C Datetimes), else
    ``<pubDate>`` (RFC 822, turned into the W3C Datetime of the same instant; kept as
    written when it is not valid, for lastmod-invalid to say so). Atom: ``<updated>``.
    """
    found = feed_link(element, base)
    updated = dc_date = pub_date = None
    for child in element:
        tag = child.tag
        if tag == ATOM_UPDATED:
            updated = child if updated is None else updated
        elif tag == DC_DATE:
            dc_date = child if dc_date is None else dc_date
        elif tag == "pubDate":
            pub_date = child if pub_date is None else pub_date
    dated = updated if updated is not None else dc_date if dc_date is not None else pub_date
    new_tag = ATOM_UPDATED if element.tag == ATOM_ENTRY else "pubDate"  # where a date is written when there is none
    date_tag = dated.tag if dated is not None else new_tag
    written = trimmed(dated.text) if dated is not None else None
    lastmod = written
    if written is not None and date_tag == "pubDate":
        lastmod = rfc822_to_w3c(written) or written
    loc, page = found if found is not None else (None, None)
    return FeedItem(loc, lastmod, written, page, dated, date_tag)


# -- RFC 3986 section 5: a reference resolved against a base ----------------------------
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:")
_PARTS = re.compile(r"(?:([A-Za-z][A-Za-z0-9+.-]*):)?(?://([^/?#]*))?([^?#]*)(?:\?([^#]*))?(?:#(.*))?", re.DOTALL)


def base_of(element: Any, document: str) -> str:
    """The base URI of ``element``: the ``xml:base`` of it and of each element around it,
    each resolved against the one enclosing it, the outermost against ``document``."""
    bases = []
    node = element
    while node is not None:
        value = node.get(XML_BASE)
        if value is not None:
            bases.append(trimmed(value))
        node = node.getparent()
    base = document
    for value in reversed(bases):
        base = resolve(base, value)
    return base


def resolve(base: str, reference: str) -> str:
    """RFC 3986 5.2.2 (strict): ``reference`` resolved against ``base``; as written when
    there is no base."""
    if not base:
        return reference
    match, parts = _PARTS.fullmatch(reference), _PARTS.fullmatch(base)
    assert match is not None and parts is not None  # every part of the pattern is optional
    scheme, authority, path, query, fragment = match.groups()
    if scheme is not None:
        path = _remove_dot_segments(path)
    else:
        base_scheme, base_authority, base_path, base_query, _ = parts.groups()
        if authority is not None:
            path = _remove_dot_segments(path)
        else:
            if path == "":
                path, query = base_path, base_query if query is None else query
            elif path.startswith("/"):
                path = _remove_dot_segments(path)
            else:  # 5.2.3: merged with the base's path up to its last "/"
                merged = "/" + path if base_authority is not None and base_path == "" else base_path[: base_path.rfind("/") + 1] + path
                path = _remove_dot_segments(merged)
            authority = base_authority
        scheme = base_scheme
    return "".join(
        (
            f"{scheme}:" if scheme is not None else "",
            f"//{authority}" if authority is not None else "",
            path,
            f"?{query}" if query is not None else "",
            f"#{fragment}" if fragment is not None else "",
        )
    )


def _remove_dot_segments(path: str) -> str:
    """RFC 3986 5.2.4."""
    output: list[str] = []
    while path:
        if path.startswith("../"):
            path = path[3:]
        elif path.startswith(("./", "/./")):
            path = path[2:]
        elif path == "/.":
            path = "/"
        elif path.startswith("/../"):
            path = path[3:]
            if output:
                output.pop()
        elif path == "/..":
            path = "/"
            if output:
                output.pop()
        elif path in (".", ".."):
            path = ""
        else:
            cut = path.find("/", 1)
            segment, path = (path, "") if cut < 0 else (path[:cut], path[cut:])
            output.append(segment)
    return "".join(output)


# -- every item of a file, as stamp reads it ---------------------------------------------
class Reading(NamedTuple):
    """One item of a file as the reader reads it, and where its elements are among the
    item's children (-1: none)."""

    tag: str  # the item's tag: {namespace}url, {namespace}sitemap, item or {Atom}entry
    loc: str | None  # its page's URL (None or "": none)
    date: str | None  # its date as written
    date_tag: str  # the element that holds its date, or the one a date is written in
    page_at: int  # the child naming the page
    date_at: int  # the child holding the date


def readings(data: bytes, document: str, location: str) -> list[Reading]:
    """Every item of an XML sitemap, index or feed, in document order, read as the reader
    reads it (``document``: the URL the file is served at, the base of a feed's links)."""
    parser = pull_parser()
    found: list[Reading] = []
    item_tag = ""
    try:
        for events in _events(parser, data):
            last = None
            for event, element in events:
                if not item_tag:
                    item_tag = _item_tag(element, location)
                elif event == "end" and element.tag == item_tag:
                    found.append(_reading(element, document, item_tag))
                    last = element
            parent = last.getparent() if last is not None else None
            if parent is not None:  # memory stays flat, as in the reader
                del parent[:-1]
    except etree.XMLSyntaxError as error:
        raise InputError(f"{location}: not well-formed XML ({error.msg}); fix it, then run stamp again") from None
    return found


def _events(parser: Any, data: bytes) -> Iterator[Any]:
    stripped = data.removeprefix(b"\xef\xbb\xbf").lstrip(b" \t\r\n")  # as the reader tolerates them
    for start in range(0, len(stripped), 1 << 20):
        parser.feed(stripped[start : start + (1 << 20)])
        yield parser.read_events()
    parser.close()
    yield parser.read_events()


def _item_tag(root: Any, location: str) -> str:
    """The tag of a file's items, from its root element."""
    if getattr(root.getroottree().docinfo, "doctype", ""):
        raise InputError(f"{location}: has a <!DOCTYPE>; sitemaps never need one and it is refused for safety")
    tag: str = root.tag
    if tag in ("rss", ATOM_FEED):
        return "item" if tag == "rss" else ATOM_ENTRY
    namespace, brace, local = tag.rpartition("}")
    return namespace + brace + ("sitemap" if local == "sitemapindex" else "url")


def _reading(element: Any, document: str, item_tag: str) -> Reading:
    if item_tag in ("item", ATOM_ENTRY):
        loc, _, date, page, dated, date_tag = feed_item(element, document)
    else:
        prefix = item_tag[: item_tag.rfind("}") + 1]
        date_tag = prefix + "lastmod"
        loc, date, _, _, page, dated = url_item(element, prefix + "loc", date_tag)
    return Reading(item_tag, loc, date, date_tag, _index(element, page), _index(element, dated))


def _index(element: Any, child: Any) -> int:
    return element.index(child) if child is not None else -1
