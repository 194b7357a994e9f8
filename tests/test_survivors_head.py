"""A page's head: what the mutation run found unstated (#44).

Each test names the edit of ``notifier/site/head.py`` it fails with; the edits that cannot change
what a user sees are in scripts/mutants-equivalent.txt with their reasons.
"""

from __future__ import annotations

import pytest
from lxml import etree

from notifier.site import head as head_module
from notifier.site.head import NO_HEAD, Head, canonical_elsewhere, head_end, noindex_header, noindex_meta, read_head, refresh_target

LOC = "https://www.shop-site.org/tea/"
NOINDEX = b'<meta name="robots" content="noindex">'


def _head(inside: bytes) -> Head:
    """The head of a page holding ``inside``, read with the scan and by the pull parser alone (both agree)."""
    page = b"<!doctype html><html><head>" + inside + b"</head><body><p>tea</p></body></html>"
    head = read_head(page)
    assert head == read_head(page, scan=False)
    return head


# -- where the head ends: the scan and lxml agree (a bug the survivors of read_head led to) ----------
@pytest.mark.parametrize(
    ("before", "inside"),
    [
        (b"<html>", b"<html>"),  # a stray <html> or <head> inside the head (a template's partial opening its own)
        (b"<html>", b'<html lang="en">'),
        (b"<html>", b"<head>"),
        (b"<html>", b"<HEAD >"),
        (b'<html><meta charset="utf-8">', b""),  # a head element before <head> opens the head: <head> is a second one
        (b"<html><title>t</title>", b""),
        (b'<base href="/">', b""),
        (b"<html><html>", b""),
    ],
)
def test_a_head_lxml_keeps_open_past_its_first_end_is_left_to_the_parser(before: bytes, inside: bytes) -> None:
    """lxml passes over the first ``</head>`` after a stray ``<html>`` or ``<head>`` inside the head,
    or after a ``<head>`` tag that a head element before it made a second one: a noindex meta after
    that ``</head>`` is in the head. The scan ended the head there, and the noindex was missed."""
    page = b"<!doctype html>" + before + b"<head><title>t</title>" + inside + b"</head>" + NOINDEX + b"</head><body><p>x</p></body>"
    assert head_end(page) is None  # the scan cannot tell: the pull parser reads the page
    assert read_head(page) == read_head(page, scan=False)
    assert noindex_meta(read_head(page)) is not None
    honest = b"<!doctype html><html><head><title>t</title></head><body>" + NOINDEX + b"<p>x</p></body>"
    assert head_end(honest) is not None and noindex_meta(read_head(honest)) is None


# -- the parser failing ----------------------------------------------------------------------------
def _syntax_error() -> etree.XMLSyntaxError:
    try:
        etree.fromstring(b"<")
    except etree.XMLSyntaxError as error:
        return error
    raise AssertionError("lxml read '<' as XML")


class _Broken:
    def feed(self, data: bytes) -> None:
        raise _syntax_error()


