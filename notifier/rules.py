"""The verification rules: each defined once, with its id, default level and explanation.

``verify`` turns what the reader, the diff and the history saw into violations; any
violation at level ``error`` fails the deploy (exit 1) before anything is submitted.
"""

from __future__ import annotations

import array
import datetime as dt
import ipaddress
import itertools
import math
import posixpath
import re
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

from notifier.dates import parse_w3c, timestamps
from notifier.diff import Change, Diff, same_instant
from notifier.sitemap_files import Sitemap
from notifier.store import State
from notifier.urls import MAX_URL_LENGTH, PLAIN_URL, site, split_url

ERROR, WARN, OFF = "error", "warn", "off"
LEVELS = (ERROR, WARN, OFF)


class Rule(NamedTuple):
    id: str
    level: str  # the default level
    catches: str  # what it catches, for the README and --help


RULES: dict[str, Rule] = {
    rule.id: rule
    for rule in (
        Rule("lastmod-regressed", ERROR, "a URL's lastmod is earlier than the one recorded at the last deploy"),
        Rule("lastmod-future", ERROR, "a lastmod is later than now plus --clock-skew"),
        Rule("lastmod-bulk", ERROR, "many changed URLs share one lastmod instant: dates from file mtimes or the build clock"),
        Rule("lastmod-invalid", ERROR, "a lastmod that is not a W3C Datetime"),
        Rule("lastmod-missing", WARN, "a URL without a lastmod"),
        Rule("lastmod-vs-history", ERROR, "a lastmod outside the git history of the page's source file"),
        Rule("lastmod-without-change", WARN, "the lastmod moved but the built page file did not change"),
        Rule("change-without-lastmod", WARN, "the built page file changed but its lastmod did not"),
        Rule("mass-removal", ERROR, "more than --max-removed of the recorded URLs vanished at once"),
        Rule("url-invalid", ERROR, "a loc that is not an absolute, escaped http(s) URL of at most 2,048 characters"),
        Rule("url-out-of-scope", ERROR, "a loc off the sitemap's host or outside the sitemap's folder"),
        Rule("url-dev-host", ERROR, "a loc on a development, preview or placeholder host"),
        Rule("url-duplicate", WARN, "the same loc listed twice (an error when the two lastmods differ)"),
        Rule("sitemap-limits", ERROR, "over 50,000 URLs in a file or parts in an index, or an index inside an index"),
        Rule("sitemap-empty", ERROR, "the sitemap lists no URL at all"),
        Rule("xml-prolog", WARN, "a byte-order mark or whitespace before <?xml"),
        Rule("key-file-missing", ERROR, "the IndexNow key file is not in the build (--site-dir)"),
    )
}


class Violation(NamedTuple):
    rule: str
    level: str  # "error" or "warn"
    url: str
    message: str


@dataclass(frozen=True)
class BulkThresholds:
    """When one shared lastmod instant means "the dates came from the build, not the content".

    The defaults, argued with numbers:
    - ``min_urls = 10``: an honest commit touches a handful of pages; 10 pages sharing
      one instant is where a hand-made change stops being the likely story. The small
      MkDocs site of the corpus (6 pages, one build date) stays silent; the Next.js site
      that stamped all 59 pages with the build time fires; so does the 172-of-176 case.
    - ``ratio = 0.5``: the shared instant must cover at least half of the changed URLs
      that carry a lastmod. Build stamps cover ~100 % (59/59, 172/176, 10/11 in the
      corpus' Hugo blogdown site); a deploy that mixes honest dates never gets there.
    - ``site_ratio = 0.2``: and at least a fifth of the whole sitemap. A large site
      where one honest commit changed 200 pages out of 10,000 (2 %) stays silent, while
      the generator that rewrites every file on every run covers the whole site.
    """

    min_urls: int = 10
    ratio: float = 0.5
    site_ratio: float = 0.2


@dataclass(frozen=True)
class RuleSettings:
    """What the rules need to know beyond the sitemap and the state."""

    levels: dict[str, str] = field(default_factory=dict)
    now: dt.datetime = field(default_factory=lambda: dt.datetime.now(dt.UTC))
    clock_skew: dt.timedelta = dt.timedelta(hours=1)
    max_removed: float = 0.2  # fraction of recorded URLs
    max_removed_min: int = 10  # never fire below this many removals
    bulk: BulkThresholds = BulkThresholds()
    sitemap_url: str | None = None
    cap_per_rule: int = 20  # findings listed per rule in the text report

    def level(self, rule_id: str) -> str:
        return self.levels.get(rule_id, RULES[rule_id].level)


