"""Splitting URLs without ever raising: sitemaps carry whatever a generator wrote."""

from __future__ import annotations

import functools
import itertools
import re
import urllib.parse
from collections.abc import Iterable
from typing import NamedTuple

_NOTHING = urllib.parse.SplitResult("", "", "", "", "")


def split_url(url: str) -> urllib.parse.SplitResult:
    """``urlsplit``, except that a URL Python cannot split (``http://[::1``, port 99999999)
    reads as empty: no scheme, no host, no path. Callers then treat it as invalid."""
    try:
        result = urllib.parse.urlsplit(url)
        _ = result.port  # raises ValueError for a port that is not a number in range
    except ValueError:
        return _NOTHING
    return result


def join_url(base: str, target: str) -> str | None:
    """``urljoin``, except that a target Python cannot join (``http://[::1/x``: an unclosed
    bracket, in a page's canonical, ``<base>``, refresh or a ``_redirects`` line) is None."""
    try:
        return urllib.parse.urljoin(base, target)
    except ValueError:
        return None


# An absolute http(s) URL with a plain host (and a port, 1 to 65535, no leading zero) and
# nothing to escape: nearly every loc of a real sitemap. One regex tells it and its parts
# apart, a few times faster than urlsplit.
_PORT = r"(?::(?:6553[0-5]|655[0-2]\d|65[0-4]\d\d|6[0-4]\d{3}|[1-5]\d{4}|[1-9]\d{0,3}))?"
_PATH_CHARS = r"A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;="
PLAIN_URL = re.compile(r"(https?)://([A-Za-z0-9.-]+" + _PORT + r")(/[" + _PATH_CHARS + r"]*)?", re.ASCII)
# the same characters as bytes, for bytes.translate (a host's characters are among them)
_PATH_BYTES = bytes(code for code in range(128) if re.fullmatch(f"[{_PATH_CHARS}]", chr(code)))


class Where(NamedTuple):
    scheme: str
    host: str  # lower case, with the port if any
    path: str  # "/" when empty, without query or fragment


def locate(url: str) -> Where:
    """Scheme, host and path of ``url``, cheaply for the common case; empty for a broken URL."""
    plain = PLAIN_URL.fullmatch(url)
    if plain is not None:
        rest = plain.group(3) or "/"
        path = rest.partition("?")[0].partition("#")[0] or "/"
        return Where(plain.group(1), plain.group(2).lower(), path)
    split = split_url(url)
    return Where(split.scheme, split.netloc.lower(), split.path or "/")


_UNRESERVED = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
_HEX = frozenset(b"0123456789abcdefABCDEF")
_NOTHING_TO_RESPELL = re.compile(r"[A-Za-z0-9\-._~/?=&;:@!'()+,\[\]]*")


def octets(text: str) -> str:
    """One spelling of a path, a query or a piece of a pattern, to compare as octets (RFC 9309
    2.2.2, RFC 3986 6.2.2): escapes of unreserved characters decoded, other escapes kept in upper
    case (an escape that is not UTF-8, ``%E9``, is just an octet; ``%2F`` is not ``/``), and
    non-ASCII, spaces, ``%``, ``*`` and ``$`` written as escapes (so a literal star or dollar in
    a URL never meets a pattern's wildcard or anchor)."""
    if _NOTHING_TO_RESPELL.fullmatch(text):
        return text
    data = text.encode("utf-8", "surrogatepass")
    out: list[str] = []
    position = 0
    while position < len(data):
        octet = data[position]
        if octet == 0x25 and position + 2 < len(data) and data[position + 1] in _HEX and data[position + 2] in _HEX:
            value = int(data[position + 1 : position + 3], 16)
            out.append(chr(value) if value in _UNRESERVED else f"%{value:02X}")
            position += 3
            continue
        out.append(f"%{octet:02X}" if octet > 0x7E or octet <= 0x20 or octet in b"*$%" else chr(octet))
        position += 1
    return "".join(out)


def path_query(url: str) -> tuple[str, str]:
    """The path ("/" when empty) and the query of ``url``, as written; cheaply for the common case."""
    plain = PLAIN_URL.fullmatch(url)
    if plain is not None:
        path, _, query = (plain.group(3) or "/").partition("#")[0].partition("?")
        return path or "/", query
    split = split_url(url)
    return split.path or "/", split.query