def test_a_parser_that_fails_gives_no_head_and_is_not_used_again(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fails if ``_local.parser = _local.plain = None`` in site/head.py::read_head is removed or
    raises: the page has no head, and the next page gets a fresh parser."""
    scanned = b"<html><head>" + NOINDEX + b"</head><body></body>"
    unscanned = b"<html><head><!-->" + NOINDEX + b"</head><body></body>"  # left to the pull parser
    for page in (scanned, unscanned):
        for name in ("plain", "parser"):  # the parser of a head alone, and the pull parser
            monkeypatch.setattr(head_module._local, name, _Broken(), raising=False)
        assert read_head(page) == NO_HEAD
        assert noindex_meta(read_head(scanned)) is not None and noindex_meta(read_head(unscanned)) is not None  # fresh parsers


# -- each element's attributes, present or not -----------------------------------------------------
def test_a_robots_meta_without_content_says_nothing() -> None:
    """Fails if ``element.get("content") or ""`` (a named meta) drops ``or ""`` in site/head.py::read_head."""
    head = _head(b'<meta name="robots"><meta name="bingbot" content="">')
    assert head.robots == (("robots", ""), ("bingbot", "")) and noindex_meta(head) is None


def test_a_meta_that_is_no_refresh_leaves_the_refresh_to_a_later_one() -> None:
    """Fails if the ``http-equiv == "refresh"`` side is dropped in site/head.py::read_head (a charset
    meta would be taken for the refresh)."""
    metas = b'<meta charset="utf-8"><meta http-equiv="Content-Type" content="text/html">'
    head = _head(metas + b'<meta http-equiv="refresh" content="0; url=/new/">')
    assert head.refresh == "0; url=/new/" and refresh_target(LOC, head) == "https://www.shop-site.org/new/"


@pytest.mark.parametrize(
    "blank", [b'<meta http-equiv="refresh">', b'<meta http-equiv="refresh" content="">', b'<meta http-equiv=refresh content=" ">']
)
def test_a_blank_refresh_is_passed_over_and_the_next_one_refreshes(blank: bytes) -> None:
    """A refresh meta without content (or with a blank one) is one browsers pass over (HTML's
    shared declarative refresh steps return before the element counts as processed): the next
    refresh meta is the one they follow. The first was kept as an empty refresh, which hid it."""
    assert _head(blank).refresh is None
    head = _head(blank + b'<meta http-equiv="refresh" content="0; url=/new/">')
    assert head.refresh == "0; url=/new/" and refresh_target(LOC, head) == "https://www.shop-site.org/new/"
    first = _head(b'<meta http-equiv="refresh" content="0; url=/a/"><meta http-equiv="refresh" content="0; url=/b/">')
    assert refresh_target(LOC, first) == "https://www.shop-site.org/a/"  # the first that is not blank


def test_a_link_without_rel_or_href_is_passed_over() -> None:
    """Fails if ``element.get("rel") or ""``, or the ``element.get("href") or ""`` of the canonical's
    or an alternate's condition, drops ``or ""`` in site/head.py::read_head (a crash)."""
    head = _head(b'<link href="/s.css"><link rel="canonical"><link rel="alternate" hreflang="fr"><link rel="canonical" href="/c/">')
    assert head.canonical == "/c/" and head.alternates == ()


def test_the_canonical_is_the_first_link_rel_canonical_with_an_href() -> None:
    """Fails if ``"canonical" in rels`` or the href's side is dropped in site/head.py::read_head: a
    stylesheet is no canonical, and one with an empty href leaves the place to the next."""
    assert _head(b'<link rel="stylesheet" href="/s.css"><link rel="icon" href="/i.png">').canonical is None
    head = _head(b'<link rel="canonical" href=" "><link rel="Canonical" href="/c/"><link rel="canonical" href="/d/">')
    assert head.canonical == "/c/" and canonical_elsewhere(LOC, head) == "https://www.shop-site.org/c/"


def test_an_alternate_is_a_link_rel_alternate_with_an_hreflang_and_an_href() -> None:
    """A feed (``rel="alternate"`` without hreflang), a stylesheet, a link with an hreflang that is
    no alternate and an alternate without an href are no language alternates. Fails if the condition
    ``"alternate" in rels and element.get("hreflang") and (element.get("href") or "").strip()`` in
    site/head.py::read_head becomes ``or`` or drops any side."""
    head = _head(
        b'<link rel="alternate" type="application/rss+xml" href="/feed.xml"><link rel="stylesheet" href="/s.css">'
        b'<link rel="author" hreflang="en" href="/me/"><link rel="alternate" hreflang="de" href=" ">'
        b'<link rel="alternate" hreflang="fr" href="/fr/">'
    )
    assert head.alternates == (("fr", "/fr/"),)


def test_the_base_is_the_first_base_with_an_href() -> None:
    """HTML's document base URL is the first ``<base>`` with an href: one with only a target is passed
    over. Fails if the href's side (or its ``or ""``) is dropped in site/head.py::read_head."""
    head = _head(b'<base target="_blank"><base href="https://cdn.shop-site.org/">')
    assert head.base == "https://cdn.shop-site.org/"
    canonical = head._replace(canonical="tea/")
    assert canonical_elsewhere(LOC, canonical) == "https://cdn.shop-site.org/tea/"


# -- the pull parser, fed 1 KB at a time ------------------------------------------------------------
def test_a_long_head_the_pull_parser_reads_is_fed_once() -> None:
    """A head of several KB that the scan leaves to the pull parser (never closed, as a page cut at
    its first 64 KB) is read once, each meta once, in order. Fails if ``data[start : start + _FEED]``
    drops either bound in site/head.py::_parse_whole (parts of the page fed again). Each piece is
    32 bytes, so that every 1 KB feed starts with a meta (a part fed again from inside a tag would
    be text, which ends the head)."""
    metas = [b'<meta name="m%03d" content="c">  ' % number for number in range(150)]
    page = b"<html><head><title>t</title>    " + b"".join(metas)
    assert {len(each) for each in metas} == {32} and len(page) > 4 * 1024 and head_end(page) is None
    assert read_head(page).robots == tuple((f"m{number:03d}", "c") for number in range(150))
    closed = page + b"</head><body>" + NOINDEX + b"</body>"
    assert read_head(closed).robots == read_head(page).robots


# -- what the facts mean ---------------------------------------------------------------------------
def test_the_first_noindex_meta_is_the_one_said() -> None:
    """Fails if ``said or f'<meta …>'`` drops ``said`` in site/head.py::noindex_meta (the last would be said)."""
    head = Head((("robots", "noindex"), ("description", "tea"), ("bingbot", "none")), None, None, None)
    found = noindex_meta(head)
    assert found is not None and found.said == '<meta name="robots" content="noindex">'


def test_the_first_noindex_header_value_is_the_one_said() -> None:
    """Fails if ``said or value`` drops ``said`` in site/head.py::noindex_header."""
    found = noindex_header(["noindex", "nofollow", "bingbot: none"])
    assert found is not None and found.said == "noindex"


def test_a_canonical_on_no_host_is_elsewhere_and_one_no_parser_reads_is_ignored() -> None:
    """Fails if ``split.hostname or ""`` drops ``or ""`` in site/head.py::_key (a crash on a URL
    without a host), or if ``target is None`` is dropped in site/head.py::canonical_elsewhere."""
    mail = Head((), "mailto:tea@shop-site.org", None, None)
    assert canonical_elsewhere(LOC, mail) == "mailto:tea@shop-site.org"
    assert canonical_elsewhere(LOC, Head((), "http://[::1/x", None, None)) is None
