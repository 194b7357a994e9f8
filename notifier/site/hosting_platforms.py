"""How each host reads ``_headers``, ``_redirects`` and ``netlify.toml``: one behaviour a field of
``Platform``, and the rules a platform never applies (``refusal``), each said once in the notes.

The platform is ``--platform`` (config ``platform``), else the build's environment (``CF_PAGES=1``,
``NETLIFY=true``: the variables each host sets in its builds), else Netlify, the format's origin.
The references: Netlify's parsers (netlify/build ``packages/redirect-parser`` and
``packages/headers-parser``) and its runtime (libredirect, as a differential run against it
answered); Cloudflare's (workers-sdk ``parseRedirects``, ``parseHeaders``, ``validateURL`` and the
asset server's rules engine, ``generateRulesMatcher``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class Platform:
    """How one host applies ``_redirects`` and ``_headers``."""

    name: str
    label: str  # as a note names it
    shadowing: bool  # a rule without ! applies only where the build has no file (and a shadowed first match ends the search)
    slash_tolerant: bool  # /a/ matches /a and /a matches /a/; /blog/* matches /blog
    force_mark: bool  # `301!` forces a rule; where false, a status with ! makes the line invalid
    trailing_comments: bool  # `/a /b 301 # moved`; where false, such a line is invalid
    statuses: frozenset[int]  # the statuses a rule may carry; a line with another is invalid
    detach: bool  # `! X-Robots-Tag` in a _headers block removes a header an earlier block set
    netlify_toml: bool  # the repository's netlify.toml adds [[redirects]] and [[headers]]
    last_header_wins: bool  # of the _headers blocks matching a path, the last to set a header gives its value (else all are sent)
    same_path_merges: bool  # a _headers path given twice is two blocks (else the later replaces the earlier, in its place)
    splat_at_end: bool  # a _redirects * anywhere but at the end of the source's path matches nothing
    host_names: bool  # a :name in a full-URL source's host (where false: no URL, the rule is dropped)
    relative_sources: bool  # a _redirects source is a path: an https:// one is invalid, an http:// one a path
    index_loops: bool  # a source ending in / or /* sent to /index or /index.html is dropped as a loop
    names_once: bool  # a rule (or _headers block) with two * or a :name twice never matches
    redirect_limits: tuple[int, int] | None  # (static, dynamic) rules read from _redirects; the rest skipped
    line_limit: int | None  # a _redirects line longer than this is skipped
    header_limit: int | None  # _headers rules read; the rest of the file skipped


PLATFORMS = {
    "netlify": Platform(
        "netlify",
        "Netlify",
        shadowing=True,
        slash_tolerant=True,
        force_mark=True,
        trailing_comments=True,
        statuses=frozenset({200, 301, 302, 303, 307, 308, 404, 410, 451}),
        detach=False,
        netlify_toml=True,
        last_header_wins=True,  # headers-parser merge.ts: "the later one overrides (does not concatenate)"
        same_path_merges=True,
        splat_at_end=True,  # libredirect: `/a/*/` and `/*/:id` match no request
        host_names=False,  # redirect-parser normalize.js: `new URL("https://:sub.example.com/*")` throws, the rule is dropped
        relative_sources=False,
        index_loops=False,
        names_once=False,
        redirect_limits=None,
        line_limit=None,
        header_limit=None,
    ),
    "cloudflare-pages": Platform(
        "cloudflare-pages",
        "Cloudflare Pages",
        shadowing=False,
        slash_tolerant=False,
        force_mark=False,
        trailing_comments=False,
        statuses=frozenset({200, 301, 302, 303, 307, 308}),
        detach=True,
        netlify_toml=False,
        last_header_wins=False,  # the asset server appends a header a later matching rule sets again
        same_path_merges=False,  # constructHeaders: rules[path] = the later block (a JS object keeps the first key's place)
        splat_at_end=False,
        host_names=True,
        relative_sources=True,  # validateURL: "Only relative URLs are allowed" (https:// only; http://x is the path /http://x)
        index_loops=True,  # parseRedirects: "Infinite loop detected in this rule and has been ignored"
        names_once=True,  # generateRulesMatcher: two (?<splat>) or (?<name>) groups do not compile, the rule is filtered out
        redirect_limits=(2000, 100),  # MAX_STATIC_REDIRECT_RULES, MAX_DYNAMIC_REDIRECT_RULES
        line_limit=2000,  # MAX_LINE_LENGTH
        header_limit=100,  # MAX_HEADER_RULES
    ),
}
DEFAULT_PLATFORM = "netlify"  # the format's origin, when the build environment does not say


def detect_platform(environ: Mapping[str, str]) -> str | None:
    """The platform whose build this is, from the variables each sets in its builds."""
    if environ.get("CF_PAGES") == "1":
        return "cloudflare-pages"
    if environ.get("NETLIFY") == "true":
        return "netlify"
    return None


_NAMES = re.compile(r"\*|:[A-Za-z_][A-Za-z0-9_]*")
_FULL_URL = re.compile(r"https?://", re.IGNORECASE)
CLOUDFLARE_FULL_URL = re.compile(r"https://+[^/]")  # validateURL's URL_REGEX: https only, as written
CLOUDFLARE_DYNAMIC = re.compile(r"\*|:[A-Za-z]")  # parseRedirects' SPLAT_REGEX and PLACEHOLDER_REGEX
_INDEX_TARGET = re.compile(r"/index(?:.html)?$")  # as parseRedirects writes it: the dot is any character

# why a platform never applies a rule, as a note says it
SPLAT_NOT_LAST = "matches nothing where a * is not the end of the source's path"
HOST_NAME = "drops a rule whose full-URL source has a :placeholder in its host (no URL it parses)"
FULL_URL = "skips a full-URL source: only relative URLs are allowed"
INDEX_LOOP = "drops a source ending in / or /* sent to /index or /index.html, an infinite loop"
NAMED_TWICE = "never matches a rule with two * or a :placeholder named twice (* is :splat)"
STATUS = "drops a rule whose status it does not read as a number"
LONG_LINE = "skips a line over 2,000 characters"
STATIC_LIMIT = "reads at most 2,000 static redirects (a source without * or :name, before the first with one): it skips the later ones"
HEADER_LIMIT = "reads at most 100 _headers rules: it skips the rest of the file"
DYNAMIC_LIMIT = "reads at most 100 dynamic redirects (a source with * or :name, and every rule after one): it skips the rest of the file"


def refusal(source: str, target: str | None, platform: Platform) -> str | None:
    """Why ``platform`` never applies a rule from ``source`` (to ``target``; None for a
    ``_headers`` block), or None when it may."""
    path = source
    if _FULL_URL.match(source) and not (platform.relative_sources and target is not None):
        host, _, path = source.partition("://")[2].partition("/")
        if not platform.host_names and target is not None and re.search(r":[A-Za-z_]", host):
            return HOST_NAME
    if platform.splat_at_end and target is not None and path.find("*") not in (-1, len(path) - 1):
        return SPLAT_NOT_LAST
    if platform.names_once:
        names = [name if name != "*" else ":splat" for name in _NAMES.findall(source)]
        if len(names) != len(set(names)):
            return NAMED_TWICE
    looped = target is not None and re.search(r"/\*?$", source) and _INDEX_TARGET.search(target)
    if platform.index_loops and looped and not CLOUDFLARE_FULL_URL.match(target or ""):  # a target on a host is no loop
        return INDEX_LOOP
    return None


def is_header_path(line: str) -> bool:
    """A _headers line that names a path (or a full URL), however it is indented."""
    return line.startswith("/") or _FULL_URL.match(line) is not None


def header_cut(lines: list[str], platform: Platform) -> int | None:
    """The line (from 0) from which ``platform`` reads no more of a ``_headers`` file, or None.
    Cloudflare's parseHeaders counts a rule (a block with a header or a ``! name``) when the next
    path line closes it, and at the path line after its 100th it stops: the rule open there is
    lost too (a file of exactly 101 rules is read whole)."""
    if platform.header_limit is None:
        return None
    pushed, open_at, applies, says = 0, None, False, False
    for at, raw in enumerate(lines):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if is_header_path(line):
            if pushed >= platform.header_limit:
                return open_at
            pushed += applies and says
            open_at, applies, says = at, refusal(line, None, platform) is None, False
            continue
        name, colon, value = line.partition(":")
        says = says or (bool(colon) and bool(name.strip()) and " " not in name.strip() and bool(value.strip()))
        says = says or (not colon and line.startswith("! "))
    return None


def rest_of_headers(lines: list[str], cut: int) -> list[Skipped]:
    """The blocks from line ``cut`` on, all skipped."""
    paths = ((at, raw.strip()) for at, raw in enumerate(lines[cut:], cut + 1))
    return [Skipped("_headers", f"line {at}", line, HEADER_LIMIT) for at, line in paths if is_header_path(line)]


@dataclass(frozen=True)
class Skipped:
    """A rule the platform never applies: where it is and why."""

    file: str  # _redirects, _headers or netlify.toml
    where: str  # "line 3", or "[[redirects]] 2"
    text: str
    reason: str


def skipped_notes(skipped: Iterable[Skipped], platform: Platform) -> list[str]:
    """One note a file and reason: how many rules, the first of them, and that none is judged."""
    by_cause: dict[tuple[str, str], list[Skipped]] = {}
    for each in skipped:
        by_cause.setdefault((each.file, each.reason), []).append(each)
    notes = []
    for (file, reason), rules in by_cause.items():
        first = rules[0]
        text = first.text if len(first.text) <= 120 else first.text[:117] + "..."
        notes.append(
            f"{file}: {platform.label} {reason}: {len(rules)} {'rule' if len(rules) == 1 else 'rules'} "
            f"(e.g. {first.where}: {text}), not judged"
        )
    return notes
