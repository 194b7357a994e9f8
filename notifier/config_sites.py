"""``[[sites]]``: several sites in one config file, each run as its own site in one process.

Each ``[[sites]]`` table has a ``name`` and any of the top-level settings and tables; what
it leaves out it inherits from the top level. Tables merge key by key (a site's ``[rules]``
over the top level's); ``key-env = "VARIABLE"`` takes that site's key from a variable of its
own. The command line applies to every site; ``--site NAME`` picks one.

    sitemap = "ignored at the top: each site names its own"
    [rules]
    lastmod-missing = "off"

    [[sites]]
    name = "docs"
    sitemap = "docs/site/sitemap.xml"
    state = "state/docs.json"

    [[sites]]
    name = "blog"
    sitemap = "blog/public/sitemap.xml"
    state = "state/blog.json"
    key-env = "BLOG_INDEXNOW_KEY"
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from notifier.errors import UsageError
from notifier.settings import CONVERTERS, DEFAULT_STATE, RULE_IN_A_FILE, Layers, Settings, merge_values, read_layers, resolve

SITE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
MERGED_TABLES = ("rules", "keys", "history", "bulk")  # a site's table merges over the top level's, key by key
_OWN = ("name", "key-env")  # keys only a site table has


def build_runs(
    command: str, cli: Mapping[str, Any], environ: Mapping[str, str] | None = None, cwd: Path | None = None, *, api: bool = False
) -> list[Settings]:
    """The Settings of every site the run covers: each of the config's ``[[sites]]`` (or the
    one ``--site`` names), else the one site of ``build_settings``."""
    cwd = Path.cwd() if cwd is None else cwd
    layers = read_layers(cli, environ, cwd, api=api)
    chosen = cli.get("site")
    sites = layers.file_values.get("sites")
    if sites is None:
        if chosen:
            raise UsageError(f"--site {chosen}: {layers.where} lists no [[sites]]; drop --site, or list the sites there")
        return [resolve(command, cli, environ, cwd, layers, api=api)]
    tables = _site_tables(sites, layers.where)
    if cli.get("sitemap"):
        raise UsageError(
            f"SITEMAP {cli['sitemap']}: {layers.where} lists [[sites]], each with its own sitemap; run them all, or one with --site NAME"
        )
    if chosen:
        if chosen not in tables:
            raise UsageError(f"--site {chosen}: no such site in {layers.where}; the sites are {', '.join(tables)}")
        tables = {chosen: tables[chosen]}
    environ = os.environ if environ is None else environ
    runs = [_site(command, cli, environ, cwd, layers, name, table, api=api) for name, table in tables.items()]
    _refuse_shared_states(runs)
    return runs


def _site_tables(sites: Any, where: str) -> dict[str, dict[str, Any]]:
    """Each ``[[sites]]`` table by its name, its keys checked."""
    if not isinstance(sites, list) or not sites or not all(isinstance(each, dict) for each in sites):
        raise UsageError(f'{where}: sites must be an array of tables, each [[sites]] with name = "..." and its sitemap')
    tables: dict[str, dict[str, Any]] = {}
    for number, raw in enumerate(sites, start=1):
        table = {key.replace("_", "-"): value for key, value in raw.items()}
        name = table.get("name")
        if not isinstance(name, str) or not SITE_NAME.fullmatch(name):
            raise UsageError(
                f'{where}: [[sites]] number {number}: name = {name!r}: give each site a short name (letters, digits, ".", "_", "-")'
            )
        if name in tables:
            raise UsageError(f"{where}: two [[sites]] are named {name!r}; give each its own name")
        for key in table:
            if key == "rule":
                raise UsageError(RULE_IN_A_FILE.format(where=f"{where}: [[sites]] {name}"))
            if key not in CONVERTERS and key not in MERGED_TABLES and key not in _OWN:
                raise UsageError(f"{where}: [[sites]] {name}: unknown setting {key!r}; see `notify-changes --help` for the names")
        if "sitemap" not in table:
            raise UsageError(
                f'{where}: [[sites]] {name}: sitemap is missing; name the site\'s built sitemap, e.g. sitemap = "public/sitemap.xml"'
            )
        tables[name] = table
    return tables


def _site(
    command: str,
    cli: Mapping[str, Any],
    environ: Mapping[str, str],
    cwd: Path,
    layers: Layers,
    name: str,
    table: dict[str, Any],
    *,
    api: bool,
) -> Settings:
    """One site's Settings: the top level's values with the site's over them."""
    inherited = dict(layers.file_values)  # the [[sites]] array among them is no option: merge_values passes over it
    for key, value in table.items():
        if key in _OWN:
            continue
        if key in MERGED_TABLES and isinstance(value, dict) and isinstance(inherited.get(key), dict):
            inherited[key] = {**inherited[key], **value}
        else:
            inherited[key] = value
    where = f"{layers.where} [[sites]] {name}"
    merged = merge_values(cli, environ, inherited, where=where, base=layers.base, cwd=cwd, api=api)
    variable = table.get("key-env")
    if variable is not None and "key" not in _given(cli):
        if not isinstance(variable, str) or not variable:
            raise UsageError(f"{where}: key-env = {variable!r}: name the environment variable that holds this site's key")
        if environ.get(variable):
            merged["key"] = (environ[variable], variable)
    site_layers = Layers(inherited, where, layers.base, layers.config_path, merged)
    return resolve(command, cli, environ, cwd, site_layers, api=api, site_name=name)


def _given(cli: Mapping[str, Any]) -> set[str]:
    return {name for name, value in cli.items() if value is not None}


def _refuse_shared_states(runs: list[Settings]) -> None:
    """Two sites in one state file would each take the other's URLs for removed ones."""
    seen: dict[object, str] = {}
    for settings in runs:
        state = settings.state.resolve() if isinstance(settings.state, Path) else settings.state
        other = seen.setdefault(state, settings.site_name or "")
        if other != settings.site_name:
            default = " (the default)" if isinstance(settings.state, Path) and settings.state.name == DEFAULT_STATE.name else ""
            raise UsageError(
                f"[[sites]] {other} and {settings.site_name} share the state file {settings.state}{default}: "
                'give each site its own, e.g. state = "state/NAME.json"'
            )
