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
# a start tag (its attributes' values may hold ">"), an end tag, or an empty-element tag
_TAG = re.compile(r"""<(/?)([^\s/>]+)((?:\s+[^\s=/>]+\s*=\s*(?:"[^"]*"|'[^']*'))*)\s*(/?)>""")
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


class Block(NamedTuple):
    """An item of the text, and its child elements in order."""

    span: Span
    children: list[Span]


def blocks(text: str, tags: Collection[str]) -> list[Block]:
    """Every element of ``text`` whose expanded name (``{namespace}local``) is in ``tags``,
    in document order, with its children. ``text`` is well-formed XML (the reader read it)."""
    masked = _HIDDEN.sub(lambda found: " " * len(found.group(0)), text)
    found: list[Block] = []
    scopes: list[dict[str, str]] = [{"xml": XML_NAMESPACE}]  # prefix -> namespace ("": the default), one a depth
    opened: list[tuple[str, int, int]] = []  # the open elements: name, start, content
    item: Block | None = None  # the item being read, and its depth
    item_depth = -1
    tags_read = 0
    for match in _TAG.finditer(masked):
        tags_read += 1
        closing, name, attributes, empty = match.groups()
        if closing:
            name, start, content = opened.pop()
            scopes.pop()
            span = Span(name, start, content, match.start(), match.end())
        else:
            scope = scopes[-1]
            if "xmlns" in attributes:
                scope = {**scope, **_declared(attributes)}
            depth = len(opened)
            if item is None and _expanded(name, scope) in tags:
                item, item_depth = Block(Span(name, match.start(), match.end(), match.end(), match.end()), []), depth
            if not empty:
                opened.append((name, match.start(), match.end()))
                scopes.append(scope)
                continue
            span = Span(name, match.start(), match.end(), match.end(), match.end())
        depth = len(opened)
        if item is not None and depth == item_depth + 1:
            item.children.append(span)
        elif item is not None and depth == item_depth:
            found.append(Block(span, item.children))
            item = None
    if tags_read != masked.count("<"):
        raise AssertionError(f"stamp's scan read {tags_read} tags of {masked.count('<')}")
    return found


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