def origin(url: str) -> str:
    """The text before an URL's path: ``scheme://netloc`` (``url`` itself when it has no "://").

    Scheme and host depend on nothing after it, so ``site(origin(url))`` equals
    ``locate(url)``'s scheme and host; a million URLs of one site have one origin.
    """
    start = url.find("://")
    if start < 0:
        return url
    end = url.find("/", start + 3)
    head = url if end < 0 else url[:end]
    if "?" in head or "#" in head:  # a query or fragment right after the host
        for mark in "?#":
            cut = head.find(mark, start + 3)
            if cut >= 0:
                head = head[:cut]
    return head


@functools.lru_cache(maxsize=4096)
def site(origin: str) -> Where:
    """Scheme and host of an origin (see ``origin``); the path is "/"."""
    return locate(origin + "/")


def where_host(url: str) -> Where:
    """Scheme and host of ``url`` (path "/"): ``locate`` without its per-URL cost."""
    return site(origin(url))


_DEFAULT_PORTS = {"http": ":80", "https": ":443"}  # a URL that writes its scheme's own is on the bare host (RFC 3986, 6.2.3)


def key_host(host: str, scheme: str | None = None) -> str:
    """A host as IndexNow keys and batches know it: lower case, without its scheme's default
    port or a trailing dot (``WWW.Shop.org.:443`` of https is ``www.shop.org``), so that one site
    never gets a second key, key file or batch for another spelling of its name. Another port
    stays (``https://shop.org:80/`` is another origin); without a scheme (a key looked up by
    name), either default port goes."""
    host = host.lower()
    for port in (_DEFAULT_PORTS[scheme],) if scheme in _DEFAULT_PORTS else _DEFAULT_PORTS.values():
        if host.endswith(port):
            host = host[: -len(port)]
            break
    return host[:-1] if host.endswith(".") and not host.endswith("..") else host


def host_of(url: str) -> str:
    """The host of ``url`` as batches and reports name it ("?" for a URL without one)."""
    return where_host(url).host or "?"


def origins_of(urls: Iterable[str]) -> list[str]:
    """The origins of absolute URLs, in order of first appearance (a site has few)."""
    one = _one_origin(urls)
    if one is not None:
        return [one]
    found = dict.fromkeys(map(origin, urls))
    return [each for each in found if "://" in each]


MAX_URL_LENGTH = 2048


def irregular(urls: Iterable[str]) -> list[str]:
    """The URLs that are not plain (``PLAIN_URL``, at most MAX_URL_LENGTH characters): the
    only ones the URL rules must look at one by one (see rules._urls)."""
    if _all_plain(urls):
        return []
    match = PLAIN_URL.fullmatch
    return [url for url in urls if len(url) > MAX_URL_LENGTH or match(url) is None]


def _all_plain(urls: Iterable[str]) -> bool:
    """Whether every URL is plain, told at C speed for nearly every sitemap's list: one plain
    origin begins them all, and after it they hold only a plain path's characters (False:
    look at them one by one)."""
    one = _one_origin(urls)
    if one is None or PLAIN_URL.fullmatch(one) is None:
        return False
    assert isinstance(urls, list)  # _one_origin takes lists only
    joined = "\n".join(urls)
    if not joined.isascii() or max(map(len, urls)) > MAX_URL_LENGTH:
        return False
    # what is left once every plain character is gone: the newlines between the URLs, or more
    return len(joined.encode("ascii").translate(None, _PATH_BYTES)) == len(urls) - 1


_NEVER_SENDABLE = re.compile(r"[\x00-\x20\x7f-\x9f]")
HIDDEN_PASSWORD = "•••"  # what a loc shows where its password was (redaction.HIDDEN)


def _authority(url: str) -> tuple[int, int] | None:
    """Where the authority (``[userinfo@]host[:port]``) of ``url`` begins and ends, or None:
    after "://", up to the first "/", "?" or "#" (as ``urlsplit`` reads it, even where it cannot split)."""
    start = url.find("://")
    if start < 0:
        return None
    start += 3
    ends = [found for found in (url.find(mark, start) for mark in "/?#") if found >= 0]
    return start, min(ends, default=len(url))


