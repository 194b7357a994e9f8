"""The build's ``_headers`` and ``_redirects`` files, as Netlify and Cloudflare Pages apply
them: which paths are sent ``X-Robots-Tag: noindex``, and which are redirected.

Patterns: ``*`` matches anything (slashes too), ``:name`` one path segment (one host label
in a full-URL pattern). A ``_redirects`` rule with a status of 301, 302, 303, 307 or 308
(301 when none is given) redirects; 200 rewrites and 404 answers are not redirects; a rule
with query or country conditions is not judged (it applies only to some requests). A
rule without ``!`` applies, as Netlify applies it, only where the build has no file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from notifier.urls import locate, path_query

REDIRECT_STATUSES = {301, 302, 303, 307, 308}


def _compile(pattern: str) -> tuple[re.Pattern[str], bool]:
    """A pattern as a regex over ``host + path`` (full-URL patterns) or the path; and
    whether it names a host."""
    full = "://" in pattern
    if full:
        rest = pattern.partition("://")[2]
        host, slash, path = rest.partition("/")
        host, path = host.lower(), slash + path or "/"
    else:
        host, path = "", pattern

    def piece(text: str, segment: str) -> str:
        out = []
        for token in re.split(r"(\*|:[A-Za-z_][A-Za-z0-9_]*)", text):
            if token == "*":
                out.append(".*")
            elif token.startswith(":") and len(token) > 1:
                out.append(f"[^{segment}]+")
            else:
                out.append(re.escape(token))
        return "".join(out)

    regex = (piece(host, ".") + "\0" if full else "") + piece(path, "/")
    return re.compile(regex + "/?", re.DOTALL), full


@dataclass
class _Rule:
    regex: re.Pattern[str]
    has_host: bool

    def matches(self, url: str) -> bool:
        path = path_query(url)[0]
        subject = (locate(url).host + "\0" if self.has_host else "") + path
        return self.regex.fullmatch(subject) is not None


@dataclass
class Headers:
    """``_headers``: the paths whose X-Robots-Tag keeps the IndexNow engines away."""

    rules: list[tuple[_Rule, dict[str, str]]] = field(default_factory=list)  # pattern, header name -> value

    @classmethod
    def parse(cls, text: str) -> Headers:
        headers = cls()
        current: dict[str, str] | None = None
        for raw in text.splitlines():
            if not raw.strip() or raw.lstrip().startswith("#"):
                continue
            if not raw[0].isspace():  # a pattern line
                current = {}
                headers.rules.append((_Rule(*_compile(raw.strip())), current))
            elif current is not None:
                line = raw.strip()
                if line.startswith("!"):  # Cloudflare: detach a header set by an earlier rule
                    current["!" + line[1:].strip().lower()] = ""
                    continue
                name, colon, value = line.partition(":")
                if colon:
                    current[name.strip().lower()] = value.strip()
        return headers

    def robots_tag(self, url: str) -> list[str]:
        """The X-Robots-Tag values the host sends for ``url``."""
        values: list[str] = []
        for rule, headers in self.rules:
            if rule.matches(url):
                if "!x-robots-tag" in headers:
                    values = []
                if "x-robots-tag" in headers:
                    values.append(headers["x-robots-tag"])
        return values


@dataclass
class Redirects:
    """``_redirects``: the rules that send a request elsewhere with a redirect status."""

    rules: list[tuple[_Rule, str, int, bool]] = field(default_factory=list)  # pattern, target, status, forced

    @classmethod
    def parse(cls, text: str) -> Redirects:
        redirects = cls()
        for raw in text.splitlines():
            tokens = raw.split("#", 1)[0].split() if not raw.lstrip().startswith("#") else []
            if len(tokens) < 2 or ("=" in tokens[1] and not tokens[1].startswith(("/", "http://", "https://"))):
                continue  # blank, a comment, or a rule on query parameters (`/store id=:id /shop/:id`); a target may have a query
            status_text = tokens[2] if len(tokens) > 2 else "301"
            if len(tokens) > 3 or not re.fullmatch(r"\d{3}!?", status_text):
                continue  # conditions (Country=, Language=, Role=): not every request
            status, forced = int(status_text.rstrip("!")), status_text.endswith("!")
            redirects.rules.append((_Rule(*_compile(tokens[0])), tokens[1], status, forced))
        return redirects

    def target(self, url: str, has_file: bool) -> str | None:
        """Where a request for ``url`` is redirected, or None (the first matching rule decides)."""
        for rule, target, status, forced in self.rules:
            if rule.matches(url):
                if has_file and not forced:
                    continue  # shadowed: the built file is served
                return target if status in REDIRECT_STATUSES else None
        return None
