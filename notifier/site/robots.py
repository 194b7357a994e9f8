"""robots.txt as RFC 9309 and the engines' crawlers read it.

- Groups: a group is its ``User-agent`` lines and the lines after them; it ends at the next
  ``User-agent`` after a rule, or after a ``Crawl-delay`` (``Clean-param``, ``Request-rate``,
  ``Visit-time``): Bing, Yandex and Seznam obey those as members of the crawler's own group,
  so ``User-agent: bingbot / Crawl-delay: 2`` is bingbot's group, not the next group's.
- A user agent is its product token: ``Bingbot/2.0`` is ``bingbot``, compared in any case.
  A crawler obeys the groups of its own token (Bing an ``msnbot`` group too), else ``*``'s.
  ``*`` is the global group only alone or before white space (``* bingbot``); otherwise the
  token is the run of ``[a-zA-Z_-]`` the value begins with (RFC 9309 2.2.1, as Google reads
  it), so ``*WordPress*`` has none and is no crawler's group, least of all every crawler's.
- The URL's path and query are matched, a ``?`` with an empty query kept (``/page?``, as
  Google keeps it: ``Disallow: /page?`` keeps crawlers from ``/page?``, not from ``/page``).
- Paths: ``*`` is any run of characters, a final ``$`` ends the path; the longest matching
  rule wins, ``Allow`` on a tie. Matching is linear in the path (no backtracking regex).
- Escapes (section 2.2.2): a rule and a URL are compared as octets, each spelled one way:
  escapes of unreserved characters decoded, other escapes kept in upper case, non-ASCII and a
  literal ``*`` or ``$`` percent-encoded. So ``%2A`` in a rule is a literal star, ``%2F`` is
  not ``/``, and an escape that is not UTF-8 (``%E9``) is just an octet.
- A byte-order mark before the first line is skipped.

The standard library's parser takes the first matching rule and knows no wildcards, so it
would judge many real files wrongly.
"""

from __future__ import annotations

import itertools
import string
from dataclasses import dataclass, field

from notifier.urls import octets, path_query, split_url

# The crawlers of the engines IndexNow shares a URL with, each with the product tokens of the
# robots groups it obeys, the most specific first (Bing obeys an msnbot group, Yandex a Yandex one).
INDEXNOW_CRAWLERS: dict[str, tuple[str, ...]] = {
    "bingbot": ("bingbot", "msnbot"),
    "YandexBot": ("yandexbot", "yandex"),
    "SeznamBot": ("seznambot",),
    "Yeti": ("yeti",),  # Naver
    "YepBot": ("yepbot",),
    "Amazonbot": ("amazonbot",),
}
_GROUP_MEMBERS = {"crawl-delay", "clean-param", "request-rate", "visit-time"}
_TOKEN_CHARACTERS = frozenset(string.ascii_letters + "_-")


def product_token(value: str) -> str:
    """The product token a ``User-agent`` value names, in lower case: ``*`` alone or before
    white space is the global group (``* bingbot`` too); otherwise the run of ``[a-zA-Z_-]`` it
    begins with, which is empty for ``*WordPress*`` (RFC 9309 2.2.1; Google's robots.cc)."""
    if value == "*" or value.startswith(("* ", "*\t")):
        return "*"
    return "".join(itertools.takewhile(_TOKEN_CHARACTERS.__contains__, value)).lower()


@dataclass(frozen=True)
class Rule:
    allow: bool
    pieces: tuple[str, ...]  # the pattern split at its stars, each piece spelled as _normalise spells it
    anchored: bool  # it ended with $
    length: int  # its length as written, normalised: the longest match wins

    @classmethod
    def parse(cls, allow: bool, pattern: str) -> Rule:
        anchored = pattern.endswith("$")
        body = pattern[:-1] if anchored else pattern
        pieces = tuple(octets(piece) for piece in body.split("*"))
        return cls(allow, pieces, anchored, sum(map(len, pieces)) + len(pieces) - 1 + anchored)

    def matches(self, path: str) -> bool:
        """Whether the pattern matches ``path`` (normalised): a greedy walk, each piece at its first
        place after the last, which is exact for patterns whose only wildcard is ``*``."""
        first, *rest = self.pieces
        if not path.startswith(first):
            return False
        if not rest:
            return not self.anchored or len(path) == len(first)
        position = len(first)
        for piece in rest[:-1]:
            found = path.find(piece, position)
            if found < 0:
                return False
            position = found + len(piece)
        last = rest[-1]
        if self.anchored:
            return len(path) - len(last) >= position and path.endswith(last)
        return path.find(last, position) >= 0


