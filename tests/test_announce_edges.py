"""[announce] include/exclude patterns on the edges of a URL (``notifier/announce.py``):
where the path ends and the query begins, fragments, a host with no path, and patterns
with a query. Each test names the mutants of scripts/mutate.py it kills (#44); the policy
tests use plain paths, which is why these were nobody's."""

from __future__ import annotations

import pytest

from notifier.announce import held_out, path_and_query, patterns
from notifier.errors import UsageError


@pytest.mark.parametrize(
    ("loc", "expected"),
    [
        ("https://www.example.com/a/b?x=1&y=2#frag", ("/a/b", "x=1&y=2")),
        ("https://h/a", ("/a", "")),  # a one-letter host: the path starts after the "://"
        ("https://www.example.com", ("/", "")),
        ("https://www.example.com/", ("/", "")),
        ("https://www.example.com/#top", ("/", "")),
        ("https://www.example.com/a#x?y", ("/a", "")),  # a "?" in the fragment is no query
        ("https://www.example.com?q=1", ("/", "q=1")),  # a query, no path
        ("https://www.example.com?q=1#f?g", ("/", "q=1")),
        ("https://www.example.com/a?", ("/a", "")),
        ("https://www.example.com/?q", ("/", "q")),
        ("https://www.example.com/a?b?c", ("/a", "b?c")),
        ("/docs/page?x", ("/docs/page", "x")),  # a path alone (a pattern's own test)
        ("/docs/page", ("/docs/page", "")),
        ("", ("/", "")),
    ],
)
def test_a_urls_path_and_query_as_written(loc: str, expected: tuple[str, str]) -> None:
    """Kills path_and_query's constants moved by one (3, 0, 1), ``>=``/``<`` moved, the
    fragment's and the query's assignments removed, the slice losing its lower bound, and
    ``rest or "/"`` losing its ``"/"``."""
    assert path_and_query(loc) == expected


@pytest.mark.parametrize(
    ("loc", "exclude", "why"),
    [
        ("https://www.example.com/search?q=shoes", ("/search?q=*",), "matches [announce] exclude '/search?q=*'"),
        ("https://www.example.com/search", ("/search?q=*",), None),  # a pattern with a query wants one
        ("https://www.example.com/search?page=2", ("/search?q=*",), None),
        ("https://www.example.com/docs/a/b.pdf", ("/docs/**.pdf",), "matches [announce] exclude '/docs/**.pdf'"),
        ("https://www.example.com/docs/a/b.html", ("/docs/**.pdf",), None),
        ("https://www.example.com/docs/a/bpdf", ("/docs/**.pdf",), None),  # the dot after ** is a dot
        ("https://www.example.com/drafts/x#part", ("/drafts/*",), "matches [announce] exclude '/drafts/*'"),
    ],
)
def test_exclude_patterns_with_a_query_and_a_double_star(loc: str, exclude: tuple[str, ...], why: str | None) -> None:
    """Kills _any_of's ``"?"`` widened (a query pattern then never matched a URL with a query)
    and compiled's ``rest[2:]`` after ``**`` made ``rest[3:]`` (it ate the dot of ``**.pdf``)."""
    assert held_out(loc, (), exclude) == why


def test_include_patterns_hold_out_what_they_do_not_name() -> None:
    include = ("/blog/**", "/shop?id=*")
    assert held_out("https://www.example.com/blog/2024/post", include, ()) is None
    assert held_out("https://www.example.com/shop?id=7", include, ()) is None
    assert held_out("https://www.example.com/shop?sort=new", include, ()) == (
        "matches no [announce] include pattern ('/blog/**', '/shop?id=*')"
    )


@pytest.mark.parametrize("bad", ["/a\tb", "/a\nb", "/a\x1fb", "/a#b", "https://www.example.com/a", "drafts/*", 7])
def test_a_pattern_with_a_control_character_a_fragment_or_a_host_is_refused(bad: object) -> None:
    """Kills ``ord(char) < 32 or char == "#"`` losing its first side (a tab or a newline in a
    pattern, usually a paste, would match nothing and say nothing)."""
    with pytest.raises(UsageError, match="is not a pattern on a URL's path"):
        patterns("--exclude")(bad)


def test_a_space_and_the_characters_above_it_are_a_patterns_own() -> None:
    """Kills ``< 32`` made ``<= 32`` and 32 made 33: a space (``/my docs/``, as some sites'
    paths are written before encoding) and ``!`` are characters of a pattern."""
    assert patterns("--exclude")(["/my docs/**", "/!x", "/my docs/**"]) == ("/my docs/**", "/!x")
