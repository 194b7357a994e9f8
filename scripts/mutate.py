#!/usr/bin/env python3
"""Mutation testing of the decisions users rely on: which mutants does the suite let live?

    .venv/bin/python scripts/mutate.py                       # every decision module
    .venv/bin/python scripts/mutate.py --module notifier/pipeline/diff.py
    .venv/bin/python scripts/mutate.py --list                # the mutants, without running them
    .venv/bin/python scripts/mutate.py --module notifier/crash.py --tests tests/test_boundary.py   # minutes

The mutants are generated, not chosen: in every module of the package that decides what a
deploy announces or fails (all of ``notifier/`` but the presentation and plumbing modules
listed in ``NOT_DECISIONS``, so a new module is mutated without anyone naming it), every

- comparison is flipped (``<`` to ``<=``, ``==`` to ``!=``, ``in`` to ``not in``, ``is`` to ``is not``),
- ``and`` and ``or`` are swapped and a ``not`` is dropped,
- constant is changed (a number moved by one, ``True`` and ``False`` swapped, a string that is
  compared with something made into another),
- slice loses its lower or its upper bound,
- call made for its effect is left out, and ``min``/``max`` and ``any``/``all`` are swapped,
- side of an ``and``/``or`` is dropped (``a and b`` made ``b``, then ``a``),
- assignment in a function is removed, where the name stays bound (a parameter, a name assigned
  on an earlier line, an attribute, an item, ``+=``): a removal that only raises NameError is no
  fault a test need state,
- simple statement opening a block (``if``, ``else``, a loop, ``with``, ``try``, ``except``,
  ``finally``) in a function is replaced with ``raise RuntimeError``: a branch no test notices
  failing.

Docstrings, annotations, decorators, f-strings (messages) and ``TYPE_CHECKING`` blocks are not mutated.

First the suite runs once under coverage (``scripts/mutate_trace.py``), which records which tests
run which lines; that map is kept in ``.mutate/`` until the package or the tests change. Each
mutant is then judged by the tests that run its lines, fastest first, stopping at the first
failure, in a forked copy of a warm interpreter that has the mutant in place
(``scripts/mutate_worker.py``; a mutant outside any function is written into a copy of the
project and judged in a fresh one). The first to run are the likeliest killers, at most
``--max-tests``; a mutant they let live is judged again by every other test that runs its
lines (a line every run executes is covered by a thousand tests, and the one that states it
may be past the first 300), unless it is a listed equivalent, whose reason says why no test
can. A mutant that times out is judged once more (a loaded machine slows a test) before it
counts as killed, and a kill counts only when its test, run again alone with the mutant, fails
again (one that passes is printed as an UNCONFIRMED KILL, a flaky test to mend, and the tests after
it judge on). A mutant no test notices survives; one no test even runs is "uncovered".

Survivors are printed, except those listed in scripts/mutants-equivalent.txt with the reason they
cannot change what a user sees. An equivalent is keyed by module, function and the mutated text
(``module::function | text | operator  reason``), so moving code does not re-key it.
Not run in CI: it is slow (hours on two cores), and it is a tool for writing tests, not a test. A
run's log (its stderr: one "outcome key" line a mutant) is kept in ``scripts/mutants-judged/``,
named ``<commit it mutated>-<anything>.log``, so a later run, in another checkout, resumes from
it: ``--again scripts/mutants-judged/aa93b28-run22.log`` (``.mutate/`` is not kept). A kill's line
names the test that killed it (after a tab); scripts/mutate_again.py says which verdicts of an
earlier run still hold: those whose function and killing test are unchanged, found by function
and text when the code moved to another module.
"""

from __future__ import annotations

import argparse
import ast
import concurrent.futures
import contextlib
import hashlib
import json
import os
import queue
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import mutate_again

ROOT = Path(__file__).resolve().parents[1]
EQUIVALENT = ROOT / "scripts" / "mutants-equivalent.txt"
CACHE = ROOT / ".mutate"

# Modules that present, launch or carry a run but decide nothing it announces or fails, each
# with the reason. (settings.py, crash.py and commands/state.py were here: each decides what a
# user relies on, the derive secret's minimum, where the crash log goes, which runs and batches
# the state commands show, and #44 found those decisions unstated; they are mutated now.)
NOT_DECISIONS = {
    "notifier/__init__.py": "the public names and the version",
    "notifier/__main__.py": "python -m notifier",
    "notifier/api.py": "the Python API's keyword arguments, handed to settings",
    "notifier/settings/config_tables.py": "reads the config's tables; a bad value is exit 2 before anything is read (tests/test_cli.py)",
    "notifier/settings/options.py": "the table of options and their converters (tests/test_cli.py, tests/test_extremes.py)",
    "notifier/settings/discovery.py": "finds the sitemap in the usual build folders when none is given",
    "notifier/_launch.py": "starts main() and turns signals into exit codes",
    "notifier/cli.py": "the command line's words; its decisions are settings' and the phases'",
    "notifier/environment.py": "the injected clock, sleep and output",
    "notifier/errors.py": "the exception classes and their exit codes",
    "notifier/github.py": "annotations and the job summary (presentation)",
    "notifier/http.py": "the HTTP session's set-up",
    "notifier/commands/key.py": "writes a key file the user asked for",
    "notifier/report.py": "prints the report (presentation)",
    "notifier/terminal.py": "progress lines and colours",
    "notifier/workers.py": "the process pool: how work is spread, not what it decides (tests/test_jobs.py)",
}

