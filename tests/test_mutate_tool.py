"""scripts/mutate.py's harness: each test its own time limit, and a second round's verdict over
the first's in a kept log. A developer tool in scripts/, not part of the package."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))
import mutate_again

SCRIPTS = Path(__file__).resolve().parents[1] / "scripts"


def test_a_test_that_loops_for_ever_is_a_timeout_by_its_own_limit_not_the_whole_budget(tmp_path: Path) -> None:
    """A mutant that makes one test loop is judged a timeout once that test has run its own
    limit (six times its mapped seconds and twelve more), not after the budget of every test
    it was given: a survivor's second round gives a thousand. Fails if the per-test alarm is
    left out (the loop runs to the whole budget, here an hour) or is not reset between tests
    (the three quick tests, 2.4 s in all, would outrun one limit of 2 s). The test that ran out of
    time is kept where the worker reads it, so the timeout names its test (fails if the page is
    not written before each test, or is cleared before the alarm)."""
    (tmp_path / "test_loop.py").write_text(
        textwrap.dedent(
            """
            import time

            def test_quick_one():
                time.sleep(0.8)
                open("one", "w").close()

            def test_quick_two():
                time.sleep(0.8)
                open("two", "w").close()

            def test_quick_three():
                time.sleep(0.8)
                open("three", "w").close()

            def test_loops():
                while True:
                    pass
            """
        )
    )
    child = textwrap.dedent(
        f"""
        import mmap, os, sys
        sys.path.insert(0, {str(SCRIPTS)!r})
        import pytest
        from mutate_worker import _TestTimeLimits
        limits = {{f"test_loop.py::test_{{name}}": 1 for name in ("quick_one", "quick_two", "quick_three", "loops")}}
        with open("running", "r+b") as shared:
            running = mmap.mmap(shared.fileno(), 4096)
        pytest.main(["-q", "-p", "no:cacheprovider", "test_loop.py"], plugins=[_TestTimeLimits(limits, 3600, running)])
        sys.exit(3)  # the loop was never stopped
        """
    )
    (tmp_path / "running").write_bytes(b"\0" * 4096)
    done = subprocess.run([sys.executable, "-c", child], cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == -14, (done.returncode, done.stdout[-500:], done.stderr[-500:])  # SIGALRM: "timeout"
    assert all((tmp_path / name).exists() for name in ("one", "two", "three"))  # each quick test had its own time
    import mmap

    import mutate_worker

    with open(tmp_path / "running", "r+b") as shared:
        assert mutate_worker._kept(mmap.mmap(shared.fileno(), 4096)) == "test_loop.py::test_loops"


def test_a_timeout_that_names_its_test_stands_while_that_test_is_unchanged(tmp_path: Path) -> None:
    """A timeout said with its test is kept by a later run whose suite has grown, as a kill is;
    one said with no test is kept only while the whole suite is unchanged (the 55 timeouts of
    run 53 that the report counted as not judged once any test of the suite was edited). Fails if
    ``earlier`` keeps a timeout without a test across a changed suite, or drops a named one."""
    import subprocess as sp

    def git(*words: str) -> str:
        return sp.run(["git", *words], cwd=tmp_path, check=True, capture_output=True, text=True).stdout.strip()

    git("init", "-q")
    git("config", "user.email", "t@example.org")
    git("config", "user.name", "t")
    (tmp_path / "notifier").mkdir()
    (tmp_path / "tests").mkdir()
    (tmp_path / "notifier" / "a.py").write_text("def loop(n):\n    while n > 0:\n        n -= 1\n    return n\n")
    test_a = "from notifier.a import loop\n\ndef test_loop():\n    assert loop(3) == 0\n"
    (tmp_path / "tests" / "test_a.py").write_text(test_a)
    (tmp_path / "tests" / "conftest.py").write_text("")
    (tmp_path / "tests" / "test_b.py").write_text("def test_other():\n    assert True\n")
    git("add", "-A")
    git("commit", "-qm", "one")
    revision = git("rev-parse", "HEAD")
    (tmp_path / "tests" / "test_b.py").write_text("def test_other():\n    assert 1 + 1 == 2\n")  # another test changes
    git("add", "-A")
    git("commit", "-qm", "two")
    key = "notifier/a.py::loop | n -= 1 | remove assignment"
    log = tmp_path / "run.log"
    log.write_text(f"timeout   {key}\ttests/test_a.py::test_loop\ntimeout   {key} #2\n")

    class Mutant:
        def __init__(self, module: str, scope: str) -> None:
            self.module, self.scope = module, scope

    current = {key: Mutant("notifier/a.py", "loop"), f"{key} #2": Mutant("notifier/a.py", "loop")}
    kept = mutate_again.earlier(log, revision, current, tmp_path)
    assert kept == {key: ("timeout", "tests/test_a.py::test_loop")}


def test_a_second_rounds_verdict_in_a_log_overrides_the_first_rounds_survivor(tmp_path: Path) -> None:
    """Round one logs a survivor of its likeliest killers as "survived" at once; round two,
    later in the same log, may kill it: the later line is the verdict. Fails if the first line
    for a key wins."""
    key = "notifier/a.py::limit | n < 10 | Lt -> LtE"
    log = tmp_path / "abc1234-run.log"
    log.write_text(
        f"survived  {key}\nkilled    notifier/a.py::other | 1 | 1 -> 2\ttests/test_a.py::test_b\nkilled    {key}\ttests/test_a.py::test_a\n"
    )
    verdicts = mutate_again.read_verdicts(log)
    assert verdicts[key] == ("killed", "tests/test_a.py::test_a")


def test_a_mutant_made_at_import_is_judged_by_the_tests_of_the_files_that_import_its_module() -> None:
    """A dataclass's default (``DatabaseURL.request_timeout = 30.0``) is read by a test that makes
    the class and runs none of its module's lines (the generated __init__ is no line of it): the
    map names no such test, and the mutant lived. Fails if only the map's tests judge it."""
    import mutate

    order = mutate.TestOrder(
        {"notifier/database.py": {10: {"tests/test_state.py::test_other"}}},
        {"tests/test_state.py::test_other": 0.1, "tests/test_survivors_database.py::test_default": 0.1, "tests/test_zz.py::test_x": 0.1},
        300,
    )
    made_at_import = mutate.Mutant("notifier/database.py", "DatabaseURL", "30.0", "30.0 -> 60.0", 1, 0, (79, 79), in_function=False)
    first, rest = order.tests_for(made_at_import)
    assert set(first + rest) == {"tests/test_state.py::test_other", "tests/test_survivors_database.py::test_default"}
    in_a_function = mutate.Mutant("notifier/database.py", "passwords", "True", "True -> False", 1, 1, (10, 10))
    assert order.tests_for(in_a_function) == (["tests/test_state.py::test_other"], [])


