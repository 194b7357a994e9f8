"""One immutable Settings object from the command line, the environment and a config file.

Precedence: command line, then environment, then config file, then defaults. Every
option has a config-file key of the same name (``batch-size = 500``); relative paths
in a config file are resolved from that file's folder.
"""

from __future__ import annotations

import datetime as dt
import os
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from notifier.dates import parse_duration
from notifier.errors import UsageError
from notifier.indexnow import DEFAULT_ENDPOINT, MAX_BATCH, Keys, validate_key
from notifier.rules import LEVELS, RULES, BulkThresholds
from notifier.source import is_url

DEFAULT_STATE = Path("state/notify-changes.json")
DEFAULT_CONFIG = "notify-changes.toml"
FORMATS = ("text", "json", "github")
INITIAL_CHOICES = ("baseline", "submit", "fail")  # and since:DURATION


@dataclass(frozen=True)
class HistorySettings:
    sources: tuple[str, ...] = ()
    repo: Path | None = None  # the git work tree; default: the config file's folder or cwd
    tolerance: dt.timedelta = dt.timedelta(days=1)


@dataclass(frozen=True)
class Settings:
    """Everything a run needs to know, resolved and checked."""

    command: str = "run"  # "run" or "check"
    sitemap: str = ""
    state: Path = DEFAULT_STATE
    keys: Keys = Keys()
    endpoints: tuple[str, ...] = (DEFAULT_ENDPOINT,)
    site_dir: Path | None = None
    batch_size: int = MAX_BATCH
    dry_run: bool = False
    format: str = "text"
    retry_timeout: float = 120.0
    request_timeout: float = 30.0
    lock_timeout: float = 60.0
    initial: str = "baseline"
    no_removed: bool = False
    on_submit_error: str = "fail"
    rule_levels: dict[str, str] = field(default_factory=dict)
    clock_skew: dt.timedelta = dt.timedelta(hours=1)
    max_removed: float = 0.2
    sitemap_url: str | None = None
    bulk: BulkThresholds = BulkThresholds()
    history: HistorySettings | None = None
    verify_live: int = 0
    config_path: Path | None = None

    @property
    def since(self) -> dt.timedelta | None:
        """For ``--initial since:DURATION``."""
        if self.initial.startswith("since:"):
            return parse_duration(self.initial[6:])
        return None


def _positive_float(name: str) -> Callable[[Any], float]:
    def convert(value: Any) -> float:
        try:
            number = float(value)
        except (TypeError, ValueError):
            raise UsageError(f"{name}: {value!r} is not a number of seconds") from None
        if not number >= 0 or number == float("inf"):
            raise UsageError(f"{name}: {value!r} must be a finite number of seconds, 0 or more")
        return number

    return convert


def _whole_number(name: str, minimum: int, maximum: int | None = None) -> Callable[[Any], int]:
    allowed = f"{minimum}..{maximum}" if maximum is not None else f"{minimum} or more"

    def convert(value: Any) -> int:
        try:
            number = int(value)
        except (TypeError, ValueError):
            raise UsageError(f"{name}: {value!r} is not a whole number; use {allowed}") from None
        if isinstance(value, float) or number < minimum or (maximum is not None and number > maximum):
            raise UsageError(f"{name}: {value!r} is out of range; use {allowed}")
        return number

    return convert


def _choice(name: str, choices: tuple[str, ...]) -> Callable[[Any], str]:
    def convert(value: Any) -> str:
        if value not in choices:
            raise UsageError(f"{name}: {value!r} is not one of {', '.join(choices)}")
        return str(value)

    return convert


def _initial(value: Any) -> str:
    text = str(value)
    if text in INITIAL_CHOICES:
        return text
    if text.startswith("since:") and parse_duration(text[6:]) is not None:
        return text
    raise UsageError(f"--initial: {value!r} is not baseline, submit, since:DURATION (e.g. since:14d) or fail")


def _duration(name: str) -> Callable[[Any], dt.timedelta]:
    def convert(value: Any) -> dt.timedelta:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return dt.timedelta(seconds=float(value))
        duration = parse_duration(str(value))
        if duration is None:
            raise UsageError(f"{name}: {value!r} is not a duration such as 90s, 30m, 1h or 2d")
        return duration

    return convert