@dataclass
class Context:
    """Everything the rules look at."""

    sitemap: Sitemap
    diff: Diff
    state: State
    first_run: bool
    key_file_missing: list[tuple[str, str]] = field(default_factory=list)  # (key file expected in the build, what is wrong)
    backed_by_history: set[str] = field(default_factory=set)  # lastmod is a commit time of the source
    extra: list[Violation] = field(default_factory=list)  # from history and fingerprints
    dated: _Dated | None = None  # the added and changed lastmods, parsed (by _dated)


def verify(context: Context, settings: RuleSettings) -> list[Violation]:
    """Every violation at its effective level, rules at ``off`` left out.

    A configured level wins; else a finding's own level (url-duplicate escalates to
    error when the two lastmods differ); else the rule's default.
    """
    found: list[Violation] = []
    for rule_id, url, message, own_level in _all_findings(context, settings):
        effective = settings.levels.get(rule_id) or own_level or RULES[rule_id].level
        if effective != OFF:
            found.append(Violation(rule_id, effective, url, message))
    return found


_Finding = tuple[str, str, str, str | None]  # rule, url, message, level override


def _all_findings(context: Context, settings: RuleSettings) -> Iterator[_Finding]:
    for finding in context.sitemap.findings:
        yield finding.rule, finding.url, finding.message, None
    yield from _sitemap_empty(context)
    yield from _urls(context, settings)
    yield from _duplicates(context, settings)
    yield from _lastmods(context, settings)
    if settings.level("lastmod-bulk") != OFF:  # the one rule that counts every date
        yield from _bulk(context, settings)
    yield from _mass_removal(context, settings)
    yield from _page_changes(context)
    for path, problem in context.key_file_missing:
        yield "key-file-missing", path, problem, None
    for violation in context.extra:
        yield violation.rule, violation.url, violation.message, None


def _sitemap_empty(context: Context) -> Iterator[_Finding]:
    if not context.diff.total:
        root = context.sitemap.files[0].name if context.sitemap.files else "sitemap"
        yield (
            "sitemap-empty",
            root,
            "the sitemap lists no URL; a broken build, not a site without pages (nothing was treated as removed)",
            None,
        )


# -- URLs ----------------------------------------------------------------------------

_UNESCAPED = re.compile(r"[^A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=%]|%(?![0-9A-Fa-f]{2})")
_DEV_SUFFIXES = (".local", ".localhost", ".test", ".example", ".invalid", ".internal", ".lan", ".home.arpa")
_DEV_NAMES = {"localhost", "example.com", "example.net", "example.org"}


# Hosts that generators put in a sitemap when the site's own URL was never configured:
# starters' and themes' default base URLs, and the preview or staging hosts of hosting
# services (taken from real sitemaps in the corpus; see ../shared/corpus/SOURCES.md).
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
    if not split.hostname:
        return "loc has no host"
    bad = _UNESCAPED.search(loc)
    if bad is not None:
        return f"loc has an unescaped character {bad.group(0)!r}; percent-encode it (RFC 3986)"
    return None


class Scope(NamedTuple):
    host: str
    folder: str  # ends with "/"


def sitemap_scope(sitemap: Sitemap, sitemap_url: str | None, origins: list[str]) -> Scope | None:
    """The host and folder every loc must be under (SPEC: url-out-of-scope)."""
    public = sitemap_url or sitemap.root_url
    if public:
        split = split_url(public)
        folder = posixpath.dirname(split.path) if not split.path.endswith("/") else split.path
        return Scope(split.netloc.lower(), folder.rstrip("/") + "/")
    for origin in origins:  # a local root: the first URL's host, the site root
        split = split_url(origin + "/")
        if split.scheme in ("http", "https") and split.netloc:
            return Scope(split.netloc.lower(), "/")
    return None


def _urls(context: Context, settings: RuleSettings) -> Iterator[_Finding]:
    sitemap = context.sitemap
    scope = sitemap_scope(sitemap, settings.sitemap_url, context.diff.origins)
    check_invalid = settings.level("url-invalid") != OFF
    check_scope = scope is not None and settings.level("url-out-of-scope") != OFF
    check_dev = settings.level("url-dev-host") != OFF
    host_reasons: dict[str, str | None] = {}
    diff = context.diff
    # URLs recorded by an earlier deploy passed these rules then: judge what this deploy adds or changes
    changes: Iterable[Change] = itertools.chain(diff.added, diff.changed)
    if not _judged_by_url(diff.origins, scope, check_dev, check_scope):
        # every origin passes, and the scope is the site's root: a plain URL passes too, so
        # only the irregular ones need a look (a first run adds a million plain URLs)
        if not diff.irregular:
            return
        changes = (change for change in changes if change.loc in diff.irregular)
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
            if netloc not in host_reasons:  # one look per host: a site has few hosts, many URLs
                host_reasons[netloc] = dev_host_reason(loc)
            reason = host_reasons[netloc]
            if reason is None and netloc in _PREFIX_HOSTS:
                reason = dev_host_reason(loc)
            if reason is not None:
                yield "url-dev-host", loc, f"{reason}; set the site's real base URL in the generator and rebuild", None
                continue
        if check_scope and scope is not None:
            if netloc != scope.host:
                yield "url-out-of-scope", loc, f"not on the sitemap's host {scope.host}", None
            elif not path.startswith(scope.folder):
                yield "url-out-of-scope", loc, f"not under the sitemap's folder {scope.folder}", None


