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

import difflib
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, NamedTuple

from notifier.announce import Announce
from notifier.database import DatabaseURL
from notifier.errors import UsageError
from notifier.settings.options import BY_NAME, OPTIONS, announce_table
from notifier.settings.settings import (
    CONFIG_KEYS,
    DEFAULT_STATE,
    RULE_IN_A_FILE,
    Layers,
    Settings,
    merge_values,
    read_layers,
    resolve,
    state_from,
)
from notifier.store import backend

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
    tables = _chosen_tables(layers)
    if tables is None:
        return [resolve(command, cli, environ, cwd, layers, api=api)]
    if cli.get("sitemap"):
        raise UsageError(
            f"SITEMAP {cli['sitemap']}: {layers.where} lists [[sites]], each with its own sitemap; run them all, or one with --site NAME"
        )
    environ = os.environ if environ is None else environ
    runs = [_site(command, cli, environ, cwd, layers, name, table, api=api) for name, table in tables.items()]
    _refuse_shared_states([(each.site or "", each.state) for each in runs])
    return runs


class SiteState(NamedTuple):
    """Where one site's state is, for the commands that need nothing else (``state``)."""

    name: str | None  # None: the config lists no [[sites]]
    state: Path | DatabaseURL
    lock_timeout: float
    announce: Announce = Announce()  # its [announce]: `state url` says when a pattern holds a URL out, `state show` what waits


def site_layers(
    cli: Mapping[str, Any], environ: Mapping[str, str] | None = None, cwd: Path | None = None
) -> list[tuple[str | None, Layers]]:
    """Each site's layers, for the commands that need a part of its settings (``state``, ``key
    file``): of every site of the config's ``[[sites]]`` (or the one ``--site`` names), else
    (name None) of the top level. Nothing a run needs beside is resolved (a build folder that
    is not there yet is no matter to ``state show``)."""
    cwd = Path.cwd() if cwd is None else cwd
    layers = read_layers(cli, environ, cwd, api=False)
    tables = _chosen_tables(layers)
    if tables is None:
        return [(None, layers)]
    environ = os.environ if environ is None else environ
    return [(name, _site_layers(cli, environ, cwd, layers, name, table, api=False)) for name, table in tables.items()]


def site_states(cli: Mapping[str, Any], environ: Mapping[str, str] | None = None, cwd: Path | None = None) -> list[SiteState]:
    """The state of each site the command covers (``site_layers``), two sites in one refused."""
    cwd = Path.cwd() if cwd is None else cwd
    found = [SiteState(name, *state_from(layers.merged, cwd, name), _patterns(layers)) for name, layers in site_layers(cli, environ, cwd)]
    if len(found) > 1 or found[0].name is not None:
        _refuse_shared_states([(each.name or "", each.state) for each in found])
    return found


def _patterns(layers: Layers) -> Announce:
    """The ``[announce]`` of a site's layers that ``state`` reads: the patterns (``state url``),
    the interval and the caps (what ``state show`` says the next run holds)."""
    wanted = [option for option in OPTIONS if option.setting == "announce"]
    merged = layers.merged
    return Announce(**{each.field: each.convert(merged[each.name][1])(merged[each.name][0]) for each in wanted if each.name in merged})


def _chosen_tables(layers: Layers) -> dict[str, dict[str, Any]] | None:
    """The ``[[sites]]`` tables the command covers: every one, or the one ``--site`` names;
    None when the config lists none."""
    chosen, label = layers.merged.get("site", (None, "--site"))  # --site, or NOTIFY_CHANGES_SITE
    sites = layers.file_values.get("sites")
    if sites is None:
        if chosen:
            raise UsageError(f"{label} {chosen}: {layers.where} lists no [[sites]]; drop {label}, or list the sites there")
        return None
    tables = _site_tables(sites, layers.where)
    if not chosen:
        return tables
    if chosen not in tables:
        near = difflib.get_close_matches(str(chosen), list(tables), n=1, cutoff=0.6)
        guess = f"did you mean {near[0]}? " if near else ""
        raise UsageError(f"{label} {chosen}: no such site in {layers.where}; {guess}the sites are {', '.join(tables)}")
    return {chosen: tables[chosen]}


def _site_tables(sites: Any, where: str) -> dict[str, dict[str, Any]]:
    """Each ``[[sites]]`` table by its name, its keys checked."""
    if not isinstance(sites, list) or not sites or not all(isinstance(each, dict) for each in sites):
        raise UsageError(f'{where}: sites must be an array of tables, each [[sites]] with name = "..." and its sitemap')
    tables: dict[str, dict[str, Any]] = {}
    for number, raw in enumerate(sites, start=1):
        table = {key.replace("_", "-"): value for key, value in raw.items() if key != "announce"}
        table.update(announce_table(raw.get("announce", {}), f"{where}: [[sites]] number {number}"))
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
            if key not in CONFIG_KEYS and key not in MERGED_TABLES and key not in _OWN:
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
    site_layers = _site_layers(cli, environ, cwd, layers, name, table, api=api)
    return resolve(command, cli, environ, cwd, site_layers, api=api, site=name)


def _site_layers(
    cli: Mapping[str, Any], environ: Mapping[str, str], cwd: Path, layers: Layers, name: str, table: dict[str, Any], *, api: bool
) -> Layers:
    """One site's layers: the top level's values with the site's over them."""
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
        merged.pop("key", None)  # the top level's key (INDEXNOW_KEY) is another host's: never this site's
        if merged.get("key-previous", (None, ""))[1] in BY_NAME["key-previous"].environment:
            del merged["key-previous"]  # nor its previous key: a site's rotation names its own ([sites.keys] previous-env)
        if environ.get(variable):
            merged["key"] = (environ[variable], variable)
        return Layers(inherited, where, layers.base, layers.config_path, merged, variable)
    return Layers(inherited, where, layers.base, layers.config_path, merged)


def _given(cli: Mapping[str, Any]) -> set[str]:
    return {name for name, value in cli.items() if value is not None}


def _refuse_shared_states(states: list[tuple[str, Path | DatabaseURL]]) -> None:
    """Two sites in one state would each take the other's URLs for removed ones: refused
    before anything is read or sent, however the one state is written (a link, a hard link,
    the same database by another host name or port)."""
    seen: dict[object, str] = {}
    for name, state in states:
        other = seen.setdefault(backend(state).identity(), name)
        if other != name:
            default = " (the default)" if isinstance(state, Path) and state.name == DEFAULT_STATE.name else ""
            what = "the state file" if isinstance(state, Path) else "the PostgreSQL rows of"
            raise UsageError(
                f"[[sites]] {other} and {name} share {what} {state}{default}: "
                'give each site its own, e.g. state = "state/NAME.json" (or its own site-name in a database)'
            )
