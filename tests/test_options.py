"""The option table (notifier/settings/options.py) is the one place an option is declared:
each row is whole, each option reaches Settings from the command line, the environment and
the config file, and the Action passes its inputs as the table's variables (#43 item 1).

Adding an option: its row, and its line in ``EXAMPLES`` below (a value, and where it lands)."""

from __future__ import annotations

import dataclasses
import datetime as dt
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from notifier.cli import make_parser
from notifier.errors import UsageError
from notifier.settings.config_sites import build_runs
from notifier.settings.options import COMMANDS, OPTIONS, Option, add_options
from notifier.settings.settings import PARTS, Settings
from tests.conftest import KEY

ROOT = Path(__file__).resolve().parents[1]
ACTION: dict[str, Any] = yaml.safe_load((ROOT / "action.yml").read_text())
OTHER_KEY = "b" * 32
DB = "postgresql://notify@db.example.org/deploys"


def _keys(settings: Settings) -> Any:
    return settings.keys


# option -> (the value as a config file holds it, where it lands in Settings, what it is there).
# A list option's value is its items; a flag's, true. The command line and the environment are
# given the same value as text.
EXAMPLES: dict[str, tuple[Any, Callable[[Settings], Any], Any]] = {
    "state": ("st.json", lambda s: s.state, "TMP/st.json"),
    "key": (KEY, lambda s: s.keys.default, KEY),
    "key-previous": (OTHER_KEY, lambda s: s.keys.previous, OTHER_KEY),
    "key-location": ("https://www.example.org/k.txt", lambda s: s.keys.key_location, "https://www.example.org/k.txt"),
    "endpoint": (["https://e.example/indexnow"], lambda s: s.endpoints, ("https://e.example/indexnow",)),
    "site-dir": ("public", lambda s: s.site_dir, "TMP/public"),
    "batch-size": (5, lambda s: s.batch_size, 5),
    "dry-run": (True, lambda s: s.dry_run, True),
    "format": ("json", lambda s: s.format, "json"),
    "retry-timeout": (7, lambda s: s.retry_timeout, 7.0),
    "request-timeout": (8, lambda s: s.request_timeout, 8.0),
    "lock-timeout": (9, lambda s: s.lock_timeout, 9.0),
    "initial": ("submit", lambda s: s.initial, "submit"),
    "config": ("other.toml", lambda s: s.config_path, "TMP/other.toml"),
    "no-removed": (True, lambda s: s.no_removed, True),
    "endpoint-mode": ("first", lambda s: s.endpoint_mode, "first"),
    "on-submit-error": ("warn", lambda s: s.on_submit_error, "warn"),
    "rule": (["lastmod-missing=off"], lambda s: s.rule_levels, {"lastmod-missing": "off"}),
    "clock-skew": ("2h", lambda s: s.clock_skew, dt.timedelta(hours=2)),
    "max-removed": ("30%", lambda s: s.max_removed, 0.3),
    "sitemap-url": ("https://www.example.org/sitemap.xml", lambda s: s.sitemap_url, "https://www.example.org/sitemap.xml"),
    "platform": ("netlify", lambda s: s.platform, "netlify"),
    "jobs": (2, lambda s: s.jobs, 2),
    "keep-batches": (11, lambda s: s.keep_batches, 11),
    "metrics": ("m.prom", lambda s: s.metrics, "TMP/m.prom"),
    "site": ("blog", lambda s: s.site, "blog"),
    "site-name": ("www", lambda s: getattr(s.state, "site", None), "www"),
    "wait-live": (5, lambda s: s.wait_live, 5.0),
    "verify-live": (3, lambda s: s.verify_live, 3),
    "include": (["/a/**"], lambda s: s.announce.include, ("/a/**",)),
    "exclude": (["/b/**"], lambda s: s.announce.exclude, ("/b/**",)),
    "min-interval": ("10m", lambda s: s.announce.min_interval, dt.timedelta(minutes=10)),
    "per-run": (4, lambda s: s.announce.per_run, 4),
    "per-day": (6, lambda s: s.announce.per_day, 6),
    "alternates": (True, lambda s: s.announce.alternates, True),
}
SITES = (
    '[[sites]]\nname = "docs"\nsitemap = "docs.xml"\nstate = "d.json"\n[[sites]]\nname = "blog"\nsitemap = "blog.xml"\nstate = "b.json"\n'
)


