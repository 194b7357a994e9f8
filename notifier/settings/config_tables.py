"""The config file's tables beside the options: ``[bulk]`` (the thresholds of lastmod-bulk)
and ``[history]`` (where each page's source is, and which dates it gives), checked."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from notifier.errors import UsageError
from notifier.history.source_files import DEFAULT_FIELDS, PRESETS, check_template
from notifier.rules import BulkThresholds


@dataclass(frozen=True)
class HistorySettings:
    sources: tuple[str, ...] = ()
    repo: Path | None = None  # the git work tree; default: the config file's folder or cwd
    tolerance: dt.timedelta = dt.timedelta(days=1)
    fields: tuple[str, ...] = DEFAULT_FIELDS  # front-matter fields that give a page's date, first found wins
    preset: str | None = None  # the generator whose conventions map URLs to sources
    ignore_revs: Path | bool = True  # commits that do not count: this file; True: .git-blame-ignore-revs if present


def bulk_table(table: Any, where: str) -> BulkThresholds:
    if not isinstance(table, dict):
        raise UsageError(f"{where}: [bulk] must be a table")
    defaults = BulkThresholds()
    min_urls = table.get("min-urls", defaults.min_urls)
    if type(min_urls) is not int or not 1 <= min_urls <= 10**9:
        raise UsageError(f"{where}: [bulk] min-urls = {min_urls!r} must be a whole number from 1 to 1000000000")
    shares = {}
    for name, default in (("ratio", defaults.ratio), ("site-ratio", defaults.site_ratio)):
        value = table.get(name, default)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
            raise UsageError(f"{where}: [bulk] {name} = {value!r} must be a share from 0 to 1, e.g. 0.5")
        shares[name] = float(value)
    thresholds = BulkThresholds(min_urls=min_urls, ratio=shares["ratio"], site_ratio=shares["site-ratio"])
    unknown = set(table) - {"min-urls", "ratio", "site-ratio"}
    if unknown:
        raise UsageError(f"{where}: [bulk] unknown setting {sorted(unknown)[0]!r}")
    return thresholds


def history_table(table: Any, base: Path, where: str, duration: Callable[[Any], dt.timedelta]) -> HistorySettings | None:
    if table is None:
        return None
    if not isinstance(table, dict):
        raise UsageError(f'{where}: [history] must be a table with preset = "NAME" or sources = [...]')
    unknown = set(table) - {"sources", "preset", "fields", "repo", "tolerance", "ignore-revs"}
    if unknown:
        raise UsageError(
            f"{where}: [history] unknown setting {sorted(unknown)[0]!r} (settings: preset, sources, fields, repo, tolerance, ignore-revs)"
        )
    preset = table.get("preset")
    if preset is not None and preset not in PRESETS:
        raise UsageError(f"{where}: [history] preset = {preset!r} is not one of {', '.join(PRESETS)}")
    sources = table.get("sources", [])
    if not isinstance(sources, list) or not (sources or preset) or not all(isinstance(item, str) for item in sources):
        raise UsageError(
            f'{where}: [history] needs preset = "NAME" ({", ".join(PRESETS)}) or sources = a list of path templates '
            'such as "content/{path}.md"'
        )
    for template in sources:
        problem = check_template(template)
        if problem is not None:
            raise UsageError(f"{where}: [history] sources: {template!r}: {problem}")
    fields = table.get("fields", list(PRESETS[preset].fields) if preset else list(DEFAULT_FIELDS))
    if not isinstance(fields, list) or not all(isinstance(item, str) and item for item in fields):
        raise UsageError(f'{where}: [history] fields must be a list of front-matter names such as ["lastmod", "date"]')
    repo = table.get("repo")
    if repo is not None and (not isinstance(repo, str) or not (base / repo).is_dir()):
        raise UsageError(f"{where}: [history] repo = {repo!r} is not a folder; point it at the site's git work tree")
    tolerance = duration(table.get("tolerance", "1d"))
    ignore_revs = table.get("ignore-revs", True)
    if ignore_revs is not False and (not isinstance(ignore_revs, str) or not ignore_revs) and ignore_revs is not True:
        raise UsageError(f'{where}: [history] ignore-revs = {ignore_revs!r}: give a file such as ".git-blame-ignore-revs", or false')
    if isinstance(ignore_revs, str):
        if not (base / ignore_revs).is_file():
            raise UsageError(
                f"{where}: [history] ignore-revs = {ignore_revs!r}: no such file (one commit hash a line, as git blame reads it)"
            )
        ignore_revs = base / ignore_revs
    return HistorySettings(
        sources=tuple(sources) + (PRESETS[preset].sources if preset else ()),
        repo=(base / repo) if isinstance(repo, str) else base,
        tolerance=tolerance,
        fields=tuple(fields),
        preset=preset,
        ignore_revs=ignore_revs,
    )
