"""The rules that judge URLs: url-invalid, url-out-of-scope, url-dev-host, url-duplicate."""

from __future__ import annotations

import ipaddress
import itertools
import posixpath
import re
import urllib.parse
from collections.abc import Iterable, Iterator, Mapping
from typing import NamedTuple

from notifier.changes import Change, same_instant
from notifier.rules.context import Context
from notifier.rules.table import ERROR, OFF, Found, RuleSettings
from notifier.sitemap.files import Sitemap
from notifier.urls import MAX_URL_LENGTH, PLAIN_URL, by_origin, site, split_url, userinfo

_UNESCAPED = re.compile(r"[^A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=%]|%(?![0-9A-Fa-f]{2})")


_DEV_SUFFIXES = (".local", ".localhost", ".test", ".example", ".invalid", ".internal", ".lan", ".home.arpa")


_DEV_NAMES = {"localhost", "example.com", "example.net", "example.org"}


# Hosts that generators put in a sitemap when the site's own URL was never configured:
# starters' and themes' default base URLs, and the preview or staging hosts of hosting
# services (taken from real sitemaps of public sites).
class HostPattern(NamedTuple):
    """A host shape that is not a site's own public address, with an example each way
    (tests hold every pattern to both: ``tests/test_rules.py``)."""

    pattern: re.Pattern[str]
    what: str
    example: str  # a host it must catch
    twin: str  # a production host that looks alike and must pass


_PLACEHOLDER_HOSTS = (
    HostPattern(
        re.compile(r"(.+\.)?gatsbystarter[a-z-]*\.gatsbyjs\.io"),
        "the Gatsby starter's default siteUrl",
        "gatsbystarterdefaultsource.gatsbyjs.io",
        "mysite.gatsbyjs.io",
    ),
    # Netlify: NAME.netlify.app (a chosen name, or a random one such as
    # elegant-nightingale-894b88) is production; previews and branch deploys put a prefix
    # and "--" before it (deploy-preview-12--NAME, 5f9a1c2b3d4e5f60708090a1--NAME, staging--NAME)
    HostPattern(
        re.compile(r"[^.]+--[^.]+\.netlify\.app"),
        "a Netlify deploy preview or branch deploy",
        "deploy-preview-12--mysite.netlify.app",
        "elegant-nightingale-894b88.netlify.app",
    ),
    # Vercel: PROJECT.vercel.app is production; PROJECT-git-BRANCH-TEAM.vercel.app a preview
    HostPattern(
        re.compile(r".+-git-.+\.vercel\.app"), "a Vercel preview deployment", "shop-git-fix-menu-acme.vercel.app", "shop.vercel.app"
    ),
    # Cloudflare Pages: NAME.pages.dev is production; HASH.NAME.pages.dev and BRANCH.NAME.pages.dev previews
    HostPattern(re.compile(r"[^.]+\.[^.]+\.pages\.dev"), "a Cloudflare Pages preview", "1a2b3c4d.mysite.pages.dev", "mysite.pages.dev"),
    # Render: NAME.onrender.com is production; NAME-pr-N.onrender.com a pull request preview
    HostPattern(re.compile(r".+-pr-\d+\.onrender\.com"), "a Render pull request preview", "shop-pr-42.onrender.com", "shop.onrender.com"),
    HostPattern(re.compile(r".+\.on\.getshifter\.io"), "a Shifter staging host", "quirky-meitner6297.on.getshifter.io", "getshifter.io"),
    HostPattern(
        re.compile(r"(www\.)?(your-?(site|domain|website|blog)|mysite|mydomain)\.(com|org|net)"),
        "a placeholder domain",
        "www.yoursite.com",
        "www.yoursite-bakery.com",
    ),
)


_PLACEHOLDER_PREFIXES = (
    ("http://bashtage.github.io/sphinx-material/", "the sphinx-material theme's default base_url"),
    ("https://bashtage.github.io/sphinx-material/", "the sphinx-material theme's default base_url"),
)


_PREFIX_HOSTS = {split_url(prefix).netloc for prefix, _ in _PLACEHOLDER_PREFIXES}


def dev_host_reason(url: str) -> str | None:
    """Why ``url`` is on a development or placeholder host, or None."""
    host = (split_url(url).hostname or "").rstrip(".").lower()
    for prefix, what in _PLACEHOLDER_PREFIXES:
        if url.startswith(prefix):
            return f"{prefix} is {what}"
    return _host_reason(host) if host else None


def _host_reason(host: str) -> str | None:
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        address = None
    if address is not None:
        if address.is_loopback or address.is_private or address.is_link_local or address.is_unspecified:
            return f"{host} is a loopback or private address, from a dev server"
        return None
    if host in _DEV_NAMES or host.endswith(_DEV_SUFFIXES) or host.endswith((".example.com", ".example.net", ".example.org")):
        return f"{host} is a development or placeholder name (a dev server or the generator's default base URL)"
    for pattern, what, _, _ in _PLACEHOLDER_HOSTS:
        if pattern.fullmatch(host):
            return f"{host} looks like {what}, not the site's own address"
    return None