# Modules whose tests run them in another process (a real MkDocs or Sphinx build, started as
# the user starts it): the coverage map cannot see those runs, and a mutant put in place in
# the worker's memory would not reach them. Their mutants are written to disk and judged by
# the tests of that file that name the generator, beside those the map names.
IN_ANOTHER_PROCESS = {
    "notifier/mkdocs.py": ("tests/test_plugins.py::", "mkdocs"),
    "notifier/sphinx.py": ("tests/test_plugins.py::", "sphinx"),
}

_FLIPS: dict[type, type] = {
    ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt,
    ast.Eq: ast.NotEq, ast.NotEq: ast.Eq, ast.In: ast.NotIn, ast.NotIn: ast.In, ast.Is: ast.IsNot, ast.IsNot: ast.Is,
}  # fmt: skip
SLOW_TEST = 0.5  # seconds: such tests run after the quick ones that are as likely to kill
_SWAPPED_CALLS = {"min": "max", "max": "min", "any": "all", "all": "any"}


def decision_modules() -> list[str]:
    found = sorted(str(path.relative_to(ROOT)) for path in (ROOT / "notifier").rglob("*.py"))
    return [module for module in found if module not in NOT_DECISIONS]


@dataclass(frozen=True)
class Mutant:
    module: str
    scope: str  # the function (or class, or <module>) it sits in
    text: str  # the mutated source, on one line
    operator: str  # what was changed, e.g. "Lt -> LtE", "and -> or", "drop not", "10 -> 11", "leave out"
    occurrence: int  # the same text and operator in the same scope: 1, 2, ...
    index: int  # its place among the module's mutants (to find it again in a fresh parse)
    lines: tuple[int, int]
    in_function: bool = True  # False: at module level or in a class body, run at import

    @property
    def key(self) -> str:
        where = f"{self.module}::{self.scope} | {self.text} | {self.operator}"
        return where if self.occurrence == 1 else f"{where} #{self.occurrence}"


@dataclass
class _Point:
    node: ast.AST
    scope: str
    operator: str
    apply: Callable[[], None]
    in_function: bool
    lines: tuple[int, int] | None = None  # the lines whose tests judge it, when not its own


def _text(source: str, node: ast.AST) -> str:
    segment = ast.get_source_segment(source, node) or ast.unparse(node)
    return " ".join(segment.split())


def _is_type_checking(node: ast.AST) -> bool:
    return isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)


