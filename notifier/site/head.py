"""What a built page's ``<head>`` says about being indexed: its robots metas, canonical,
base and refresh, read with lxml's HTML parser from the page's first bytes; and what
those facts mean for a listed URL (noindex, canonical elsewhere, a redirect stub).
"""

from __future__ import annotations

import re
import threading
import urllib.parse
from typing import Any, NamedTuple

from lxml import etree

from notifier.site.robots import INDEXNOW_CRAWLERS
from notifier.urls import join_url, split_url, without_password

HEAD_LIMIT = 64 * 1024  # a head longer than this is cut; the facts that matter come first
_FEED = 1024  # bytes given to the pull parser at a time: it stops soon after the head ends
# recover: broken markup is read as browsers read it (a stray </p>, a </html> before </head>)
_OPTIONS: dict[str, Any] = {"no_network": True, "remove_comments": True, "remove_pis": True, "recover": True}
_PARSER: dict[str, Any] = {"events": ("end",), "tag": "head", **_OPTIONS}

# The head's end found by one regular expression over the tokens that can hide a "</head>"
# (comments, raw text, quoted attribute values), so that lxml parses the head alone, once.
# Instructions a generator's head (callgrind, scripts/bench_pages.py's page): 252k with the
# pull parser fed 1 KB at a time, 200k found by this expression (34k) and parsed alone. Whatever the expression does not
# know to the letter (a "<!-->", a "--!>", a script holding "<!--", a "</" without a name, a
# quote inside an unquoted value, <plaintext>, CDATA, no <head> tag, a start tag before <head> but <html>,
# an <html> or <head> inside it) stops it short of an end, and the page
# goes to the pull parser, which ends the head as lxml reads the whole page: the expression
# only answers where both agree. Possessive repeats: no page makes it backtrack.
_ATTRIBUTES = rb"""[^>"'=]*+(?:=\s*+(?:"[^"]*+"|'[^']*+'|[^\s>"'=`<]++)[^>"'=]*+)*+>"""
_RAW = (b"script", b"style", b"title", b"textarea", b"xmp", b"iframe", b"noembed", b"noframes", b"noscript")
_RAW_TEXT = b"".join(  # one alternative a name: Python 3.11's re breaks a backreference after a possessive repeat
    rb"|" + name + rb"(?=[\s/>])" + _ATTRIBUTES + rb"(?:[^<]++|<(?!/" + name + rb"[\s/>]|!--))*+(?=</" + name + rb"[\s/>])" for name in _RAW
)


def _tokens(tags: bytes) -> bytes:
    """What the expression steps over: text, end tags (never a ``</head>``: before the head lxml
    passes over it), comments, doctypes, and the start tags ``tags`` matches."""
    return (
        rb"(?:[^<]++"  # text
        rb"|<(?:" + tags
        + rb"|/(?!head[\s/>])[a-z][^\s/>]*+" + _ATTRIBUTES  # an end tag
        + rb"|!--(?!-?>)(?:[^-]++|-(?!-!?>))*+-->"  # a comment
        rb"|(?:!(?!--|\[)|\?)[^>]*+>"  # a doctype, "<?xml ...?>"
        rb"|(?![a-z!/?])"  # a "<" no tag follows: text
        rb"))*+"
    )  # fmt: skip


# Inside the head, every start tag but <body>, <plaintext>, and <html> or a second <head> (after
# either lxml passes over the next </head>); before it none but one <html>: a head element there
# (a <meta charset> before <head>) opens the head itself, and the <head> tag is a second one.
_IN_HEAD = (
    # most start tags: a first letter that no raw text element, plaintext or body has
    rb"(?!html[\s/>]|head[\s/>])(?=[ac-hj-moqruvwyz])[a-z][^\s/>]*+" + _ATTRIBUTES
    + _RAW_TEXT  # raw text, up to its own end tag
    + rb"|(?!(?:body|html|head|" + b"|".join(_RAW) + rb"|plaintext)[\s/>])[a-z][^\s/>]*+" + _ATTRIBUTES  # any other start tag
)  # fmt: skip
_NONE = rb"(?!)"
_HEAD_END = re.compile(
    _tokens(_NONE) + rb"(?:<html(?=[\s/>])" + _ATTRIBUTES + _tokens(_NONE) + rb")?+"
    + rb"<head(?=[\s/>])" + _ATTRIBUTES + _tokens(_IN_HEAD) + rb"(?=</head[\s/>]|<body[\s/>])",
    re.IGNORECASE,
)  # fmt: skip


