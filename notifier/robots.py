"""robots.txt as RFC 9309 reads it: groups by user agent, ``*`` and ``$`` in paths, and the
longest matching rule wins (``allow`` on a tie). The standard library's parser takes the
first matching rule and knows no wildcards, so it would judge many real files wrongly.
"""

from __future__ import annotations

import re
import urllib.parse
from dataclasses import dataclass, field

from notifier.urls import path_query, split_url

# The crawlers of the engines IndexNow notifies, each with the product tokens of the robots
# groups it obeys, the most specific first (Bing obeys an msnbot group, Yandex a Yandex one).
INDEXNOW_CRAWLERS: dict[str, tuple[str, ...]] = {
    "bingbot": ("bingbot", "msnbot"),
    "YandexBot": ("yandexbot", "yandex"),
    "SeznamBot": ("seznambot",),
    "Yeti": ("yeti",),
    "YepBot": ("yepbot",),
}


@dataclass
class _Group:
    agents: list[str] = field(default_factory=list)
    rules: list[tuple[bool, str]] = field(default_factory=list)  # (allow, pattern)


@dataclass
class Robots:
    """A parsed robots.txt: its groups, and the sitemaps it names."""

    groups: list[_Group] = field(default_factory=list)
    sitemaps: list[str] = field(default_factory=list)
    _chosen: dict[str, list[tuple[bool, str]]] = field(default_factory=dict, repr=False)  # crawler -> its rules

    @classmethod
    def parse(cls, text: str) -> Robots:
        robots = cls()
        group: _Group | None = None
        ruled = False  # the current group has had a rule line (an empty Disallow counts)
        for raw in text.splitlines():
            line = raw.split("#", 1)[0].strip()
            key, colon, value = line.partition(":")
            if not colon:
                continue
            key, value = key.strip().lower(), value.strip()
            if key == "sitemap":
                robots.sitemaps.append(value)
            elif key in ("user-agent", "useragent"):
                if group is None or ruled:
                    group, ruled = _Group(), False
                    robots.groups.append(group)
                group.agents.append(value.lower())
            elif key in ("allow", "disallow") and group is not None:
                ruled = True
                if value:
                    group.rules.append((key == "allow", _encoded(value)))
        return robots

    def _rules_for(self, crawler: str) -> list[tuple[bool, str]]:
        known = self._chosen.get(crawler)
        if known is None:
            known = self._chosen[crawler] = self._choose(crawler)
        return known

    def _choose(self, crawler: str) -> list[tuple[bool, str]]:
        """The rules of the groups ``crawler`` obeys: its own token's, else ``*``'s."""
        for token in (*INDEXNOW_CRAWLERS.get(crawler, (crawler.lower(),)), "*"):
            rules = [rule for group in self.groups if token in group.agents for rule in group.rules]
            if rules or any(token in group.agents for group in self.groups):
                return rules
        return []

    def allows(self, crawler: str, url: str) -> bool:
        """Whether ``crawler`` may fetch ``url``: the longest matching pattern decides."""
        raw_path, query = path_query(url)
        path = _encoded(raw_path) + (f"?{query}" if query else "")
        if path == "/robots.txt":
            return True
        best_length, allowed = -1, True
        for allow, pattern in self._rules_for(crawler):
            if _matches(pattern, path) and (len(pattern) > best_length or (len(pattern) == best_length and allow)):
                best_length, allowed = len(pattern), allow
        return allowed

    def blocking(self, url: str) -> list[str]:
        """The IndexNow engines' crawlers this file keeps away from ``url``."""
        return [crawler for crawler in INDEXNOW_CRAWLERS if not self.allows(crawler, url)]

    def names(self, sitemap_path: str) -> bool:
        """Whether the file names no sitemap, or names one at ``sitemap_path`` (a URL path)."""
        return not self.sitemaps or any(split_url(url).path == sitemap_path for url in self.sitemaps)


_PATTERNS: dict[str, re.Pattern[str]] = {}


def _matches(pattern: str, path: str) -> bool:
    if "*" not in pattern and not pattern.endswith("$"):
        return path.startswith(pattern)
    compiled = _PATTERNS.get(pattern)
    if compiled is None:
        anchored = pattern.endswith("$")
        body = pattern[:-1] if anchored else pattern
        compiled = re.compile(".*".join(map(re.escape, body.split("*"))) + ("$" if anchored else ""), re.DOTALL)
        _PATTERNS[pattern] = compiled
    return compiled.match(path) is not None


def _encoded(path: str) -> str:
    """One spelling of a path to compare: octets outside ASCII percent-encoded, escapes of
    unreserved characters decoded, escapes in upper case (RFC 9309 section 2.2.2)."""
    decoded = urllib.parse.unquote(path, errors="strict") if "%" in path else path
    return urllib.parse.quote(decoded, safe="/?=&;:@!$'()*+,-._~[]$")