@dataclass
class _Group:
    agents: list[str] = field(default_factory=list)
    rules: list[Rule] = field(default_factory=list)


@dataclass
class Robots:
    """A parsed robots.txt: its groups, and the sitemaps it names."""

    groups: list[_Group] = field(default_factory=list)
    sitemaps: list[str] = field(default_factory=list)
    _chosen: dict[str, list[Rule]] = field(default_factory=dict, repr=False)  # crawler -> its rules

    @classmethod
    def parse(cls, text: str) -> Robots:
        robots = cls()
        group: _Group | None = None
        ended = False  # the current group has had a member line: the next User-agent starts another
        for raw in text.removeprefix("\ufeff").splitlines():
            key, colon, value = raw.partition("#")[0].partition(":")
            if not colon:
                continue
            key, value = key.strip().lower(), value.strip()
            if key == "sitemap":
                robots.sitemaps.append(value)
            elif key in ("user-agent", "useragent", "user agent"):
                if group is None or ended:
                    group, ended = _Group(), False
                    robots.groups.append(group)
                token = product_token(value)
                if token:  # an empty token is no crawler's: the group stays, obeyed by none
                    group.agents.append(token)
            elif key in ("allow", "disallow") and group is not None:
                ended = True
                if value:
                    group.rules.append(Rule.parse(key == "allow", value))
            elif key in _GROUP_MEMBERS and group is not None:
                ended = True
        return robots

    def _rules_for(self, crawler: str) -> list[Rule]:
        known = self._chosen.get(crawler)
        if known is None:
            known = self._chosen[crawler] = self._choose(crawler)
        return known

    def _choose(self, crawler: str) -> list[Rule]:
        """The rules of the groups ``crawler`` obeys: its own token's, else ``*``'s."""
        for token in (*INDEXNOW_CRAWLERS.get(crawler, (crawler.lower(),)), "*"):
            if any(token in group.agents for group in self.groups):
                return [rule for group in self.groups if token in group.agents for rule in group.rules]
        return []

    def allows(self, crawler: str, url: str) -> bool:
        """Whether ``crawler`` may fetch ``url``."""
        return self._allows(crawler, _subject(url))

    def _allows(self, crawler: str, path: str) -> bool:
        if path == "/robots.txt":
            return True
        best_length, allowed = 0, True  # every rule is at least one character long
        for rule in self._rules_for(crawler):
            if (rule.length > best_length or (rule.length == best_length and rule.allow)) and rule.matches(path):
                best_length, allowed = rule.length, rule.allow
        return allowed

    def blocking(self, url: str) -> list[str]:
        """The IndexNow engines' crawlers this file keeps away from ``url``."""
        path = _subject(url)
        return [crawler for crawler in INDEXNOW_CRAWLERS if not self._allows(crawler, path)]

    def names(self, sitemap_path: str) -> bool:
        """Whether the file names no sitemap, or names one at ``sitemap_path`` (a URL path)."""
        return not self.sitemaps or any(split_url(url).path == sitemap_path for url in self.sitemaps)


def _subject(url: str) -> str:
    """What a rule is matched against: the URL's path and query, normalised alike. A ``?``
    before an empty query stays (Google's robots.cc keeps it), so ``/page?`` is not ``/page``."""
    path, query = path_query(url)
    if query or "?" in url.partition("#")[0]:  # the first "?" before any "#" begins the query (RFC 3986 3.4)
        return octets(f"{path}?{query}")
    return octets(path)