def test_a_kill_counts_only_when_its_test_fails_again_alone_with_the_mutant() -> None:
    """A test that failed beside another worker's tests (or on a loaded machine) and passes when
    run again alone is no killer: the tests after it judge, and it is reported. The honest twin:
    a test that fails again alone is the kill. Fails if a kill is taken without the second run,
    or an unconfirmed killer's verdict stands, or the tests after it are not run."""
    import mutate

    tests = ["t::flaky", "t::states_it", "t::other"]

    def judging(failing_alone: set[str], failing_together: set[str]) -> tuple[list[list[str]], object]:
        calls: list[list[str]] = []

        def judge_once(some: list[str]) -> str:
            calls.append(list(some))
            failed = [test for test in some if test in (failing_alone if len(some) == 1 else failing_alone | failing_together)]
            return f"killed\t{failed[0]}" if failed else "survived"

        return calls, judge_once

    calls, judge_once = judging({"t::states_it"}, {"t::flaky"})
    reported: list[str] = []
    assert mutate.confirmed(judge_once, tests, reported.append) == "killed\tt::states_it"  # type: ignore[arg-type]
    assert reported == ["t::flaky"]
    assert calls == [tests, ["t::flaky"], ["t::states_it", "t::other"], ["t::states_it"]]

    calls, judge_once = judging(set(), {"t::flaky"})  # only the flaky test ever failed: the mutant lives
    assert mutate.confirmed(judge_once, tests, reported.append) == "survived"  # type: ignore[arg-type]

    calls, judge_once = judging({"t::flaky"}, set())  # it fails alone too: a real kill, judged no further
    assert mutate.confirmed(judge_once, tests, reported.append) == "killed\tt::flaky"  # type: ignore[arg-type]
    assert calls == [tests, ["t::flaky"]]

    answers = iter(["timeout\tt::other", "killed\tt::other", "killed\tt::other"])  # a timeout is judged once more
    assert mutate.confirmed(lambda some: next(answers), tests, reported.append) == "killed\tt::other"
