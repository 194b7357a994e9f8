"""How each host reads its rules: what the mutation run found unstated in
``notifier/site/hosting_platforms.py`` (#44). Each test names the edit it fails with; the edits
that cannot change what a user sees are in scripts/mutants-equivalent.txt with their reasons.
"""

from __future__ import annotations

import pytest

from notifier.site.hosting import PLATFORMS, Headers
from notifier.site.hosting_platforms import Skipped, header_cut, skipped_notes
from tests.conftest import BASE

NETLIFY, CLOUDFLARE = PLATFORMS["netlify"], PLATFORMS["cloudflare-pages"]
_RULES = [f"/p{n}\n  X-Robots-Tag: noindex\n" for n in range(101)]


def _cut(first: str) -> int | None:
    """Where Cloudflare Pages stops reading a ``_headers`` file of ``first`` then 101 rules: the
    file is read whole (None) unless ``first`` is a rule too (then 102, one past the limit)."""
    return header_cut((first + "".join(_RULES)).splitlines(), CLOUDFLARE)


@pytest.mark.parametrize(
    "body",
    [
        "  X-Robots-Tag: noindex\n",
        "  X-Robots-Tag: noindex\n  not a header\n",  # a later line that is none does not undo it
        "  Cache-Control: no-cache\n  X Robots: y\n",
        "  ! X-Robots-Tag\n",  # a detach line is a rule
    ],
)
def test_a_block_with_a_header_or_a_detach_line_is_a_rule_cloudflare_counts(body: str) -> None:
    """Fails if ``says = says or (...)`` drops ``says``, or the detach line's assignment (or its
    ``or``'s second side) is removed, in site/hosting_platforms.py::header_cut."""
    assert _cut("/first\n" + body) is not None


@pytest.mark.parametrize(
    "body",
    [
        "",
        "\n  # X-Robots-Tag: noindex\n",  # a blank line and a comment
        "  #X-Robots-Tag: noindex\n",
        "  X-Robots-Tag:\n",  # no value
        "  : noindex\n",  # no name
        "  X Robots Tag: noindex\n",  # a name with spaces
        "  not a header\n",  # no colon
        "  ! X-Robots-Tag: noindex\n",  # a detach line holding a colon
        "  !X-Robots-Tag\n",  # a detach line without its space
    ],
)
def test_a_block_without_a_header_is_no_rule_cloudflare_counts(body: str) -> None:
    """Fails if ``not line or line.startswith("#")`` becomes ``and`` or drops its second side, if
    ``bool(colon) and bool(name.strip()) and " " not in name.strip() and bool(value.strip())``
    becomes ``or`` or drops its second, third or fourth side (or the space becomes another text),
    or if ``not colon and line.startswith("! ")`` becomes ``or`` or drops either side, in
    site/hosting_platforms.py::header_cut."""
    assert _cut("/first\n" + body) is None


def test_header_lines_before_the_first_path_are_no_rule() -> None:
    """Fails if ``applies`` starts True in site/hosting_platforms.py::header_cut: the header lines
    before any path would count as a rule."""
    assert _cut("X-Robots-Tag: noindex\n") is None
    assert Headers.parse("X-Robots-Tag: noindex\n" + "".join(_RULES), CLOUDFLARE).robots_tag(f"{BASE}/p100") == ["noindex"]


def test_netlify_applies_a_headers_block_with_a_placeholder_in_its_host() -> None:
    """Netlify drops a redirect whose full-URL source has a :placeholder in its host (no URL it
    parses); a ``_headers`` path is no redirect source. Fails if ``target is not None`` is dropped
    from that test in site/hosting_platforms.py::refusal."""
    headers = Headers.parse("https://:sub.shop-site.org/*\n  X-Robots-Tag: noindex\n", NETLIFY)
    assert headers.skipped == [] and headers.robots_tag("https://en.shop-site.org/a") == ["noindex"]


@pytest.mark.parametrize(("length", "shown"), [(120, "x" * 120), (121, "x" * 117 + "..."), (500, "x" * 117 + "...")])
def test_a_skipped_rule_is_shown_whole_up_to_120_characters(length: int, shown: str) -> None:
    """Fails if ``len(first.text) <= 120`` becomes ``<`` or 121, or ``[:117]`` loses its bound or
    becomes 118, in site/hosting_platforms.py::skipped_notes."""
    note = skipped_notes([Skipped("_redirects", "line 1", "x" * length, "skips it")], CLOUDFLARE)
    assert note == [f"_redirects: Cloudflare Pages skips it: 1 rule (e.g. line 1: {shown}), not judged"]