def url_problem(loc: str) -> str | None:
    """Why ``loc`` is not an absolute, escaped http(s) URL within the length limit, or None."""
    if len(loc) > MAX_URL_LENGTH:
        return f"loc is {len(loc)} characters long, over {MAX_URL_LENGTH}"
    split = split_url(loc)
    if not split.scheme and not split.path and loc:
        return "loc is not a valid URL (a broken host or port)"
    if split.scheme not in ("http", "https") or not split.netloc:
        if not split.scheme and loc.startswith("/"):
            return "loc is relative; write absolute URLs (set the site's base URL in the generator)"
        return "loc is not an absolute http(s) URL"
    if userinfo(loc) is not None:
        return (
            "loc holds a user name or password before its host (its password not shown); a public URL carries none "
            "(RFC 9110 4.2.4) and IndexNow would take it for a host of its own: remove it"
        )
    if not split.hostname:
        return "loc has no host"
    bad = _UNESCAPED.search(loc)
    if bad is not None:
        fixed = escaped_form(loc)
        host = split.hostname
        if not host.isascii():
            return f"the host {host} is not ASCII; write its punycode (IDNA) form: {fixed}"
        return f"loc has an unescaped character {bad.group(0)!r}; percent-encode it (RFC 3986): {fixed}"
    return None


_LONE_PERCENT = re.compile(r"%(?![0-9A-Fa-f]{2})")


def escaped_form(loc: str) -> str:
    """``loc`` as it should be written: the host in punycode (IDNA), the rest percent-encoded.
    Only what needs it changes: a user, a port, an IPv6 literal and the host's case stay."""
    split = split_url(loc)
    keep = "/:@!$&'()*+,;=-._~%"

    def encode(text: str, safe: str) -> str:
        return urllib.parse.quote(_LONE_PERCENT.sub("%25", text), safe=safe)

    userinfo, at, hostport = split.netloc.rpartition("@")
    name, colon, port = hostport.partition(":")  # an IPv6 literal's "[" comes back as it was
    netloc = encode(userinfo, keep) + at + _punycode(name) + colon + port
    path, query, fragment = encode(split.path, keep), encode(split.query, keep + "?"), encode(split.fragment, keep + "?")
    return urllib.parse.urlunsplit((split.scheme, netloc, path, query, fragment))


def _punycode(name: str) -> str:
    """A host name in its ASCII (IDNA) form; an ASCII name, or one IDNA cannot encode, as it is."""
    try:
        return name.encode("idna").decode("ascii")
    except UnicodeError:
        return name


class Scope(NamedTuple):
    host: str
    folder: str  # ends with "/"


def sitemap_scope(sitemap: Sitemap, sitemap_url: str | None, origins: list[str], counts: Mapping[str, int] | None = None) -> Scope | None:
    """The host and folder every loc must be under (SPEC: url-out-of-scope): where the
    sitemap is served (``--sitemap-url``, the URL it was fetched from); for a local file, the
    site root of the host most of its URLs are on (``counts``: URLs per host, when there are
    several). Never simply the first URL's: one foreign URL listed first would flag every
    real page and not itself."""
    public = sitemap_url or sitemap.root_url
    if public:
        split = split_url(public)
        folder = posixpath.dirname(split.path) if not split.path.endswith("/") else split.path
        return Scope(split.netloc.lower(), folder.rstrip("/") + "/")
    own = _hosts([sitemap.files[0].site_url or ""]) if sitemap.files else {}  # a feed: the site it names
    if own:
        return Scope(next(iter(own)), "/")
    hosts = _hosts(origin + "/" for origin in origins)
    if counts:  # (given only when the deploy lists several origins)
        hosts = {host: counts.get(host, 0) for host in hosts}
    return Scope(max(hosts, key=hosts.__getitem__), "/") if hosts else None  # the most common; on a tie, the first seen


def _urls_per_host(context: Context) -> dict[str, int]:
    """URLs per host: the deploy's new and changed ones, and the recorded files of one host."""
    diff = context.diff
    counts = _hosts(itertools.chain(diff.added.locs, (change.loc for change in diff.changed)))
    for part in context.state.parts:
        if len(part.origins) == 1:  # a recorded file of one host: its count, without decoding its URLs
            for host in _hosts([part.origins[0] + "/"]):  # (none, for an origin that is not http(s))
                counts[host] = counts.get(host, 0) + part.count
    return counts


def _hosts(urls: Iterable[str]) -> dict[str, int]:
    """How many of ``urls`` are on each http(s) host, in first-seen order."""
    counts: dict[str, int] = {}
    for each, group in by_origin(urls).items():
        split = split_url(each + "/")
        if split.scheme in ("http", "https") and split.netloc:
            host = split.netloc.lower()
            counts[host] = counts.get(host, 0) + len(group)
    return counts