def _judged_by_url(origins: list[str], scope: Scope | None, check_dev: bool, check_scope: bool) -> bool:
    """Whether plain URLs must be judged one by one: some origin is a development or
    placeholder host, off the sitemap's host, or the scope is a folder, not the root."""
    for each in origins:
        host = site(each).host
        if check_dev and (host in _PREFIX_HOSTS or dev_host_reason(each + "/") is not None):
            return True
        if check_scope and scope is not None and (host != scope.host or scope.folder != "/"):
            return True
    return False


def _duplicates(context: Context, settings: RuleSettings) -> Iterator[_Finding]:
    files = context.sitemap.files
    for first, repeat in context.diff.duplicates:
        where = f"{files[repeat.file].name} line {repeat.line}" if 0 <= repeat.file < len(files) else "in two sitemap files"
        if same_instant(first.lastmod, repeat.lastmod):
            yield "url-duplicate", repeat.loc, f"listed twice ({where}); keep one", None
        else:
            level = ERROR if settings.levels.get("url-duplicate") is None else None
            yield (
                "url-duplicate",
                repeat.loc,
                f"listed twice with different lastmods {first.lastmod} and {repeat.lastmod} ({where}); keep one",
                level,
            )


# -- lastmods ------------------------------------------------------------------------


def _recorded_on(change: Change) -> str:
    return change.recorded[:10] if change.recorded else "the last deploy"


def _lastmods(context: Context, settings: RuleSettings) -> Iterator[_Finding]:
    diff = context.diff
    limit = settings.now + settings.clock_skew
    missing = len(diff.missing)
    if missing:
        if missing == diff.total:
            yield (
                "lastmod-missing",
                "(all URLs)",
                f"none of the {missing} URLs has a lastmod; search engines cannot tell what changed",
                None,
            )
        else:
            for loc in diff.missing:
                yield "lastmod-missing", loc, "no lastmod", None
    dated = _dated(context)
    for change in dated.invalid:
        yield (
            "lastmod-invalid",
            change.loc,
            f"lastmod {change.new!r} is not a W3C Datetime (e.g. 2024-05-01 or 2024-05-01T12:00:00+00:00)",
            None,
        )
    limit_stamp = limit.timestamp()
    stamps = dated.stamps
    for number in _positions_over(stamps, limit_stamp):
        change = dated.change(number)
        yield (
            "lastmod-future",
            change.loc,
            f"lastmod {change.new} is in the future (now is {settings.now:%Y-%m-%dT%H:%M:%SZ}); check the generator's clock and time zone",
            None,
        )
    first_changed = len(dated.added)
    for offset, change in enumerate(dated.changed):
        stamp = stamps[first_changed + offset]
        if change.old is not None and stamp == stamp:  # NaN: no date, or no valid one
            old_instant = parse_w3c(change.old)
            if old_instant is not None and stamp < old_instant.timestamp():
                yield (
                    "lastmod-regressed",
                    change.loc,
                    f"lastmod {change.new} is earlier than {change.old} recorded on {_recorded_on(change)}",
                    None,
                )


def _positions_over(stamps: array.array[float], limit: float) -> Iterator[int]:
    """Where ``stamps`` exceed ``limit``: a scan at C speed first, positions only if any do."""
    if not stamps or max((stamp for stamp in stamps if stamp == stamp), default=limit) <= limit:
        return
    for number, stamp in enumerate(stamps):
        if stamp > limit:
            yield number


@dataclass
class _Dated:
    """The added and changed URLs' lastmods, parsed once (a first run has a million)."""

    added: Sequence[Change]
    changed: Sequence[Change]
    stamps: array.array[float]  # one per added, then changed, URL: its POSIX timestamp, NaN if none
    invalid: list[Change]  # a lastmod that is not a W3C Datetime

    def change(self, number: int) -> Change:
        first_changed = len(self.added)
        return self.added[number] if number < first_changed else self.changed[number - first_changed]


