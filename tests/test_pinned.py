"""Decisions users rely on that no test stated (#22's audit): each test states the behaviour."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from notifier.cli import main
from notifier.history import read_history
from notifier.sources import SourceFinder
from tests.conftest import BASE, NS, Site, urlset
from tests.test_history import Repo


def _commit_with(repo: Repo, files: dict[str, str], *, author: str, committer: str) -> None:
    """A commit whose author and committer times differ, as a rebase or cherry-pick leaves them."""
    for name, text in files.items():
        (repo.root / name).parent.mkdir(parents=True, exist_ok=True)
        (repo.root / name).write_text(text)
        repo.git("add", name)
    env = {key: value for key, value in os.environ.items() if not key.startswith("GIT_")}
    env.update(GIT_AUTHOR_DATE=author, GIT_COMMITTER_DATE=committer, GIT_AUTHOR_NAME="A", GIT_AUTHOR_EMAIL="a@b.c")
    env.update(GIT_COMMITTER_NAME="C", GIT_COMMITTER_EMAIL="c@b.c", HOME=str(repo.root))
    subprocess.run(["git", "commit", "-q", "-m", "rebased"], cwd=repo.root, env=env, check=True, capture_output=True)


def test_stamp_writes_the_author_time_of_the_last_commit_not_the_rebase_time(offline_site: Site) -> None:
    repo = Repo(offline_site.root)
    _commit_with(repo, {"content/posts/tea.md": "---\ntitle: Tea\n---\n"}, author="2025-04-01T10:00:00Z", committer="2025-06-30T18:00:00Z")
    (offline_site.root / "notify-changes.toml").write_text('[history]\npreset = "hugo"\n')
    offline_site.write(f'<urlset xmlns="{NS}"><url><loc>{BASE}/posts/tea/</loc><lastmod>2026-01-01</lastmod></url></urlset>')
    before = Path.cwd()
    os.chdir(offline_site.root)
    try:
        assert main(["stamp", str(offline_site.sitemap)]) == 0
    finally:
        os.chdir(before)
    assert "<lastmod>2025-04-01T10:00:00Z</lastmod>" in offline_site.sitemap.read_text()  # when the author wrote it


def test_a_span_runs_from_the_earliest_to_the_latest_of_author_and_committer_times(tmp_path: Path) -> None:
    repo = Repo(tmp_path / "r")
    _commit_with(repo, {"a.md": "x"}, author="2025-04-01T10:00:00Z", committer="2025-06-30T18:00:00Z")
    span = read_history(repo.root)["a.md"]
    assert (span.first.month, span.last.month) == (4, 6)


@pytest.mark.parametrize("lastmod", ["2025-04-01T10:00:00Z", "2025-06-30T18:00:00Z"])
def test_either_time_of_a_rebased_commit_backs_a_lastmod(offline_site: Site, lastmod: str) -> None:
    repo = Repo(offline_site.root)
    _commit_with(repo, {"content/posts/tea.md": "---\ntitle: Tea\n---\n"}, author="2025-04-01T10:00:00Z", committer="2025-06-30T18:00:00Z")
    (offline_site.root / "notify-changes.toml").write_text('[history]\npreset = "hugo"\n')
    offline_site.write(urlset({"/posts/tea/": lastmod}))
    assert offline_site.check().code == 0


def test_the_callers_git_variables_never_reach_the_tools_git(offline_site: Site, monkeypatch: pytest.MonkeyPatch) -> None:
    """A deploy run from a git hook has GIT_DIR set (to the hook's repository, or a bare one)."""
    repo = Repo(offline_site.root)
    repo.commit({"content/about.md": "about"}, "2025-03-05T12:00:00Z")
    (offline_site.root / "notify-changes.toml").write_text('[history]\nsources = ["content/{path}.md"]\n')
    monkeypatch.setenv("GIT_DIR", str(offline_site.root / "nowhere.git"))
    monkeypatch.setenv("GIT_WORK_TREE", "/")
    offline_site.write(urlset({"/about/": "2025-03-05T12:00:00Z"}))
    result = offline_site.check()
    assert result.code == 0, result.err


def test_a_template_leading_out_of_the_repository_maps_to_nothing(tmp_path: Path) -> None:
    (tmp_path / "repo").mkdir()
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "tea.md").write_text("x")
    (tmp_path / "repo" / "linked").symlink_to(tmp_path / "outside")  # a link out, in a plain template
    finder = SourceFinder(["linked/{slug}.md"], tmp_path / "repo", tmp_path / "repo")
    assert finder.find("https://a.org/tea/") is None


def test_rest_of_a_one_segment_path_is_index(tmp_path: Path) -> None:
    """A language's home page (/fr/) is content/_index.fr.md under the hugo preset's {rest}.{first}."""
    (tmp_path / "content").mkdir()
    (tmp_path / "content" / "index.fr.md").write_text("x")
    finder = SourceFinder(["content/{rest}.{first}.md"], tmp_path, tmp_path)
    assert finder.find("https://a.org/fr/") == ("content/index.fr.md", None)