def _toml(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "[" + ", ".join(_toml(each) for each in value) + "]"
    return f'"{value}"' if isinstance(value, str) else str(value)


def _settings(tmp_path: Path, option: Option, source: str) -> Settings:
    """The Settings of a run given the example of ``option`` by ``source`` alone."""
    value = EXAMPLES[option.name][0]
    items = value if isinstance(value, list) else [value]
    (tmp_path / "public").mkdir(exist_ok=True)
    (tmp_path / "other.toml").write_text(SITES if option.name == "site" else "")
    config = SITES if option.name == "site" else ""
    words: list[str] = [] if option.name == "site" else ["s.xml"]
    environ: dict[str, str] = {}
    if option.name == "site-name":
        words += ["--state", DB]
    if source == "flag":
        words += [f"--{option.name}"] if option.kind == "flag" else [word for item in items for word in (f"--{option.name}", str(item))]
    elif source == "environment":
        environ[option.environment[0]] = "true" if option.kind == "flag" else "\n".join(str(item) for item in items)
    else:
        config = f"{option.name} = {_toml(value)}\n" + config
    (tmp_path / "notify-changes.toml").write_text(config)
    namespace = make_parser().parse_args(words)
    cli = {name.replace("_", "-"): given for name, given in vars(namespace).items()}
    runs = build_runs("run", cli, environ, tmp_path)
    assert len(runs) == 1, [each.site for each in runs]
    return runs[0]


def _expected(option: Option, tmp_path: Path) -> Any:
    wanted = EXAMPLES[option.name][2]
    return Path(str(wanted).replace("TMP", str(tmp_path))) if isinstance(wanted, str) and wanted.startswith("TMP/") else wanted


def problems(option: Option) -> list[str]:
    """What a row lacks: its help, a command, a known kind, a variable derived from its name, a
    Settings field to land in, a metavar for its help, a default it takes, an example here."""
    fields = {each.name for each in dataclasses.fields(Settings)}
    found = []
    if not re.fullmatch(r"[a-z]+(-[a-z]+)*", option.name):
        found.append("a name in lower case words joined by -")
    if not callable(option.convert) or not callable(option.convert(f"--{option.name}")):
        found.append("a converter")
    if not isinstance(option.help, str) or len(option.help) < 10 or "%%" in option.help:
        found.append("its help (plain text: add_options escapes a %)")
    if option.kind not in ("value", "flag", "list"):
        found.append("a kind: value, flag or list")
    if not option.commands or not set(option.commands) <= set(COMMANDS):
        found.append(f"the commands that take it, of {COMMANDS}")
    if option.environment[0] != "NOTIFY_CHANGES_" + option.name.upper().replace("-", "_"):
        found.append("its variable NOTIFY_CHANGES_<NAME>")
    if option.setting not in fields:
        found.append(f"a Settings field to land in ({option.setting} is none)")
    if option.kind != "flag" and not option.metavar and not option.choices:
        found.append("a metavar")
    if option.default is not None and option.kind != "flag" and not _takes(option, option.default):
        found.append("a default it takes")
    if option.name not in EXAMPLES:
        found.append("its line in tests/test_options.py EXAMPLES: a value, and where it lands in Settings")
    return found


def _takes(option: Option, value: Any) -> bool:
    try:
        return bool(option.convert(option.name)(value) == value)
    except UsageError:
        return False


def test_every_row_is_whole() -> None:
    assert {option.name: problems(option) for option in OPTIONS if problems(option)} == {}
    assert set(EXAMPLES) == {option.name for option in OPTIONS}
    assert set(PARTS) <= {option.setting for option in OPTIONS}  # each part is made of options


@pytest.mark.parametrize(
    "change",
    [
        {"help": ""},
        {"commands": ()},
        {"commands": ("deploy",)},
        {"into": "batch"},
        {"metavar": None},
        {"kind": "many"},
        {"default": 0},
        {"name": "batch-sizes"},
    ],
)
def test_a_row_lacking_a_part_is_caught(change: dict[str, Any]) -> None:
    """The honest row has nothing missing; each of these lacks one part."""
    whole = next(option for option in OPTIONS if option.name == "batch-size")
    assert problems(whole) == []
    broken = dataclasses.replace(whole, **change)
    assert problems(broken) != []


@pytest.mark.parametrize("source", ["flag", "environment", "config"])
@pytest.mark.parametrize("option", OPTIONS, ids=[option.name for option in OPTIONS])
def test_an_option_reaches_settings_from_each_source(tmp_path: Path, option: Option, source: str) -> None:
    """An option in the table and in Settings that resolve forgot was taken, then ignored."""
    if source == "config" and option.config_key is None:  # --config, --site, --rule: the file refuses them
        with pytest.raises(UsageError, match=re.escape(option.name)):
            _settings(tmp_path, option, source)
        return
    settings = _settings(tmp_path, option, source)
    assert EXAMPLES[option.name][1](settings) == _expected(option, tmp_path)
    assert _expected(option, tmp_path) != option.default  # the example tells the value from the default


def test_the_command_line_comes_before_the_environment_and_the_environment_before_the_file(tmp_path: Path) -> None:
    (tmp_path / "notify-changes.toml").write_text("batch-size = 3\n")
    environ = {"NOTIFY_CHANGES_BATCH_SIZE": "4"}
    assert build_runs("run", {"sitemap": "s.xml"}, {}, tmp_path)[0].batch_size == 3
    assert build_runs("run", {"sitemap": "s.xml"}, environ, tmp_path)[0].batch_size == 4
    assert build_runs("run", {"sitemap": "s.xml", "batch-size": "5"}, environ, tmp_path)[0].batch_size == 5
    assert build_runs("run", {"sitemap": "s.xml"}, {"NOTIFY_CHANGES_BATCH_SIZE": ""}, tmp_path)[0].batch_size == 3  # empty: unset


def test_the_documented_variables_still_set_their_options(tmp_path: Path) -> None:
    environ = {"INDEXNOW_KEY": KEY, "INDEXNOW_KEY_PREVIOUS": OTHER_KEY, "NOTIFY_CHANGES_JOBS": "3"}
    settings = build_runs("run", {"sitemap": "s.xml"}, environ, tmp_path)[0]
    assert (settings.keys.default, settings.keys.previous, settings.jobs) == (KEY, OTHER_KEY, 3)
    both = build_runs("run", {"sitemap": "s.xml"}, {"INDEXNOW_KEY": KEY, "NOTIFY_CHANGES_KEY": OTHER_KEY}, tmp_path)[0]
    assert both.keys.default == OTHER_KEY  # NOTIFY_CHANGES_<NAME> first, then the older name


@pytest.mark.parametrize("value", ["yes", "1", "True"])
def test_a_flag_variable_is_true_or_false(tmp_path: Path, value: str) -> None:
    with pytest.raises(UsageError, match=f"NOTIFY_CHANGES_DRY_RUN: '{value}' must be true or false"):
        build_runs("run", {"sitemap": "s.xml"}, {"NOTIFY_CHANGES_DRY_RUN": value}, tmp_path)
    assert build_runs("run", {"sitemap": "s.xml"}, {"NOTIFY_CHANGES_DRY_RUN": "false"}, tmp_path)[0].dry_run is False


def test_a_variables_value_is_read_without_the_blanks_around_it(tmp_path: Path) -> None:
    """An Action input written as a YAML block (``state: |``) ends in a newline: that newline is
    no part of the path, the mode or the flag; a variable of blanks only is unset, as an empty one."""
    environ = {"NOTIFY_CHANGES_STATE": "st.json\n", "NOTIFY_CHANGES_INITIAL": " submit\n", "NOTIFY_CHANGES_DRY_RUN": "true\n"}
    settings = build_runs("run", {"sitemap": "s.xml"}, environ, tmp_path)[0]
    assert (settings.state, settings.initial, settings.dry_run) == (tmp_path / "st.json", "submit", True)
    (tmp_path / "notify-changes.toml").write_text("batch-size = 3\n")
    blank = build_runs("run", {"sitemap": "s.xml"}, {"NOTIFY_CHANGES_BATCH_SIZE": " \n", "NOTIFY_CHANGES_STATE": " "}, tmp_path)[0]
    assert (blank.batch_size, blank.state) == (3, tmp_path / "state" / "notify-changes.json")


@pytest.mark.parametrize(
    ("source", "blame"),
    [("environment", "NOTIFY_CHANGES_ENDPOINT"), ("flag", "--endpoint"), ("config", "notify-changes.toml: endpoint")],
)
@pytest.mark.parametrize("between", [",", ", ", " "])
def test_endpoints_written_with_commas_are_refused_with_the_way_to_write_them(
    tmp_path: Path, source: str, blame: str, between: str
) -> None:
    """A list written ``a,b`` or ``a b`` was taken as one URL, and every batch sent to a host that is not there."""
    both = f"https://a.example/indexnow{between}https://b.example/indexnow"
    cli: dict[str, Any] = {"sitemap": "s.xml"}
    environ: dict[str, str] = {}
    if source == "environment":
        environ["NOTIFY_CHANGES_ENDPOINT"] = both
    elif source == "flag":
        cli["endpoint"] = [both]
    else:
        (tmp_path / "notify-changes.toml").write_text(f'endpoint = "{both}"\n')
    with pytest.raises(UsageError, match=re.escape(blame) + ".*separated by a comma or a space.*one URL a line"):
        build_runs("run", cli, environ, tmp_path)
    lines = build_runs("run", {"sitemap": "s.xml"}, {"NOTIFY_CHANGES_ENDPOINT": both.replace(between, "\n")}, tmp_path)[0]
    assert lines.endpoints == tuple(both.split(between))
    query = "https://c.example/indexnow?tags=a,b"  # a comma inside one URL is that URL's
    assert build_runs("run", {"sitemap": "s.xml", "endpoint": [query]}, {}, tmp_path)[0].endpoints == (query,)


@pytest.mark.parametrize("command", COMMANDS)
def test_each_command_parses_the_options_the_table_gives_it(command: str) -> None:
    import argparse

    parser = argparse.ArgumentParser()
    add_options(parser, command)
    taken = {word[2:] for action in parser._actions for word in action.option_strings if word.startswith("--")} - {"help"}
    assert taken == {option.name for option in OPTIONS if option.taken_by(command)}
    assert {"config", "site"} <= taken


def test_the_actions_inputs_are_the_tables_variables() -> None:
    """Each input that is an option reaches the program as the table's variable, never as a flag
    rebuilt in bash; every NOTIFY_CHANGES_ variable the Action sets is an option's."""
    own = {"sitemap", "mode", "args", "python", "extras"}  # the Action's own, or the positional SITEMAP
    by_name = {option.name: option for option in OPTIONS}
    notify = next(step for step in ACTION["runs"]["steps"] if step["id"] == "notify")
    for name in set(ACTION["inputs"]) - own:
        assert name in by_name, f"the input {name} is no option of the table"
        variable = by_name[name].environment[0]
        assert notify["env"].get(variable) == f"${{{{ inputs.{name} }}}}", name
        assert f"--{name}" not in notify["run"], f"the run step rebuilds --{name}"
    variables = {variable for variable in notify["env"] if variable.startswith("NOTIFY_CHANGES_")}
    assert variables == {by_name[name].environment[0] for name in set(ACTION["inputs"]) - own}
