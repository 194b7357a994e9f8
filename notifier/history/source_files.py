"""Which source file a page was built from, and the date its front matter gives.

A ``[history]`` source template names a file relative to the repository, with:

- ``{path}``: the URL's path without its leading and trailing ``/`` (``index`` for the root);
- ``{stem}``: ``{path}`` without a trailing ``.html`` (Sphinx's and Pelican's page names);
- ``{slug}``: the last segment of ``{stem}``;
- ``{first}`` and ``{rest}``: the first segment of ``{stem}`` and what follows it (``index``
  when nothing does): a language prefix, as in Hugo's ``content/{rest}.{first}.md``;
- ``{date}``: a ``YYYY-MM-DD`` date in a file name (Jekyll's ``_posts/2025-03-14-title.md``),
  which is then the page's date when its front matter names none;
- ``*``: anything within one segment of the path.

``preset = "NAME"`` gives a generator's conventions (its templates and its date fields);
templates written in ``sources`` are tried first.
"""

from __future__ import annotations

import json
import os
import re
import tomllib
import urllib.parse
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from notifier.dates import parse_w3c
from notifier.paths import is_inside, resolved
from notifier.urls import split_url, under_base

DEFAULT_FIELDS = ("lastmod", "last_modified_at", "updated", "date")


@dataclass(frozen=True)
class Preset:
    sources: tuple[str, ...]
    fields: tuple[str, ...] = DEFAULT_FIELDS


_MARKUP = ("md", "markdown", "mdx")
PRESETS: dict[str, Preset] = {
    "hugo": Preset(
        (
            "content/{path}/index.md",
            "content/{path}/_index.md",
            "content/{path}.md",
            "content/_{path}.md",
            # a translation by file name: /fr/posts/tea/ <- content/posts/tea.fr.md
            "content/{rest}.{first}.md",
            "content/{rest}/index.{first}.md",
            "content/{rest}/_index.{first}.md",
            "content/_{rest}.{first}.md",
            "static/{path}",
        ),
        ("lastmod", "modified", "date", "publishDate", "pubDate", "published"),
    ),
    "jekyll": Preset(
        (
            "_posts/{date}-{slug}.md",
            "_posts/{date}-{slug}.markdown",
            "_posts/*/{date}-{slug}.md",
            "{stem}.md",
            "{stem}/index.md",
            "{stem}.markdown",
            "{stem}.html",
            "{stem}/index.html",
            "{path}",  # a static file (a PDF, an image): the file itself
        ),
        ("last_modified_at", "date"),
    ),
    "mkdocs": Preset(("docs/{path}.md", "docs/{path}/index.md", "docs/{path}/README.md", "docs/{path}")),
    "eleventy": Preset(
        tuple(
            f"{folder}{{path}}{ending}"
            for folder in ("", "src/")
            for ending in (".md", "/index.md", ".njk", "/index.njk", ".html", "/index.html")
        ),
        ("lastmod", "updated", "date"),
    ),
    "astro": Preset(
        (
            *(f"src/pages/{{path}}{ending}" for ending in (".md", ".mdx", ".astro", "/index.md", "/index.mdx", "/index.astro")),
            *(f"src/content/{{path}}.{ending}" for ending in _MARKUP),
            *(f"src/content/{{path}}/index.{ending}" for ending in _MARKUP),
        ),
        ("lastmod", "updatedDate", "lastUpdated", "updated", "pubDate", "date"),
    ),
    "docusaurus": Preset(
        (
            "{path}.md",
            "{path}.mdx",
            "{path}/index.md",
            "{path}/index.mdx",
            "blog/{date}-{slug}.md",
            "blog/{date}-{slug}.mdx",
            "blog/{date}-{slug}/index.md",
            "blog/{date}-{slug}/index.mdx",
            "src/pages/{path}.md",
            "src/pages/{path}.mdx",
            "src/pages/{path}.js",
            "src/pages/{path}.tsx",
        ),
        ("last_update", "lastmod", "date"),
    ),
    "sphinx": Preset(
        tuple(
            f"{folder}{{stem}}{ending}"
            for folder in ("", "docs/", "source/", "docs/source/")
            for ending in (".rst", ".md", "/index.rst", "/index.md")
        ),
        ("lastmod", "date"),
    ),
    "pelican": Preset(
        tuple(f"content/{folder}{{slug}}.{ending}" for folder in ("", "*/", "pages/", "posts/") for ending in ("md", "rst", "markdown")),
        ("modified", "date"),
    ),
}

