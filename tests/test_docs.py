"""The README stays true: every option, exit code and rule the code defines is documented."""

from __future__ import annotations

import re
from pathlib import Path

from notifier.cli import make_parser
from notifier.errors import ExitCode
from notifier.rules import RULES

README = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")


def test_every_option_is_in_the_readme() -> None:
    options = [opt for action in make_parser()._actions for opt in action.option_strings if opt.startswith("--")]
    missing = [opt for opt in options if opt not in ("--help", "--version") and f"`{opt}" not in README]
    assert missing == []


def test_every_exit_code_is_in_the_readme() -> None:
    table = README.split("## Exit codes", 1)[1]
    for code in ExitCode:
        assert re.search(rf"^\| {int(code)} \|", table, re.MULTILINE), code


def test_every_rule_is_in_the_readme_with_its_default_level() -> None:
    rules = README.split("## Rules", 1)[1]
    for rule in RULES.values():
        assert f"| `{rule.id}` | {rule.level} |" in rules, rule.id


def test_the_readme_opens_with_the_two_set_up_commands() -> None:
    first_block = README.split("```sh\n", 1)[1].split("```", 1)[0].strip().splitlines()
    assert len(first_block) == 2
    assert "pip install" in first_block[0] and "notify-changes" in first_block[0]
    assert "pytest" in first_block[1]


def test_the_sample_run_of_the_first_command_works(capsys: object) -> None:
    from notifier.cli import main

    sample = Path(__file__).resolve().parents[1] / "examples" / "site" / "public" / "sitemap.xml"
    assert main([str(sample), "--dry-run", "--initial", "submit"]) == 0
    out = capsys.readouterr().out  # type: ignore[attr-defined]
    assert out.count("added    https://www.example-bakery.net/") == 6
    assert not Path("state").exists()


def test_every_api_setting_is_in_the_readme() -> None:
    from notifier.api import Options

    missing = [name for name in Options.__annotations__ if f"`{name}=" not in README]
    assert missing == []
