"""lastmod-vs-history against real git repositories with fixed commit dates."""

from __future__ import annotations

import datetime as dt
import os
import subprocess
from pathlib import Path

import pytest

from notifier.errors import HistoryError
from notifier.history.git import read_history, repo_root
from tests.conftest import Result, Site, urlset


class Repo:
    def __init__(self, root: Path) -> None:
        self.root = root
        root.mkdir(parents=True, exist_ok=True)
        self.git("init", "-q", "-b", "main")

    def git(self, *args: str, when: str = "2024-01-01T00:00:00Z", stderr: bool = False) -> str:
        """What git printed (``stderr``: what it said on stderr), with fixed dates and no user config."""
        env = {key: value for key, value in os.environ.items() if not key.startswith("GIT_")}
        env.update(
            GIT_AUTHOR_DATE=when,
            GIT_COMMITTER_DATE=when,
            GIT_AUTHOR_NAME="A",
            GIT_AUTHOR_EMAIL="a@b.c",
            GIT_COMMITTER_NAME="A",
            GIT_COMMITTER_EMAIL="a@b.c",
            HOME=str(self.root),
        )
        done = subprocess.run(["git", *args], cwd=self.root, env=env, capture_output=True, text=True, check=True)
        return done.stderr if stderr else done.stdout

    def commit(self, files: dict[str, str], when: str) -> None:
        for name, text in files.items():
            path = self.root / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
            self.git("add", name, when=when)
        self.git("commit", "-q", "-m", f"at {when}", when=when)


@pytest.fixture
def repo(offline_site: Site) -> Repo:
    repo = Repo(offline_site.root)
    repo.commit({"content/about.md": "about", "content/blog/first/index.md": "first"}, "2024-01-10T10:00:00Z")
    repo.commit({"content/about.md": "about, edited"}, "2024-03-05T12:00:00Z")
    (offline_site.root / "notify-changes.toml").write_text('[history]\nsources = ["content/{path}/index.md", "content/{path}.md"]\n')
    return repo


def check(site: Site) -> Result:
    return site.check("--rule", "lastmod-missing=off")


def test_honest_dates_from_git_pass(offline_site: Site, repo: Repo) -> None:
    offline_site.write(urlset({"/about/": "2024-03-05T12:00:00Z", "/blog/first/": "2024-01-10", "/contact/": "2024-02-01"}))
    result = check(offline_site)
    assert result.code == 0, result.out
    assert "1 page(s) have no source file matching [history] sources" in result.out  # once, as a count


def test_a_lastmod_later_than_the_last_commit_fails(offline_site: Site, repo: Repo) -> None:
    offline_site.write(urlset({"/about/": "2024-06-01T08:00:00Z", "/blog/first/": "2024-01-10"}))
    result = check(offline_site)
    assert result.code == 1
    assert (
        "error[lastmod-vs-history] http://www.shop-site.org/about/: lastmod 2024-06-01T08:00:00Z is later than "
        "the last commit of content/about.md (2024-03-05T12:00:00Z)" in result.out
    )


def test_a_lastmod_earlier_than_the_first_commit_fails(offline_site: Site, repo: Repo) -> None:
    offline_site.write(urlset({"/about/": "2023-05-01", "/blog/first/": "2024-01-10"}))
    result = check(offline_site)
    assert result.code == 1 and "earlier than the first commit of content/about.md" in result.out


def test_the_tolerance_is_configurable(offline_site: Site, repo: Repo) -> None:
    (offline_site.root / "notify-changes.toml").write_text('[history]\nsources = ["content/{path}.md"]\ntolerance = "30d"\n')
    offline_site.write(urlset({"/about/": "2024-03-20T08:00:00Z"}))
    assert check(offline_site).code == 0


def test_a_shallow_clone_is_exit_2_saying_fetch_depth_0(offline_site: Site, repo: Repo, tmp_path: Path) -> None:
    shallow = tmp_path / "shallow"
    subprocess.run(["git", "clone", "-q", "--depth", "1", f"file://{repo.root}", str(shallow)], check=True, capture_output=True)
    (offline_site.root / "notify-changes.toml").write_text(f'[history]\nsources = ["content/{{path}}.md"]\nrepo = "{shallow}"\n')
    offline_site.write(urlset({"/about/": "2024-03-05"}))
    result = check(offline_site)
    assert result.code == 2 and "shallow clone" in result.err and "fetch-depth: 0" in result.err


@pytest.mark.parametrize(("filter_spec", "refused"), [("tree:0", True), ("blob:none", False)])
def test_a_treeless_partial_clone_is_refused_and_a_blobless_one_is_read(
    offline_site: Site, repo: Repo, tmp_path: Path, filter_spec: str, refused: bool
) -> None:
    """actions/checkout offers `filter: tree:0`: git log would then fetch each commit's trees
    over the network, one round trip each, with no end in sight. blob:none keeps the trees."""
    repo.git("config", "uploadpack.allowFilter", "true")
    clone = tmp_path / "partial"
    subprocess.run(["git", "clone", "-q", f"--filter={filter_spec}", f"file://{repo.root}", str(clone)], check=True, capture_output=True)
    (offline_site.root / "notify-changes.toml").write_text(f'[history]\nsources = ["content/{{path}}.md"]\nrepo = "{clone}"\n')
    offline_site.write(urlset({"/about/": "2024-03-05T12:00:00Z"}))
    result = check(offline_site)
    if refused:
        assert result.code == 2 and "treeless partial clone (filter tree:0)" in result.err and "filter: blob:none" in result.err
    else:
        assert result.code == 0, result.err + result.out


