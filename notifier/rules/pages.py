"""The rules that judge a listed URL by what the site says of it: its built page (noindex,
canonical, redirect stub, no page at all), robots.txt, and the host's ``_headers`` and
``_redirects``. Like the other URL rules, they judge what a deploy adds or changes.
"""

from __future__ import annotations

import itertools
import re
import urllib.parse
from collections.abc import Iterator

from notifier.pages import BuiltSite, Head
from notifier.rules.table import OFF, Context, Found, RuleSettings
from notifier.urls import split_url

# meta names that speak to the engines IndexNow notifies (a googlebot meta does not)
ROBOTS_METAS = {"robots", "bingbot", "msnbot", "yandex", "yandexbot", "seznambot", "yeti", "naverbot", "yepbot"}
_NOT_A_CRAWLER = {"unavailable_after", "max-snippet", "max-image-preview", "max-video-preview"}
_REFRESH = re.compile(r"\s*[\d.]*\s*(?:[;,]\s*(?:url\s*=\s*)?(?P<url>.*?))?\s*", re.IGNORECASE | re.DOTALL)
PAGE_RULES = ("page-noindex", "page-canonical-elsewhere", "page-redirect", "page-missing", "url-robots-disallowed")


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


def noindex_meta(head: Head) -> tuple[str, str] | None:
    """The (name, content) of a robots meta that keeps the page out of the engines' indexes."""
    for name, content in head.robots:
        if name in ROBOTS_METAS and {token.strip().lower() for token in content.split(",")} & {"noindex", "none"}:
            return name, content
    return None


def noindex_header(values: list[str]) -> str | None:
    """The X-Robots-Tag value that says noindex to the IndexNow engines, or None."""
    for value in values:
        crawler: str | None = None
        for piece in value.split(","):
            prefix, colon, rest = piece.partition(":")
            if colon and prefix.strip().lower() not in _NOT_A_CRAWLER:
                crawler, piece = prefix.strip().lower(), rest
            if (crawler is None or crawler in ROBOTS_METAS) and piece.strip().lower() in ("noindex", "none"):
                return value
    return None


def refresh_target(loc: str, head: Head) -> str | None:
    """Where a ``<meta http-equiv="refresh">`` sends the reader, when it names another URL."""
    if head.refresh is None:
        return None
    match = _REFRESH.fullmatch(head.refresh)
    target = (match.group("url") or "").strip("'\" ") if match else ""
    if not target:
        return None
    resolved = urllib.parse.urljoin(_base(loc, head), target)
    return None if same_page(resolved, loc) else resolved


def canonical_elsewhere(loc: str, head: Head) -> str | None:
    """The page's canonical URL when it names another page than ``loc``."""
    if head.canonical is None:
        return None
    target = urllib.parse.urljoin(_base(loc, head), head.canonical)
    return None if same_page(target, loc) else target


def _base(loc: str, head: Head) -> str:
    return urllib.parse.urljoin(loc, head.base) if head.base else loc


def _pages(context: Context, settings: RuleSettings) -> Iterator[Found]:
    site = context.built
    if site is None or all(settings.level(rule) == OFF for rule in PAGE_RULES):
        return
    diff = context.diff
    for change in itertools.chain(diff.added, diff.changed):
        yield from _judge(change.loc, site)


def _judge(loc: str, site: BuiltSite) -> Iterator[Found]:
    relative = site.build.page_file(loc)
    redirect = site.redirects.target(loc, relative is not None) if site.redirects is not None else None
    if redirect is not None and not same_page(urllib.parse.urljoin(loc, redirect), loc):
        yield "page-redirect", loc, f"_redirects sends this path to {redirect}; list the target in the sitemap, not the old address", None
    elif relative is None:
        yield (
            "page-missing",
            loc,
            f"no page file for it in the build {site.build.root} (looked for {_looked_for(loc)}); "
            "the sitemap lists a page the build did not make",
            None,
        )
    head = site.reader.heads.get(loc)
    if head is not None and relative is not None:
        meta = noindex_meta(head)
        if meta is not None:
            said = f'<meta name="{meta[0]}" content="{meta[1]}">'
            yield "page-noindex", loc, f"{relative} says {said}; leave it out of the sitemap, or drop the noindex", None
        target = refresh_target(loc, head)
        if target is not None:
            yield "page-redirect", loc, f"{relative} is a redirect stub (meta refresh) to {target}; list the target instead", None
        elif (canonical := canonical_elsewhere(loc, head)) is not None:
            yield "page-canonical-elsewhere", loc, f"{relative} names {canonical} as its canonical URL; list that one instead", None
    if site.headers is not None:
        value = noindex_header(site.headers.robots_tag(loc))
        if value is not None:
            yield "page-noindex", loc, f"_headers sends X-Robots-Tag: {value} for it; leave it out of the sitemap, or change _headers", None
    if site.robots is not None:
        blocked = site.robots.blocking(loc)
        if blocked:
            yield (
                "url-robots-disallowed",
                loc,
                f"the build's robots.txt keeps {', '.join(blocked)} away from it; leave it out of the sitemap, or allow it in robots.txt",
                None,
            )


def _looked_for(loc: str) -> str:
    path = urllib.parse.unquote(split_url(loc).path).strip("/")
    return ", ".join([f"{path}/index.html", f"{path}.html", path] if path else ["index.html"])