class _Finder:
    """Every point to mutate, in source order, each with the change that makes its mutant."""

    def __init__(self) -> None:
        self.points: list[_Point] = []
        self.functions: list[bool] = [False]  # per scope entered: inside a function (not run at import)
        self.bound: list[_Bound | None] = [None]  # per function entered: where its names are bound
        # a default argument is made at import, when no test runs; the tests of its function's body judge it
        self.defaults_of: list[tuple[int, int] | None] = [None]

    def visit(self, node: ast.AST, scope: str, parent: ast.AST | None, field: str, index: int | None, in_compare: bool = False) -> None:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            scope = node.name if scope == "<module>" else f"{scope}.{node.name}"
            function = isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
            self.functions.append(function or self.functions[-1])
            self.bound.append(_Bound(node) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) else None)
            try:
                self._children(node, scope, in_compare)
            finally:
                self.functions.pop()
                self.bound.pop()
            return
        self._children(node, scope, in_compare, parent, field, index)

    def _children(
        self, node: ast.AST, scope: str, in_compare: bool, parent: ast.AST | None = None, field: str = "", index: int | None = None
    ) -> None:
        if isinstance(node, ast.JoinedStr) or _is_type_checking(node):
            return
        self._mutations(node, scope, parent, field, index, in_compare)
        for name, value in ast.iter_fields(node):
            if name in ("annotation", "returns", "decorator_list", "type_comment"):
                continue
            children = value if isinstance(value, list) else [value]
            defaults = isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and name == "args"
            self.functions.append(self.functions[-2] if defaults else self.functions[-1])  # defaults are made at import
            body = (node.body[0].lineno, node.end_lineno or node.body[-1].lineno) if defaults else self.defaults_of[-1]  # type: ignore[attr-defined]
            self.defaults_of.append(body)
            try:
                for position, child in enumerate(children):
                    if not isinstance(child, ast.AST) or _is_docstring(node, name, position):
                        continue
                    self.visit(child, scope, node, name, position if isinstance(value, list) else None, isinstance(node, ast.Compare))
            finally:
                self.functions.pop()
                self.defaults_of.pop()

    def _add(self, node: ast.AST, scope: str, operator: str, apply: Callable[[], None]) -> None:
        # a default is made at import, but the worker puts it in place with its function's code
        in_function = self.functions[-1] or self.defaults_of[-1] is not None
        self.points.append(_Point(node, scope, operator, apply, in_function, self.defaults_of[-1]))

    def _mutations(self, node: ast.AST, scope: str, parent: ast.AST | None, field: str, index: int | None, in_compare: bool) -> None:
        replace = _replacer(parent, field, index)
        self._statement(node, scope, parent, field, index, replace)
        if isinstance(node, ast.Compare):
            for position, op in enumerate(node.ops):
                if type(op) in _FLIPS:
                    self._add(node, scope, f"{type(op).__name__} -> {_FLIPS[type(op)].__name__}", _flip(node, position))
        elif isinstance(node, ast.BoolOp):
            swapped: ast.boolop = ast.Or() if isinstance(node.op, ast.And) else ast.And()
            word = "and" if isinstance(node.op, ast.And) else "or"
            self._add(node, scope, "and -> or" if word == "and" else "or -> and", _set(node, "op", swapped))
            for position in range(len(node.values)):
                self._add(node, scope, f"drop side {position + 1} of {word}", _without(node, position, replace))
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            self._add(node, scope, "drop not", lambda: replace(node.operand))
        elif isinstance(node, ast.Constant):
            self._constant(node, scope, replace, in_compare)
        elif isinstance(node, ast.Slice):
            if node.lower is not None:
                self._add(node, scope, "drop lower bound", _set(node, "lower", None))
            if node.upper is not None:
                self._add(node, scope, "drop upper bound", _set(node, "upper", None))
        elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
            self._add(node, scope, "leave out", lambda: replace(ast.copy_location(ast.Pass(), node)))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _SWAPPED_CALLS:
            other = _SWAPPED_CALLS[node.func.id]
            self._add(node, scope, f"{node.func.id} -> {other}", _set(node.func, "id", other))

    def _statement(
        self, node: ast.AST, scope: str, parent: ast.AST | None, field: str, index: int | None, replace: Callable[[ast.AST], None]
    ) -> None:
        """Remove an assignment; replace a block's first simple statement with ``raise``."""
        bound = self.bound[-1]
        if not isinstance(node, ast.stmt) or bound is None or not self.functions[-1]:
            return
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)) and bound.removable(node):
            self._add(node, scope, "remove assignment", lambda: replace(ast.copy_location(ast.Pass(), node)))
        opens_block = index == 0 and field in ("body", "orelse", "finalbody") and isinstance(parent, _BLOCKS)
        if opens_block and not isinstance(node, _COMPOUND) and not isinstance(node, ast.Raise):
            self._add(node, scope, "raise instead", lambda: replace(ast.copy_location(_raise(), node)))

    def _constant(self, node: ast.Constant, scope: str, replace: Callable[[ast.AST], None], in_compare: bool) -> None:
        value = node.value
        if isinstance(value, bool):
            new: bool | int | float | str = not value
        elif isinstance(value, int):
            new = value + 1
        elif isinstance(value, float):
            new = value * 2 if value else 1.0
        elif isinstance(value, str) and in_compare:
            new = f"XX{value}XX"
        else:
            return
        self._add(node, scope, f"{value!r} -> {new!r}", lambda: replace(ast.copy_location(ast.Constant(new), node)))


_BLOCKS = (ast.If, ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith, ast.Try, ast.ExceptHandler)
_COMPOUND = (
    ast.If, ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith, ast.Try, ast.Match,
    ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef,
)  # fmt: skip


class _Bound:
    """Where a function binds its names: an assignment is removed only where the name it binds
    stays bound without it (else the mutant is a NameError, which any test running it notices)."""

    def __init__(self, function: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        arguments = function.args
        every = [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs, arguments.vararg, arguments.kwarg]
        self.parameters = {argument.arg for argument in every if argument is not None}
        self.first: dict[str, int] = {}  # name -> the first line that binds it
        declared = {id(node.target) for node in ast.walk(function) if isinstance(node, ast.AnnAssign) and node.value is None}
        for node in ast.walk(function):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store) and id(node) not in declared:  # ``x: int`` binds nothing
                self.first[node.id] = min(self.first.get(node.id, node.lineno), node.lineno)

    def removable(self, node: ast.Assign | ast.AugAssign | ast.AnnAssign) -> bool:
        if isinstance(node, ast.AugAssign):
            return True
        if isinstance(node, ast.AnnAssign) and node.value is None:
            return False  # binds nothing
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        names = [each for target in targets for each in ast.walk(target) if isinstance(each, ast.Name) and isinstance(each.ctx, ast.Store)]
        return all(name.id in self.parameters or self.first.get(name.id, node.lineno) < node.lineno for name in names)


def _raise() -> ast.Raise:
    error = ast.Call(func=ast.Name("RuntimeError", ast.Load()), args=[ast.Constant("a mutant's raise")], keywords=[])
    return ast.Raise(exc=error, cause=None)


def _without(node: ast.BoolOp, position: int, replace: Callable[[ast.AST], None]) -> Callable[[], None]:
    """``a and b and c`` without its side at ``position``: the other side alone when two are left."""

    def apply() -> None:
        kept = [value for number, value in enumerate(node.values) if number != position]
        replace(kept[0] if len(kept) == 1 else ast.copy_location(ast.BoolOp(op=node.op, values=kept), node))

    return apply


def _is_docstring(node: ast.AST, field: str, position: int) -> bool:
    if field != "body" or position != 0 or not isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return False
    first = node.body[0]
    return isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str)


