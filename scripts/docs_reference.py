"""The documentation's reference, made from the registries, so that it cannot drift.

MkDocs runs this file as a hook (``hooks:`` in mkdocs.yml): in every page, a line
``<!-- generated: NAME -->`` is replaced by NAME's Markdown, made at build time from the
registry itself: every command's options (the parsers the program builds, and the option
table), the rules with their levels (``RULES``), the exit codes (``ExitCode``), the
``[history]`` presets (``PRESETS``) and the state's fields (``state/schema.json``). An unknown
NAME fails the build. ``python scripts/docs_reference.py NAME`` prints one part;
tests/test_docs.py reads the pages through :func:`render`.

The site uses the project's own plugin, which stamps the sitemap from git and checks it. A
clone without the history (``actions/checkout``'s default depth of 1, an unpacked archive)
cannot back any date, and the plugin fails such a build by design; for this site the hook
then builds without stamping or checking, and says so (``git fetch --unshallow`` restores both).
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import io
import json
import logging
import re
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from unittest import mock

ROOT = Path(__file__).resolve().parents[1]
GENERATED = re.compile(r"^<!-- generated: ([a-z-]+) -->$", re.MULTILINE)
log = logging.getLogger("mkdocs.hooks.docs_reference")


def option_table() -> tuple[Any, ...]:
    """The one table of run's and check's options (its rows: name, default, help, ...)."""
    from notifier.settings.options import OPTIONS

    return OPTIONS


def _cell(text: object) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def _default(value: object) -> str:
    """A default as a user writes it: ``1h``, ``120``, ``0``; none for an unset one."""
    if value is None or value is False or value == ():
        return ""
    if isinstance(value, dt.timedelta):
        seconds = int(value.total_seconds())
        for unit, size in (("d", 86_400), ("h", 3_600), ("m", 60)):
            if seconds and seconds % size == 0:
                return f"`{seconds // size}{unit}`"
        return f"`{seconds}`" if seconds else "`0`"
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, tuple):
        return ", ".join(f"`{each}`" for each in value)
    return f"`{_cell(value)}`"


def _captured(args: list[str]) -> argparse.ArgumentParser:
    """The parser a command word builds, caught as ``notify-changes WORD --help`` asks it for its help."""
    from notifier.cli import main

    caught: list[argparse.ArgumentParser] = []
    original = argparse.ArgumentParser.print_help

    def catch(parser: argparse.ArgumentParser, file: Any = None) -> None:
        caught.append(parser)
        original(parser, io.StringIO())

    quiet = contextlib.redirect_stdout(io.StringIO())
    with mock.patch.object(argparse.ArgumentParser, "print_help", catch), quiet, contextlib.suppress(SystemExit):
        main([*args, "--help"])
    if not caught:
        raise RuntimeError(f"notify-changes {' '.join(args)} --help printed no help")
    return caught[-1]


def command_parsers() -> dict[str, argparse.ArgumentParser]:
    """Every command's parser, by the words that name it (``run``, ``state``, ``key``...)."""
    from notifier.cli import TOOLS, make_parser

    parsers = {"run": make_parser("run"), "check": make_parser("check")}
    for tool in TOOLS:
        parsers[tool] = _captured([tool])
    return parsers


def _options(parser: argparse.ArgumentParser) -> Iterator[argparse.Action]:
    for action in parser._actions:
        if action.help != argparse.SUPPRESS and not isinstance(action, (argparse._HelpAction, argparse._VersionAction)):
            yield action


def _spelling(action: argparse.Action) -> str:
    if not action.option_strings:
        return f"`{action.metavar or action.dest.upper()}`" + (" (positional)" if action.nargs != "*" else "...")
    name = max(action.option_strings, key=len)
    if action.nargs == 0:
        return f"`{name}`"
    value = "|".join(action.choices) if action.choices else (action.metavar or action.dest.upper())
    return f"`{name} {value}`"


def _config_key(row: Any) -> str:
    """An option's config key: its name; ``[rules]`` for --rule; none for --config and --site."""
    if row.config_key is not None:
        return f"`{row.config_key}`"
    return "`[rules]` table" if row.name == "rule" else "none"


def options_page() -> str:
    """A section a command: each option as its parser takes it, with its help; run's with its config key and default."""
    table = {f"--{row.name}": row for row in option_table()}
    out: list[str] = []
    for word, parser in command_parsers().items():
        out += [f"## `notify-changes {word}`", "", _cell(parser.description or ""), ""]
        if word in ("run", "check"):
            out += ["| option | config key | variable | default | what it does |", "|---|---|---|---|---|"]
        else:
            out += ["| option | variable | what it does |", "|---|---|---|"]
        for action in _options(parser):
            help_text = _cell(action.help or "").replace("%%", "%")
            row = table.get(action.option_strings[0]) if action.option_strings else None
            variable = "" if row is None else ", ".join(f"`{name}`" for name in row.environment)
            if word not in ("run", "check"):  # a command's own words (--yes, --host) are no option: no variable
                out.append(f"| {_spelling(action)} | {variable} | {help_text} |")
                continue
            key = ("`sitemap`" if not action.option_strings else "") if row is None else _config_key(row)
            out.append(f"| {_spelling(action)} | {key} | {variable} | {'' if row is None else _default(row.default)} | {help_text} |")
        hidden = [f"`{action.option_strings[-1]}`" for action in parser._actions if action.help == argparse.SUPPRESS]
        if hidden:
            out += ["", f"It accepts run's own options too, and does not use them: {', '.join(hidden)}."]
        out.append("")
    return "\n".join(out)


