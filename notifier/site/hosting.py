"""The host's ``_headers`` and ``_redirects`` (and Netlify's ``netlify.toml``), read as the
platform that serves the build applies them: which paths are sent ``X-Robots-Tag: noindex``,
and which are redirected.

Both platforms read the same syntax: a pattern, ``*`` matching anything (slashes too, its text
``:splat`` in a target), ``:name`` one path segment (one host label in a full-URL pattern, which
applies only to its own scheme and host). A ``_redirects`` rule with a status of 301, 302, 303,
307 or 308 (301 when none is given) redirects; 200 rewrites and 404 answers do not; a rule with
query or country conditions is not judged (it applies only to some requests). Where the
platforms differ, ``PLATFORMS`` says how, one behaviour a field.

Paths compare as octets (``urls.octets``): a rule written in raw Unicode matches the
percent-encoded URL of the sitemap. A line is a path or a header by its form, not its indent.

A site migration writes thousands of rules, so a URL is never tried against each of them:
``_Index`` finds the few that may match it (a literal source by its path in a dict, one with
``*`` or ``:name`` by the literal text it begins with), and only those are tried, in the
file's order (5,000 rules: rules x URLs cost 91.5 s at 20,000 URLs; scripts/bench_hosting.py).
"""

from __future__ import annotations

import bisect
import functools
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from notifier.site import hosting_platforms as how
from notifier.site.hosting_platforms import DEFAULT_PLATFORM as DEFAULT_PLATFORM
from notifier.site.hosting_platforms import PLATFORMS as PLATFORMS
from notifier.site.hosting_platforms import Platform as Platform
from notifier.site.hosting_platforms import Skipped, refusal, skipped_notes
from notifier.site.hosting_platforms import detect_platform as detect_platform
from notifier.urls import locate, octets, path_query

REDIRECT_STATUSES = {301, 302, 303, 307, 308}
_Rule = TypeVar("_Rule")


_TOKEN = re.compile(r"(\*|:[A-Za-z_][A-Za-z0-9_]*)")
_FULL_URL = re.compile(r"https?://", re.IGNORECASE)


@dataclass
class Pattern:
    """A rule's source: its scheme and host (full-URL patterns) and its path, as a regex over its
    subject: the path, or for a full-URL pattern the host, a NUL and the path (both as octets)."""

    scheme: str  # "" for a path pattern
    source: str  # the regex, compiled only when a URL is tried against it
    literals: tuple[str, ...] | None  # without * or :name: the only subjects it matches (no regex needed)
    prefix: str  # the literal text every subject it matches begins with

    @classmethod
    def parse(cls, text: str, platform: Platform, *, relative: bool = False) -> Pattern:
        """``relative``: a path even when it looks like a URL (Cloudflare's ``_redirects``: ``http://x/*``
        is the path ``/http://x/*``)."""
        scheme, host = "", ""
        if _FULL_URL.match(text) and not relative:
            scheme, _, rest = text.partition("://")
            host, slash, text = rest.partition("/")
            text = slash + text
        path = text if text.startswith("/") else "/" + text  # a source without its leading slash
        names: set[str] = set()  # the path's, then the host's: a name captured twice would not compile
        regex, literals, prefix = _path_regex(path, platform, names)
        if not scheme:
            return cls("", regex, literals, prefix)
        host = host.lower()
        host_regex = _piece(host, ".", names) + "\0"  # the path's * is :splat (https://*.old.org/* …/:splat)
        if _TOKEN.search(host) is not None:
            return cls(scheme.lower(), host_regex + regex, None, _head(host))
        spelled = octets(host) + "\0"
        literals = None if literals is None else tuple(spelled + each for each in literals)
        return cls(scheme.lower(), host_regex + regex, literals, spelled + prefix)

    @functools.cached_property
    def regex(self) -> re.Pattern[str]:
        return re.compile(self.source, re.DOTALL)

    def match(self, url: str) -> re.Match[str] | None:
        path = octets(path_query(url)[0])
        if not self.scheme:
            return self.regex.fullmatch(path)
        where = locate(url)
        if where.scheme != self.scheme:
            return None
        return self.regex.fullmatch(f"{where.host}\0{path}")


