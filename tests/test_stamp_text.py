"""stamp's scan of the tags (``commands/stamp_text.py``) finds the items and children lxml
finds, whatever the markup around them: comments, processing instructions and CDATA
holding tags, attributes holding ">", namespaces declared and redeclared, empty elements,
text-only elements and nested ones."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from lxml import etree

from notifier.commands.stamp_text import blocks

NS = "http://www.sitemaps.org/schemas/sitemap/0.9"
OTHER = "urn:other"
NOISE = ["", " ", "\n  ", "<!-- <url><loc>x</loc></url> -->", "<?pi <url>?>", "<![CDATA[<url>]]>", "a &amp; b", "&#60;url>"]

names = st.sampled_from(["loc", "lastmod", "x:loc", "image:image", "url", "sm:url"])
attributes = st.lists(st.sampled_from(['a="1>2"', "b='>'", 'xmlns:x="urn:x"', f'xmlns="{OTHER}"', 'c = "d"']), max_size=2, unique=True)


@st.composite
def element(draw: st.DrawFn, depth: int = 0) -> str:
    name = draw(names)
    attrs = "".join(" " + attribute for attribute in draw(attributes))
    shape = draw(st.sampled_from(["empty", "text", "nested"] if depth < 2 else ["empty", "text"]))
    if shape == "empty":
        return f"<{name}{attrs}/>"
    if shape == "text":
        return f"<{name}{attrs}>{draw(st.sampled_from(NOISE))}</{name}>"
    inner = "".join(draw(st.lists(element(depth + 1), max_size=3)))
    return f"<{name}{attrs}>{draw(st.sampled_from(NOISE))}{inner}</{name}>"


@st.composite
def sitemap(draw: st.DrawFn) -> str:
    items = []
    for _ in range(draw(st.integers(0, 4))):
        name = draw(st.sampled_from(["url", "sm:url"]))
        declared = draw(st.sampled_from(["", f' xmlns:sm="{NS}"', f' xmlns="{OTHER}"', ' a="/>"']))
        children = "".join(draw(st.lists(element(), max_size=4)))
        noise = draw(st.sampled_from(NOISE))
        items.append(f"<{name}{declared}/>" if draw(st.booleans()) and not children else f"<{name}{declared}>{noise}{children}</{name}>")
    return f'<?xml version="1.0"?>\n<urlset xmlns="{NS}" xmlns:sm="{NS}" xmlns:image="urn:image" xmlns:x="urn:x">{"".join(items)}</urlset>'


def _expected(text: str) -> list[tuple[str, list[str]]] | None:
    """Each item lxml finds and its children's names; None when an item holds an item (the
    reader reads both; stamp's scan takes the outer one)."""
    root = etree.fromstring(text.encode(), etree.XMLParser(remove_comments=True, remove_pis=True, resolve_entities=False))
    items = list(root.iter(f"{{{NS}}}url"))
    if any(ancestor in items for item in items for ancestor in item.iterancestors()):
        return None
    return [(_written(item), [_written(child) for child in item]) for item in items]


def _written(element: etree._Element) -> str:
    local = etree.QName(element).localname
    return f"{element.prefix}:{local}" if element.prefix else local


@given(sitemap())
def test_the_scan_finds_what_lxml_finds(text: str) -> None:
    expected = _expected(text)
    if expected is None:
        return
    found = blocks(text, {f"{{{NS}}}url"})
    assert [(block.span.name, [child.name for child in block.children]) for block in found] == expected
    for block in found:
        assert text[block.span.start :].startswith(f"<{block.span.name}") and text[: block.span.end].endswith(">")
        for child in block.children:
            written = text[child.start : child.end]
            closing = "/>" if child.empty else f"</{child.name}>"
            assert written.startswith(f"<{child.name}") and written.endswith(closing)
            assert child.start < child.content <= child.close < child.end or child.empty


@pytest.mark.parametrize(
    "text",
    [
        f'<urlset xmlns="{NS}"><url a="x>y"><loc>a</loc></url></urlset>',
        f'<urlset xmlns="{NS}"><!-- <url> --><url><loc><![CDATA[</url>]]></loc><lastmod/></url></urlset>',
    ],
)
def test_markup_that_looks_like_tags_is_not_taken_for_them(text: str) -> None:
    (block,) = blocks(text, {f"{{{NS}}}url"})
    assert [child.name for child in block.children] == [child for child in ("loc", "lastmod") if f"<{child}" in text]
