"""Where each item of a sitemap's text is, for ``stamp`` to rewrite a date in place and keep
every other byte: a scan of the tags, with namespaces resolved as XML resolves them.

What an item says (its page, its date, which of its children hold them) is read by the
reader's own functions (``sitemap/items.py``); this finds where those children are. Comments,
CDATA sections and processing instructions hold no elements: they are blanked before the
scan, every offset kept. In what is left every ``<`` opens a tag, and the scan checks that
it read every one.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from typing import NamedTuple

_HIDDEN = re.compile(r"<!--.*?-->|<!\[CDATA\[.*?\]\]>|<\?.*?\?>", re.DOTALL)
# An end tag; or a start tag (its attributes' values may hold ">"), an empty-element tag, or a
# whole element holding only text (<loc>...</loc>, most of a sitemap) in one match. Groups:
# the end tag's name; the name, attributes, "/" of an empty element, where the content
# starts, and the "</" of a text-only element's end tag.
_TAG = re.compile(
    r"</([^\s/>]+)\s*>"
    r"""|<([^\s/>]+)((?:\s+[^\s=/>]+\s*=\s*(?:"[^"]*"|'[^']*'))*)\s*(?:(/)>|>()(?:[^<]*(</)\2\s*>)?)"""
)
_XMLNS = re.compile(r"""\sxmlns(?::([^\s=]+))?\s*=\s*(?:"([^"]*)"|'([^']*)')""")
XML_NAMESPACE = "http://www.w3.org/XML/1998/namespace"


class Span(NamedTuple):
    """One element of the text: its name as written, and the offsets of its tags."""

    name: str  # prefix:local, as written
    start: int  # its "<"
    content: int  # after its start tag
    close: int  # its end tag's "<" (an empty element <x/>: its end, as content)
    end: int  # after its end tag

    @property
    def empty(self) -> bool:
        """Written as one empty-element tag, ``<lastmod/>``."""
        return self.content == self.end


_span = tuple.__new__  # Span(...) without the Python-level constructor: once per child


class Block(NamedTuple):
    """An item of the text, and its child elements in order."""

    span: Span
    children: list[Span]


def blocks(text: str, tags: Collection[str]) -> list[Block]:
    """Every element of ``text`` whose expanded name (``{namespace}local``) is in ``tags``,
    in document order, with its children. ``text`` is well-formed XML (the reader read it).
    Runs once per tag: depth is a count, and names are resolved only outside an item."""
    masked = _HIDDEN.sub(lambda found: " " * len(found.group(0)), text)
    local_names = {tag.rpartition("}")[2] for tag in tags}
    found: list[Block] = []
    declared: list[tuple[int, dict[str, str]]] = [(-1, {"xml": XML_NAMESPACE})]  # (depth, prefix -> namespace) where declared
    depth = 0  # the elements open
    children: list[Span] | None = None  # the children of the item being read
    item_depth, item_start, item_content, child_start, child_content = -1, 0, 0, 0, 0
    tags_read = 0
    for match in _TAG.finditer(masked):
        closed, name, attributes, empty, _, leaf = match.groups()
        start, end = match.span()
        if closed is not None:
            tags_read += 1
            depth -= 1
            if declared[-1][0] == depth:
                declared.pop()
            if children is not None and depth == item_depth + 1:
                children.append(_span(Span, (closed, child_start, child_content, start, end)))
            elif children is not None and depth == item_depth:
                found.append(Block(Span(closed, item_start, item_content, start, end), children))
                children = None
            continue
        tags_read += 2 if leaf else 1
        whole = empty or leaf  # an element in one match: it opens and closes here
        if children is not None:  # in an item: only its children matter, and no name
            if depth == item_depth + 1:
                if empty:
                    children.append(_span(Span, (name, start, end, end, end)))
                elif leaf:
                    children.append(_span(Span, (name, start, match.start(5), match.start(6), end)))
                else:
                    child_start, child_content = start, end
            depth += not whole
            continue
        scope = declared[-1][1]
        if "xmlns" in attributes:
            scope = {**scope, **_declared(attributes)}
        is_item = name.rpartition(":")[2] in local_names and _expanded(name, scope) in tags
        if whole:
            if is_item:
                found.append(Block(_whole(match, name), []))
            continue
        if scope is not declared[-1][1]:
            declared.append((depth, scope))
        if is_item:
            children, item_depth, item_start, item_content = [], depth, start, end
        depth += 1
    if tags_read != masked.count("<"):
        raise AssertionError(f"stamp's scan read {tags_read} tags of {masked.count('<')}")
    return found


def _whole(match: re.Match[str], name: str) -> Span:
    """An element matched whole: ``<x/>``, or ``<x>text</x>``."""
    if match.group(4):
        return Span(name, match.start(), match.end(), match.end(), match.end())
    return Span(name, match.start(), match.start(5), match.start(6), match.end())


def _declared(attributes: str) -> dict[str, str]:
    declared = {}
    for found in _XMLNS.finditer(attributes):
        double, single = found.group(2), found.group(3)
        declared[found.group(1) or ""] = double if double is not None else single
    return declared


def _expanded(name: str, scope: dict[str, str]) -> str:
    prefix, _, local = name.rpartition(":")
    namespace = scope.get(prefix, "")
    return f"{{{namespace}}}{local}" if namespace else local