def _replacer(parent: ast.AST | None, field: str, index: int | None) -> Callable[[ast.AST], None]:
    def replace(new: ast.AST) -> None:
        if index is None:
            setattr(parent, field, new)
        else:
            getattr(parent, field)[index] = new

    return replace


def _set(node: ast.AST, field: str, value: object) -> Callable[[], None]:
    return lambda: setattr(node, field, value)


def _flip(node: ast.Compare, position: int) -> Callable[[], None]:
    def apply() -> None:
        node.ops[position] = _FLIPS[type(node.ops[position])]()

    return apply


def _points(source: str) -> tuple[ast.Module, list[_Point]]:
    tree = ast.parse(source)
    finder = _Finder()
    finder.visit(tree, "<module>", None, "", None)
    return tree, finder.points


def mutants(module: str, root: Path = ROOT) -> list[Mutant]:
    source = (root / module).read_text()
    _, points = _points(source)
    seen: Counter[tuple[str, str, str]] = Counter()
    found = []
    for index, point in enumerate(points):
        text = _text(source, point.node)
        seen[(point.scope, text, point.operator)] += 1
        lines = point.lines or (getattr(point.node, "lineno", 0), getattr(point.node, "end_lineno", 0) or 0)
        found.append(
            Mutant(module, point.scope, text, point.operator, seen[(point.scope, text, point.operator)], index, lines, point.in_function)
        )
    return found


def mutated_source(mutant: Mutant, source: str) -> str:
    tree, points = _points(source)
    points[mutant.index].apply()
    return ast.unparse(ast.fix_missing_locations(tree))


def snapshot(into: Path) -> Path:
    """The project as it is when the run starts: every mutant is made from this copy, so
    edits made while the run goes on cannot change its verdicts."""
    copy = into / "snapshot"
    shutil.copytree(ROOT, copy, ignore=shutil.ignore_patterns(".venv", ".git", ".ci", ".mutate", "__pycache__", "*.pyc", ".*_cache"))
    return copy


def _digest(source: Path) -> str:
    digest = hashlib.sha256()
    tracer = source / "scripts" / "mutate_trace.py"
    for path in sorted(
        [*source.joinpath("notifier").rglob("*.py"), *source.joinpath("tests").rglob("*"), source / "pyproject.toml", tracer]
    ):
        if path.is_file() and "__pycache__" not in path.parts:
            digest.update(str(path.relative_to(source)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


def _environment(copy: Path, **extra: str) -> dict[str, str]:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(copy), str(ROOT / "scripts")]), PYTHONDONTWRITEBYTECODE="1", **extra)
    env.pop("CI", None)
    return env


def test_map(source: Path, files: list[str] | None = None) -> tuple[dict[str, dict[int, set[str]]], dict[str, float]]:
    """module -> line -> the tests that run it, and each test's seconds; from the cache when the
    package and the tests are unchanged. ``files``: only these test files run (``--tests``)."""
    CACHE.mkdir(exist_ok=True)
    chosen = "" if not files else "-" + hashlib.sha256("\0".join(sorted(files)).encode()).hexdigest()[:8]
    data = CACHE / f"coverage-{_digest(source)}{chosen}"
    if not data.exists():
        what = ", ".join(files) if files else "the whole suite"
        print(f"mapping which tests run which lines ({what}, once, under coverage)...", file=sys.stderr, flush=True)
        env = _environment(source, MUTATE_TRACE_DATA=str(data) + ".partial", MUTATE_TRACE_SOURCE=str(source / "notifier"))
        command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "mutate_trace", "-o", "addopts=", *(files or [])]
        subprocess.run(command, cwd=source, env=env, check=False, stdout=subprocess.DEVNULL)
        Path(str(data) + ".partial.durations.json").rename(str(data) + ".durations.json")
        Path(str(data) + ".partial.failed.json").rename(str(data) + ".failed.json")
        Path(str(data) + ".partial").rename(data)
    import coverage  # a tool of this script only (the test extras)

    recorded = coverage.CoverageData(basename=str(data))
    recorded.read()
    lines: dict[str, dict[int, set[str]]] = {}
    for measured in recorded.measured_files():
        module = measured.rpartition(f"{os.sep}snapshot{os.sep}")[2]  # the map may come from an earlier run's snapshot
        by_line = recorded.contexts_by_lineno(measured)
        lines[module] = {line: {context for context in contexts if context} for line, contexts in by_line.items()}
    durations = json.loads(Path(str(data) + ".durations.json").read_text())
    failed = Path(str(data) + ".failed.json")
    broken = set(json.loads(failed.read_text())) if failed.exists() else set()
    for test in sorted(broken):  # it fails with no mutant in place: it would count every mutant it runs as killed
        print(f"left out: {test} fails without a mutant (fix it, or this run's kills are not the suite's)", file=sys.stderr, flush=True)
    for mapped in lines.values():
        for tests in mapped.values():
            tests -= broken
    return lines, {test: seconds for test, seconds in durations.items() if test not in broken}