def _path_regex(path: str, platform: Platform, names: set[str]) -> tuple[str, tuple[str, ...] | None, str]:
    """The regex of a source's path, the paths it matches when they are few, and its literal start."""
    if not platform.slash_tolerant or path == "/":
        return _piece(path, "/", names), _literal(path, ""), _head(path)
    if path.endswith("/*"):  # /blog/* matches /blog, /blog/ and below
        body = _piece(path[:-2], "/", names) + ("(?:/.*)?" if "splat" in names else "(?:/(?P<splat>.*))?")
        names.add("splat")
        return body, None, _head(path[:-2])
    stem = path.rstrip("/")
    return _piece(stem, "/", names) + "/?", _literal(stem, "/"), _head(stem)  # /a/ matches /a, /a matches /a/


def _literal(text: str, slash: str) -> tuple[str, ...] | None:
    """What ``_piece(text) + slash + "?"`` matches, when ``text`` has no * or :name."""
    if _TOKEN.search(text) is not None:
        return None
    exact = octets(text)
    return (exact, exact + slash) if slash else (exact,)


def _head(text: str) -> str:
    """The literal text ``_piece(text)`` begins with: the octets before its first * or :name."""
    return octets(_TOKEN.split(text, maxsplit=1)[0])


def _piece(text: str, separator: str, names: set[str]) -> str:
    out = []
    for token in _TOKEN.split(text):
        if token == "*":
            out.append("(?P<splat>.*)" if "splat" not in names else ".*")
            names.add("splat")
        elif token.startswith(":") and len(token) > 1:
            name = token[1:]
            out.append(f"(?P<{name}>[^{separator}]+)" if name not in names else f"[^{separator}]+")
            names.add(name)
        elif token:
            out.append(re.escape(octets(token)))
    return "".join(out)


def _filled(target: str, found: Mapping[str, str]) -> str:
    """The target with ``:splat`` and the placeholders' values put in, as the host sends it."""
    values = {"splat": ""} | dict(found)
    return re.sub(r":([A-Za-z_][A-Za-z0-9_]*)", lambda match: values.get(match.group(1), match.group(0)), target)


class _Bucket:
    """The patterns of one subject (paths, or one scheme's hosts and paths): literal ones by
    the subjects they match, the others by the literal text they begin with."""

    def __init__(self) -> None:
        self.exact: dict[str, list[int]] = {}
        self.by_prefix: dict[str, list[int]] = {}
        self.lengths: list[int] = []  # of the prefixes, shortest first: one slice and lookup each

    def add(self, number: int, pattern: Pattern) -> None:
        if pattern.literals is not None:
            for subject in pattern.literals:
                self.exact.setdefault(subject, []).append(number)
        else:
            self.by_prefix.setdefault(pattern.prefix, []).append(number)
            if len(pattern.prefix) not in self.lengths:
                bisect.insort(self.lengths, len(pattern.prefix))

    def candidates(self, subject: str, into: list[int]) -> None:
        """Add to ``into`` the patterns that may match ``subject``: every one that does."""
        into.extend(self.exact.get(subject, ()))
        for length in self.lengths:
            if length > len(subject):
                break
            into.extend(self.by_prefix.get(subject[:length], ()))


