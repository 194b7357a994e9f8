"""The documentation site builds as CI builds it: ``mkdocs build --strict`` with the project's own
plugin, which stamps the site's sitemap from git and checks it (#43 item 4). A clone without the
history (shallow, or no repository at all) builds too: the hook says the sitemap is not dated."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.docs import ROOT, written

pytestmark = pytest.mark.slow  # each builds the whole site in a process of its own (a few seconds)


def _build(folder: Path, site: Path) -> subprocess.CompletedProcess[str]:
    env = {name: value for name, value in os.environ.items() if name != "NOTIFY_CHANGES"}  # the plugin on, as in CI
    command = [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)]
    return subprocess.run(command, cwd=folder, env=env, capture_output=True, text=True, timeout=300, check=False)


def _copy(target: Path) -> Path:
    """The files the site is built from, outside any repository."""
    for name in ("mkdocs.yml", "docs", "scripts/docs_reference.py", "state/schema.json"):
        (target / name).parent.mkdir(parents=True, exist_ok=True)
        (shutil.copytree if (ROOT / name).is_dir() else shutil.copy)(ROOT / name, target / name)
    return target


def test_the_site_builds_strict_and_the_plugin_stamps_and_checks_its_sitemap(tmp_path: Path) -> None:
    done = _build(ROOT, tmp_path / "site")
    assert done.returncode == 0, done.stderr
    assert "notify-changes: stamp: rewrote" in done.stderr and "WARNING" not in done.stderr, done.stderr
    sitemap = (tmp_path / "site" / "sitemap.xml").read_text(encoding="utf-8")
    locs = re.findall(r"<loc>([^<]+)</loc>", sitemap)
    assert len(locs) == len(written()) and all(loc.startswith("https://notify-changes.github.io/notify-changes/") for loc in locs)
    rules = (tmp_path / "site" / "reference" / "rules" / "index.html").read_text(encoding="utf-8")
    assert "<code>page-canonical-elsewhere</code>" in rules and "<!-- generated" not in rules  # made from RULES at the build


def test_a_shallow_clone_builds_the_site_without_dating_its_sitemap(tmp_path: Path) -> None:
    source = _copy(tmp_path / "source")
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.org", "-c", "init.defaultBranch=main"]
    subprocess.run([*git, "init", "-q"], cwd=source, check=True)
    subprocess.run([*git, "add", "-A"], cwd=source, check=True)
    subprocess.run([*git, "commit", "-qm", "docs"], cwd=source, check=True, env=os.environ | {"GIT_AUTHOR_DATE": "2026-01-02T10:00:00Z"})
    subprocess.run(["git", "clone", "-q", "--depth", "1", source.as_uri(), str(tmp_path / "clone")], check=True)
    done = _build(tmp_path / "clone", tmp_path / "site")
    assert done.returncode == 0, done.stderr
    assert "notify-changes: a shallow clone: this build's sitemap is neither stamped nor checked" in done.stderr, done.stderr


def test_a_folder_outside_git_builds_the_site_without_dating_its_sitemap(tmp_path: Path) -> None:
    folder = _copy(tmp_path / "unpacked")
    done = _build(folder, tmp_path / "site")
    assert done.returncode == 0, done.stderr
    assert "is not a git work tree: this build's sitemap is neither stamped nor checked" in done.stderr, done.stderr
