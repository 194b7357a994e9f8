"""The documentation stays true: every option, exit code, rule, preset and state field the code
defines is documented, and no page names an option or a rule the code does not have.

The reference pages are made from the registries when the site is built
(scripts/docs_reference.py); these tests read the pages as the site renders them (tests/docs.py),
and hold the hand-written pages (their tables of rules, exit codes and presets in more words) to
the same registries. tests/test_docs_site.py builds the site itself.
"""

from __future__ import annotations

import re
from pathlib import Path

from notifier.cli import make_parser
from notifier.errors import ExitCode
from notifier.rules import RULES
from tests.docs import README, everything, page, reference, section, written


def _options(parser: object) -> list[str]:
    return [opt for action in parser._actions for opt in action.option_strings if opt.startswith("--")]  # type: ignore[attr-defined]


def test_every_option_of_every_command_is_in_the_options_reference() -> None:
    options = page("reference/options.md")
    for word, parser in reference().command_parsers().items():
        commands = section(options, f"`notify-changes {word}`")
        missing = [opt for opt in _options(parser) if opt not in ("--help", "--version") and f"`{opt}" not in commands]
        assert missing == [], word


def test_every_option_of_a_run_is_explained_in_the_configuration_page() -> None:
    explained = section(page("configuration.md"), "The options of run and check")
    missing = [opt for opt in _options(make_parser()) if opt not in ("--help", "--version") and f"`{opt}" not in explained]
    assert missing == [], "add a row to the options table of docs/configuration.md"


# Other programs' options the pages show in their commands (hugo --minify, mkdocs build --strict, ...)
FOREIGN = {
    "--minify", "--strict", "--delete", "--project-name", "--quiet", "--cached", "--rebase", "--unshallow",
    "--follow", "--depth", "--no-isolation", "--paired", "--rounds", "--urls", "--changed", "--stores",
    "--skip", "--before", "--pages", "--disable-pip-version-check", "--no-audit", "--no-fund", "--silent", "--prefix",
    "--dry",  # the configuration page's example of an abbreviation refused
}  # fmt: skip


def test_no_page_names_an_option_or_a_rule_the_program_does_not_have() -> None:
    known = {opt for parser in reference().command_parsers().values() for opt in _options(parser)}
    for name, text in {"README.md": README, **written()}.items():
        named = set(re.findall(r"(?<![\w-])--[a-z][a-z-]*[a-z]", text))
        assert named - known - FOREIGN == set(), f"{name}: no command takes these (another program's? add it to FOREIGN)"
        rules = set(re.findall(r"--rule ([a-z-]+)=", text)) | set(re.findall(r"(?:error|warn)\[([a-z-]+)\]", text))
        rules |= set(re.findall(r"^\| `([a-z-]+)` \| (?:error|warn) \|", text, re.MULTILINE))
        assert rules - set(RULES) == set(), f"{name}: no such rule"


def test_every_state_command_and_option_is_on_the_state_page() -> None:
    import argparse

    from notifier.commands import state_request

    parser = argparse.ArgumentParser()
    state_request.add_arguments(parser)
    state = page("state.md")
    commands = section(state, "Inspecting the state")
    options = [opt for opt in _options(parser) if opt != "--help"]
    assert [opt for opt in options if f"`{opt}" not in everything() and f" {opt} " not in commands] == []
    assert [action for action in state_request.ACTIONS if f"| `state {action}" not in commands] == []


def test_every_exit_code_is_in_the_reference_and_its_detail() -> None:
    codes = page("reference/exit-codes.md")
    detail = section(codes, "In detail")
    for code in ExitCode:
        assert re.search(rf"^\| {int(code)} \| `{code.name}` \|", codes, re.MULTILINE), code
        assert re.search(rf"^\| {int(code)} \|", detail, re.MULTILINE), code
    assert {int(each) for each in re.findall(r"^\| (\d+) \|", detail, re.MULTILINE)} == {int(code) for code in ExitCode}


def test_every_rule_is_documented_with_its_default_level() -> None:
    generated, explained = page("reference/rules.md"), page("rules.md")
    for rule in RULES.values():
        assert f"| `{rule.id}` | {rule.level} | {rule.catches.replace('|', chr(92) + '|')} |" in generated, rule.id
        assert f"| `{rule.id}` | {rule.level} |" in explained, f"{rule.id}: add its row (level, cause, fix) to docs/rules.md"