class _Index(Generic[_Rule]):
    """Which of a sequence of rules' patterns match a URL, in their order, trying only those that
    may: a URL costs a few lookups, not one regex a rule."""

    def __init__(self, rules: Sequence[tuple[Pattern, _Rule]]) -> None:
        self.rules = list(rules)
        self.paths = _Bucket()
        self.full: dict[str, _Bucket] = {}  # scheme -> its full-URL patterns
        for number, (pattern, _) in enumerate(self.rules):
            (self.full.setdefault(pattern.scheme, _Bucket()) if pattern.scheme else self.paths).add(number, pattern)

    def matches(self, url: str) -> Iterator[tuple[_Rule, dict[str, str]]]:
        """Each rule whose pattern matches ``url``, in order, with its placeholders' values."""
        path = octets(path_query(url)[0])
        found: list[int] = []
        self.paths.candidates(path, found)
        hosted = ""  # the subject of full-URL patterns
        if self.full:
            where = locate(url)
            if (bucket := self.full.get(where.scheme)) is not None:
                hosted = f"{where.host}\0{path}"
                bucket.candidates(hosted, found)
        for number in sorted(found):
            pattern, rule = self.rules[number]
            if pattern.literals is not None:  # found by its very subject
                yield rule, {}
            elif (hit := pattern.regex.fullmatch(hosted if pattern.scheme else path)) is not None:
                yield rule, {name: value for name, value in hit.groupdict().items() if value is not None}


@dataclass
class Headers:
    """``_headers`` (and netlify.toml's [[headers]]): the paths whose X-Robots-Tag keeps the engines away."""

    platform: Platform = PLATFORMS[DEFAULT_PLATFORM]
    blocks: list[tuple[Pattern, dict[str, str]]] = field(default_factory=list)  # pattern, name -> value; in the host's order
    skipped: list[Skipped] = field(default_factory=list)  # the blocks the host never applies
    _places: dict[str, int] = field(default_factory=dict, init=False, repr=False, compare=False)  # path -> its block
    _index: _Index[dict[str, str]] | None = field(default=None, init=False, repr=False, compare=False)  # of the blocks, in order

    @classmethod
    def parse(cls, text: str, platform: Platform = PLATFORMS[DEFAULT_PLATFORM]) -> Headers:
        headers = cls(platform)
        current: dict[str, str] | None = None
        lines = text.removeprefix("\ufeff").splitlines()
        cut = how.header_cut(lines, platform)
        for number, raw in enumerate(lines[:cut], 1):
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            if how.is_header_path(line):
                current = headers.block(line, f"line {number}")
                continue
            if current is None:
                continue  # before any path, or in a block the host never applies
            if line.startswith("!"):
                if platform.detach:
                    current["!" + line[1:].strip().lower()] = ""
                continue
            name, colon, value = line.partition(":")
            if colon and name.strip():
                _add_header(current, name, value)
        if cut is not None:  # "Skipping remaining … lines of file"
            headers.skipped += how.rest_of_headers(lines, cut)
        return headers

    def block(self, path: str, where: str = "", file: str = "_headers") -> dict[str, str] | None:
        """A fresh block for ``path``, or None when the host never applies it. The same path
        again: on Netlify a block of its own (the later one's headers win, merge.ts); on
        Cloudflare Pages it replaces the earlier block, in the earlier block's place."""
        reason = refusal(path, None, self.platform)
        if reason is not None:
            self.skipped.append(Skipped(file, where, path, reason))
            return None
        self._index = None
        values: dict[str, str] = {}
        block = (Pattern.parse(path, self.platform), values)
        place = None if self.platform.same_path_merges else self._places.get(path)
        if place is not None:
            self.blocks[place] = block
        else:
            self._places[path] = len(self.blocks)
            self.blocks.append(block)
        return values

    def add_toml(self, entries: list[Any]) -> None:
        """netlify.toml's ``[[headers]]``: ``for`` a path, ``values`` a table of headers."""
        for number, entry in enumerate(entries, 1):
            if not isinstance(entry, dict) or not isinstance(entry.get("for"), str) or not isinstance(entry.get("values"), dict):
                continue
            current = self.block(entry["for"], f"[[headers]] {number}", "netlify.toml")
            if current is None:
                continue
            for name, value in entry["values"].items():
                for each in value if isinstance(value, list) else [value]:
                    _add_header(current, str(name), str(each))

    def robots_tag(self, url: str) -> list[str]:
        """The X-Robots-Tag values the host sends for ``url``: on Netlify the last matching
        block's, on Cloudflare Pages every matching block's since the last that detached it."""
        if self._index is None:
            self._index = _Index(self.blocks)
        values: list[str] = []
        for headers, _ in self._index.matches(url):
            if "!x-robots-tag" in headers:
                values = []
            if "x-robots-tag" in headers:
                values = [headers["x-robots-tag"]] if self.platform.last_header_wins else [*values, headers["x-robots-tag"]]
        return values

    def notes(self) -> list[str]:
        return skipped_notes(self.skipped, self.platform)