class TestOrder:
    """Which of a mutant's tests run first, and how many at most.

    Tests that killed a mutant of the same function earlier in the run come first, then the
    module's own test files (tests/test_dates*.py for dates.py, and those that import it), then those that killed a mutant
    of the same module, then the quick ones (a test that starts the program in another process
    is slow, runs few of the module's lines in the test's own process, and so looks focused,
    but a mutant in memory never reaches that process), then the most focused (those running
    the fewest lines of the module: a unit test before an end-to-end run), then the fastest. At most ``cap`` run: a mutant that
    outlives that many of the tests most likely to notice it is reported as a survivor, so the
    cap can only add survivors, never hide one."""

    def __init__(self, lines: dict[str, dict[int, set[str]]], durations: dict[str, float], cap: int) -> None:
        self.lines, self.durations, self.cap = lines, durations, cap
        self.breadth: dict[str, Counter[str]] = {}  # module -> test -> lines of it the test runs
        self.killers: dict[tuple[str, str], set[str]] = defaultdict(set)  # (module, scope) -> tests that killed there
        self.importing: dict[str, set[str]] = {}  # module -> the test files that import it
        self.lock = threading.Lock()

    def tests_for(self, mutant: Mutant) -> tuple[list[str], list[str]]:
        """The tests to run first (the most likely killers, at most the cap), and the other
        tests that run its lines, for a mutant the first ones let live. A line outside any
        function (run at import: a constant, a class body) is judged by every test that runs
        any line of its module, and by every test of the files named for it or importing it."""
        by_line = self.lines.get(mutant.module, {})
        chosen: set[str] = set()
        for line in range(mutant.lines[0], mutant.lines[1] + 1):
            chosen |= by_line.get(line, set())
        if not mutant.in_function:  # the map names only the test that happened to import the module first
            chosen = set().union(*by_line.values()) if by_line else set()
        # (what a run's worker processes do is in the map: scripts/mutate_trace.py does it here)
        elsewhere = IN_ANOTHER_PROCESS.get(mutant.module)
        if elsewhere is not None:
            file, word = elsewhere
            chosen |= {test for test in self.durations if test.startswith(file) and word in test}
        breadth = self._breadth(mutant.module)
        with self.lock:
            here, module = self.killers[(mutant.module, mutant.scope)], self.killers[(mutant.module, "")]
        # tests/test_dates*.py for notifier/dates.py; a module in a folder is its folder's too
        # (tests/test_history*.py for notifier/history/git.py, tests/test_sitemap*.py for the reader)
        path = Path(mutant.module)
        names = {path.stem.strip("_")} | ({path.parent.name} if path.parent.name != "notifier" else set())
        importers = self._importers(mutant.module)

        def mine(test: str) -> bool:
            file = test.partition("::")[0]
            named = Path(file).stem.removeprefix("test_")
            return any(named.startswith(name) for name in names) or file in importers

        if not mutant.in_function:  # and a test of a file that imports it may run none of its lines (a
            # dataclass made with its defaults runs the generated __init__ only): its own files' tests too
            chosen |= {test for test in self.durations if mine(test)}

        def slow(test: str) -> bool:  # most often one that starts the program in another process (see above)
            return self.durations.get(test, 0.0) > SLOW_TEST

        ordered = sorted(
            chosen,
            key=lambda test: (
                test not in here,
                not mine(test),
                test not in module,
                slow(test),
                breadth[test],
                self.durations.get(test, 0.0),
                test,
            ),
        )
        cap = self.cap if mutant.in_function else 3 * self.cap  # made at import: used by more tests, and few
        return ordered[:cap], ordered[cap:]

    def killed(self, mutant: Mutant, tests: list[str]) -> None:
        """Remember the tests that judged a killed mutant (the first of them, most likely, killed it)."""
        with self.lock:
            for test in tests[:3]:
                self.killers[(mutant.module, mutant.scope)].add(test)
                self.killers[(mutant.module, "")].add(test)

    def _importers(self, module: str) -> set[str]:
        """The test files that import ``module`` by name (``from notifier.site.head import ...``)."""
        with self.lock:
            known = self.importing.get(module)
            if known is None:
                dotted = ".".join(Path(module).with_suffix("").parts).removesuffix(".__init__")
                files = ROOT.joinpath("tests").glob("test_*.py")
                known = self.importing[module] = {
                    f"tests/{path.name}"
                    for path in files
                    if f"from {dotted} import" in path.read_text() or f"import {dotted}\n" in path.read_text()
                }
            return known

    def _breadth(self, module: str) -> Counter[str]:
        with self.lock:
            known = self.breadth.get(module)
            if known is None:
                known = self.breadth[module] = Counter(test for tests in self.lines.get(module, {}).values() for test in tests)
            return known


def run_mutant(mutant: Mutant, copy: Path, tests: list[str], durations: dict[str, float]) -> str:
    """A mutant judged in a fresh interpreter: 'killed' (a tab and the test that failed first),
    'survived' or 'timeout' (counted as killed; with no test named, since the tests ran in a
    process of their own, so a later run keeps it only while the whole suite is unchanged)."""
    path = copy / mutant.module
    original = path.read_text()
    listing = copy / ".mutant-tests"
    try:
        path.write_text(mutated_source(mutant, original))
        listing.write_text("\n".join(tests) + "\n")
        command = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", "-o", "addopts=", f"@{listing}"]
        timeout = 60 + 4 * sum(durations.get(test, 1.0) for test in tests)
        # a session of its own: on a timeout the build the test started (a Sphinx process of a
        # mutant that loops) goes with it, never left running for the rest of the run
        process = subprocess.Popen(
            command, cwd=copy, env=_environment(copy), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True
        )
        try:
            stdout, _ = process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.communicate()
            return "timeout"
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)  # what the tests left running
    finally:
        path.write_text(original)
    if process.returncode == 0:
        return "survived"
    failed = [line.split(" ", 1)[1] for line in stdout.splitlines() if line.startswith(("FAILED ", "ERROR "))]
    return f"killed\t{failed[0].partition(' - ')[0].strip()}" if failed else "killed"