def _dated(context: Context) -> _Dated:
    if context.dated is None:
        diff = context.diff
        lastmods = diff.added.lastmods  # a first run's million, not copied
        if diff.changed:
            lastmods = lastmods + [change.new for change in diff.changed]
        parsed = diff.added.stamps  # parsed by the reader already, on every core (a first run)
        usable = parsed is not None and len(parsed) == len(diff.added) and not diff.changed
        stamps = parsed if usable and parsed is not None else timestamps(lastmods)
        dated = _Dated(diff.added, diff.changed, stamps, [])
        if any(stamp != stamp for stamp in dated.stamps):  # NaN: no lastmod, or not a W3C Datetime
            dated.invalid.extend(
                dated.change(number) for number, stamp in enumerate(dated.stamps) if stamp != stamp and lastmods[number] is not None
            )
        context.dated = dated
    return context.dated


def _bulk(context: Context, settings: RuleSettings) -> Iterator[_Finding]:
    bulk = settings.bulk
    dated = _dated(context)
    # a date that git history backs is honest however many pages share it (one big commit)
    backed = context.backed_by_history
    candidates = sum(1 for stamp in dated.stamps if stamp == stamp) + len(dated.invalid)
    stamps = dated.stamps
    if backed:
        keep = [number for number in range(len(stamps)) if dated.change(number).loc not in backed]
        candidates = sum(1 for number in keep if stamps[number] == stamps[number]) + sum(
            1 for change in dated.invalid if change.loc not in backed
        )
        stamps = array.array("d", (stamps[number] for number in keep))
    else:
        keep = None
    valid = array.array("d", (stamp for stamp in stamps if stamp == stamp)) if candidates != len(stamps) else stamps
    if candidates < bulk.min_urls or not valid:
        return
    stamp, shared = _most_shared(valid, bulk.ratio)
    total_site = context.diff.total
    if shared >= bulk.min_urls and shared >= bulk.ratio * candidates and shared >= bulk.site_ratio * total_site:
        position = stamps.index(stamp)
        example = dated.change(keep[position] if keep is not None else position)
        what = "added" if context.first_run else "changed"
        yield (
            "lastmod-bulk",
            example.loc,
            f"{shared} of {candidates} {what} URLs share one lastmod {example.new}: dates from file mtimes or "
            "the build clock, not from the content; take lastmod from git or a front-matter field",
            None,
        )


def _most_shared(stamps: array.array[float], share: float) -> tuple[float, int]:
    """The instant most of ``stamps`` share and how many, whenever that is at least ``share``
    of them (else some instant and its count, below ``share``).

    Misra-Gries: with k counters, every value seen more than n/(k+1) times survives one
    pass; an exact count of the survivors follows. Memory stays k counters, not a
    counter per distinct date (a million at a first run).
    """
    if share <= 0.001:
        return Counter(stamps).most_common(1)[0]
    slots = math.ceil(1 / share)
    counters: dict[float, int] = {}
    for value in stamps:
        if value in counters:
            counters[value] += 1
        elif len(counters) < slots:
            counters[value] = 1
        else:
            for key in list(counters):
                if counters[key] == 1:
                    del counters[key]
                else:
                    counters[key] -= 1
    exact = Counter(value for value in stamps if value in counters)
    return exact.most_common(1)[0] if exact else (stamps[0], 1)


def _mass_removal(context: Context, settings: RuleSettings) -> Iterator[_Finding]:
    removed = len(context.diff.removed)
    recorded = context.state.url_count()
    if removed >= settings.max_removed_min and removed > settings.max_removed * recorded:
        yield (
            "mass-removal",
            context.sitemap.files[0].name if context.sitemap.files else "sitemap",
            f"{removed} of {recorded} recorded URLs vanished (over {settings.max_removed:.0%}); a broken build is the "
            "usual cause — if the removal is intended, raise --max-removed for this deploy",
            None,
        )


def _page_changes(context: Context) -> Iterator[_Finding]:
    """lastmod-without-change and change-without-lastmod, from the built page files."""
    for finding in context.diff.page_findings:
        if finding.rule == "lastmod-without-change":
            yield (
                finding.rule,
                finding.loc,
                f"lastmod moved from {finding.old} to {finding.new} but the built page is byte-identical; "
                "take lastmod from the content's history, not the build",
                None,
            )
        else:
            yield (
                finding.rule,
                finding.loc,
                f"the built page changed but its lastmod {finding.new} did not; update the page's date",
                None,
            )
