"""What notifier/announce.py decides that a mutation run found no test stating (#44): the
defaults that keep a run as it was, ``/**/`` and ``**`` inside a pattern, and the path of a
URL with no host or no path. Each test names the edit it catches."""

from __future__ import annotations

import datetime as dt

import pytest

from notifier.announce import Announce, compiled, held_out, matches, path_and_query


def test_the_default_policy_holds_and_adds_nothing() -> None:
    """fails if Announce's ``min_interval`` default becomes a second or ``alternates`` True"""
    default = Announce()
    assert default.min_interval == dt.timedelta(0) and not default.holds and not default.patterns
    assert default.described() == {
        "include": [], "exclude": [], "min_interval_seconds": 0.0, "per_run": None, "per_day": None, "alternates": False,
    }  # fmt: skip


@pytest.mark.parametrize(
    ("pattern", "path", "matched"),
    [
        ("/docs/**/index.html", "/docs/index.html", True),  # /**/ matches a single slash
        ("/docs/**/index.html", "/docs/a/b/index.html", True),
        ("/docs/**/index.html", "/docsindex.html", False),
        ("/docs/**/index.html", "/docs/a/index.htm", False),
        ("/tmp**.html", "/tmp/a/b.html", True),
        ("/tmp**.html", "/tmpxhtml", False),  # the character after ** is kept
    ],
)
def test_double_stars_inside_a_pattern(pattern: str, path: str, matched: bool) -> None:
    """fails if ``rest = rest[4:]`` is removed or loses its bound in compiled (a /**/ loops for
    ever), or if ``rest[2:]`` after ``**`` becomes ``rest[3:]`` (the next character dropped)"""
    assert matches(pattern, path, "") is matched


@pytest.mark.parametrize(
    ("loc", "parts"),
    [
        ("http:///drafts/a", ("/drafts/a", "")),  # no host: the path still begins right after "://"
        ("?q=1", ("/", "q=1")),  # a loc with neither scheme nor path
        ("https://shop.org?q=1#top", ("/", "q=1")),
        ("https://shop.org/a?b=1#c", ("/a", "b=1")),
    ],
)
def test_the_path_and_query_patterns_are_matched_against(loc: str, parts: tuple[str, str]) -> None:
    """fails if ``loc.find("://") + 3`` becomes ``+ 4`` in path_and_query, ``query_at < 0``
    becomes ``<=`` or ``< 1``, or ``rest[:query_at] or "/"`` loses its "/" """
    assert path_and_query(loc) == parts


def test_an_exclude_on_a_url_with_no_host() -> None:
    """the path of a URL with an empty host is what exclude sees"""
    assert held_out("http:///drafts/a", (), ("/drafts/**",)) == "matches [announce] exclude '/drafts/**'"


def test_a_double_star_takes_only_its_two_characters() -> None:
    """What follows ``**`` is matched as written (edit: ``rest[2:]`` made ``rest[3:]``, which drops
    the dot of ``**.pdf`` and lets ``/docs/a/b-pdf`` in)."""
    assert compiled("/docs/**.pdf").fullmatch("/docs/a/b.pdf")
    assert not compiled("/docs/**.pdf").fullmatch("/docs/a/b-pdf")
