"""One immutable Settings object from the command line, the environment and a config file.

Precedence: command line, then environment, then config file, then defaults. Every
option has a config-file key of the same name (``batch-size = 500``); relative paths
in a config file are resolved from that file's folder.
"""

from __future__ import annotations

import datetime as dt
import difflib
import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from notifier.announce import Announce
from notifier.database import DatabaseURL, broken_keyword_string, is_database_url, without_password
from notifier.dates import parse_duration
from notifier.errors import UsageError
from notifier.paths import cannot, is_url
from notifier.protocol import Keys
from notifier.rules import LEVELS, RULES, WARN, BulkThresholds
from notifier.rules.table import SENT_RULES, Level
from notifier.settings.config_keys import keys_table
from notifier.settings.config_tables import HistorySettings, bulk_table, history_table
from notifier.settings.converters import INITIAL_CHOICES, Converter, duration, text
from notifier.settings.discovery import find_sitemap
from notifier.settings.options import ANNOUNCE, BY_NAME, FORMATS, OPTIONS, RUN_ONLY, Option, announce_table, default
from notifier.site.folder import served_under
from notifier.site.hosting import DEFAULT_PLATFORM, detect_platform

__all__ = [
    "CONVERTERS",
    "FORMATS",
    "INITIAL_CHOICES",
    "RUN_ONLY",
    "Settings",
    "build_settings",
    "find_config",
    "state_from",
]

DEFAULT_STATE = Path("state/notify-changes.json")
DEFAULT_CONFIG = "notify-changes.toml"


@dataclass(frozen=True)
class Settings:
    """Everything a run needs to know, resolved and checked."""

    command: str = "run"  # "run" or "check"
    sitemap: str = ""
    # the options, each its own field: ``resolve`` fills every one from the table (options.OPTIONS), by a loop
    endpoints: tuple[str, ...] = default("endpoint")
    site_dir: Path | None = default("site-dir")
    batch_size: int = default("batch-size")
    dry_run: bool = default("dry-run")
    format: str = default("format")
    retry_timeout: float = default("retry-timeout")
    request_timeout: float = default("request-timeout")
    lock_timeout: float = default("lock-timeout")
    initial: str = default("initial")
    no_removed: bool = default("no-removed")
    on_submit_error: str = default("on-submit-error")
    endpoint_mode: str = default("endpoint-mode")
    clock_skew: dt.timedelta = default("clock-skew")
    max_removed: float = default("max-removed")
    sitemap_url: str | None = default("sitemap-url")
    verify_live: int = default("verify-live")
    wait_live: float = default("wait-live")
    keep_batches: int = default("keep-batches")
    metrics: Path | None = default("metrics")  # --metrics FILE: Prometheus' text format, written after the run
    jobs: int | None = default("jobs")
    # the fields made of options by a function of their own (PARTS), and what no option gives
    state: Path | DatabaseURL = DEFAULT_STATE  # --state: a file, or a PostgreSQL database with --site-name
    keys: Keys = Keys()  # --key, --key-previous, --key-location, [keys]
    announce: Announce = Announce()  # [announce]: which URLs are announced, and when
    rule_levels: dict[str, Level] = field(default_factory=dict)  # --rule and [rules]
    platform: str = DEFAULT_PLATFORM  # how the host reads _headers and _redirects (hosting.PLATFORMS)
    config_path: Path | None = None  # --config, else the file found
    site: str | None = None  # --site: the one of the config's [[sites]] these settings are (glossary: site)
    bulk: BulkThresholds = BulkThresholds()
    history: HistorySettings | None = None
    project_dir: Path = Path()  # the config file's folder, else where the run started: netlify.toml is looked for here
    found_sitemap: bool = False  # no SITEMAP was given: it was found in the build's usual folder

    @property
    def base_path(self) -> str:
        """The URL path the build is served under ("project" for https://host/project/), from
        --sitemap-url and where the sitemap lies in the build; page files and [history]
        sources are found without it."""
        return served_under(self.sitemap, self.site_dir, self.sitemap_url)

    @property
    def since(self) -> dt.timedelta | None:
        """For ``--initial since:DURATION``."""
        if self.initial.startswith("since:"):
            return parse_duration(self.initial[6:])
        return None


