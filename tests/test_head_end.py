"""Where a page's head ends: the scan that hands lxml the head alone (``head_end``) answers
only where lxml's pull parser, reading the whole page, would end it too; every tricky head
below is read the same either way, each beside an honest page that says the opposite."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from notifier.site.head import head_end, noindex_meta, read_head

NOINDEX = b'<meta name="robots" content="noindex">'
BOM = b"\xef\xbb\xbf"


# (page, its head says noindex, the scan finds its end): each tricky page, then an honest one
@pytest.mark.parametrize(
    ("page", "noindex", "scanned"),
    [
        # a script holding "</head>": not the end
        (b'<html><head><script>var s = "</head><body>";</script>' + NOINDEX + b"</head><body></body>", True, True),
        (b"<html><head><script>var s = 1;</script></head><body>" + NOINDEX + b"</body>", False, True),
        # a comment holding "</head>": not the end
        (b"<html><head><!-- </head><body> -->" + NOINDEX + b"</head><body></body>", True, True),
        (b"<html><head><!-- a comment --></head><body>" + NOINDEX + b"</body>", False, True),
        # CDATA-ish: HTML has no CDATA; "<![CDATA[" opens a comment that its first ">" closes: a
        # "</head>" inside it closes the comment, and the " ]]>" after it, text, starts the body
        (b"<html><head><![CDATA[ x ]]>" + NOINDEX + b"</head><body></body>", True, False),
        (b"<html><head><![CDATA[ </head> ]]>" + NOINDEX + b"</head><body></body>", False, False),
        # uppercase tags, attributes and values
        (b"<HTML><HEAD><SCRIPT>x = '</HEAD>'</SCRIPT><META NAME=ROBOTS CONTENT=NOINDEX></HEAD><BODY>", True, True),
        (b"<HTML><HEAD><TITLE>T</TITLE></HEAD><BODY><META NAME=ROBOTS CONTENT=NOINDEX></BODY>", False, True),
        # no head at all: the parser implies it, and the first body tag ends it
        (b"<!doctype html>" + NOINDEX + b"<title>t</title><p>text</p>", True, False),
        (b"<!doctype html><title>t</title><p>text</p>" + NOINDEX, False, False),
        # a head never closed: it runs to the first tag a head cannot hold, or the bytes' end
        (b"<html><head><title>t</title>" + NOINDEX, True, False),
        (b"<html><head><title>t</title><div>x</div>" + NOINDEX, False, False),
        # a byte order mark before the doctype
        (BOM + b"<!DOCTYPE html><html><head>" + NOINDEX + b"</head><body></body>", True, True),
        (BOM + b"<!DOCTYPE html><html><head></head><body>" + NOINDEX + b"</body>", False, True),
        # attribute values holding ">" and "</head>" in double and single quotes
        (b'<head><meta name="description" content="a > b </head> c">' + NOINDEX + b"</head><body>", True, True),
        (b"<head><meta name='description' content='a > </head><body> c'>" + NOINDEX + b"</head><body>", True, True),
        (b'<head><meta name="description" content="a > b"></head><body>' + NOINDEX, False, True),
        # what the scan leaves to the parser: a comment "<!-->" ends at once, a "</" without a name
        # opens a comment to the next ">", a script's "<!--" can hide its own "</script>"
        (b"<head><!-->" + NOINDEX + b"</head><body>", True, False),
        (b"<head></ x </head>" + NOINDEX + b"</head><body>", True, False),
        (b"<head><script><!-- x --></script>" + NOINDEX + b"</head><body>", True, False),
        (b"<head><plaintext></head>" + NOINDEX, False, False),
    ],
)
def test_a_tricky_head_is_read_as_the_parser_reads_the_whole_page(page: bytes, noindex: bool, scanned: bool) -> None:
    head = read_head(page)
    assert head == read_head(page, scan=False)
    assert (noindex_meta(head) is not None) is noindex
    assert (head_end(page) is not None) is scanned


def test_a_generators_head_is_found_by_the_scan_where_it_ends() -> None:
    """The everyday page (a doctype, metas, a title, a deferred script) never needs the pull parser."""
    head = (
        b'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>Tea | Shop</title>'
        b'<link rel="canonical" href="https://x.org/tea/"><script src="/app.js" defer></script>'
        b"<style>p > a { color: red }</style></head>"
    )
    page = head + b"\n<body><p>tea</p></body></html>"
    assert head_end(page) == len(head) - len(b"</head>")
    assert read_head(page).canonical == "https://x.org/tea/" == read_head(page, scan=False).canonical


FRAGMENTS = [
    NOINDEX, b"<meta name=robots content=none>", b"<link rel=canonical href=/c/>", b"<base href=/b/>", b"<title>", b"</title>",
    b"<script>", b"</script>", b"<style>", b"</style>", b"<textarea>", b"</textarea>", b"<noscript>", b"</noscript>",
    b"<head>", b"</head>", b"</HEAD >", b"<body>", b"<BODY\n", b"</body>", b"<html>", b"<p>", b"<div>", b"text", b" ",
    b"<!--", b"-->", b"<!-->", b"<!--->", b"--!>", b"<![CDATA[", b"]]>", b"</ ", b"<?xml version='1.0'?>", b"<!doctype html>",
    b"<plaintext>", b'"', b"'", b"=", b">", b"<", b'<meta content="a > </head> b">', b"<a b=c\"d>", b"<xmp>", b"</xmp>", BOM,
]  # fmt: skip


@given(st.lists(st.sampled_from(FRAGMENTS), max_size=24))
def test_the_scan_ends_a_head_where_the_parser_does(pieces: list[bytes]) -> None:
    page = b"".join(pieces)
    assert read_head(page) == read_head(page, scan=False)