def rules_page() -> str:
    from notifier.rules import RULES

    out = ["| rule | default level | what it catches |", "|---|---|---|"]
    out += [f"| `{rule.id}` | {rule.level} | {_cell(rule.catches)} |" for rule in RULES.values()]
    return "\n".join(out) + "\n"


def exit_codes_page() -> str:
    from notifier.errors import EXIT_CODE_MEANINGS, ExitCode

    out = ["| code | name | meaning |", "|---|---|---|"]
    out += [f"| {int(code)} | `{code.name}` | {_cell(EXIT_CODE_MEANINGS[code])} |" for code in ExitCode]
    return "\n".join(out) + "\n"


def presets_page() -> str:
    from notifier.history.source_files import PRESETS

    out = ["| preset | source templates, tried in order | front-matter date fields, first found wins |", "|---|---|---|"]
    for name, preset in PRESETS.items():
        templates = ", ".join(f"`{each}`" for each in preset.sources)
        out.append(f"| `{name}` | {templates} | {', '.join(f'`{each}`' for each in preset.fields)} |")
    return "\n".join(out) + "\n"


def _schema_rows(schema: dict[str, Any], node: dict[str, Any], path: str, rows: list[tuple[str, str, str]]) -> None:
    if "$ref" in node:
        node = schema["$defs"][node["$ref"].rsplit("/", 1)[1]] | {k: v for k, v in node.items() if k != "$ref"}
    kind = node.get("type", "const" if "const" in node else "")
    kinds = " or ".join(kind) if isinstance(kind, list) else str(kind)
    if path:
        rows.append((path, kinds, _cell(node.get("description", ""))))
    for name, child in node.get("properties", {}).items():
        _schema_rows(schema, child, f"{path}.{name}" if path else name, rows)
    if isinstance(node.get("items"), dict):
        _schema_rows(schema, node["items"], f"{path}[]", rows)
    if isinstance(node.get("additionalProperties"), dict):
        _schema_rows(schema, node["additionalProperties"], f"{path}.*", rows)


def state_fields() -> list[tuple[str, str, str]]:
    """Every field of the state file, as ``state/schema.json`` declares it: (path, type, description)."""
    schema = json.loads((ROOT / "state" / "schema.json").read_text(encoding="utf-8"))
    rows: list[tuple[str, str, str]] = []
    _schema_rows(schema, schema, "", rows)
    return rows


def state_page() -> str:
    out = ["| field | type | what it holds |", "|---|---|---|"]
    out += [f"| `{path}` | {kind} | {text} |" for path, kind, text in state_fields()]
    return "\n".join(out) + "\n"


PARTS: dict[str, Callable[[], str]] = {
    "options": options_page,
    "rules": rules_page,
    "exit-codes": exit_codes_page,
    "presets": presets_page,
    "state-fields": state_page,
}


def render(markdown: str) -> str:
    """The page with each ``<!-- generated: NAME -->`` line replaced by NAME's Markdown."""

    def part(match: re.Match[str]) -> str:
        if match.group(1) not in PARTS:
            raise ValueError(f"<!-- generated: {match.group(1)} -->: no such part; the parts are {', '.join(PARTS)}")
        return PARTS[match.group(1)]().rstrip("\n")

    return GENERATED.sub(part, markdown)


def without_history(folder: Path) -> str | None:
    """Why the git history of ``folder`` cannot date its pages, or None when it can."""
    try:
        done = subprocess.run(["git", "rev-parse", "--is-shallow-repository"], cwd=folder, capture_output=True, text=True, check=False)
    except OSError:
        return "git is not installed"
    if done.returncode != 0:
        return f"{folder} is not a git work tree"
    return "a shallow clone" if done.stdout.strip() == "true" else None


def on_config(config: Any, **_: object) -> Any:
    """MkDocs' hook, once the configuration is read: no history, no stamp and no check."""
    plugin = config.plugins.get("notify-changes")
    why = without_history(Path(config.config_file_path).parent)
    if plugin is not None and why is not None:
        log.info(f"notify-changes: {why}: this build's sitemap is neither stamped nor checked (the history dates its pages)")
        plugin.config.stamp = plugin.config.check = False
    return config


def on_page_markdown(markdown: str, **_: object) -> str:
    """MkDocs' hook: each page's Markdown before it is rendered."""
    return render(markdown)


if __name__ == "__main__":
    sys.stdout.write(PARTS[sys.argv[1]]() if len(sys.argv) == 2 and sys.argv[1] in PARTS else f"usage: {sys.argv[0]} {'|'.join(PARTS)}\n")