def _fraction(value: Any) -> float:
    text = str(value).strip()
    try:
        number = float(text[:-1]) / 100 if text.endswith("%") else float(text)
    except ValueError:
        raise UsageError(f"--max-removed: {value!r} is not a share such as 20% or 0.2") from None
    if number > 1 and not text.endswith("%"):
        number = number / 100
    if not 0 <= number <= 1:
        raise UsageError(f"--max-removed: {value!r} must be between 0% and 100%")
    return number


def _bool(name: str) -> Callable[[Any], bool]:
    def convert(value: Any) -> bool:
        if isinstance(value, bool):
            return value
        raise UsageError(f"{name}: {value!r} must be true or false")

    return convert


def _url(name: str) -> Callable[[Any], str]:
    def convert(value: Any) -> str:
        text = str(value)
        if not is_url(text):
            raise UsageError(f"{name}: {value!r} is not an http(s) URL")
        return text

    return convert


def _endpoints(value: Any) -> tuple[str, ...]:
    items = value if isinstance(value, (list, tuple)) else [value]
    if not items:
        raise UsageError("--endpoint: give at least one endpoint URL")
    convert = _url("--endpoint")
    return tuple(dict.fromkeys(convert(item) for item in items))


def _str(value: Any) -> str:
    return str(value)


# option name -> converter. The names are the long options and the config keys.
CONVERTERS: dict[str, Callable[[Any], Any]] = {
    "sitemap": _str,
    "state": _str,
    "key": _str,
    "key-location": _url("--key-location"),
    "endpoint": _endpoints,
    "site-dir": _str,
    "batch-size": _whole_number("--batch-size", 1, MAX_BATCH),
    "dry-run": _bool("--dry-run"),
    "format": _choice("--format", FORMATS),
    "retry-timeout": _positive_float("--retry-timeout"),
    "request-timeout": _positive_float("--request-timeout"),
    "lock-timeout": _positive_float("--lock-timeout"),
    "initial": _initial,
    "no-removed": _bool("--no-removed"),
    "on-submit-error": _choice("--on-submit-error", ("fail", "warn")),
    "clock-skew": _duration("--clock-skew"),
    "max-removed": _fraction,
    "sitemap-url": _url("--sitemap-url"),
    "verify-live": _whole_number("--verify-live", 0),
}
PATH_OPTIONS = ("state", "site-dir", "sitemap")
TABLES = ("rules", "keys", "history", "bulk")


def find_config(explicit: str | None, cwd: Path) -> tuple[dict[str, Any], Path | None]:
    """The config table and its file: --config, else notify-changes.toml, else pyproject.toml."""
    if explicit is not None:
        path = Path(explicit)
        if not path.is_absolute():
            path = cwd / path
        if not path.is_file():
            raise UsageError(f"--config {explicit}: no such file")
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
        raise UsageError(f"{path}: cannot read it ({error.strerror})") from None
    if pyproject:
        table = document.get("tool", {}).get("notify-changes", {})
        return table if isinstance(table, dict) else {}
    return document


def _normalise(table: Mapping[str, Any], where: str) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for raw_key, value in table.items():
        key = raw_key.replace("_", "-")
        if key not in CONVERTERS and key not in TABLES and key != "rule":
            raise UsageError(f"{where}: unknown setting {raw_key!r}; see `notify-changes --help` for the names")
        result[key] = value
    return result