# option name -> converter (see options.py): the long options and the config keys, and SITEMAP.
CONVERTERS: dict[str, Converter] = {"sitemap": text, **{option.name: option.convert for option in OPTIONS}}
#: The Settings fields made of options by their own function in ``resolve``; every other
#: option lands in the field of its name (``Option.setting``), by the loop there.
PARTS = ("state", "keys", "announce", "rule_levels", "platform", "config_path", "site")
#: The keys of the config file that are options: SITEMAP and every option but --config and --rule ([rules]).
CONFIG_KEYS = frozenset({"sitemap", *(option.name for option in OPTIONS if option.in_config)})
PATH_OPTIONS = ("state", "site-dir", "sitemap", "metrics")
TABLES = ("rules", "keys", "history", "bulk", "sites")


def find_config(explicit: object, cwd: Path, label: str = "--config") -> tuple[dict[str, Any], Path | None]:
    """The config table and its file: --config (or its variable, ``label``), else
    notify-changes.toml, else pyproject.toml."""
    if explicit is not None:
        if not isinstance(explicit, (str, os.PathLike)) or not os.fspath(explicit):
            raise UsageError(f"{label} {explicit!r}: give the path of a TOML file")
        path = Path(explicit)
        if not path.is_absolute():
            path = cwd / path
        if not path.is_file():
            raise UsageError(f"{label} {explicit}: no such file")
        return _read_toml(path, pyproject=path.name == "pyproject.toml"), path
    candidate = cwd / DEFAULT_CONFIG
    if candidate.is_file():
        return _read_toml(candidate, pyproject=False), candidate
    candidate = cwd / "pyproject.toml"
    if candidate.is_file():
        table = _read_toml(candidate, pyproject=True)
        if table:
            return table, candidate
    return {}, None


def _read_toml(path: Path, *, pyproject: bool) -> dict[str, Any]:
    try:
        with path.open("rb") as handle:
            document = tomllib.load(handle)
    except tomllib.TOMLDecodeError as error:
        raise UsageError(f"{path}: not valid TOML ({error})") from None
    except OSError as error:
        raise UsageError(f"{path}: {cannot('read it', error)}") from None
    if pyproject:
        tool = document.get("tool", {})
        tool = tool if isinstance(tool, dict) else {}
        if "notify-changes" in tool and "notify_changes" in tool:  # TOML keys are exact; people write both spellings
            raise UsageError(f"{path}: both [tool.notify-changes] and [tool.notify_changes]: they are one table; keep one of them")
        table = tool.get("notify-changes", tool.get("notify_changes", {}))
        return table if isinstance(table, dict) else {}
    return document


# --rule's list in a config file was read and then ignored; a file gives the levels as a table
RULE_IN_A_FILE = (
    '{where}: rule = [...] is the command line\'s --rule; in a config file write a [rules] table, e.g. lastmod-missing = "error"'
)


def _normalise(table: Mapping[str, Any], where: str) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for raw_key, value in table.items():
        key = raw_key.replace("_", "-")
        if key == "rule":
            raise UsageError(RULE_IN_A_FILE.format(where=where))
        if key == "announce":
            result.update(announce_table(value, where))
            continue
        if key == "config":
            raise UsageError(f"{where}: config names the config file, on the command line or in NOTIFY_CHANGES_CONFIG; not in one")
        if key not in CONFIG_KEYS and key not in TABLES:
            raise UsageError(f"{where}: unknown setting {raw_key!r}; see `notify-changes --help` for the names")
        result[key] = value
    return result