def userinfo(url: str) -> str | None:
    """The ``user[:password]`` before the host of ``url`` (its last "@", as browsers and
    ``urlsplit`` read it), or None when it has none."""
    bounds = _authority(url)
    if bounds is None or "@" not in url[bounds[0] : bounds[1]]:
        return None
    return url[bounds[0] : bounds[1]].rpartition("@")[0]


def without_password(url: str) -> str:
    """``url`` with the password of its userinfo replaced by HIDDEN_PASSWORD (``url`` itself
    when it has none): what a loc such as ``http://admin:hunter2@host/`` is once read."""
    info = userinfo(url)
    if info is None or ":" not in info or info.partition(":")[2] == HIDDEN_PASSWORD:
        return url
    start, _ = _authority(url) or (0, 0)
    return f"{url[:start]}{info.partition(':')[0]}:{HIDDEN_PASSWORD}{url[start + len(info) :]}"


def credentials(url: str) -> tuple[str, tuple[str, str] | None]:
    """``url`` without its userinfo, and the (user, password) it held, percent-decoded (None:
    it held none): a sitemap fetched with HTTP basic auth (``https://user:pw@staging/sitemap.xml``)
    is named by its URL without them everywhere, and they go only in the request's header."""
    info = userinfo(url)
    if info is None:
        return url, None
    start, _ = _authority(url) or (0, 0)
    user, _, password = info.partition(":")
    return url[:start] + url[start + len(info) + 1 :], (urllib.parse.unquote(user), urllib.parse.unquote(password))


def unsendable(url: str) -> str | None:
    """Why no IndexNow endpoint can ever accept ``url`` (it will never leave a pending set), or None."""
    if len(url) <= MAX_URL_LENGTH and PLAIN_URL.fullmatch(url) is not None:
        return None  # nearly every URL: one regex
    if len(url) > MAX_URL_LENGTH:
        return f"it is {len(url)} characters long, over {MAX_URL_LENGTH}"
    where = locate(url)
    if where.scheme not in ("http", "https") or not where.host:
        return "it is not an absolute http(s) URL"
    if _NEVER_SENDABLE.search(url):
        return "it holds a space or a control character"
    if userinfo(url) is not None:  # an endpoint takes it for a host named "admin:password@host"
        return "it holds a user name or password before its host"
    return None


def _one_origin(urls: Iterable[str]) -> str | None:
    """The origin of a list of URLs that all begin with it and a slash (nearly every site's
    list), checked at C speed; else None."""
    if not isinstance(urls, list) or not urls:
        return None
    first = origin(urls[0])
    prefix = first + "/"
    if "://" not in first or not urls[0].startswith(prefix):
        return None
    return first if all(map(str.startswith, urls, itertools.repeat(prefix))) else None


def origins_in(urls: Iterable[str]) -> set[str]:
    """The origins ``by_origin`` groups ``urls`` by, without grouping them (a first run's million)."""
    one = _one_origin(urls)
    if one is not None:
        return {one}
    found: set[str] = set()
    last, size = "", -1
    for url in urls:
        if size >= 0 and url.startswith(last) and (len(url) == size or url[size] in "/?#"):
            continue
        last = origin(url)
        found.add(last)
        size = len(last) if "://" in last else -1  # not absolute: never take the next URL by its prefix
    return found


def by_origin(urls: Iterable[str]) -> dict[str, list[str]]:
    """``urls`` grouped by origin, in first-seen order. A site's URLs come in long runs of one
    origin: a URL that starts with the previous one's origin (then a path, query or fragment)
    shares it, checked without splitting it again."""
    one = _one_origin(urls)
    if one is not None:
        return {one: list(urls)}
    groups: dict[str, list[str]] = {}
    last, size, bucket = "", 0, None
    for url in urls:
        if bucket is not None and url.startswith(last) and (len(url) == size or url[size] in "/?#"):
            bucket.append(url)
            continue
        last = origin(url)
        size = len(last)
        bucket = groups.setdefault(last, [])
        bucket.append(url)
        if "://" not in last:
            bucket = None  # not absolute: never take the next URL by its prefix
    return groups


def under_base(path: str, base: str) -> str:
    """A URL ``path`` (without its outer slashes) relative to ``base``, the path a site is
    served under ("project" for https://host/project/): ``project/tea`` is ``tea``; a path
    outside ``base`` is as it was."""
    if base and (path == base or path.startswith(base + "/")):
        return path[len(base) + 1 :]
    return path