def _urls(context: Context, settings: RuleSettings) -> Iterator[Found]:
    sitemap = context.sitemap
    diff = context.diff
    scope = sitemap_scope(sitemap, settings.sitemap_url, diff.origins, _urls_per_host(context) if len(diff.origins) > 1 else None)
    check_invalid = settings.level("url-invalid") != OFF
    check_scope = scope is not None and settings.level("url-out-of-scope") != OFF
    check_dev = settings.level("url-dev-host") != OFF
    host_reasons: dict[str, str | None] = {}
    diff = context.diff
    # URLs recorded by an earlier deploy passed these rules then: judge what this deploy adds or changes
    changes: Iterable[Change] = itertools.chain(diff.added, diff.changed)
    if not _judged_by_url(diff.origins, scope, check_dev, check_scope, settings.own_hosts):
        # every origin passes, and the scope is the site's root: a plain URL passes too, so
        # only the irregular ones need a look (a first run adds a million plain URLs)
        if not diff.irregular:
            return
        changes = itertools.chain(diff.added.among(diff.irregular), (change for change in diff.changed if change.loc in diff.irregular))
    for change in changes:
        loc = change.loc
        plain = PLAIN_URL.fullmatch(loc) if len(loc) <= MAX_URL_LENGTH else None
        if plain is not None:  # the common case, one regex: absolute, ASCII, nothing to escape
            netloc, path = plain.group(2).lower(), plain.group(3) or "/"
        else:
            if check_invalid:
                problem = url_problem(loc)
                if problem is not None:
                    yield "url-invalid", loc, problem, None
                    continue
            split = split_url(loc)
            netloc, path = split.netloc.lower(), split.path or "/"
        if check_dev:
            if netloc in _PREFIX_HOSTS:  # a theme's default base URL is a folder of a real host: URL by URL
                reason = dev_host_reason(loc)
            else:
                if netloc not in host_reasons:  # one look per host: a site has few hosts, many URLs
                    host_reasons[netloc] = dev_host_reason(loc)
                reason = host_reasons[netloc]
            if reason is not None:
                yield "url-dev-host", loc, f"{reason}; set the site's real base URL in the generator and rebuild", None
                continue
        if check_scope and scope is not None and netloc not in settings.own_hosts:
            if netloc != scope.host:
                yield "url-out-of-scope", loc, f"not on the sitemap's host {scope.host}", None
            elif not path.startswith(scope.folder):
                yield "url-out-of-scope", loc, f"not under the sitemap's folder {scope.folder}", None


def _judged_by_url(origins: list[str], scope: Scope | None, check_dev: bool, check_scope: bool, own: frozenset[str]) -> bool:
    """Whether plain URLs must be judged one by one: some origin is a development or
    placeholder host, off the sitemap's host (and not one of the site's ``own`` hosts), or
    the scope is a folder, not the root."""
    for each in origins:
        host = site(each).host
        if check_dev and (host in _PREFIX_HOSTS or dev_host_reason(each + "/") is not None):
            return True
        if check_scope and scope is not None and host not in own and (host != scope.host or scope.folder != "/"):
            return True
    return False


def _duplicates(context: Context, settings: RuleSettings) -> Iterator[Found]:
    files = context.sitemap.files
    for first, repeat in context.diff.duplicates:  # the first listing's lastmod, the repeat
        where = f"{files[repeat.file].name} line {repeat.line}" if 0 <= repeat.file < len(files) else "in two sitemap files"
        if same_instant(first, repeat.lastmod):
            yield "url-duplicate", repeat.loc, f"listed twice ({where}); keep one", None
        else:
            level = ERROR if settings.levels.get("url-duplicate") is None else None
            yield (
                "url-duplicate",
                repeat.loc,
                f"listed twice with different lastmods {first or '(none)'} and {repeat.lastmod or '(none)'} ({where}); keep one",
                level,
            )


# -- tracking parameters ---------------------------------------------------------------


# Parameters that mark a link's campaign or click, never a different page.
TRACKING_PARAMS = {
    "gclid", "gclsrc", "dclid", "gbraid", "wbraid", "fbclid", "msclkid", "yclid", "twclid", "ttclid", "li_fat_id",
    "igshid", "mc_cid", "mc_eid", "_ga", "_gl", "_hsenc", "_hsmi", "mkt_tok", "srsltid", "oly_anon_id", "oly_enc_id",
    "vero_id", "wickedid", "s_cid", "ef_id", "epik",
}  # fmt: skip


def tracking_params(loc: str) -> list[str]:
    """The tracking parameters in ``loc``'s query: ``utm_*`` and the click identifiers."""
    query = loc.partition("?")[2].partition("#")[0]
    names = [pair.partition("=")[0] for pair in query.split("&") if pair]
    return [name for name in names if name.lower().startswith("utm_") or name.lower() in TRACKING_PARAMS]


def _tracking(context: Context, settings: RuleSettings) -> Iterator[Found]:
    if settings.level("url-tracking-params") == OFF:
        return
    diff = context.diff
    for loc in itertools.chain(diff.added.locs, (change.loc for change in diff.changed)):  # no Change made a URL
        if "?" in loc:
            found = tracking_params(loc)
            if found:
                yield (
                    "url-tracking-params",
                    loc,
                    f"carries tracking parameter{'s' if len(found) > 1 else ''} {', '.join(found)}: a copy of a page, "
                    "not a page; list the URL without them",
                    None,
                )