def build_settings(
    command: str,
    cli: Mapping[str, Any],
    environ: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    *,
    api: bool = False,
) -> Settings:
    """Merge command line (``cli``: option name -> value, None when not given), environ and file.

    ``api``: the values are the Python API's keyword arguments (typed values, ``rules`` a
    mapping), and a bad one is blamed on its argument name (``batch_size=``)."""
    cwd = Path.cwd() if cwd is None else cwd
    return resolve(command, cli, environ, cwd, read_layers(cli, environ, cwd, api=api), api=api)


def resolve(
    command: str,
    cli: Mapping[str, Any],
    environ: Mapping[str, str] | None,
    cwd: Path,
    layers: Layers,
    *,
    api: bool,
    site: str | None = None,
) -> Settings:
    """The Settings of one site from its layers (``build_settings``; each of [[sites]]): every
    option's value by precedence, in its field (a loop over the table), or in the part it makes."""
    environ = os.environ if environ is None else environ
    file_values, where, base, config_path, merged, key_variable = layers
    values = {name: CONVERTERS[name](label)(value) for name, (value, label) in merged.items()}
    if "site-dir" in values and not values["site-dir"].is_dir():
        raise UsageError(f"{merged['site-dir'][1]} {values['site-dir']}: no such folder; pass the build output root")

    def value(name: str) -> Any:
        return values.get(name, default(name))

    found: Path | None = None
    if not values.get("sitemap"):  # typed by hand in the site's root: the generator's output folder
        found = find_sitemap(cwd)
        values["sitemap"] = str(found)
        values.setdefault("site-dir", found.parent)
    own = {option.setting: value(option.name) for option in OPTIONS if option.setting not in PARTS}
    return Settings(
        command=command,
        sitemap=values["sitemap"],
        found_sitemap=found is not None,
        **own,
        state=_state(values, cwd, site),
        keys=keys_table(
            values,
            file_values.get("keys", {}),
            environ,
            blame=_blames(merged),
            where=where,
            sends=command == "run" and not value("dry-run"),
            key_variable=key_variable,
        ),
        announce=Announce(**{option.field: value(option.name) for option in _INTO["announce"]}),
        rule_levels=_levels(values.get("rule"), merged.get("rule", (None, ""))[1], file_values.get("rules", {}), where),
        platform=value("platform") or detect_platform(environ) or DEFAULT_PLATFORM,
        config_path=config_path,
        site=site,
        bulk=bulk_table(file_values.get("bulk", {}), where),
        history=_history(cli, file_values.get("history"), base, where, api=api),
        project_dir=base,
    )


_INTO: dict[str, tuple[Option, ...]] = {part: tuple(option for option in OPTIONS if option.setting == part) for part in PARTS}


def _state(values: Mapping[str, Any], cwd: Path, site: str | None) -> Path | DatabaseURL:
    """The state file, or a database URL with the name of the site whose rows it holds."""
    given = values.get("state", cwd / DEFAULT_STATE)
    if not is_database_url(given):
        broken = broken_keyword_string(given) if isinstance(given, str) else None
        if broken is not None:  # never a file named after the password
            raise UsageError(
                f"--state: a libpq key=value connection string libpq cannot read ({broken}); write keyword=value pairs, "
                "a value with spaces or quotes in single quotes ('…', a backslash before ' or \\), or a file path beginning ./"
            )
        return Path(given)
    name = values.get("site-name") or site  # a [[sites]] entry's name, unless --site-name says
    if not name:
        raise UsageError(
            f"--state {without_password(given)}: a PostgreSQL state holds many sites; name this one with --site-name NAME "
            "(or site-name in the config), so that two sites never mix"
        )
    bounds = {"lock_timeout": values.get("lock-timeout", default("lock-timeout"))}
    bounds["request_timeout"] = values.get("request-timeout", default("request-timeout"))
    return DatabaseURL(given, site=name, **bounds)


