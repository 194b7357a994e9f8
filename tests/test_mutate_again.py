"""scripts/mutate_again.py: which verdicts of an earlier mutation run still hold at a later commit.

A kept verdict is a mutant nobody judges again, so each rule is shown both ways: the verdict a
change cannot have touched is kept, the one it may have touched is judged again.
"""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))
import mutate_again  # a developer tool in scripts/, not part of the package

KEY = "notifier/a.py::limit | n < 10 | Lt -> LtE"
CODE = "def limit(n):\n    return n < 10\n\n\ndef other(n):\n    return n < 10\n"
TESTS = "from notifier.a import limit\n\n\ndef test_limit():\n    assert not limit(10)\n\n\ndef test_more():\n    assert limit(1)\n"


@dataclass(frozen=True)
class _Mutant:
    module: str
    scope: str


def _git(root: Path, *args: str) -> str:
    env = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t", GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@t")
    return subprocess.run(["git", *args], cwd=root, env=env, capture_output=True, text=True, check=True).stdout.strip()


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)


@pytest.fixture
def project(tmp_path: Path) -> tuple[Path, str]:
    """A project at the commit a run mutated, and that run's log (a kill named with its test)."""
    _git(tmp_path, "init", "-q")
    _write(tmp_path, {"notifier/a.py": CODE, "tests/conftest.py": "", "tests/test_a.py": TESTS})
    _git(tmp_path, "add", "-A")
    _git(tmp_path, "commit", "-q", "-m", "mutated")
    (tmp_path / "run.log").write_text(f"killed    {KEY}\ttests/test_a.py::test_limit\n")
    return tmp_path, _git(tmp_path, "rev-parse", "HEAD")


def _kept(root: Path, since: str, now: dict[str, _Mutant], log: str = "run.log") -> dict[str, tuple[str, str]]:
    return mutate_again.earlier(root / log, since, now, root)


def test_a_kill_in_unchanged_code_by_an_unchanged_test_is_kept_and_one_whose_function_changed_is_not(
    project: tuple[Path, str],
) -> None:
    root, since = project
    now = {KEY: _Mutant("notifier/a.py", "limit")}
    _write(root, {"notifier/a.py": "\n\n" + CODE.replace("def other(n):\n    return n < 10", "def other(n):\n    return n < 11")})
    assert _kept(root, since, now) == {KEY: ("killed", "tests/test_a.py::test_limit")}  # moved lines, another function changed
    _write(root, {"notifier/a.py": CODE.replace("return n < 10\n\n\ndef other", "return n < 10 or n < 0\n\n\ndef other")})
    assert _kept(root, since, now) == {}


def test_a_kill_is_judged_again_when_its_test_or_a_helper_it_names_changed_but_not_when_another_test_did(
    project: tuple[Path, str],
) -> None:
    root, since = project
    now = {KEY: _Mutant("notifier/a.py", "limit")}
    _write(root, {"tests/test_a.py": TESTS.replace("assert limit(1)", "assert limit(2)")})
    assert KEY in _kept(root, since, now)
    _write(root, {"tests/test_a.py": TESTS.replace("assert not limit(10)", "assert limit(10) is not None")})
    assert _kept(root, since, now) == {}
    fixture = "import pytest\n\n\n@pytest.fixture(autouse=True)\ndef each():\n    yield\n"
    _write(root, {"tests/test_a.py": TESTS, "tests/conftest.py": fixture})
    assert _kept(root, since, now) == {}  # a fixture every test runs came


def test_a_kill_the_log_names_no_test_for_stands_only_while_no_test_changed(project: tuple[Path, str]) -> None:
    root, since = project
    now = {KEY: _Mutant("notifier/a.py", "limit")}
    (root / "old.log").write_text(f"killed    {KEY}\n")
    _write(root, {"tests/test_b.py": "def test_new():\n    pass\n"})
    assert KEY in _kept(root, since, now, "old.log")  # a test added kills nothing less
    _write(root, {"tests/test_a.py": TESTS.replace("assert limit(1)", "assert limit(2)")})
    assert _kept(root, since, now, "old.log") == {}


def test_code_moved_to_another_module_keeps_its_verdict_unless_its_code_changed_or_two_places_match(
    project: tuple[Path, str],
) -> None:
    """notifier/a.py moved to notifier/settings/a.py (as the configuration moved): the kill is the
    mutant's of the same function and text there; neither re-opened nor given to another."""
    root, since = project
    moved = "notifier/settings/a.py::limit | n < 10 | Lt -> LtE"
    _git(root, "mv", "notifier/a.py", "notifier/b.py")
    _write(root, {"notifier/settings/a.py": CODE})
    assert _kept(root, since, {moved: _Mutant("notifier/settings/a.py", "limit")}) == {moved: ("killed", "tests/test_a.py::test_limit")}
    _write(root, {"notifier/settings/a.py": CODE.replace("return n < 10\n\n\ndef other", "return n < 10 and n\n\n\ndef other")})
    assert _kept(root, since, {moved: _Mutant("notifier/settings/a.py", "limit")}) == {}
    _write(root, {"notifier/settings/a.py": CODE})
    other = "notifier/c.py::limit | n < 10 | Lt -> LtE"
    twice = {moved: _Mutant("notifier/settings/a.py", "limit"), other: _Mutant("notifier/c.py", "limit")}
    assert _kept(root, since, twice) == {}


def test_a_listed_equivalent_follows_its_code_to_another_module_only_where_one_mutant_matches(tmp_path: Path) -> None:
    listed = {KEY: "why no test can tell"}  # notifier/a.py is gone (tmp_path holds no such file)
    moved = "notifier/settings/a.py::limit | n < 10 | Lt -> LtE"
    assert mutate_again.moved_equivalents(listed, {moved: _Mutant("notifier/settings/a.py", "limit")}, tmp_path) == {KEY: moved}
    assert mutate_again.moved_equivalents(listed, {KEY: _Mutant("notifier/a.py", "limit")}, tmp_path) == {}  # not moved
    other = "notifier/c.py::limit | n < 10 | Lt -> LtE"
    both = {moved: _Mutant("notifier/settings/a.py", "limit"), other: _Mutant("notifier/c.py", "limit")}
    assert mutate_again.moved_equivalents(listed, both, tmp_path) == {}
    _write(tmp_path, {"notifier/a.py": CODE})  # still there, and not judged in this run (--module): not moved
    assert mutate_again.moved_equivalents(listed, {moved: _Mutant("notifier/settings/a.py", "limit")}, tmp_path) == {}


def test_a_survivor_of_unchanged_code_stays_alive_whatever_the_tests_did(project: tuple[Path, str]) -> None:
    """--report shows it alive until a run kills it: a changed test file must not make it "not judged"."""
    root, since = project
    now = {KEY: _Mutant("notifier/a.py", "limit")}
    (root / "alive.log").write_text(f"survived  {KEY}\n")
    _write(root, {"tests/test_a.py": TESTS.replace("assert limit(1)", "assert limit(2)")})
    assert _kept(root, since, now, "alive.log") == {KEY: ("survived", "")}
    _write(root, {"notifier/a.py": CODE.replace("return n < 10\n\n\ndef other", "return n <= 9\n\n\ndef other")})
    assert _kept(root, since, now, "alive.log") == {}  # its code changed: judged again, not shown as it was
