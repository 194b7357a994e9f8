"""``[announce]``: which URLs a deploy announces, and when (issue #41, items 5-8). ``Announce``
holds the settings; ``pipeline/policy.py`` applies them to a run.

``include`` and ``exclude`` are glob patterns on a URL's path, which pick the URLs a
deploy may announce. ``*`` matches within one path segment, ``**`` across segments (``/**/``
also matches a single ``/``); a pattern with a ``?`` is matched against the path and the query
(after the ``?``, ``*`` matches anything), one without is matched against the path alone.
Everything else is literal: the path as the sitemap writes it, percent-escapes and letter case
included.
"""

from __future__ import annotations

import datetime as dt
import functools
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from notifier.errors import UsageError


@dataclass(frozen=True)
class Announce:
    """The announcement policy; every default keeps a run as it was without it."""

    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    min_interval: dt.timedelta = dt.timedelta(0)
    per_run: int | None = None
    per_day: int | None = None
    alternates: bool = False

    @classmethod
    def of(cls, value: Callable[[str], Any]) -> Announce:
        """The policy from the resolved options (``value(name)``)."""
        return cls(value("include"), value("exclude"), value("min-interval"), value("per-run"), value("per-day"), value("alternates"))

    @property
    def patterns(self) -> bool:
        return bool(self.include or self.exclude)

    @property
    def holds(self) -> bool:
        """Whether a pending URL may have to wait (an interval, a cap)."""
        return bool(self.min_interval) or self.per_run is not None or self.per_day is not None

    def why_held_out(self, loc: str) -> str | None:
        return held_out(loc, self.include, self.exclude) if self.patterns else None

    def described(self) -> Mapping[str, Any]:
        return {
            "include": list(self.include),
            "exclude": list(self.exclude),
            "min_interval_seconds": self.min_interval.total_seconds(),
            "per_run": self.per_run,
            "per_day": self.per_day,
            "alternates": self.alternates,
        }


def patterns(label: str) -> Callable[[Any], tuple[str, ...]]:
    """The converter of ``--include`` / ``--exclude``: one pattern or a list, each checked."""

    def convert(value: Any) -> tuple[str, ...]:
        items = list(value) if isinstance(value, (list, tuple)) else [value]
        for item in items:
            if not isinstance(item, str) or not item.startswith(("/", "*")) or any(ord(char) < 32 or char == "#" for char in item):
                raise UsageError(
                    f"{label}: {item!r} is not a pattern on a URL's path; write it from the first slash, "
                    'e.g. "/drafts/**" or "/search?*" (no scheme, host or #)'
                )
        return tuple(dict.fromkeys(items))

    return convert


@functools.cache
def compiled(pattern: str) -> re.Pattern[str]:
    """The pattern as a regular expression over a URL's path (and query, when it has a ``?``)."""
    path, mark, query = pattern.partition("?")
    pieces: list[str] = []
    rest = path
    while rest:
        if rest.startswith("/**/"):
            pieces.append("/(?:.*/)?")
            rest = rest[4:]
        elif rest.startswith("**"):
            pieces.append(".*")
            rest = rest[2:]
        elif rest.startswith("*"):
            pieces.append("[^/]*")
            rest = rest[1:]
        else:
            pieces.append(re.escape(rest[0]))
            rest = rest[1:]
    if mark:
        pieces.append(r"\?" + ".*".join(re.escape(each) for each in re.split(r"\*+", query)))
    return re.compile("".join(pieces), re.DOTALL)


def path_and_query(loc: str) -> tuple[str, str]:
    """A URL's path (``/`` when it has none) and its query (``""`` when it has none), as written."""
    start = loc.find("/", loc.find("://") + 3) if "://" in loc else 0
    rest = loc[start:] if start >= 0 else ""
    rest = rest.partition("#")[0]
    query_at = rest.find("?")
    if start < 0:  # https://host?q: a query, no path
        tail = loc.partition("#")[0]
        query_at = tail.find("?")
        return "/", tail[query_at + 1 :] if query_at >= 0 else ""
    if query_at < 0:
        return rest or "/", ""
    return rest[:query_at] or "/", rest[query_at + 1 :]


def matches(pattern: str, path: str, query: str) -> bool:
    target = f"{path}?{query}" if "?" in pattern and query else path
    return compiled(pattern).fullmatch(target) is not None


def held_out(loc: str, include: tuple[str, ...], exclude: tuple[str, ...]) -> str | None:
    """Why ``loc`` is never announced (the pattern that says so), or None when it may be."""
    path, query = path_and_query(loc)
    if exclude and _any_of(exclude)(path, query):
        pattern = next(pattern for pattern in exclude if matches(pattern, path, query))  # the first, as written
        return f"matches [announce] exclude {pattern!r}"
    if include and not _any_of(include)(path, query):
        return f"matches no [announce] include pattern ({', '.join(repr(each) for each in include)})"
    return None


@functools.cache
def _any_of(patterns: tuple[str, ...]) -> Callable[[str, str], bool]:
    """Whether any of ``patterns`` matches a path and query, each list one expression (a
    pattern tried at a time cost a third of a full submission's time at 300,000 URLs)."""

    def either(group: list[str]) -> re.Pattern[str] | None:
        return re.compile("|".join(f"(?:{compiled(each).pattern})" for each in group), re.DOTALL) if group else None

    every = either(list(patterns))
    on_path, with_query = either([each for each in patterns if "?" not in each]), either([each for each in patterns if "?" in each])

    def any_match(path: str, query: str) -> bool:
        if not query:  # a pattern with a "?" is matched against the path alone then, as any other
            return every is not None and every.fullmatch(path) is not None
        return (on_path is not None and on_path.fullmatch(path) is not None) or (
            with_query is not None and with_query.fullmatch(f"{path}?{query}") is not None
        )

    return any_match
