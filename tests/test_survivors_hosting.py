"""``_headers``, ``_redirects`` and ``netlify.toml``: what the mutation run found unstated (#44).

Each test names the edit of ``notifier/site/hosting.py`` it fails with; the edits that cannot
change what a user sees are in scripts/mutants-equivalent.txt with their reasons.
"""

from __future__ import annotations

import pytest

from notifier.site.hosting import PLATFORMS, Headers, Redirects, toml_status
from notifier.site.hosting_platforms import DYNAMIC_LIMIT, FULL_URL, LONG_LINE, NAMED_TWICE, STATIC_LIMIT, STATUS
from tests.conftest import BASE

NETLIFY, CLOUDFLARE = PLATFORMS["netlify"], PLATFORMS["cloudflare-pages"]
HOST = BASE.removeprefix("http://")


def _reasons(redirects: Redirects) -> list[str]:
    return [each.reason for each in redirects.skipped]


# -- Pattern.parse ----------------------------------------------------------------------------------
def test_a_full_url_source_keeps_a_doubled_slash_after_its_host() -> None:
    """``http://host//old`` is the path ``//old``, not ``/old``: fails if ``text = slash + text`` is
    removed in site/hosting.py::Pattern.parse (the path's first slash would be lost)."""
    redirects = Redirects.parse(f"http://{HOST}//old /new/ 301\n", NETLIFY)
    assert redirects.target(f"{BASE}//old", has_file=False) == "/new/"
    assert redirects.target(f"{BASE}/old", has_file=False) is None


@pytest.mark.parametrize("source", [f"http://{HOST.upper()}/old", f"http://{HOST.upper()}/o*"])
def test_a_full_url_source_matches_its_host_in_any_case(source: str) -> None:
    """A host is one in any case (a literal source and one with a *): fails if
    ``host = host.lower()`` is removed in site/hosting.py::Pattern.parse."""
    assert Redirects.parse(f"{source} /new/ 301!\n", NETLIFY).target(f"{BASE}/old", has_file=True) == "/new/"
    headers = Headers.parse(f"{source}\n  X-Robots-Tag: noindex\n", NETLIFY)
    assert headers.robots_tag(f"{BASE}/old") == ["noindex"]


# -- Headers.parse ----------------------------------------------------------------------------------
def test_a_header_line_without_a_colon_sets_no_header() -> None:
    """A bare ``X-Robots-Tag`` line is no header: on Netlify it would empty the value an earlier
    block sent (the last block's wins). Fails if ``colon and name.strip()`` drops its first side
    in site/hosting.py::Headers.parse."""
    text = "/*\n  X-Robots-Tag: noindex\n/a/*\n  X-Robots-Tag\n"
    assert Headers.parse(text, NETLIFY).robots_tag(f"{BASE}/a/x") == ["noindex"]
    assert Headers.parse(text, CLOUDFLARE).robots_tag(f"{BASE}/a/x") == ["noindex"]
    assert Headers.parse("/a/*\n  X-Robots-Tag\n", NETLIFY).robots_tag(f"{BASE}/a/x") == []


# -- netlify.toml ------------------------------------------------------------------------------------
def test_netlify_toml_entries_that_are_no_tables_are_passed_over() -> None:
    """``headers = ["/a/*"]`` or ``redirects = [1]`` in netlify.toml: entries that are no tables are
    skipped, not a crash. Fails if ``not isinstance(entry, dict)`` is dropped from the first
    condition of site/hosting.py::Headers.add_toml or Redirects.add_toml."""
    headers = Headers.parse("", NETLIFY)
    headers.add_toml(["/old/*", 1, {"for": "/a/*", "values": {"X-Robots-Tag": "noindex"}}])
    assert headers.robots_tag(f"{BASE}/a/x") == ["noindex"] and headers.robots_tag(f"{BASE}/old/x") == []
    redirects = Redirects.parse("", NETLIFY)
    redirects.add_toml(["/old", 1, {"from": "/a", "to": "/b/"}])
    assert redirects.target(f"{BASE}/a", has_file=False) == "/b/" and redirects.target(f"{BASE}/old", has_file=False) is None


def test_netlify_toml_headers_entries_are_numbered_from_one() -> None:
    """A skipped ``[[headers]]`` entry is named by its place, the first being 1 (as ``[[redirects]]``):
    fails if ``enumerate(entries, 1)`` starts at 2 in site/hosting.py::Headers.add_toml."""
    headers = Headers(CLOUDFLARE)
    headers.add_toml([{"for": "/a/*/b/*", "values": {"X-Robots-Tag": "noindex"}}])
    assert [(each.file, each.where, each.reason) for each in headers.skipped] == [("netlify.toml", "[[headers]] 1", NAMED_TWICE)]


@pytest.mark.parametrize("status", [float("nan"), float("inf"), float("-inf")])
def test_a_netlify_toml_status_of_nan_or_infinity_is_no_number(status: float) -> None:
    """TOML has ``nan`` and ``inf``; JavaScript's parseInt reads neither as a number, and the rule is
    skipped with a note, not a crash. Fails if ``value == value and abs(value) != float("inf")``
    in site/hosting.py::toml_status becomes ``or`` or drops either side."""
    assert toml_status(status) is None
    redirects = Redirects.parse("", NETLIFY)
    redirects.add_toml([{"from": "/a", "to": "/b/", "status": status}])
    assert _reasons(redirects) == [STATUS] and redirects.target(f"{BASE}/a", has_file=False) is None