def test_no_repository_is_exit_2(offline_site: Site, tmp_path: Path) -> None:
    (tmp_path / "notify-changes.toml").write_text('[history]\nsources = ["content/{path}.md"]\nrepo = "nowhere"\n')
    offline_site.write(urlset({"/about/": "2024-03-05"}))
    result = check(offline_site)
    assert result.code == 2 and "[history]" in result.err


@pytest.mark.slow
def test_history_for_many_files_is_one_git_log(tmp_path: Path) -> None:
    repo = Repo(tmp_path / "big")
    repo.commit({f"content/p{n}.md": str(n) for n in range(300)}, "2024-01-01T00:00:00Z")
    repo.commit({f"content/p{n}.md": f"{n}!" for n in range(0, 300, 3)}, "2024-02-01T00:00:00Z")
    spans = read_history(repo.root)
    assert len(spans) == 300
    assert spans["content/p3.md"].last.month == 2 and spans["content/p4.md"].last.month == 1
    assert spans["content/p3.md"].first.month == 1


def test_git_runs_a_fixed_number_of_times_whatever_the_page_count(offline_site: Site, repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:

    calls: list[list[str]] = []
    real_run = subprocess.run

    def counting_run(args: list[str], **kwargs: object) -> subprocess.CompletedProcess[str]:
        calls.append(args)
        return real_run(args, **kwargs)  # type: ignore[call-overload,no-any-return]

    repo.commit({f"content/p{n}.md": str(n) for n in range(200)}, "2024-01-01T00:00:00Z")
    monkeypatch.setattr(subprocess, "run", counting_run)  # the module notifier.history.git calls
    offline_site.write(urlset({f"/p{n}/": "2024-01-01" for n in range(200)}))
    assert check(offline_site).code == 0  # 200 pages stamped by one commit: backed by history, not lastmod-bulk
    assert [args[3] for args in calls] == ["rev-parse", "rev-parse", "config", "log"]


@pytest.mark.parametrize(("invalid", "bulk"), [(0, True), (10, True), (11, False)])
def test_backed_dates_leave_bulk_but_the_unbacked_ones_still_count(offline_site: Site, repo: Repo, invalid: int, bulk: bool) -> None:
    """Pages that git backs are left out of lastmod-bulk; the rest are judged, their invalid
    lastmods counted among the candidates, once each (10 sharing of 10 fires, and of 20, half;
    10 of 21 does not)."""
    repo.commit({f"content/p{n}.md": str(n) for n in range(12)}, "2024-01-01T00:00:00Z")
    listed: dict[str, str | None] = {f"/p{n}/": "2024-01-01T00:00:00Z" for n in range(12)}  # backed by one commit
    stamp = (dt.datetime.now(dt.UTC) - dt.timedelta(minutes=5)).strftime("%Y-%m-%dT%H:%M:%SZ")
    listed |= {f"/unbacked/{n}/": stamp for n in range(10)}  # no source file: a build stamp, minutes before the run
    listed |= {f"/odd/{n}/": "someday" for n in range(invalid)}
    offline_site.write(urlset(listed))
    result = offline_site.check("--rule", "lastmod-invalid=off", "--rule", "lastmod-missing=off")
    assert ("error[lastmod-bulk]" in result.out) is bulk, result.out


def test_a_held_back_page_is_judged_against_its_history_too(offline_site: Site, repo: Repo) -> None:
    """--site-dir holds back a page whose bytes did not change; its new date is still a claim."""
    offline_site.build_pages(["/about/", "/blog/first/"])
    honest = {"/about/": "2024-03-05T12:00:00Z", "/blog/first/": "2024-01-10"}
    offline_site.write(urlset(honest))
    assert offline_site.run("--site-dir", str(offline_site.public), "--rule", "lastmod-missing=off").code == 0
    offline_site.write(urlset(honest | {"/about/": "2024-06-01T08:00:00Z"}))  # the build clock; the page is the same
    result = offline_site.check("--site-dir", str(offline_site.public), "--rule", "lastmod-missing=off")
    assert result.code == 1, result.out
    assert "error[lastmod-vs-history] http://www.shop-site.org/about/: lastmod 2024-06-01T08:00:00Z is later than" in result.out
    offline_site.write(urlset(honest | {"/blog/first/": "2024-01-10T10:00:00Z"}))  # its commit's time: backed, held back
    assert offline_site.check("--site-dir", str(offline_site.public), "--rule", "lastmod-missing=off").code == 0


def test_git_log_is_read_record_by_record_whatever_the_file_names(tmp_path: Path) -> None:
    """A name with the old commit mark in it split a commit (the files after it lost their
    history); a name beginning with a newline lost it."""
    repo = Repo(tmp_path / "odd")
    odd = ["a\x1ecommit 1 2.md", "\nleading-newline.md", "trailing-newline.md\n", "commit 5 6", "z/commit 7 8.md", "zz.md"]
    repo.commit(dict.fromkeys(odd, "x"), "2024-01-01T00:00:00Z")
    repo.commit({"zz.md": "y", "\nleading-newline.md": "y"}, "2024-03-01T00:00:00Z")
    spans = read_history(repo.root)
    assert sorted(spans) == sorted(odd)
    assert spans["zz.md"].first.month == 1 and spans["zz.md"].last.month == 3
    assert spans["\nleading-newline.md"].last.month == 3
    assert spans["commit 5 6"].last.month == 1 and spans["a\x1ecommit 1 2.md"].last.month == 1


def test_a_treeless_filter_on_any_remote_is_refused(tmp_path: Path) -> None:
    """Two remotes, the second fetched treeless: the clone is refused all the same."""

    repo = Repo(tmp_path / "site")
    repo.commit({"a.md": "a"}, "2024-01-01T00:00:00Z")
    repo.git("config", "remote.origin.partialclonefilter", "blob:none")
    repo.git("config", "remote.mirror.partialclonefilter", "tree:0")
    with pytest.raises(HistoryError, match="treeless partial clone"):
        repo_root(repo.root)
    repo.git("config", "--unset", "remote.mirror.partialclonefilter")
    assert repo_root(repo.root) == repo.root.resolve()


def test_a_history_repo_that_is_no_git_work_tree_is_one_line(tmp_path: Path) -> None:

    plain = tmp_path / "plain"
    plain.mkdir()
    with pytest.raises(HistoryError, match=r"point \[history\] repo at the site's git work tree"):
        repo_root(plain)


def test_a_git_that_hangs_is_stopped_at_the_bound_with_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A git fetching objects over the network (a partial clone) must not hold the deploy."""
    import notifier.history.git

    bin_folder = tmp_path / "bin"
    bin_folder.mkdir()
    (bin_folder / "git").write_text("#!/bin/sh\nexec sleep 60\n")
    (bin_folder / "git").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_folder}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setattr(notifier.history.git, "GIT_TIMEOUT", 0.3)
    (tmp_path / "site").mkdir()
    with pytest.raises(HistoryError, match=r"`git rev-parse` took over 0.3 s .*use a full clone"):
        repo_root(tmp_path / "site")


def test_a_page_whose_source_has_no_commit_yet_is_counted_not_failed(offline_site: Site, repo: Repo) -> None:
    """An author builds before committing the new page: its source has no history and no date
    to hold the lastmod against; the check says so once and passes."""
    (offline_site.root / "content" / "new.md").write_text("a new page, not committed yet")
    offline_site.write(urlset({"/about/": "2024-03-05T12:00:00Z", "/new/": "2024-06-01T08:00:00Z"}))
    result = check(offline_site)
    assert result.code == 0, result.out
    assert "lastmod-vs-history: 1 page(s) have a source file with no commit yet and no date in its front matter" in result.out


def test_pages_held_back_at_their_sources_commit_are_no_mark_of_lastmod_bulk(offline_site: Site, repo: Repo) -> None:
    """A commit that touches twelve sources without changing what they build (a comment, a
    field the theme does not show): each page's new date is its source's commit, its built
    page byte-identical. They are held back (not announced), and git backs every date: no
    mark of the build clock."""
    sources = {f"content/p{n}.md": f"page {n}" for n in range(12)}
    repo.commit(sources, "2024-02-01T10:00:00Z")
    locs = [f"/p{n}/" for n in range(12)]
    offline_site.build_pages(locs)
    site_dir = ("--site-dir", str(offline_site.public), "--rule", "lastmod-missing=off", "--rule", "key-file-missing=off")
    offline_site.write(urlset(dict.fromkeys(locs, "2024-02-01T10:00:00Z")))
    assert offline_site.run(*site_dir).code == 0
    repo.commit({name: text + "\n<!-- reviewed -->\n" for name, text in sources.items()}, "2024-04-02T09:00:00Z")
    offline_site.write(urlset(dict.fromkeys(locs, "2024-04-02T09:00:00Z")))
    result = offline_site.check(*site_dir)
    assert result.code == 0 and "lastmod-bulk" not in result.out, result.out
    assert "12 URLs held back, not announced" in result.out
    offline_site.write(urlset(dict.fromkeys(locs, "2024-05-02T09:00:00Z")))  # a date no commit gives: the build's
    unbacked = offline_site.check(*site_dir, "--rule", "lastmod-vs-history=off")
    assert unbacked.code == 1 and "error[lastmod-bulk]" in unbacked.out and "byte-identical" in unbacked.out, unbacked.out