def state_from(merged: Mapping[str, tuple[Any, str]], cwd: Path, site: str | None) -> tuple[Path | DatabaseURL, float]:
    """The state and the lock timeout of merged values (``read_layers``; a site of [[sites]])."""
    wanted = {option.name for option in _INTO["state"]} | {"lock-timeout", "request-timeout"}  # and the bounds of a database's
    values = {name: CONVERTERS[name](label)(value) for name, (value, label) in merged.items() if name in wanted}
    return _state(values, cwd, site), values.get("lock-timeout", default("lock-timeout"))


def key_options(cli: Mapping[str, Any], environ: Mapping[str, str] | None = None, cwd: Path | None = None) -> Keys:
    """The keys, as a run that sends resolves them (a ``derive`` needs its secret), for
    ``notify-changes key file``."""
    cwd = Path.cwd() if cwd is None else cwd
    return keys_from(read_layers(cli, environ, cwd, api=False), environ)


def keys_from(layers: Layers, environ: Mapping[str, str] | None) -> Keys:
    """The keys of ``layers`` (the top level's, or a site's of [[sites]]) as a run that sends resolves them."""
    wanted = {option.name for option in _INTO["keys"]}
    values = {name: CONVERTERS[name](label)(value) for name, (value, label) in layers.merged.items() if name in wanted}
    environ = os.environ if environ is None else environ
    return keys_table(
        values,
        layers.file_values.get("keys", {}),
        environ,
        blame=_blames(layers.merged),
        where=layers.where,
        sends=True,
        key_variable=layers.key_variable,
    )


def _blames(merged: Mapping[str, tuple[Any, str]]) -> tuple[str, str]:
    """Where the key and the previous key came from, to blame a bad one on."""
    return merged.get("key", (None, ""))[1], merged.get("key-previous", (None, ""))[1]


class Layers(NamedTuple):
    """The config file found, and each option's value by precedence with the name to blame."""

    file_values: dict[str, Any]
    where: str  # the config file, as messages name it
    base: Path  # relative paths in the file are resolved from here
    config_path: Path | None
    merged: dict[str, tuple[Any, str]]
    key_variable: str = "INDEXNOW_KEY"  # what to set when no key is given ([[sites]] key-env names a site's own)


def read_layers(cli: Mapping[str, Any], environ: Mapping[str, str] | None, cwd: Path, *, api: bool) -> Layers:
    environ = os.environ if environ is None else environ
    explicit, label = cli.get("config"), "--config"
    variable = next((each for each in BY_NAME["config"].environment if environ.get(each)), None)
    if explicit is None and variable is not None:
        explicit, label = environ[variable], variable
    table, config_path = find_config(explicit, cwd, label)
    where = str(config_path) if config_path else "config"
    file_values = _normalise(table, where)
    base = config_path.parent if config_path else cwd
    return Layers(file_values, where, base, config_path, merge_values(cli, environ, file_values, where=where, base=base, cwd=cwd, api=api))


def _a_database(value: str) -> bool:
    """A database, or a connection string gone wrong (``_state`` refuses it): never a path to resolve."""
    return is_database_url(value) or broken_keyword_string(value) is not None


def merge_values(
    cli: Mapping[str, Any], environ: Mapping[str, str], file_values: Mapping[str, Any], *, where: str, base: Path, cwd: Path, api: bool
) -> dict[str, tuple[Any, str]]:
    """Each option's value by precedence (command line, environment, file), with the name to
    blame for a bad one: the option, the variable, or the config file and its key."""
    merged: dict[str, tuple[Any, str]] = {}
    for name, value in file_values.items():
        if name in CONFIG_KEYS:
            merged[name] = (_resolved(name, value, base), f"{where}: {'[announce] ' if name in ANNOUNCE else ''}{name}")
    for option in OPTIONS:
        variable = next((each for each in option.environment if environ.get(each, "").strip()), None)  # blanks: unset
        if variable is not None:
            merged[option.name] = (_resolved(option.name, _environment_value(option, environ[variable]), cwd), variable)
    if environ.get("GITHUB_ACTIONS") == "true" and "format" not in merged:
        merged["format"] = ("github", "GITHUB_ACTIONS")
    keywords = {option.name: option.keyword for option in OPTIONS}
    for name, value in cli.items():
        if name in CONVERTERS and value is not None:
            label = ("sitemap" if api else "SITEMAP") if name == "sitemap" else f"{keywords[name]}=" if api else f"--{name}"
            merged[name] = (_resolved(name, value, cwd), label)
    return merged