# -- Redirects.parse on Cloudflare Pages: what is counted, what is skipped ---------------------------
def _dynamic(count: int, target: str = "/e{n}/:splat") -> list[str]:
    return [f"/d{n}/* {target.format(n=n)} 301" for n in range(count)]


def test_a_comment_in_redirects_is_neither_counted_nor_too_long_on_cloudflare_pages() -> None:
    """A ``#`` line is no rule: not counted against the 100 dynamic rules, and never a long line.
    Fails if ``not line or line.startswith("#")`` in site/hosting.py::Redirects.parse becomes
    ``and`` or drops its second side."""
    text = "\n".join(["#/old/* /new/:splat 301", "", *_dynamic(100)])
    redirects = Redirects.parse(text, CLOUDFLARE)
    assert redirects.target(f"{BASE}/d99/a", has_file=False) == "/e99/a" and redirects.skipped == []
    long = Redirects.parse("# " + "x" * 2500 + "\n/a /b/ 301\n", CLOUDFLARE)
    assert long.skipped == [] and long.target(f"{BASE}/a", has_file=False) == "/b/"


def test_cloudflare_pages_skips_a_line_over_2000_characters() -> None:
    """MAX_LINE_LENGTH: a line of 2,001 characters is skipped, one of 2,000 is read. Fails if
    ``platform.line_limit is not None`` becomes ``is None``, or ``len(line) > platform.line_limit``
    becomes ``>=``, in site/hosting.py::_cloudflare_skips."""

    def line(length: int) -> str:
        start = "/a /b/"
        return start + "x" * (length - len(start) - 4) + " 301"

    assert len(line(2000)) == 2000
    read = Redirects.parse(line(2000), CLOUDFLARE)
    assert read.skipped == [] and read.target(f"{BASE}/a", has_file=False) == "/b/" + "x" * 1990
    skipped = Redirects.parse(line(2001) + "\n", CLOUDFLARE)
    assert _reasons(skipped) == [LONG_LINE] and skipped.target(f"{BASE}/a", has_file=False) is None
    assert Redirects.parse(line(2001), NETLIFY).target(f"{BASE}/a", has_file=False) == "/b/" + "x" * 1991


def test_a_two_token_line_is_judged_and_counted_on_cloudflare_pages() -> None:
    """A rule without a status (301) is a rule Cloudflare Pages reads like any other: a full-URL source
    is skipped, and it counts against the 2,000 static rules. Fails if ``2 <= len(tokens) <= 3``
    in site/hosting.py::_cloudflare_skips becomes ``2 < len(tokens)`` or ``3 <= len(tokens)``."""
    assert _reasons(Redirects.parse(f"https://{HOST}/a /b/\n", CLOUDFLARE)) == [FULL_URL]
    text = "\n".join([*(f"/p{n} /q{n}" for n in range(2000)), "/last /x/"])
    redirects = Redirects.parse(text, CLOUDFLARE)
    assert redirects.target(f"{BASE}/p1999", has_file=False) == "/q1999" and redirects.target(f"{BASE}/last", has_file=False) is None
    assert _reasons(redirects) == [STATIC_LIMIT]


def test_a_rule_is_counted_as_dynamic_by_its_source_not_its_target() -> None:
    """``/d/* /e/`` is dynamic though its target has no placeholder: the 101st such rule is past the
    limit. Fails if ``budget.take(tokens[0])`` takes ``tokens[1]`` in site/hosting.py::_cloudflare_skips."""
    redirects = Redirects.parse("\n".join(_dynamic(101, "/e{n}/")), CLOUDFLARE)
    assert redirects.target(f"{BASE}/d99/a", has_file=False) == "/e99/"
    assert redirects.target(f"{BASE}/d100/a", has_file=False) is None and _reasons(redirects) == [DYNAMIC_LIMIT]


def test_the_rules_skipped_past_the_dynamic_limit_are_rules_not_comments() -> None:
    """Fails if ``line and not line.startswith("#")`` drops its second side in site/hosting.py::_the_rest."""
    text = "\n".join([*_dynamic(101), "# the end", "", "/last /x/ 301"])
    redirects = Redirects.parse(text, CLOUDFLARE)
    skipped = [(each.where, each.text) for each in redirects.skipped]
    assert skipped == [("line 101", "/d100/* /e100/:splat 301"), ("line 104", "/last /x/ 301")]


# -- _line_rule ------------------------------------------------------------------------------------
def test_a_target_that_is_no_path_is_a_target() -> None:
    """Only a second token holding ``=`` (and not starting as a URL) is a query condition; a target in
    another form is read as written. Fails if ``"=" in tokens[1]`` is dropped in site/hosting.py::_line_rule."""
    redirects = Redirects.parse("/old HTTPS://www.example.org/new/ 301\n", NETLIFY)
    assert redirects.target(f"{BASE}/old", has_file=False) == "HTTPS://www.example.org/new/"


@pytest.mark.parametrize("status", ["Country=us", "30x", "3011", "moved!"])
def test_a_third_token_that_is_no_status_is_no_rule(status: str) -> None:
    """``/c/ /d/ Country=us`` holds a condition, not a status: no rule, and no crash. Fails if
    ``not re.fullmatch(r"\\d{3}!?", status_text)`` is dropped in site/hosting.py::_line_rule."""
    for platform in PLATFORMS.values():
        redirects = Redirects.parse(f"/c/ /d/ {status}\n/c/ /e/ 301\n", platform)
        assert redirects.target(f"{BASE}/c/", has_file=False) == "/e/", platform.name
