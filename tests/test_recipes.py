"""The README's deploy recipes work as written (issue #13, item 6): each parses as its host
reads it, keeps the state, runs one deploy at a time, and every notify-changes command in
it is one the program accepts; the rsync recipe is run for real."""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest
import yaml

from notifier.cli import make_parser, split_command
from tests.conftest import BASE, KEY, program_folder
from tests.docs import everything, page
from tests.fakeindexnow import FakeIndexNow

ROOT = Path(__file__).resolve().parents[1]
RECIPES = page("integrations/hosting.md") + page("integrations/deploy-hook.md")


def block_after(title: str, language: str) -> str:
    """The first ```language block after the paragraph that starts with ``title``."""
    rest = RECIPES.split(title, 1)[1]
    return rest.split(f"```{language}\n", 1)[1].split("```", 1)[0]


def accepted(command: str) -> None:
    """A notify-changes command line the program parses (its options exist, values fit)."""
    words = shlex.split(command.split("#", 1)[0])
    assert words[0] == "notify-changes", command
    word, args = split_command(words[1:])
    assert word in (None, "run", "check"), command
    namespace = make_parser(word).parse_args(args)
    assert namespace.sitemap, command


def commands(text: str) -> list[str]:
    found = re.findall(r"notify-changes(?: [^\n\"`&]*)", text)
    return [each.strip() for each in found if not each.startswith("notify-changes/") and not each.startswith("notify-changes-")]


def test_gitlab_ci_recipe() -> None:
    job = yaml.safe_load(block_after("**GitLab CI**", "yaml"))["deploy"]
    assert job["resource_group"]  # one deploy at a time
    assert "state/" in job["cache"]["paths"] and job["variables"]["GIT_DEPTH"] == "0"
    lines = [line for line in job["script"] if line.startswith("notify-changes")]
    assert [line.split()[1] for line in lines] == ["check", "public/sitemap.xml"]  # check before publish, run after
    assert job["script"].index(lines[0]) < job["script"].index("make publish") < job["script"].index(lines[1])
    for line in lines:
        accepted(line)


def test_netlify_recipe() -> None:
    config = tomllib.loads(block_after("**Netlify**", "toml"))
    assert config["build"]["publish"] == "public" and config["plugins"][0]["package"] == "/plugins/notify-changes"
    plugin = block_after("**Netlify**", "js")
    assert "onPostBuild" in plugin and "onSuccess" in plugin  # checked before the deploy, announced once live
    assert 'utils.cache.restore("state")' in plugin and 'utils.cache.save("state")' in plugin
    options = re.search(r'const options = "([^"]+)"', plugin)
    assert options is not None
    for template in re.findall(r"`(notify-changes [^`]+)`", plugin):
        accepted(template.replace("${options}", options.group(1)))


def test_cloudflare_pages_recipe() -> None:
    script = block_after("**Cloudflare Pages**", "sh")
    found = commands(script)
    assert [line.split()[1] for line in found] == ["check", "public/sitemap.xml"]
    for line in found:
        accepted(line)


def test_every_readme_workflow_runs_one_deploy_at_a_time() -> None:
    workflows = [yaml.safe_load(block) for block in re.findall(r"```yaml\n(name: .*?)```", everything(), re.DOTALL)]
    assert len(workflows) >= 2
    for workflow in workflows:
        assert workflow["concurrency"]["group"] and workflow["concurrency"]["cancel-in-progress"] is False, workflow["name"]


@pytest.mark.program
@pytest.mark.skipif(shutil.which("rsync") is None, reason="rsync is not installed (Debian: apt-get install rsync)")
def test_the_rsync_recipe_deploys_and_announces(tmp_path: Path, fake: FakeIndexNow) -> None:
    """Run as written: the hook is written by the installed program, then deploys and announces."""
    script = block_after("**A plain rsync deploy**", "sh")
    save_line, build_line, hook_line = (line.split("#", 1)[0].strip() for line in script.strip().splitlines())
    assert save_line == "notify-changes deploy-hook > deploy-hook.sh" and build_line.startswith("hugo")
    words = shlex.split(hook_line)
    assert words[:3] == ["sh", "deploy-hook.sh", "public/sitemap.xml"] and words[3] == "rsync"
    project = tmp_path / "project"
    (project / "public").mkdir(parents=True)
    pages = "".join(f"<url><loc>{BASE}/p{n}/</loc><lastmod>2025-0{n + 1}-01</lastmod></url>" for n in range(3))
    (project / "public" / "sitemap.xml").write_text(f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{pages}</urlset>')
    (project / "public" / f"{KEY}.txt").write_text(KEY)
    served = tmp_path / "srv"
    words[-1] = f"{served}/"  # web:/srv/tea-house/ -> a local folder
    env = {
        "PATH": f"{program_folder()}:{Path(shutil.which('rsync') or '').parent}:/usr/bin:/bin",  # the program under test
        "INDEXNOW_KEY": KEY,
        "HTTP_PROXY": fake.url,
        "NO_PROXY": "127.0.0.1",
        "NOTIFY_ARGS": f"--endpoint {fake.endpoint} --initial submit",
    }
    saved = subprocess.run(["sh", "-c", save_line], cwd=project, env=env, capture_output=True, text=True, timeout=60)
    assert saved.returncode == 0, saved.stderr
    assert (project / "deploy-hook.sh").read_bytes() == (ROOT / "notifier" / "deploy-hook.sh").read_bytes()
    done = subprocess.run(words, cwd=project, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert (served / "sitemap.xml").is_file()  # published
    assert sorted(fake.delivered()) == [f"{BASE}/p{n}/" for n in range(3)]  # then announced
    assert (project / "state" / "notify-changes.json").is_file()  # the state kept beside the project
