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


def test_every_state_command_and_option_is_in_the_readme() -> None:
    import argparse

    from notifier.commands import state_request

    parser = argparse.ArgumentParser()
    state_request.add_arguments(parser)
    section = README.split("## Inspecting the state", 1)[1].split("\n## ", 1)[0]
    options = [opt for action in parser._actions for opt in action.option_strings if opt.startswith("--") and opt != "--help"]
    assert [opt for opt in options if f"`{opt}" not in README and f" {opt} " not in section] == []
    assert [action for action in state_request.ACTIONS if f"| `state {action}" not in section] == []


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


def test_the_options_table_is_the_one_source_of_the_parser_the_api_and_the_action() -> None:
    """notifier/settings/options.py defines each option once; the parser, api.Options and action.yml follow it."""
    import yaml

    from notifier.api import Options
    from notifier.settings.options import OPTIONS

    parsed = {opt[2:] for action in make_parser()._actions for opt in action.option_strings if opt.startswith("--")}
    assert {option.name for option in OPTIONS} == parsed - {"help", "version", "config", "rule"}
    api = set(Options.__annotations__) - {"config", "rules", "history", "environ", "cwd"}  # the API's own
    printed = {"format"}  # the API prints nothing: a report style has nothing to style
    assert api == {"endpoints" if option.name == "endpoint" else option.field for option in OPTIONS if option.name not in printed}
    inputs = yaml.safe_load((Path(__file__).resolve().parents[1] / "action.yml").read_text())["inputs"]
    own = {"sitemap", "mode", "args", "python", "config", "extras"}  # the Action's own, or the positional SITEMAP
    assert set(inputs) - own <= {option.name for option in OPTIONS}, set(inputs) - own
    for name in set(inputs) - own:  # an input names its option's default where it has one
        option = next(option for option in OPTIONS if option.name == name)
        if isinstance(option.default, (int, float)) and not isinstance(option.default, bool) and option.default:
            assert f"{option.default:g}" in inputs[name]["description"], name


def test_a_request_timeout_of_zero_is_refused_not_made_thirty(offline_site: object) -> None:
    from notifier.errors import UsageError
    from notifier.settings.settings import build_settings

    try:
        build_settings("check", {"sitemap": "s.xml", "request-timeout": "0"})
    except UsageError as error:
        assert "--request-timeout: '0' must be a number of seconds from more than 0 to 86400" in str(error)
    else:
        raise AssertionError("a request timeout of 0 was taken")