class Head(NamedTuple):
    """What a page's head says, each as written (None or empty when it says nothing)."""

    robots: tuple[tuple[str, str], ...]  # (meta name, content) of robots-type metas
    canonical: str | None  # the first <link rel="canonical"> href
    base: str | None  # <base href>
    refresh: str | None  # the first <meta http-equiv="refresh"> content that is not blank
    alternates: tuple[tuple[str, str], ...] = ()  # (hreflang, href as written) of <link rel="alternate" hreflang>


NO_HEAD = Head((), None, None, None)
_local = threading.local()


def head_end(data: bytes) -> int | None:
    """Where the head of ``data`` surely ends (its ``</head>`` or ``<body>``), or None when
    the scan cannot tell: the pull parser then reads the page (see ``_HEAD_END``)."""
    found = _HEAD_END.match(data)
    return found.end() if found is not None else None


def read_head(data: bytes, *, scan: bool = True) -> Head:
    """The facts of a page's head, from its first bytes. The head ends where the HTML parser
    says it does (``</head>``, ``<body>``, or the first tag a head cannot hold), never at a
    ``</head>`` inside a script's string or a comment. ``scan=False``: the pull parser
    alone finds the end (what the scan is held to)."""
    data = data[:HEAD_LIMIT]
    if not data.strip():
        return NO_HEAD
    end = head_end(data) if scan else None
    try:
        root = _parse(data[:end]) if end is not None else _parse_whole(data)
    except etree.XMLSyntaxError:
        _local.parser = _local.plain = None  # half-way through a document: not fit to read the next
        return NO_HEAD
    head = root.find("head") if root is not None else None
    if head is None:
        return NO_HEAD
    robots: list[tuple[str, str]] = []
    alternates: list[tuple[str, str]] = []
    canonical = base = refresh = None
    for element in head.iter("meta", "link", "base"):
        tag = element.tag
        if tag == "meta":
            name = (element.get("name") or "").strip().lower()
            if name:
                robots.append((name, element.get("content") or ""))
            elif (element.get("http-equiv") or "").strip().lower() == "refresh" and refresh is None:
                content = element.get("content") or ""
                if content.strip():  # a blank one is passed over, as browsers pass over it: the next may refresh
                    refresh = content
        elif tag == "link":
            rels = (element.get("rel") or "").lower().split()
            if "canonical" in rels and canonical is None and (element.get("href") or "").strip():
                canonical = (element.get("href") or "").strip()
            elif "alternate" in rels and element.get("hreflang") and (element.get("href") or "").strip():
                alternates.append(((element.get("hreflang") or "").strip(), (element.get("href") or "").strip()))
        elif base is None and (element.get("href") or "").strip():
            base = (element.get("href") or "").strip()
    return Head(tuple(robots), canonical, base, refresh, tuple(alternates))


def _parse(head: bytes) -> Any:
    """The tree lxml makes of the bytes before the head's end."""
    parser = getattr(_local, "plain", None)
    if parser is None:  # reused (it is ready again after close), never shared between threads
        parser = _local.plain = etree.HTMLParser(**_OPTIONS)
    parser.feed(head)
    return parser.close()


def _parse_whole(data: bytes) -> Any:
    """The tree of a page fed to the pull parser until it closes the head."""
    parser = getattr(_local, "parser", None)
    if parser is None:
        parser = _local.parser = etree.HTMLPullParser(**_PARSER)
    for start in range(0, len(data), _FEED):
        parser.feed(data[start : start + _FEED])
        if any(True for _ in parser.read_events()):
            break  # the parser closed the head: the rest is body
    root = parser.close()
    for _ in parser.read_events():  # the events close() made (a head it ended) must not end the next page's head
        pass
    return root


# who a robots meta name (or an X-Robots-Tag's crawler prefix) speaks to, among the crawlers of the
# engines IndexNow shares a URL with; "robots" (or no prefix) speaks to all of them, a googlebot meta to none
META_CRAWLERS = {
    "bingbot": "bingbot", "msnbot": "bingbot", "yandex": "YandexBot", "yandexbot": "YandexBot", "seznambot": "SeznamBot",
    "yeti": "Yeti", "naverbot": "Yeti", "yepbot": "YepBot", "amazonbot": "Amazonbot",
}  # fmt: skip
EVERY_CRAWLER = frozenset(INDEXNOW_CRAWLERS)
ROBOTS_METAS = {"robots", *META_CRAWLERS}
_CRAWLER_NAME = re.compile(r"[a-z][a-z0-9_.-]*")
_NOT_A_CRAWLER = {"unavailable_after", "max-snippet", "max-image-preview", "max-video-preview"}
_REFRESH = re.compile(r"\s*[\d.]*\s*(?:[;,]\s*(?:url\s*=\s*)?(?P<url>.*?))?\s*", re.IGNORECASE | re.DOTALL)


