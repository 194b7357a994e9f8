"""The Action's install step (``python -m notifier.action``) as functions: which extras a job
needs and which of their requirements are missing. The Action's own tests run the step as a
program (tests/test_action.py), which mutation's coverage map cannot see into; these name the
mutants of scripts/mutate.py they kill (#44)."""

from __future__ import annotations

import importlib.metadata
from pathlib import Path

import pytest

from notifier import action
from notifier.action import missing_requirements, wanted_extras

PG = "postgresql://ci@db.example.org/deploys"
TOML = f'state = "{PG}"\nsite-name = "www"\n'


@pytest.mark.parametrize(
    ("inputs", "config", "wanted"),
    [
        ({"extras": "mkdocs, mkdocs sphinx"}, "", ["mkdocs", "sphinx"]),  # ``word not in wanted`` dropped: twice
        ({"args": f"--site-name {PG}"}, "", []),  # only the word after --state is a state (``word == "--state"`` dropped)
        ({"args": "--dry-run --state"}, "", []),  # --state last: the run step says it wants a value (no IndexError)
        ({"config": "", "site": ""}, TOML, ["postgres"]),  # empty inputs are "not given" (``or None`` dropped)
        ({}, "state = [unclosed\n", []),  # a config the run refuses in its own line (``pass`` raised)
    ],
)
def test_the_words_of_the_inputs_that_decide_the_extras(tmp_path: Path, inputs: dict[str, str], config: str, wanted: list[str]) -> None:
    if config:
        (tmp_path / "notify-changes.toml").write_text(config)
    assert wanted_extras(inputs, tmp_path) == wanted


def requires(*lines: str) -> object:
    return lambda distribution: list(lines) if distribution == action.DISTRIBUTION else None


def test_only_the_missing_requirements_of_the_wanted_extras_are_printed(monkeypatch: pytest.MonkeyPatch) -> None:
    """Kills every mutant of missing_requirements (uncovered before: only the program ran it)."""
    monkeypatch.setattr(
        importlib.metadata,
        "requires",
        requires(
            "requests>=2.31",  # a run-time requirement: installed with the package, never printed
            'no-such-package-x>=1; extra == "report"',
            'orjson>=3; extra == "report"',  # installed: not printed
            'no-such-package-y[binary]>=3.1; extra == "postgres"',
            "no-such-package-z ; extra == 'mkdocs'",  # single quotes, spaces: the same marker
        ),
    )
    assert missing_requirements([]) == []
    assert missing_requirements(["report"]) == ["no-such-package-x>=1"]
    assert missing_requirements(["postgres", "mkdocs"]) == ["no-such-package-y[binary]>=3.1", "no-such-package-z"]
    monkeypatch.setattr(importlib.metadata, "requires", lambda distribution: None)  # metadata without requirements
    assert missing_requirements(["report"]) == []


def test_the_program_reads_the_actions_environment(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """main(): the Action's own inputs as NC_*, the options' as NOTIFY_CHANGES_*; an unknown extra
    is one line and exit 2 (kills main's uncovered mutants)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(
        importlib.metadata, "requires", requires('no-such-driver>=3; extra == "postgres"', 'no-such-jinja; extra == "report"')
    )
    assert action.main({"NOTIFY_CHANGES_STATE": PG}) == 0
    assert capsys.readouterr() == ("no-such-driver>=3\n", "")
    assert action.main({"NC_EXTRAS": "report", "NC_ARGS": "--dry-run"}) == 0
    assert capsys.readouterr() == ("no-such-jinja\n", "")
    assert action.main({"NC_EXTRAS": "mkdoc"}) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.startswith("the extras input names 'mkdoc'; notify-changes provides ") and err.count("\n") == 1
    monkeypatch.setenv("NOTIFY_CHANGES_STATE", PG)  # no mapping given: the process's environment
    assert action.main() == 0
    assert capsys.readouterr().out == "no-such-driver>=3\n"