def equivalents() -> dict[str, str]:
    """``module::function | text | operator`` -> why it cannot change what a user sees."""
    known: dict[str, str] = {}
    if EQUIVALENT.exists():
        for line in EQUIVALENT.read_text().splitlines():
            if line.strip() and not line.startswith("#"):
                key, _, reason = line.partition("  ")
                known[key.strip()] = reason.strip()
    return known


class _Worker:
    """A warm interpreter in its own copy of the project (scripts/mutate_worker.py)."""

    def __init__(self, copy: Path) -> None:
        self.copy = copy
        command = [sys.executable, str(ROOT / "scripts" / "mutate_worker.py")]
        self.process = subprocess.Popen(command, cwd=copy, env=_environment(copy), stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert self.process.stdout is not None and self.process.stdout.readline().strip() == "ready", "the mutation worker did not start"

    def judge(self, mutant: Mutant, tests: list[str], durations: dict[str, float]) -> str:
        if not tests:
            return "uncovered"
        if mutant.module in IN_ANOTHER_PROCESS:  # on disk, where the build the test starts will import it
            return run_mutant(mutant, self.copy, tests, durations)
        timeout = 60 + 4 * sum(durations.get(test, 1.0) for test in tests)
        # a test may take six times what it took in the map, and twelve seconds more (a loaded machine):
        # a mutant that loops for ever costs that, and the unjudged ones of a module are often such loops
        limits = {test: 12 + 6 * durations.get(test, 1.0) for test in tests}
        request = {"module": mutant.module, "index": mutant.index, "tests": tests, "timeout": timeout, "limits": limits}
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(json.dumps(request) + "\n")
        self.process.stdin.flush()
        answer = self.process.stdout.readline().strip()
        if answer == "cold":  # not inside a function: judged in a fresh interpreter
            return run_mutant(mutant, self.copy, tests, durations)
        return answer or "killed"

    def close(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.close()
        self.process.wait()


def _run_all(
    chosen: list[Mutant], source: Path, jobs: int, cap: int, known: dict[str, str], files: list[str] | None = None
) -> Iterator[tuple[Mutant, str, str]]:
    lines, durations = test_map(source, files)
    order = TestOrder(lines, durations, cap)
    workers: queue.Queue[_Worker] = queue.Queue()
    started = [_Worker(Path(shutil.copytree(source, source.parent / f"worker-{number}"))) for number in range(jobs)]
    for worker in started:
        workers.put(worker)

    def judge_first(mutant: Mutant) -> tuple[tuple[Mutant, str, str], list[str]]:
        tests, rest = order.tests_for(mutant)  # here, not before: the kills so far order them
        return judge(mutant, tests), rest

    def judge(mutant: Mutant, tests: list[str]) -> tuple[Mutant, str, str]:
        worker = workers.get()
        try:
            outcome = confirmed(lambda some: worker.judge(mutant, some, durations), tests, lambda killer: _unconfirmed(mutant, killer))
        finally:
            workers.put(worker)
        outcome, _, killer = outcome.partition("\t")  # "killed\ttests/x.py::test": the test that failed first
        if outcome in ("killed", "timeout"):
            order.killed(mutant, [killer, *tests] if killer else tests)
        return mutant, outcome, killer

    # Two rounds: every mutant by its likeliest killers first, then the survivors of that round by
    # every other test that runs their lines (a line every run executes: its stating test may be
    # past the cap; a listed equivalent's reason says why none is). A survivor judged by a thousand
    # tests takes minutes; in two rounds it holds back no other mutant's first verdict, and a run
    # stopped in the second round has logged every mutant, a survivor of the first as "survived"
    # (its second verdict, logged later, overrides it in the log: scripts/mutate_again.py).
    later: dict[Mutant, list[str]] = {}
    try:
        with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
            firsts = [pool.submit(judge_first, mutant) for mutant in chosen]
            for done in concurrent.futures.as_completed(firsts):  # as each is judged, not in order
                (mutant, outcome, killer), rest = done.result()
                if outcome == "survived" and rest and mutant.key not in known:
                    later[mutant] = rest
                yield mutant, outcome, killer
            seconds = [pool.submit(judge, mutant, rest) for mutant, rest in later.items()]
            for second in concurrent.futures.as_completed(seconds):
                yield second.result()
    finally:
        for worker in started:
            worker.close()


_ALIVE = ("survived", "uncovered", "uncollected", "error")


def confirmed(judge_once: Callable[[list[str]], str], tests: list[str], unconfirmed: Callable[[str], None]) -> str:
    """The verdict of ``tests`` on a mutant (``judge_once``: one judging of some tests), each kill
    confirmed by its test alone. A timeout is judged once more (a loaded machine slows a test);
    a test that killed is run again by itself, and one that then passes is no killer (a test that
    fails for its own reasons, on a loaded machine or beside another worker's tests, was credited
    with hundreds of kills): it is reported through ``unconfirmed`` and the tests after it judge
    on. A kill whose test the answer does not name (a crash) stands as it is."""
    outcome = judge_once(tests)
    if outcome.startswith("timeout"):
        outcome = judge_once(tests)
    while outcome.startswith("killed\t"):
        killer = outcome.partition("\t")[2]
        if killer not in tests or not judge_once([killer]).startswith("survived"):
            return outcome
        unconfirmed(killer)
        tests = tests[tests.index(killer) + 1 :]
        if not tests:
            return "survived"
        outcome = judge_once(tests)
    return outcome


def _unconfirmed(mutant: Mutant, killer: str) -> None:
    print(f"UNCONFIRMED KILL ({killer} failed with the mutant, then passed alone with it: a flaky test) {mutant.key}", flush=True)


def _summary(chosen: list[Mutant], outcomes: dict[Mutant, str], known: dict[str, str]) -> list[Mutant]:
    """The table per module: tried, killed, equivalent (listed with a reason), unexplained, and
    (with --report) not judged since its function last changed."""
    print("| module | tried | killed | equivalent | unexplained | not judged |")
    print("|---|---:|---:|---:|---:|---:|")
    by_module: dict[str, list[Mutant]] = defaultdict(list)
    for mutant in chosen:
        by_module[mutant.module].append(mutant)
    unexplained: list[Mutant] = []
    totals = Counter[str]()
    for module, mine in sorted(by_module.items()):
        alive = [mutant for mutant in mine if outcomes.get(mutant) in _ALIVE]
        here = [mutant for mutant in alive if mutant.key not in known]
        row = Counter(
            killed=sum(outcomes.get(mutant) in ("killed", "timeout") for mutant in mine),
            equivalent=len(alive) - len(here),
            unexplained=len(here),
            unjudged=sum(mutant not in outcomes for mutant in mine),
        )
        unexplained += here
        totals.update(row)
        print(f"| {module} | {len(mine)} | {row['killed']} | {row['equivalent']} | {row['unexplained']} | {row['unjudged']} |")
    print(f"| **all** | {len(chosen)} | {totals['killed']} | {totals['equivalent']} | {totals['unexplained']} | {totals['unjudged']} |")
    return unexplained


def _commit_named(path: Path) -> str | None:
    """The commit a kept log's name gives (scripts/mutants-judged/<commit>-<what>.log), if any."""
    name = path.name.partition("-")[0]
    found = subprocess.run(["git", "rev-parse", "--verify", "--quiet", f"{name}^{{commit}}"], cwd=ROOT, capture_output=True, text=True)
    return name if name and found.returncode == 0 else None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--module", action="append", help="only these modules, e.g. notifier/pipeline/diff.py (repeatable)")
    parser.add_argument("--list", action="store_true", help="list the mutants and stop")
    parser.add_argument(
        "--tests",
        action="append",
        metavar="FILE",
        help="map and judge with only these test files (repeatable): minutes for one module instead of the suite under "
        "coverage; a mutant only other files kill is then reported as a survivor, never hidden",
    )
    parser.add_argument("--jobs", type=int, default=2, help="mutants run at once (default 2)")
    parser.add_argument("--results", type=Path, help="also write every mutant's outcome to this JSON file")
    parser.add_argument(
        "--max-tests",
        type=int,
        default=300,
        help="tests run first per mutant, most likely killers first (default 300); a survivor is judged by all the others",
    )
    parser.add_argument(
        "--again",
        action="extend",
        nargs="+",
        metavar="RESULTS[@REV]",
        help="take the outcomes of an earlier run's --results file (or its stderr log): run only what it did not kill "
        "(or, for a listed equivalent, let live), "
        "and every mutant of a function changed since the commit it mutated (@REV, else --since); repeatable, "
        "to join the logs of runs made at different commits (--again scripts/mutants-judged/*.log: each log's commit is in its name)",
    )
    parser.add_argument("--since", metavar="REV", help="with --again: the commit that earlier run mutated")
    parser.add_argument(
        "--alive-only",
        action="store_true",
        help="with --again: judge only the mutants those runs let survive (or no test ran) in unchanged code, not those no run judged "
        "(after writing tests for the survivors, with --tests naming the new file: minutes)",
    )
    parser.add_argument(
        "--unjudged-only",
        action="store_true",
        help="with --again: judge only the mutants no run judged since their function last changed; an earlier "
        "survivor of unchanged code counts as it was (as --report shows it): the report at a new commit in the hours "
        "the new and changed code needs, not the days every survivor's whole suite takes again",
    )
    parser.add_argument(
        "--report",
        action="store_true",
        help="judge nothing: the table from the --again results (an earlier survivor of an unchanged function "
        "counts as it was; a mutant no run judged since its function changed, as not judged)",
    )
    args = parser.parse_args()
    modules = args.module or decision_modules()
    chosen = [mutant for module in modules for mutant in mutants(module)]
    current = {mutant.key: mutant for mutant in chosen}
    listed = equivalents()
    moved = mutate_again.moved_equivalents(listed, current, ROOT)  # code moved to another module keeps its reason
    known = {**listed, **{new: listed[old] for old, new in moved.items()}}
    for old, new in sorted(moved.items()):
        print(f"MOVED EQUIVALENT {old} -> {new.partition('::')[0]} (write its new module in {EQUIVALENT.name})", file=sys.stderr)
    earlier: dict[str, tuple[str, str]] = {}
    alive: set[str] = set()  # what the runs left alive, for --alive-only
    for again in args.again or ():
        path, _, revision = again.partition("@")
        revision = revision or args.since or _commit_named(Path(path))
        if revision is None and re.fullmatch(r"[0-9a-f]{7,40}", Path(path).name.partition("-")[0]):
            # a kept log named for a commit this history no longer has (rebased away): its
            # verdicts cannot be matched with the code they judged, so a glob of the folder passes over it
            print(f"--again {again}: its commit is not in this history; its verdicts are not used", file=sys.stderr)
            continue
        if revision is None:
            raise SystemExit(f"--again {again}: name the commit that run mutated (LOG@REV or --since REV)")
        for key, (outcome, killer) in mutate_again.earlier(Path(path), revision, current, ROOT).items():
            before = earlier.get(key, ("", ""))[0]
            alive |= {key} if outcome in ("survived", "uncovered") else set()  # an "error" needs the whole suite's map
            # a kill stands; so does a listed equivalent's survival (its reason says no test can kill it:
            # one a new test does kill is counted equivalent, not killed, which flatters nothing)
            if outcome == "killed" or (key in known and outcome in ("survived", "uncovered") and before != "killed"):
                earlier[key] = (outcome, killer)
            elif (args.report or args.unjudged_only) and outcome in (*_ALIVE, "timeout") and before not in ("killed", "timeout"):
                earlier[key] = (outcome, killer)  # the table tells what the runs saw; a run judges such a mutant again
    if args.list:
        for mutant in chosen:
            print(mutant.key)
        print(f"{len(chosen)} mutants in {len(modules)} modules")
        return 0
    started = time.monotonic()
    outcomes: dict[Mutant, str] = {mutant: earlier[mutant.key][0] for mutant in chosen if mutant.key in earlier}
    killers: dict[Mutant, str] = {mutant: earlier[mutant.key][1] for mutant in chosen if mutant.key in earlier}
    todo = [mutant for mutant in chosen if mutant not in outcomes] if not args.report else []
    if args.alive_only:
        todo = [mutant for mutant in todo if mutant.key in alive]
    # listed equivalents last: a run stopped early has judged the rest; before them, those made at
    # import, each judged in a fresh interpreter by every test of its module (minutes each, not seconds)
    # and the plugins' last of the rest: each is a fresh interpreter and real builds (a minute, not a second)
    todo.sort(key=lambda mutant: (mutant.key in known, mutant.module in IN_ANOTHER_PROCESS, not mutant.in_function))
    with tempfile.TemporaryDirectory(prefix="nc-mutate-") as temp:
        judged = _run_all(todo, snapshot(Path(temp)), args.jobs, args.max_tests, known, args.tests) if todo else ()
        for mutant, outcome, killer in judged:
            outcomes[mutant] = outcome
            killers[mutant] = killer
            print(f"{outcome:9s} {mutant.key}" + (f"\t{killer}" if killer else ""), file=sys.stderr, flush=True)
    reused, took = len(chosen) - len(todo), time.monotonic() - started
    if args.report:
        print(f"\n{len(chosen)} mutants, {len(outcomes)} of them judged by the runs given since their function last changed\n")
    else:
        print(f"\n{len(chosen)} mutants ({len(todo)} run now, {reused} judged in an earlier run) in {took:.0f} s\n")
    unexplained = _summary(chosen, outcomes, known)
    if args.results:
        verdicts = {mutant.key: "\t".join(filter(None, (outcome, killers.get(mutant)))) for mutant, outcome in outcomes.items()}
        args.results.write_text(json.dumps(verdicts, indent=1))
    print()
    for mutant in unexplained:
        print(f"{outcomes[mutant].upper()} {mutant.key}")
    stale = sorted(set(listed) - set(current) - set(moved)) if not args.module else []
    for key in stale:
        print(f"STALE EQUIVALENT (no such mutant now) {key}")
    for mutant in chosen:  # its reason says no test can tell, and one did: the reason is wrong, or that test is flaky
        if mutant.key in known and outcomes.get(mutant) in ("killed", "timeout"):
            killer = killers.get(mutant) or "a test"
            print(f"KILLED EQUIVALENT ({killer} failed with it: run that test alone with the mutant; if it fails again, take the")
            print(f"  line out of {EQUIVALENT.name}, else that test fails on a loaded or warm machine: mend it) {mutant.key}")
    share = len(unexplained) / len(chosen) if chosen else 0.0
    unjudged = sum(mutant not in outcomes for mutant in chosen)
    print(f"\n{len(unexplained)} of {len(chosen)} mutants survive without a reason ({share:.1%}; the bar is 5 %)", end="")
    print(f"; {unjudged} not judged at this commit: the share counts only what was" if unjudged else "")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