def _add_header(block: dict[str, str], name: str, value: str) -> None:
    """A header given twice in one block is sent once with both values, as both hosts send it."""
    key, value = name.strip().lower(), value.strip()
    block[key] = value if key not in block else f"{block[key]}, {value}"


@dataclass(frozen=True)
class _Redirect:
    pattern: Pattern
    target: str
    status: int
    forced: bool


@dataclass
class Redirects:
    """``_redirects`` (then netlify.toml's [[redirects]]): the rules that may send a request elsewhere."""

    platform: Platform = PLATFORMS[DEFAULT_PLATFORM]
    rules: list[_Redirect] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)  # the rules the host never applies
    _index: _Index[_Redirect] | None = field(default=None, init=False, repr=False, compare=False)  # of the rules

    @classmethod
    def parse(cls, text: str, platform: Platform = PLATFORMS[DEFAULT_PLATFORM]) -> Redirects:
        redirects = cls(platform)
        lines = text.removeprefix("\ufeff").splitlines()
        budget = _Budget(platform.redirect_limits) if platform.redirect_limits is not None else None
        for number, raw in enumerate(lines, 1):
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            where = f"line {number}"
            if budget is not None:
                skipped = _cloudflare_skips(line, platform, budget)
                if skipped == how.DYNAMIC_LIMIT:  # "Skipping remaining … lines of file"
                    redirects.skipped += _the_rest(lines, number, skipped)
                    break
                if skipped is not None:
                    redirects.skipped.append(Skipped("_redirects", where, line, skipped))
                    continue
            rule = _line_rule(raw, platform)
            if rule is not None:
                redirects.add(*rule, where=where, text=line)
        return redirects

    def add(self, source: str, target: str, status: int, forced: bool, *, where: str, text: str, file: str = "_redirects") -> None:
        """A rule, unless the host never applies it (then said in ``skipped``)."""
        reason = refusal(source, target, self.platform)
        if reason is not None:
            self.skipped.append(Skipped(file, where, text, reason))
            return
        pattern = Pattern.parse(source, self.platform, relative=self.platform.relative_sources)
        self.rules.append(_Redirect(pattern, target, status, forced))

    def add_toml(self, entries: list[Any]) -> None:
        """netlify.toml's ``[[redirects]]``: from, to, status (301), force; conditions are not judged."""
        for number, entry in enumerate(entries, 1):
            if not isinstance(entry, dict) or not isinstance(entry.get("from"), str) or not isinstance(entry.get("to"), str):
                continue
            if entry.get("query") or entry.get("conditions"):
                continue
            where, text = f"[[redirects]] {number}", f"from = {entry['from']!r}, status = {entry.get('status')!r}"
            status = toml_status(entry.get("status", 301))
            if status is None:
                self.skipped.append(Skipped("netlify.toml", where, text, how.STATUS))
            elif status in self.platform.statuses:
                self.add(entry["from"], entry["to"], status, entry.get("force") is True, where=where, text=text, file="netlify.toml")

    def target(self, url: str, has_file: bool) -> str | None:
        """Where a request for ``url`` is redirected (the target with its placeholders filled
        in), or None: the first matching rule decides."""
        for rule, found in self._matches(url):
            if has_file and not rule.forced and self.platform.shadowing:
                return None  # the built file is served
            return _filled(rule.target, found) if rule.status in REDIRECT_STATUSES else None
        return None

    def notes(self) -> list[str]:
        return skipped_notes(self.skipped, self.platform)

    def _matches(self, url: str) -> Iterator[tuple[_Redirect, dict[str, str]]]:
        if self._index is None or len(self._index.rules) != len(self.rules):  # rules are only added (a file, then netlify.toml)
            self._index = _Index([(rule.pattern, rule) for rule in self.rules])
        return self._index.matches(url)


