"""The documentation as the site renders it: README.md and the pages of docs/, the generated
parts filled in from the registries as ``mkdocs build`` fills them (scripts/docs_reference.py)."""

from __future__ import annotations

import functools
import importlib.util
import re
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
README = (ROOT / "README.md").read_text(encoding="utf-8")


@functools.cache
def reference() -> ModuleType:
    """scripts/docs_reference.py, the site's hook, as a module."""
    spec = importlib.util.spec_from_file_location("docs_reference", ROOT / "scripts" / "docs_reference.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def written() -> dict[str, str]:
    """Every page as written, by its path under docs/ (``integrations/github-action.md``)."""
    return {path.relative_to(DOCS).as_posix(): path.read_text(encoding="utf-8") for path in sorted(DOCS.rglob("*.md"))}


@functools.cache
def _rendered() -> tuple[tuple[str, str], ...]:
    render = reference().render
    return tuple((name, render(text)) for name, text in written().items())


def page(name: str) -> str:
    """One page as the site shows it, its generated parts made."""
    return dict(_rendered())[name]


def everything() -> str:
    """The README and every page, as the site shows them."""
    return "\n\n".join([README, *(text for _, text in _rendered())])


def section(text: str, heading: str) -> str:
    """From the heading that starts with ``heading`` to the next heading of its level or above
    (a ``#`` line inside a fenced block is a comment of its code, not a heading)."""
    lines, fenced, level, found = text.split("\n"), False, 0, []
    for line in lines:
        if line.startswith("```"):
            fenced = not fenced
        heading_level = len(line) - len(line.lstrip("#")) if not fenced and re.match(r"#+ ", line) else 0
        if level and heading_level and heading_level <= level:
            break
        if level:
            found.append(line)
        elif heading_level and line[heading_level + 1 :].startswith(heading):
            level = heading_level
    assert level, heading
    return "\n".join(found)