_DATE = r"\d{4}-\d\d-\d\d"
_NAMES = ("path", "stem", "slug", "first", "rest", "date")
_PLACEHOLDER = re.compile(r"\{(" + "|".join(_NAMES) + r")\}")


def placeholders(loc: str, served: str = "") -> dict[str, str]:
    """The template placeholders of ``loc``, for a site served under the URL path ``served``."""
    path = under_base(urllib.parse.unquote(split_url(loc).path).strip("/"), served) or "index"
    stem = re.sub(r"\.html?$", "", path) or "index"
    first, _, rest = stem.partition("/")
    return {"path": path, "stem": stem, "slug": stem.rpartition("/")[2], "first": first, "rest": rest or "index"}


def check_template(template: str) -> str | None:
    """What is wrong with a source template, or None."""
    unknown = re.findall(r"\{([^}]*)\}", template)
    bad = [name for name in unknown if name not in _NAMES]
    if bad:
        return f"{{{bad[0]}}} is not a placeholder; use {', '.join('{' + name + '}' for name in _NAMES)} or *"
    if template.startswith("/") or ".." in template.split("/"):
        return "must be a path inside the repository"
    return None


class SourceFinder:
    """Maps URLs to source files with ``templates``, listing each folder once at most."""

    def __init__(self, templates: Sequence[str], base: Path, top: Path, served: str = "") -> None:
        self.templates, self.base, self.top, self.served = list(templates), resolved(base), top, served
        self._listings: dict[Path, list[str]] = {}

    def find(self, loc: str) -> tuple[str, str | None] | None:
        """(the source file relative to the repository's top, the ``{date}`` of its name); a
        site served under a path (``served``) maps its URLs without it."""
        values = placeholders(loc, self.served)
        if any(_ANY in value or _DATE_MARK in value for value in values.values()):
            return None  # a NUL (%00) names no file; and what the URL says is never a wildcard
        for template in self.templates:
            pattern = _PLACEHOLDER.sub(lambda match: _fill(match.group(1), values), template.replace("*", _ANY))
            found = self._match(pattern)
            if found is not None:
                return found
        return None

    def _match(self, pattern: str) -> tuple[str, str | None] | None:
        if _ANY not in pattern and _DATE_MARK not in pattern:
            candidate = resolved(self.base / pattern)
            if _is_file(candidate) and is_inside(candidate, self.top):
                return candidate.relative_to(self.top).as_posix(), None
            return None
        folder, date = self.base, None
        segments = pattern.split("/")
        for number, segment in enumerate(segments):
            last = number == len(segments) - 1
            if _ANY not in segment and _DATE_MARK not in segment:
                folder = folder / segment
                continue
            regex = re.compile(
                "".join(
                    f"(?P<date>{_DATE})" if part == _DATE_MARK else "[^/]*" if part == _ANY else re.escape(part)
                    for part in re.split(f"({_ANY}|{_DATE_MARK})", segment)
                    if part
                )
            )
            names = [name for name in self._listing(folder) if regex.fullmatch(name)]
            names = [name for name in names if _is_file(folder / name) == last]
            if not names:
                return None
            name = names[0]
            matched = regex.fullmatch(name)
            if matched is not None and "date" in matched.groupdict():
                date = matched.group("date")
            folder = folder / name
        candidate = resolved(folder)
        if not _is_file(candidate) or not is_inside(candidate, self.top):
            return None
        return candidate.relative_to(self.top).as_posix(), date

    def _listing(self, folder: Path) -> list[str]:
        listing = self._listings.get(folder)
        if listing is None:
            try:
                listing = sorted(os.listdir(folder))
            except OSError:
                listing = []
            self._listings[folder] = listing
        return listing


_ANY = "\x01"  # a template's * (what a URL says is never one: its characters are all literal)
_DATE_MARK = "\0"  # a template's {date}


def _fill(name: str, values: dict[str, str]) -> str:
    return _DATE_MARK if name == "date" else values[name]


def _is_file(path: Path) -> bool:
    """Whether ``path`` is a file; a name too long for the file system, or a folder that may
    not be read, is no source rather than a crash."""
    try:
        return path.is_file()
    except OSError:
        return False


# -- front matter ------------------------------------------------------------------------
_FIELD_LINE = re.compile(r"([A-Za-z_][\w-]*)\s*:\s*(.*?)\s*$")
_LOOSE = re.compile(r"(?P<date>\d{4}-\d\d-\d\d)(?:[T ](?P<time>\d\d:\d\d(?::\d\d(?:\.\d+)?)?)\s*(?P<zone>Z|[+-]\d\d:?\d\d)?)?", re.ASCII)
FRONT_MATTER_BYTES = 16_384
_NESTED_DATES = ("last_update",)  # top-level tables whose date field is the page's date