def toml_status(value: object) -> int | None:
    """netlify.toml's ``status`` as Netlify's parser reads it (redirect-parser status.js: JavaScript's
    ``parseInt``): 301, ``"302"``, ``301.0``, ``"301!"`` (the ! ignored: ``force`` is a key of its own);
    None when it reads no number (``true``, ``"moved"``)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return int(value) if value == value and abs(value) != float("inf") else None
    found = re.match(r"\s*([+-]?[0-9]+)", value) if isinstance(value, str) else None
    return int(found.group(1)) if found is not None else None


class _Budget:
    """Cloudflare's count of ``_redirects`` rules: static ones (no * or :name) while no dynamic one
    came, then every rule dynamic (parseRedirects' canCreateStaticRule)."""

    def __init__(self, limits: tuple[int, int]) -> None:
        self.static_left, self.dynamic_left = limits
        self.static = True

    def take(self, source: str) -> str | None:
        """The limit ``source`` is past, or None (it is counted)."""
        if self.static and how.CLOUDFLARE_DYNAMIC.search(source) is None:
            if self.static_left == 0:
                return how.STATIC_LIMIT
            self.static_left -= 1
            return None
        self.static = False
        if self.dynamic_left == 0:
            return how.DYNAMIC_LIMIT
        self.dynamic_left -= 1
        return None


def _cloudflare_skips(line: str, platform: Platform, budget: _Budget) -> str | None:
    """Why Cloudflare Pages skips a ``_redirects`` line before reading its target, in its order:
    too long, a full-URL source, past a limit (a line of 2 or 3 tokens with a relative source counts)."""
    if platform.line_limit is not None and len(line) > platform.line_limit:
        return how.LONG_LINE
    tokens = line.split()
    if not 2 <= len(tokens) <= 3:
        return None  # invalid, and not counted: _line_rule drops it
    if how.CLOUDFLARE_FULL_URL.match(tokens[0]):
        return how.FULL_URL
    return budget.take(tokens[0])


def _the_rest(lines: list[str], number: int, reason: str) -> list[Skipped]:
    """The rules from line ``number`` on, all skipped."""
    rules = ((at, raw.strip()) for at, raw in enumerate(lines[number - 1 :], number))
    return [Skipped("_redirects", f"line {at}", line, reason) for at, line in rules if line and not line.startswith("#")]


def _line_rule(raw: str, platform: Platform) -> tuple[str, str, int, bool] | None:
    """One ``_redirects`` line as ``platform`` reads it (source, target, status, forced), or None
    (blank, a comment, invalid, or not judged: conditions on the query, a country or a role apply
    only to some requests)."""
    if raw.lstrip().startswith("#"):
        return None
    text, hash_mark, _ = raw.partition("#")
    if hash_mark and not platform.trailing_comments and text.strip():
        return None  # Cloudflare Pages: the whole line is invalid
    tokens = text.split()
    if len(tokens) < 2 or ("=" in tokens[1] and not tokens[1].startswith(("/", "http://", "https://"))):
        return None  # a rule on query parameters (`/store id=:id /shop/:id`); a target may have a query
    status_text = tokens[2] if len(tokens) > 2 else "301"
    if len(tokens) > 3 or not re.fullmatch(r"\d{3}!?", status_text):
        return None  # conditions (Country=, Language=, Role=): not every request
    forced = status_text.endswith("!")
    status = int(status_text.rstrip("!"))
    if (forced and not platform.force_mark) or status not in platform.statuses:
        return None
    return tokens[0], tokens[1], status, forced
