"""The worker of scripts/mutate.py: judges mutants in forked copies of one warm interpreter.

Started in a copy of the project, it imports the package and every test module once, then
reads one request per line on stdin (``{"module", "index", "tests", "timeout", "limits"}``: the
whole run's seconds, and each test's). For each it
forks; the child puts the mutant in place and runs its tests with ``pytest.main``; the
worker answers one line on stdout (``killed``, ``survived``, ``timeout`` or ``cold``; a kill
is followed by a tab and the test that failed first, a timeout by the test that was running when
its time ran out, so a later run can tell whether that test is still the same).

A mutant inside a function is put in place by giving the live function the mutated code
(``__code__``, and its defaults), so every reference to it, imported elsewhere or not, runs
the mutant. A mutant in a class body or at module level cannot be patched so; it is answered
``cold``, and mutate.py judges it in a fresh interpreter.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import mmap
import os
import signal
import sys
import traceback
import types
from pathlib import Path
from typing import Any

import pytest
from mutate import mutants, mutated_source

ROOT = Path.cwd()


def _warm() -> None:
    for path in sorted((ROOT / "notifier").rglob("*.py")):
        if path.name == "__main__.py":  # importing it runs the program
            continue
        name = ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
        importlib.import_module(name)
    for path in sorted((ROOT / "tests").glob("*.py")):
        importlib.import_module(f"tests.{path.stem}")


def _function(value: Any) -> types.FunctionType | None:
    """The function whose code is the source's: a decorator's wrapper (``contextmanager``'s
    helper is a function too) is looked through, or the mutant would patch the wrapper."""
    for _ in range(5):
        wrapped = getattr(value, "__wrapped__", None)
        if wrapped is not None:
            value = wrapped
        elif isinstance(value, types.FunctionType):
            return value
        else:
            value = getattr(value, "__func__", None) or getattr(value, "fget", None)
    return None


def _outermost_function(root: types.ModuleType | dict[str, Any], scope: str) -> types.FunctionType | None:
    """The function (or method) of ``scope`` whose code holds the mutant; a nested
    function's code is a constant of its parent's."""
    names: Any = root if isinstance(root, dict) else vars(root)
    for part in scope.split("."):
        value = names.get(part)
        found = _function(value)
        if found is not None:
            return found
        if not isinstance(value, type):
            return None
        names = vars(value)
    return None


def _patch(module_path: str, index: int) -> bool:
    """Put the mutant in place; False when it is not inside a function."""
    name = ".".join(Path(module_path).with_suffix("").parts).removesuffix(".__init__")
    module = sys.modules[name]
    mutant = mutants(module_path, ROOT)[index]
    if mutant.scope == "<module>":
        return False
    source = mutated_source(mutant, (ROOT / module_path).read_text())
    namespace: dict[str, Any] = {"__name__": name, "__file__": module.__file__, "__package__": module.__package__}
    try:
        exec(compile(source, module.__file__ or module_path, "exec"), namespace)
    except Exception:  # the mutant breaks its module's import: any test would fail
        os._exit(97)  # (judged "killed" by the import, whatever the tests: see _judge)
    old, new = _outermost_function(module, mutant.scope), _outermost_function(namespace, mutant.scope)
    if old is None or new is None or old.__code__.co_freevars != new.__code__.co_freevars:
        return False
    old.__code__, old.__defaults__, old.__kwdefaults__ = new.__code__, new.__defaults__, new.__kwdefaults__
    return True


class _FirstFailure:
    """Writes the node id of the first test that fails to ``fd`` (the test that killed the mutant)."""

    def __init__(self, fd: int) -> None:
        self.fd, self.written = fd, False

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.failed and not self.written:
            self.written = True
            os.write(self.fd, report.nodeid.encode())


class _TestTimeLimits:
    """Each test its own alarm: a mutant that makes one test loop for ever is a timeout once that
    test has run ``limit`` seconds, not after the budget of every test the mutant was given (a
    survivor's second round runs a thousand). ``limits``: the seconds each test may take. The node
    id of the test in flight is kept in ``running`` (a page the worker shares with its child), so
    the timeout is said with the test that ran out of time: without it a later run could tell only
    by the whole suite being unchanged, which a new test anywhere ends."""

    def __init__(self, limits: dict[str, float], default: float, running: mmap.mmap) -> None:
        self.limits, self.default, self.running = limits, default, running

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item: pytest.Item) -> Any:
        _keep(self.running, item.nodeid)
        signal.alarm(int(self.limits.get(item.nodeid, self.default)) + 1)
        yield
        signal.alarm(0)
        _keep(self.running, "")


def _keep(page: mmap.mmap, nodeid: str) -> None:
    text = nodeid.encode()[: len(page) - 1]
    page[: len(text) + 1] = text + b"\0"


def _kept(page: mmap.mmap) -> str:
    return page[:].partition(b"\0")[0].decode(errors="replace")


def _drain(fd: int) -> str:
    """What the child wrote (a node id, far below a pipe's buffer, so its write never blocked);
    read without waiting, since a process the test started may still hold the pipe open."""
    os.set_blocking(fd, False)
    try:
        return os.read(fd, 65536).decode(errors="replace")
    except BlockingIOError:
        return ""
    finally:
        os.close(fd)


def _judge(request: dict[str, Any]) -> str:
    readable, writable = os.pipe()
    running = mmap.mmap(-1, 4096)  # anonymous and shared: the child's writes are the worker's to read
    child = os.fork()
    if child == 0:
        os.setpgid(0, 0)  # a group of its own: what its tests start goes with it (below)
        os.close(readable)
        report = os.fdopen(os.dup(2), "w")  # the harness's own errors, where mutate.py's stderr goes
        try:
            if not _patch(request["module"], request["index"]):
                os._exit(99)
            signal.alarm(int(request["timeout"]) + 1)  # collection; then each test its own (_TestTimeLimits)
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, 1)
            os.dup2(null, 2)
            arguments = ["-x", "-q", "-p", "no:cacheprovider", "-o", "addopts=", "--assert=plain", *request["tests"]]
            limits = _TestTimeLimits(request.get("limits", {}), request["timeout"], running)
            code = pytest.main(arguments, plugins=[_FirstFailure(writable), limits])
            os._exit(int(code))
        except pytest.PytestUnraisableExceptionWarning:  # a test left an object unclosed (warnings are errors): the session fails
            os.write(writable, b"<unraisable at the session's end>")
            os._exit(1)
        except BaseException:  # the harness, not the mutant: say so, never count it as a kill
            print(f"mutate_worker: {request['module']} #{request['index']}:\n{traceback.format_exc()}", file=report, flush=True)
            os._exit(98)
    os.close(writable)
    _, status = os.waitpid(child, 0)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(child, signal.SIGKILL)  # a program or build a test started, left running by a timeout
    killer = _drain(readable)
    if os.WIFSIGNALED(status):
        if os.WTERMSIG(status) == signal.SIGALRM:
            return f"timeout\t{_kept(running)}".rstrip()
        return f"killed\t{killer}".rstrip()
    code = os.WEXITSTATUS(status)
    killer = "<import>" if code == 97 else killer
    outcome = {0: "survived", 99: "cold", 5: "uncollected", 98: "error"}.get(code, "killed")
    return f"{outcome}\t{killer}" if outcome == "killed" and killer else outcome


def main() -> None:
    _warm()
    print("ready", flush=True)
    for line in sys.stdin:
        print(_judge(json.loads(line)), flush=True)


if __name__ == "__main__":
    main()