def same_page(first: str, second: str) -> bool:
    """Whether two URLs name one page: scheme and host in any case, a default port or
    none, a trailing slash or ``index.html`` or neither, escapes in any case; the query
    must match, the fragment does not count."""
    return _key(first) == _key(second)


def _key(url: str) -> tuple[str, str, str, str]:
    split = split_url(url)
    scheme, host = split.scheme.lower(), (split.hostname or "").lower()
    port = split.port if split.port not in (None, {"http": 80, "https": 443}.get(scheme)) else None
    path = urllib.parse.quote(urllib.parse.unquote(split.path), safe="/:@!$&'()*+,;=-._~")
    if path.endswith("/index.html"):
        path = path[: -len("index.html")]
    return scheme, f"{host}:{port}" if port else host, path.rstrip("/"), split.query


class Noindex(NamedTuple):
    said: str  # the first meta or header value that says it
    crawlers: frozenset[str]  # the IndexNow engines' crawlers it keeps away


def _kept_away(names: list[str]) -> frozenset[str]:
    return EVERY_CRAWLER if "robots" in names else frozenset(META_CRAWLERS[name] for name in names)


def noindex_meta(head: Head) -> Noindex | None:
    """What the robots metas that keep the page out of the engines' indexes say, and to whom."""
    said, names = "", []
    for name, content in head.robots:
        if name in ROBOTS_METAS and {token.strip().lower() for token in content.split(",")} & {"noindex", "none"}:
            said = said or f'<meta name="{name}" content="{content}">'
            names.append(name)
    return Noindex(said, _kept_away(names)) if names else None


def noindex_header(values: list[str]) -> Noindex | None:
    """What the X-Robots-Tag values that say noindex to the IndexNow engines say, and to whom."""
    said, names = "", []
    for value in values:
        crawler: str | None = None
        for piece in value.split(","):
            prefix, colon, rest = piece.partition(":")
            name = prefix.strip().lower()
            # "googlebot: noindex" names a crawler; "unavailable_after: Wed, 25 Jun 2030 15:00:00 PST"
            # is a directive whose date holds commas and colons: its pieces name no crawler
            if colon and name not in _NOT_A_CRAWLER and _CRAWLER_NAME.fullmatch(name):
                crawler, piece = name, rest
            if (crawler is None or crawler in ROBOTS_METAS) and piece.strip().lower() in ("noindex", "none"):
                said = said or value
                names.append(crawler or "robots")
    return Noindex(said, _kept_away(names)) if names else None


def refresh_target(loc: str, head: Head) -> str | None:
    """Where a ``<meta http-equiv="refresh">`` sends the reader, when it names another URL."""
    if head.refresh is None:
        return None
    match = _REFRESH.fullmatch(head.refresh)
    target = (match.group("url") or "").strip("'\" ") if match else ""
    if not target:
        return None
    resolved = join_url(_base(loc, head), target)
    if resolved is None:
        return target  # unreadable as a URL, but a refresh to it all the same
    return None if same_page(resolved, loc) else resolved


def canonical_elsewhere(loc: str, head: Head) -> str | None:
    """The page's canonical URL when it names another page than ``loc``."""
    if head.canonical is None:
        return None
    target = join_url(_base(loc, head), head.canonical)
    return None if target is None or same_page(target, loc) else target  # a canonical no URL parser reads is ignored, as crawlers do


def alternates_of(loc: str, head: Head) -> list[tuple[str, str]]:
    """(hreflang, URL) of the head's alternates, each resolved against the page's base."""
    base = _base(loc, head)
    return [(language, without_password(url)) for language, href in head.alternates if (url := join_url(base, href)) is not None]


def _base(loc: str, head: Head) -> str:
    return (join_url(loc, head.base) or loc) if head.base else loc


def noteworthy(loc: str, head: Head) -> bool:
    """Whether the head says anything a page rule acts on (an honest page's says nothing)."""
    if head.alternates:  # [announce] alternates may announce them
        return True
    return noindex_meta(head) is not None or refresh_target(loc, head) is not None or canonical_elsewhere(loc, head) is not None