def _resolved(name: str, value: Any, base: Path) -> Any:
    """A relative path of a file option, from ``base`` (the config file's folder, else where the run started)."""
    if name in PATH_OPTIONS and isinstance(value, str) and value and not is_url(value) and not _a_database(value):
        return str(base / value)
    return value


def _environment_value(option: Option, text: str) -> Any:
    """A variable's text as the option's kind, without the blanks around it (an Action input
    written as a YAML block ends in a newline): a list one a line (blank lines left out), a
    flag true or false (anything else its converter refuses, naming the variable)."""
    if option.kind == "list":
        return [line.strip() for line in text.splitlines() if line.strip()]
    if option.kind == "flag" and text.strip() in ("true", "false"):
        return text.strip() == "true"
    return text.strip()


def _levels(given: Mapping[str, Any] | None, label: str, table: Any, where: str) -> dict[str, Level]:
    """Rule levels: the config file's [rules], then ``--rule ID=LEVEL`` (each), the API's ``rules=``
    or NOTIFY_CHANGES_RULE's lines, read into one mapping by the option's converter."""
    levels = _rule_levels(table, where)
    if given:
        levels.update(_rule_levels(dict(given), label))
    return levels


def _history(cli: Mapping[str, Any], table: Any, base: Path, where: str, *, api: bool) -> HistorySettings | None:
    """[history]: the config file's table, each key of the API's ``history=`` mapping (a
    generator plugin's conventions) taking the place of the file's."""
    given = cli.get("history") if api else None
    if given is None:
        return history_table(table, base, where, duration(f"{where}: [history] tolerance"))
    if not isinstance(given, Mapping):
        raise UsageError(f"history={given!r}: give a mapping like the config's [history] table, e.g. {{'preset': 'mkdocs'}}")
    if table is not None and not isinstance(table, dict):
        return history_table(table, base, where, duration(f"{where}: [history] tolerance"))  # its own error
    merged = {**(table or {}), **given}
    return history_table(merged, base, f"{where} and history=" if table else "history=", duration("history= tolerance"))


def _rule_levels(table: Any, where: str) -> dict[str, Level]:
    if not isinstance(table, dict):
        raise UsageError(f'{where}: [rules] must be a table of rule-id = "error" | "warn" | "off"')
    levels: dict[str, Level] = {}
    for rule_id, level in table.items():
        if rule_id not in RULES:
            near = difflib.get_close_matches(str(rule_id), list(RULES), n=1, cutoff=0.6)
            guess = f"did you mean {near[0]!r}? " if near else ""
            raise UsageError(f"{where}: unknown rule {rule_id!r}; {guess}the rules are: {', '.join(RULES)}")
        if level == "warning":
            level = WARN
        if not isinstance(level, str) or level not in LEVELS:
            written = f"{level!r}" if isinstance(level, str) else f"{str(level).lower()} (not a string)"  # TOML's false, not Python's False
            raise UsageError(f'{where}: rule {rule_id} level {written} is not "error", "warn" or "off"')
        if level == "error" and rule_id in SENT_RULES:
            raise UsageError(f"{where}: rule {rule_id} is found after sending, from the endpoints' answers: set it to warn or off")
        levels[rule_id] = level
    return levels
