"""Hostile and broken input: one clear line, the documented exit code, nothing sent, state untouched."""

from __future__ import annotations

import gzip
import importlib.metadata
import inspect
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from lxml import etree

from notifier.sitemap.source import MAX_FILE_BYTES
from tests.conftest import BASE, NS, Site, index, pages, urlset
from tests.fakeindexnow import FakeIndexNow

HEAD = f'<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="{NS}">\n'
ONE_URL = f"<url><loc>{BASE}/a/</loc><lastmod>2024-01-01</lastmod></url>"


def _sparse(site: Site) -> Path:
    path = site.public / "sitemap.xml"
    with open(path, "wb") as handle:
        handle.truncate(MAX_FILE_BYTES * 20)  # 1 GB that takes no disk
    return path


def _gzip_bomb(site: Site) -> Path:
    filler = (b"<a/>" + b" " * 8188) * (MAX_FILE_BYTES // 8192 + 64)
    return site.write(gzip.compress(HEAD.encode() + filler, compresslevel=9))


def _index_listing_itself(site: Site) -> Path:
    return site.write(index({"/sitemap.xml": None}))


def _index_inside_index(site: Site) -> Path:
    site.write(urlset(pages(2)), "leaf.xml")
    site.write(index({"/leaf.xml": None}), "inner.xml")
    return site.write(index({"/inner.xml": None}))


def _escaping_part(site: Site) -> Path:
    return site.write(index({"/../../etc/passwd": None}))


def _many_urls(site: Site) -> Path:
    return site.write(HEAD + "".join(f"<url><loc>{BASE}/p/{n}</loc></url>" for n in range(60_000)) + "</urlset>")


BILLION_LAUGHS = (
    '<?xml version="1.0"?>\n<!DOCTYPE lolz [\n <!ENTITY lol "lol">\n'
    + "".join(f' <!ENTITY lol{n} "{("&lol" + str(n - 1) + ";") * 10 if n > 1 else "&lol;" * 10}">\n' for n in range(1, 10))
    + f']>\n<urlset xmlns="{NS}"><url><loc>{BASE}/&lol9;</loc></url></urlset>'
)

# name -> (content or builder, exit code, what the message says)
CASES: dict[str, tuple[str | bytes | Callable[[Site], Path], int, str]] = {
    "external entity, file://": (
        f'<?xml version="1.0"?>\n<!DOCTYPE urlset [<!ENTITY x SYSTEM "file:///etc/passwd">]>\n{HEAD[39:]}<url><loc>{BASE}/&x;</loc></url></urlset>',
        2,
        "DOCTYPE",
    ),
    "external DTD": (
        f'<?xml version="1.0"?>\n<!DOCTYPE urlset SYSTEM "file:///etc/hostname">\n{HEAD[39:]}{ONE_URL}</urlset>',
        2,
        "DOCTYPE",
    ),
    "billion laughs": (BILLION_LAUGHS, 2, "DOCTYPE"),
    "undeclared entity": (HEAD + f"<url><loc>{BASE}/&nbsp;</loc></url></urlset>", 2, "line 3"),
    "gzip bomb": (_gzip_bomb, 2, "once uncompressed"),
    "a file far over 50 MB": (_sparse, 2, "over the sitemap limit"),
    "truncated XML": (HEAD + f"<url><loc>{BASE}/a/</loc>", 2, "not well-formed"),
    "HTML instead of XML": ("<!doctype html>\n<html><head><title>404</title></head><body><p>Not found<br></body></html>", 2, "HTML page"),
    "XHTML without a doctype": ("<html><head><title>404</title></head><body><p>Not found<br></body></html>", 2, "line 1"),
    "an empty file": ("", 2, "empty"),
    "invalid UTF-8": (HEAD.encode() + b"<url><loc>http://www.shop-site.org/\xff\xfe/</loc></url></urlset>", 2, "line 3"),
    "UTF-16": ((HEAD.replace("UTF-8", "UTF-16") + ONE_URL + "</urlset>").encode("utf-16"), 2, "UTF-16"),
    "UTF-16 without a BOM": ((HEAD.replace("UTF-8", "UTF-16") + ONE_URL + "</urlset>").encode("utf-16-be"), 2, "UTF-16"),
    "UTF-32": ((HEAD.replace("UTF-8", "UTF-32") + ONE_URL + "</urlset>").encode("utf-32"), 2, "UTF-32"),
    "a NUL past the start": (HEAD + f"<url><loc>{BASE}/a\x00/</loc></url></urlset>", 2, "line 3"),
    "NUL bytes": (HEAD.encode() + b"<url><loc>http://www.shop-site.org/\x00/</loc></url></urlset>", 2, "line 3"),
    "a 10 kB loc": (HEAD + f"<url><loc>{BASE}/{'x' * 10_000}</loc></url></urlset>", 1, "url-invalid"),
    "60,000 URLs in one file": (_many_urls, 1, "sitemap-limits"),
    "an index listing itself": (_index_listing_itself, 2, "lists itself"),
    "an index inside an index": (_index_inside_index, 1, "an index inside an index"),
    "a part escaping the site dir": (_escaping_part, 2, "outside the site dir"),
}


@pytest.mark.parametrize("name", list(CASES))
def test_hostile_input(site: Site, name: str) -> None:
    site.write(urlset(pages(3)))
    assert site.run().code == 0
    before = site.state_bytes()
    content, code, says = CASES[name]
    if callable(content):
        content(site)
    else:
        site.write(content)
    result = site.run()
    assert result.code == code, result
    assert "Traceback" not in result.out + result.err
    if code == 2:
        assert says in result.err and result.err.count("\n") == 1 and result.err.startswith("notify-changes: error: ")
    else:
        assert says in result.out
    assert site.fake is not None and site.fake.posts == [] and site.fake.gets == []
    assert site.state_bytes() == before


def test_an_entity_pointing_at_a_loopback_listener_is_never_fetched(site: Site) -> None:
    listener = FakeIndexNow()
    try:
        for doctype in (
            f'<!DOCTYPE urlset [<!ENTITY x SYSTEM "{listener.url}/entity">]>',
            f'<!DOCTYPE urlset SYSTEM "{listener.url}/sitemap.dtd">',
            f'<!DOCTYPE urlset [<!ENTITY % p SYSTEM "{listener.url}/param"> %p;]>',
        ):
            site.write(f'<?xml version="1.0"?>\n{doctype}\n{HEAD[39:]}<url><loc>{BASE}/&x;</loc></url></urlset>')
            result = site.check()
            assert result.code == 2 and "DOCTYPE" in result.err
        assert listener.gets == [] and listener.posts == []
    finally:
        listener.close()


def _bare_parser() -> Any:
    """The reader's own lxml parser, fed directly: past the DOCTYPE check on the bytes, to
    see what the parser itself would do if a DOCTYPE ever reached it."""
    from notifier.sitemap.files import Sitemap, SitemapFile
    from notifier.sitemap.xml import _XmlFile

    return _XmlFile("x.xml", 0, Sitemap(), SitemapFile("x.xml", "urlset")).parser


def test_the_parser_itself_expands_no_entity_and_reads_no_file(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP-SECRET")
    parser = _bare_parser()
    parser.feed(
        f'<?xml version="1.0"?><!DOCTYPE urlset [<!ENTITY inner "EXPANDED"><!ENTITY outer SYSTEM "{secret.as_uri()}">]>'
        "<urlset><url><loc>&inner;&outer;</loc></url></urlset>"
    )
    root = parser.close()
    text = etree.tostring(root).decode()
    assert "&inner;" in text and "EXPANDED" not in text
    assert "TOP-SECRET" not in text


def test_the_parser_itself_refuses_a_huge_text_node() -> None:
    parser = _bare_parser()
    with pytest.raises(etree.XMLSyntaxError):
        parser.feed(b"<urlset><url><loc>" + b"a" * 11_000_000 + b"</loc></url></urlset>")
        parser.close()


def test_the_reader_never_uses_recover_and_needs_a_safe_lxml() -> None:
    from notifier.sitemap import reader, xml

    assert "recover=True" not in inspect.getsource(reader) + inspect.getsource(xml)
    lxml_version = tuple(int(part) for part in importlib.metadata.version("lxml").split(".")[:2])
    assert lxml_version >= (6, 1)
