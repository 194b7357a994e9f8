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
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from notifier.urls import locate, octets, path_query

REDIRECT_STATUSES = {301, 302, 303, 307, 308}


@dataclass(frozen=True)
class Platform:
    """How one host applies ``_redirects`` and ``_headers``."""

    name: str
    shadowing: bool  # a rule without ! applies only where the build has no file (and a shadowed first match ends the search)
    slash_tolerant: bool  # /a/ matches /a and /a matches /a/; /blog/* matches /blog
    force_mark: bool  # `301!` forces a rule; where false, a status with ! makes the line invalid
    trailing_comments: bool  # `/a /b 301 # moved`; where false, such a line is invalid
    statuses: frozenset[int]  # the statuses a rule may carry; a line with another is invalid
    detach: bool  # `! X-Robots-Tag` in a _headers block removes a header an earlier block set
    netlify_toml: bool  # the repository's netlify.toml adds [[redirects]] and [[headers]]


PLATFORMS = {
    "netlify": Platform(
        "netlify",
        shadowing=True,
        slash_tolerant=True,
        force_mark=True,
        trailing_comments=True,
        statuses=frozenset({200, 301, 302, 303, 307, 308, 404, 410, 451}),
        detach=False,
        netlify_toml=True,
    ),
    "cloudflare-pages": Platform(
        "cloudflare-pages",
        shadowing=False,
        slash_tolerant=False,
        force_mark=False,
        trailing_comments=False,
        statuses=frozenset({200, 301, 302, 303, 307, 308}),
        detach=True,
        netlify_toml=False,
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


_TOKEN = re.compile(r"(\*|:[A-Za-z_][A-Za-z0-9_]*)")
_FULL_URL = re.compile(r"https?://", re.IGNORECASE)


@dataclass
class Pattern:
    """A rule's source: its scheme and host (full-URL patterns) and its path, as a regex."""

    scheme: str  # "" for a path pattern
    regex: re.Pattern[str]  # over "host\0path" (full-URL patterns) or the path, both as octets

    @classmethod
    def parse(cls, text: str, platform: Platform) -> Pattern:
        scheme, host = "", ""
        if _FULL_URL.match(text):
            scheme, _, rest = text.partition("://")
            host, slash, text = rest.partition("/")
            text = slash + text
        path = text if text.startswith("/") else "/" + text  # a source without its leading slash
        regex = (_piece(host.lower(), ".", set()) + "\0" if scheme else "") + _path_regex(path, platform)
        return cls(scheme.lower(), re.compile(regex, re.DOTALL))

    def match(self, url: str) -> re.Match[str] | None:
        path = octets(path_query(url)[0])
        if not self.scheme:
            return self.regex.fullmatch(path)
        where = locate(url)
        if where.scheme != self.scheme:
            return None
        return self.regex.fullmatch(f"{where.host}\0{path}")


def _path_regex(path: str, platform: Platform) -> str:
    names: set[str] = set()
    if not platform.slash_tolerant or path == "/":
        return _piece(path, "/", names)
    if path.endswith("/*"):  # /blog/* matches /blog, /blog/ and below
        body = _piece(path[:-2], "/", names)
        return body + ("(?:/.*)?" if "splat" in names else "(?:/(?P<splat>.*))?")
    return _piece(path.rstrip("/"), "/", names) + "/?"  # /a/ matches /a, /a matches /a/


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


def _filled(target: str, found: re.Match[str]) -> str:
    """The target with ``:splat`` and the placeholders' values put in, as the host sends it."""
    values = {name: value for name, value in found.groupdict().items() if value is not None}
    values.setdefault("splat", "")
    return re.sub(r":([A-Za-z_][A-Za-z0-9_]*)", lambda match: values.get(match.group(1), match.group(0)), target)


@dataclass
class Headers:
    """``_headers`` (and netlify.toml's [[headers]]): the paths whose X-Robots-Tag keeps the engines away."""

    platform: Platform = PLATFORMS[DEFAULT_PLATFORM]
    blocks: dict[str, tuple[Pattern, dict[str, str]]] = field(default_factory=dict)  # path -> pattern, name -> value

    @classmethod
    def parse(cls, text: str, platform: Platform = PLATFORMS[DEFAULT_PLATFORM]) -> Headers:
        headers = cls(platform)
        current: dict[str, str] | None = None
        for raw in text.removeprefix("\ufeff").splitlines():
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            if line.startswith("/") or _FULL_URL.match(line):  # a path, however it is indented
                current = headers.block(line)
                continue
            if current is None:
                continue
            if line.startswith("!"):
                if platform.detach:
                    current["!" + line[1:].strip().lower()] = ""
                continue
            name, colon, value = line.partition(":")
            if colon and name.strip():
                _add_header(current, name, value)
        return headers

    def block(self, path: str) -> dict[str, str]:
        """A fresh block for ``path``: the same path in a later block replaces the earlier one."""
        self.blocks.pop(path, None)
        values: dict[str, str] = {}
        self.blocks[path] = (Pattern.parse(path, self.platform), values)
        return values

    def add_toml(self, entries: list[Any]) -> None:
        """netlify.toml's ``[[headers]]``: ``for`` a path, ``values`` a table of headers."""
        for entry in entries:
            if isinstance(entry, dict) and isinstance(entry.get("for"), str) and isinstance(entry.get("values"), dict):
                current = self.block(entry["for"])
                for name, value in entry["values"].items():
                    for each in value if isinstance(value, list) else [value]:
                        _add_header(current, str(name), str(each))

    def robots_tag(self, url: str) -> list[str]:
        """The X-Robots-Tag values the host sends for ``url``."""
        values: list[str] = []
        for pattern, headers in self.blocks.values():
            if pattern.match(url) is not None:
                if "!x-robots-tag" in headers:
                    values = []
                if "x-robots-tag" in headers:
                    values.append(headers["x-robots-tag"])
        return values


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

    @classmethod
    def parse(cls, text: str, platform: Platform = PLATFORMS[DEFAULT_PLATFORM]) -> Redirects:
        redirects = cls(platform)
        for raw in text.removeprefix("\ufeff").splitlines():
            rule = _line_rule(raw, platform)
            if rule is not None:
                redirects.rules.append(rule)
        return redirects

    def add_toml(self, entries: list[Any]) -> None:
        """netlify.toml's ``[[redirects]]``: from, to, status (301), force; conditions are not judged."""
        for entry in entries:
            if not isinstance(entry, dict) or not isinstance(entry.get("from"), str) or not isinstance(entry.get("to"), str):
                continue
            if entry.get("query") or entry.get("conditions"):
                continue
            status = entry.get("status", 301)
            if type(status) is int and status in self.platform.statuses:
                self.rules.append(_Redirect(Pattern.parse(entry["from"], self.platform), entry["to"], status, entry.get("force") is True))

    def target(self, url: str, has_file: bool) -> str | None:
        """Where a request for ``url`` is redirected (the target with its placeholders filled
        in), or None: the first matching rule decides."""
        for rule, found in self._matches(url):
            if has_file and not rule.forced and self.platform.shadowing:
                return None  # the built file is served
            return _filled(rule.target, found) if rule.status in REDIRECT_STATUSES else None
        return None

    def _matches(self, url: str) -> Iterator[tuple[_Redirect, re.Match[str]]]:
        for rule in self.rules:
            found = rule.pattern.match(url)
            if found is not None:
                yield rule, found


def _line_rule(raw: str, platform: Platform) -> _Redirect | None:
    """One ``_redirects`` line as ``platform`` reads it, or None (blank, a comment, invalid, or
    not judged: conditions on the query, a country or a role apply only to some requests)."""
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
    return _Redirect(Pattern.parse(tokens[0], platform), tokens[1], status, forced)