def test_every_preset_is_documented_with_its_date_fields() -> None:
    from notifier.history.source_files import PRESETS

    generated = page("reference/presets.md")
    table = dict(re.findall(r"^\| `([a-z]+)` \| [^\n]* \| ([^|\n]+) \|$", page("history.md"), re.MULTILINE))
    assert set(table) == set(PRESETS), "docs/history.md's presets table"
    for name, preset in PRESETS.items():
        assert re.findall(r"`([^`]+)`", table[name]) == list(preset.fields), name
        assert all(f"`{each}`" in generated for each in preset.sources), name


def test_every_field_of_the_state_schema_is_in_the_state_reference() -> None:
    import json

    schema = json.loads((Path(__file__).resolve().parents[1] / "state" / "schema.json").read_text(encoding="utf-8"))
    fields = page("reference/state.md")
    for name in [*schema["properties"], *schema["$defs"]["run"]["properties"]]:
        assert f"`{name}`" in fields or f".{name}`" in fields, name
    assert [path for path, _, _ in reference().state_fields() if f"| `{path}` |" not in fields] == []


def test_an_unknown_generated_part_fails_the_build() -> None:
    import pytest

    with pytest.raises(ValueError, match="no such part"):
        reference().render("<!-- generated: optoins -->\n")


def test_the_readme_opens_with_the_two_set_up_commands() -> None:
    first_block = README.split("```sh\n", 1)[1].split("```", 1)[0].strip().splitlines()
    assert len(first_block) == 2
    assert "pip install" in first_block[0] and "notify-changes" in first_block[0]
    assert "pytest" in first_block[1]


def test_the_readme_is_a_front_door_of_at_most_250_lines_that_links_into_the_site() -> None:
    assert len(README.splitlines()) <= 250
    site = "https://notify-changes.github.io/notify-changes/"
    linked = re.findall(rf"\]\({re.escape(site)}([^)#]*)\)", README)
    assert len(linked) >= 10
    pages = set(written())
    for link in linked:  # a page's URL is its path without .md (MkDocs' directory URLs)
        assert f"{link.rstrip('/')}.md" in pages or f"{link}index.md" in pages, link


def test_the_sample_run_of_the_first_command_works(capsys: object) -> None:
    from notifier.cli import main

    sample = Path(__file__).resolve().parents[1] / "examples" / "site" / "public" / "sitemap.xml"
    assert main([str(sample), "--dry-run", "--initial", "submit"]) == 0
    out = capsys.readouterr().out  # type: ignore[attr-defined]
    assert out.count("added    https://www.example-bakery.net/") == 6
    assert not Path("state").exists()


def test_every_api_setting_is_in_the_python_page() -> None:
    from notifier.api import Options

    missing = [name for name in Options.__annotations__ if f"`{name}=" not in page("integrations/python.md")]
    assert missing == []


def test_the_options_table_is_the_one_source_of_the_parser_the_api_and_the_action() -> None:
    """notifier/settings/options.py defines each option once; the parser, api.Options and action.yml follow it."""
    import yaml

    from notifier.api import Options
    from notifier.settings.options import OPTIONS

    parsed = {opt[2:] for action in make_parser()._actions for opt in action.option_strings if opt.startswith("--")}
    assert {option.name for option in OPTIONS} == parsed - {"help", "version"}
    api = set(Options.__annotations__) - {"history", "environ", "cwd"}  # the API's own
    printed = {"format"}  # the API prints nothing: a report style has nothing to style
    assert api == {option.keyword for option in OPTIONS if option.name not in printed}
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


def test_the_readme_shows_the_report_page_and_every_metric() -> None:
    """#42: the README shows the page (the screenshot scripts/report_screenshot.py makes) and
    lists every metric family a metrics file has, for a Grafana panel."""
    from notifier import metrics

    raw = "https://raw.githubusercontent.com/notify-changes/notify-changes/main/"
    shown = re.findall(r"!\[[^\]]*\]\(([^)]+\.png)\)", README)
    # absolute, so the picture shows on the package index's page too (test_packaging.py)
    assert shown and all(image.startswith(raw) for image in shown), shown
    assert all((Path(__file__).parent.parent / image.removeprefix(raw)).is_file() for image in shown)
    source = Path(metrics.__file__).read_text()
    families = {f"{metrics.PREFIX}{name}" for name in re.findall(r'\{PREFIX\}(\w+)"', source)}
    families |= {f"{metrics.PREFIX}urls_{what}_total" for what, _ in metrics.COUNTERS}
    families.discard(f"{metrics.PREFIX}urls_")
    assert len(families) == 7 and all(f"`{family}`" in README for family in families), families