def build_settings(
    command: str,
    cli: Mapping[str, Any],
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
) -> Settings:
    """Merge command line (``cli``: option name -> value, None when not given), env and file."""
    env = os.environ if env is None else env
    cwd = Path.cwd() if cwd is None else cwd
    table, config_path = find_config(cli.get("config"), cwd)
    where = str(config_path) if config_path else "config"
    file_values = _normalise(table, where)
    base = config_path.parent if config_path else cwd

    merged: dict[str, Any] = {}
    for name, value in file_values.items():
        if name in CONVERTERS:
            if name in PATH_OPTIONS and isinstance(value, str) and not is_url(value):
                value = str(base / value)
            merged[name] = value
    if env.get("INDEXNOW_KEY"):
        merged["key"] = env["INDEXNOW_KEY"]
    if env.get("GITHUB_ACTIONS") == "true" and "format" not in merged:
        merged["format"] = "github"
    for name, value in cli.items():
        if name in CONVERTERS and value is not None:
            if name in PATH_OPTIONS and isinstance(value, str) and not is_url(value):
                value = str(cwd / value)
            merged[name] = value

    values = {name: CONVERTERS[name](value) for name, value in merged.items()}

    levels = _rule_levels(file_values.get("rules", {}), where)
    for assignment in cli.get("rule") or ():
        rule_id, sep, level = assignment.partition("=")
        if not sep:
            raise UsageError(f"--rule {assignment!r}: write ID=LEVEL, e.g. --rule lastmod-regressed=warn")
        levels.update(_rule_levels({rule_id.strip(): level.strip()}, "--rule"))

    key = values.get("key")
    if key is not None:
        validate_key(key, "--key / INDEXNOW_KEY")
    per_host = file_values.get("keys", {})
    if not isinstance(per_host, dict):
        raise UsageError(f"{where}: [keys] must be a table of host = key")
    for host, host_key in per_host.items():
        validate_key(str(host_key), f"{where} [keys] {host}")
    keys = Keys(
        default=key,
        per_host={str(host).lower(): str(value) for host, value in per_host.items()},
        key_location=values.get("key-location"),
    )

    sitemap = values.get("sitemap")
    if not sitemap:
        raise UsageError("no SITEMAP given: pass the path or URL of the built sitemap, e.g. public/sitemap.xml")

    return Settings(
        command=command,
        sitemap=sitemap,
        state=Path(values.get("state", cwd / DEFAULT_STATE)),
        keys=keys,
        endpoints=values.get("endpoint", (DEFAULT_ENDPOINT,)),
        site_dir=Path(values["site-dir"]) if "site-dir" in values else None,
        batch_size=values.get("batch-size", MAX_BATCH),
        dry_run=values.get("dry-run", False),
        format=values.get("format", "text"),
        retry_timeout=values.get("retry-timeout", 120.0),
        request_timeout=values.get("request-timeout", 30.0) or 30.0,
        lock_timeout=values.get("lock-timeout", 60.0),
        initial=values.get("initial", "baseline"),
        no_removed=values.get("no-removed", False),
        on_submit_error=values.get("on-submit-error", "fail"),
        rule_levels=levels,
        clock_skew=values.get("clock-skew", dt.timedelta(hours=1)),
        max_removed=values.get("max-removed", 0.2),
        sitemap_url=values.get("sitemap-url"),
        bulk=_bulk(file_values.get("bulk", {}), where),
        history=_history(file_values.get("history"), base, where),
        verify_live=values.get("verify-live", 0),
        config_path=config_path,
    )


def _rule_levels(table: Any, where: str) -> dict[str, str]:
    if not isinstance(table, dict):
        raise UsageError(f'{where}: [rules] must be a table of rule-id = "error" | "warn" | "off"')
    levels: dict[str, str] = {}
    for rule_id, level in table.items():
        if rule_id not in RULES:
            raise UsageError(f"{where}: unknown rule {rule_id!r}; the rules are: {', '.join(RULES)}")
        if level == "warning":
            level = "warn"
        if level not in LEVELS:
            raise UsageError(f"{where}: rule {rule_id} level {level!r} is not error, warn or off")
        levels[rule_id] = level
    return levels


def _bulk(table: Any, where: str) -> BulkThresholds:
    if not isinstance(table, dict):
        raise UsageError(f"{where}: [bulk] must be a table")
    defaults = BulkThresholds()
    try:
        thresholds = BulkThresholds(
            min_urls=int(table.get("min-urls", defaults.min_urls)),
            ratio=float(table.get("ratio", defaults.ratio)),
            site_ratio=float(table.get("site-ratio", defaults.site_ratio)),
        )
    except (TypeError, ValueError):
        raise UsageError(f"{where}: [bulk] min-urls, ratio and site-ratio must be numbers") from None
    unknown = set(table) - {"min-urls", "ratio", "site-ratio"}
    if unknown:
        raise UsageError(f"{where}: [bulk] unknown setting {sorted(unknown)[0]!r}")
    return thresholds


def _history(table: Any, base: Path, where: str) -> HistorySettings | None:
    if table is None:
        return None
    if not isinstance(table, dict):
        raise UsageError(f"{where}: [history] must be a table with sources = [...]")
    sources = table.get("sources", [])
    if not isinstance(sources, list) or not sources or not all(isinstance(item, str) for item in sources):
        raise UsageError(f'{where}: [history] sources must be a list of path templates such as "content/{{path}}.md"')
    repo = table.get("repo")
    tolerance = _duration("[history] tolerance")(table.get("tolerance", "1d"))
    return HistorySettings(
        sources=tuple(sources),
        repo=(base / repo) if isinstance(repo, str) else base,
        tolerance=tolerance,
    )
