"""What notifier/history/git.py does that the mutation run found no test stating (#44): which
kept pages are "current" (no commit of their source after their lastmod), git's blank stderr
lines, an ignore-revs file that is not there, and a commit dated past year 9999. Each test names
the edit it catches."""

from __future__ import annotations

import datetime as dt
import os
import subprocess
from pathlib import Path

import pytest

from notifier.errors import HistoryError
from notifier.history.git import _git, check_history, ignored_revisions, read_history
from notifier.sitemap.files import Entry
from tests.conftest import BASE

TEMPLATES = ["content/{path}/index.md", "content/{path}.md"]


def _commit(root: Path, files: dict[str, str], author: str, committer: str | None = None) -> None:
    """A commit of ``files`` with its author and committer dates (no user config)."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("GIT_")}
    env.update(
        GIT_AUTHOR_DATE=author,
        GIT_COMMITTER_DATE=committer or author,
        GIT_AUTHOR_NAME="A",
        GIT_AUTHOR_EMAIL="a@b.c",
        GIT_COMMITTER_NAME="A",
        GIT_COMMITTER_EMAIL="a@b.c",
        HOME=str(root),
    )
    if not (root / ".git").exists():
        subprocess.run(["git", "init", "-q", "-b", "main"], cwd=root, env=env, check=True)
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        subprocess.run(["git", "add", name], cwd=root, env=env, check=True)
    subprocess.run(["git", "commit", "-q", "-m", f"at {author}"], cwd=root, env=env, check=True)


def _current(root: Path, kept: dict[str, str]) -> set[str]:
    """The kept pages (path -> lastmod) that check_history finds current."""
    settled = [Entry(f"{BASE}{path}", lastmod, 0, line) for line, (path, lastmod) in enumerate(kept.items(), start=1)]
    checked = check_history([], TEMPLATES, root, dt.timedelta(0), ["date"], False, settled=settled)
    return {loc.removeprefix(BASE) for loc in checked.current}


# -- _current ----------------------------------------------------------------------------------
def test_a_page_whose_source_has_no_commit_or_no_file_is_not_current(tmp_path: Path) -> None:
    """fails if ``span is None or ...`` becomes ``and`` or loses its first side (a traceback), or
    ``return False`` raises or becomes ``return True``, in history/git.py::_current"""
    _commit(tmp_path, {"content/about.md": "about"}, "2024-03-05T12:00:00Z")
    (tmp_path / "content" / "new.md").write_text("not committed yet")
    kept = {"/about/": "2024-03-05T12:00:00Z", "/new/": "2024-03-05T12:00:00Z", "/nowhere/": "2024-03-05T12:00:00Z"}
    assert _current(tmp_path, kept) == {"/about/"}


def test_a_lastmod_after_the_last_commit_is_current(tmp_path: Path) -> None:
    """fails if ``span.last <= end or any(...)`` becomes ``and``, or loses its first side, in
    history/git.py::_current (no newest commit lies in June, yet nothing came after it)"""
    _commit(tmp_path, {"content/about.md": "about"}, "2024-03-05T12:00:00Z")
    assert _current(tmp_path, {"/about/": "2024-06-01T00:00:00Z"}) == {"/about/"}
    assert _current(tmp_path, {"/about/": "2024-06-01"}) == {"/about/"}
    assert _current(tmp_path, {"/about/": "2024-03-01T00:00:00Z"}) == set()  # before its commit: a commit came after


def test_a_lastmod_at_the_newest_commits_author_time_is_current(tmp_path: Path) -> None:
    """The newest commit was authored on 5 March and committed on 7 March: a lastmod of its author
    time, or of its day, names that commit. Fails if ``span.last <= end or any(...)`` loses its
    second side, ``any`` becomes ``all``, or either ``<=`` of ``start <= moment <= end`` becomes
    ``<``, in history/git.py::_current"""
    _commit(tmp_path, {"content/about.md": "about"}, "2024-01-10T10:00:00Z")
    _commit(tmp_path, {"content/about.md": "edited"}, "2024-03-05T12:00:00Z", "2024-03-07T09:00:00Z")
    assert _current(tmp_path, {"/about/": "2024-03-05T12:00:00Z"}) == {"/about/"}
    assert _current(tmp_path, {"/about/": "2024-03-05"}) == {"/about/"}
    assert _current(tmp_path, {"/about/": "2024-03-04"}) == set()


def test_a_lastmod_at_exactly_the_latest_commit_time_is_current(tmp_path: Path) -> None:
    """An older commit dated later than the newest (a rebase keeps author dates): a lastmod at
    exactly the latest time any commit has is current. Fails if ``span.last <= end`` becomes
    ``span.last < end`` in history/git.py::_current"""
    _commit(tmp_path, {"content/about.md": "about"}, "2024-05-01T00:00:00Z")
    _commit(tmp_path, {"content/about.md": "edited"}, "2024-03-05T12:00:00Z")
    assert _current(tmp_path, {"/about/": "2024-05-01T00:00:00Z"}) == {"/about/"}
    assert _current(tmp_path, {"/about/": "2024-04-30T23:59:59Z"}) == set()


# -- _git --------------------------------------------------------------------------------------
def test_git_warnings_leave_out_blank_lines_and_hints(tmp_path: Path) -> None:
    """fails if ``line and not line.startswith("hint:")`` loses its first side in
    history/git.py::_git (a blank line of git's stderr would be a note of its own)"""
    warned: list[str] = []
    say = "!printf 'warning: one\\n\\n   \\nhint: try this\\nwarning: one\\nwarning: two\\n' >&2"
    _git(tmp_path, "-c", f"alias.say={say}", "say", warned=warned)
    assert warned == ["warning: one", "warning: two"]


# -- ignored_revisions -------------------------------------------------------------------------
def test_an_ignore_revs_file_named_but_not_there_is_an_error(tmp_path: Path) -> None:
    """fails if ``setting is True and not path.is_file()`` loses its first side in
    history/git.py::ignored_revisions (a file the config names is not silently skipped; only the
    conventional .git-blame-ignore-revs may be absent)"""
    assert ignored_revisions(tmp_path, True) == frozenset()
    missing = r"^\[history\] ignore-revs .*revs\.txt: cannot read it \(No such file or directory\); check the path$"
    with pytest.raises(HistoryError, match=missing):
        ignored_revisions(tmp_path, tmp_path / "revs.txt")


# -- _commit_times -----------------------------------------------------------------------------
def test_a_commit_dated_past_year_9999_is_left_out_not_a_traceback(tmp_path: Path) -> None:
    """fails if ``except ValueError: return None`` raises in history/git.py::_commit_times"""
    _commit(tmp_path, {"a.md": "a", "b.md": "b"}, "2024-01-10T10:00:00Z")
    _commit(tmp_path, {"a.md": "far"}, "@300000000000 +0000")  # the year 11476
    spans = read_history(tmp_path)
    assert spans["a.md"].last == spans["b.md"].last == dt.datetime(2024, 1, 10, 10, tzinfo=dt.UTC)