def front_matter(path: Path) -> dict[str, str]:
    """The top-level fields of a file's front matter whose values are dates, as W3C Datetimes.

    YAML between ``---`` lines (Jekyll, Hugo, Eleventy, Astro, MkDocs, Docusaurus; read with
    PyYAML's safe loader), TOML between ``+++`` (Hugo), a JSON object (Hugo), or ``Key: value``
    lines up to the first blank line (Pelican, reStructuredText field lists); each read from the
    first 16 KB. Field names are kept as written. A table's date counts only for Docusaurus'
    ``last_update`` (``{date: ...}``); front matter that does not parse has no dates (as Jekyll
    then builds the page without it).
    """
    try:
        with path.open("rb") as handle:
            head = handle.read(FRONT_MATTER_BYTES).decode("utf-8", errors="replace")
    except OSError:
        return {}
    head = head.lstrip("\ufeff")
    first, _, rest = head.partition("\n")
    if first.strip() == "+++":
        raw = _toml(rest.partition("\n+++")[0])
    elif first.strip() == "---":
        raw = _yaml(rest)
    elif head.startswith("{"):
        raw = _json(head)
    else:
        raw = _field_lines(head, rst=path.suffix.lower() == ".rst")
    dates: dict[str, str] = {}
    for name, value in raw.items():
        if isinstance(value, dict):
            value = value.get("date") if name.lower() in _NESTED_DATES else None
        written = as_w3c(value)
        if written is not None:
            dates[name] = written
    return dates


def _toml(body: str) -> dict[str, object]:
    try:
        return tomllib.loads(body)
    except (tomllib.TOMLDecodeError, RecursionError):  # RecursionError: tables nested thousands deep
        return {}


_YAML_END = re.compile(r"^(?:---|\.\.\.)[ \t]*\r?$", re.MULTILINE)


def _yaml(rest: str) -> dict[str, object]:
    end = _YAML_END.search(rest)
    body = rest[: end.start()] if end is not None else rest  # no end within 16 KB: what was read
    import yaml  # here, not at the top: reading the config (which names the presets) needs no YAML parser

    try:
        document = yaml.load(body, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))  # libyaml's, when the wheel has it
    except (yaml.YAMLError, RecursionError, ValueError):  # ValueError: a date that does not exist
        return {}
    return {str(name): value for name, value in document.items()} if isinstance(document, dict) else {}


def _json(head: str) -> dict[str, object]:
    try:
        decoded = json.JSONDecoder().raw_decode(head)[0]
    except (ValueError, RecursionError):
        return {}
    return decoded if isinstance(decoded, dict) else {}


def _field_lines(head: str, *, rst: bool) -> dict[str, object]:
    """Pelican's Markdown metadata, reStructuredText's ``:field:`` lists."""
    raw: dict[str, object] = {}
    lines = head.split("\n")
    if rst:  # a document's title (and its underline) comes before its field list
        start = next((number for number, line in enumerate(lines[:20]) if line.startswith(":")), 0)
        lines = lines[start:]
    for line in lines:
        if not line.strip():
            break
        text = line.strip()
        matched = _FIELD_LINE.fullmatch(text[1:] if text.startswith(":") else text)  # ":date: x" is "date: x"
        if matched is None:
            break
        raw[matched.group(1)] = matched.group(2)
    return raw


def as_w3c(value: object) -> str | None:
    """A front-matter date as a W3C Datetime: ``2025-03-14``, ``2025-03-14 10:20:00 +0100``
    (Jekyll), ``2025-03-14T10:20:00Z``; a time without a zone is taken as its day."""
    if hasattr(value, "isoformat") and not isinstance(value, str):  # TOML dates and datetimes
        value = value.isoformat()
    if not isinstance(value, str):
        return None
    matched = _LOOSE.fullmatch(value.strip())
    if matched is None:
        return None
    date, time, zone = matched.group("date", "time", "zone")
    if time is not None and len(time) == 5:
        time += ":00"
    if zone is not None and zone != "Z" and ":" not in zone:
        zone = f"{zone[:3]}:{zone[3:]}"
    written = date if time is None else f"{date}T{time}{zone or 'Z'}"
    if parse_w3c(written) is None:  # 2025-02-30, 25:00 or +25:00 is no date (never a date the rules cannot read)
        return None
    return date if zone is None else written
