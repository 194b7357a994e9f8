#!/usr/bin/env python3
"""Mutation testing of the decisions users rely on: which mutants does the suite let live?

    .venv/bin/python scripts/mutate.py                 # every target, its tests, 2 at a time
    .venv/bin/python scripts/mutate.py --target dates  # one target
    .venv/bin/python scripts/mutate.py --list          # the mutants, without running them

A mutant is one small change to one decision: a comparison flipped (``<`` to ``<=``, ``==``
to ``!=``, ``in`` to ``not in``), ``and`` and ``or`` swapped, a ``not`` dropped, a whole
number moved by one, ``True`` and ``False`` swapped. Each is written into a copy of the
project and the target's tests run against it; a mutant none of them notices survives.

Survivors are printed, except those listed in scripts/mutants-equivalent.txt with the
reason they cannot change what a user sees (``module:line:column operator  reason``).
Not run in CI: it is slow (minutes), and it is a tool for writing tests, not a test.
"""

from __future__ import annotations

import argparse
import ast
import concurrent.futures
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EQUIVALENT = ROOT / "scripts" / "mutants-equivalent.txt"

# target -> (module, the functions whose decisions are mutated (empty: all), the tests that judge them)
TARGETS: dict[str, tuple[str, tuple[str, ...], tuple[str, ...]]] = {
    "diff": (
        "notifier/diff.py",
        (
            "add_file",
            "_classify",
            "_consult_unread",
            "_match_new_urls",
            "_rescue_listed_elsewhere",
            "_removals",
            "_still_pending",
            "_count",
        ),
        (
            "tests/test_diff.py",
            "tests/test_diff_property.py",
            "tests/test_incremental.py",
            "tests/test_deploy_loop.py",
            "tests/test_build_clock.py",
        ),
    ),
    "rules-dates": ("notifier/rules/dates.py", (), ("tests/test_rules.py", "tests/test_boundaries.py", "tests/test_history.py")),
    "rules-bulk": (
        "notifier/rules/bulk.py",
        (),
        (
            "tests/test_rules.py",
            "tests/test_boundaries.py",
            "tests/test_build_clock.py",
            "tests/test_history.py",
            "tests/test_history_presets.py",
        ),
    ),
    "history": (
        "notifier/history.py",
        ("read_history", "given", "check_history", "agrees"),
        ("tests/test_history.py", "tests/test_history_presets.py"),
    ),
    "sources": ("notifier/sources.py", (), ("tests/test_history_presets.py", "tests/test_stamp.py")),
    "stamp": ("notifier/stamp.py", (), ("tests/test_stamp.py", "tests/test_generators.py")),
    "rules-urls": (
        "notifier/rules/urls.py",
        ("url_problem", "_urls", "_judged_by_url", "_host_reason"),
        ("tests/test_rules.py", "tests/test_boundaries.py"),
    ),
    "rules-site": ("notifier/rules/site.py", (), ("tests/test_rules.py", "tests/test_boundaries.py")),
    "store": (
        "notifier/store/model.py",
        ("settle", "_stamp", "settle_submitted", "waiting", "stamp_submitted"),
        (
            "tests/test_state.py",
            "tests/test_store_contract.py",
            "tests/test_delivery.py",
            "tests/test_state_edges.py",
            "tests/test_incremental.py",
        ),
    ),
    "sqlite": (
        "notifier/store/sqlite.py",
        ("_read", "save", "record_delivered", "load"),
        ("tests/test_store_contract.py", "tests/test_state_edges.py"),
    ),
    "indexnow": (
        "notifier/indexnow.py",
        ("make_batches", "key_scope", "parse_retry_after", "server_error", "_with_retries", "submit", "_check_key_file"),
        ("tests/test_indexnow.py", "tests/test_faults.py", "tests/test_secrets.py", "tests/test_boundaries.py"),
    ),
    "pipeline": (
        "notifier/pipeline.py",
        ("_pipeline", "_persist_pending", "_record_run"),
        (
            "tests/test_phases.py",
            "tests/test_deploy_loop.py",
            "tests/test_indexnow.py",
            "tests/test_state_edges.py",
            "tests/test_discovery.py",
        ),
    ),
    "dates": (
        "notifier/dates.py",
        (),
        (
            "tests/test_dates.py",
            "tests/test_feeds.py",
            "tests/test_history.py",
            "tests/test_rules.py",
            "tests/test_boundaries.py",  # day_span's zones
            "tests/test_history_presets.py",  # a day against an instant
        ),
    ),
    "reader-limits": (
        "notifier/sitemap.py",
        ("_read_one", "_resolve_part", "_refuse_cycles"),
        ("tests/test_sitemap.py", "tests/test_hostile.py", "tests/test_boundaries.py", "tests/test_incremental.py"),
    ),
}

_FLIPS: dict[type, type] = {
    ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt,
    ast.Eq: ast.NotEq, ast.NotEq: ast.Eq, ast.In: ast.NotIn, ast.NotIn: ast.In, ast.Is: ast.IsNot, ast.IsNot: ast.Is,
}  # fmt: skip


@dataclass(frozen=True)
class Mutant:
    target: str
    module: str
    line: int
    column: int
    operator: str  # what was changed, e.g. "< -> <=", "and -> or", "drop not", "10 -> 11"

    @property
    def key(self) -> str:
        return f"{self.module}:{self.line}:{self.column} {self.operator}"


def _points(tree: ast.AST, functions: tuple[str, ...]) -> list[tuple[ast.AST, str]]:
    """Every mutable decision inside ``functions`` (or the whole module), in source order."""
    scopes: list[ast.AST] = [tree]
    if functions:
        scopes = [node for node in ast.walk(tree) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name in functions]
    found: dict[tuple[int, int, str], tuple[ast.AST, str]] = {}
    for scope in scopes:
        for node in ast.walk(scope):
            if isinstance(node, ast.Compare):
                for op in node.ops:
                    if type(op) in _FLIPS:
                        found[(node.lineno, node.col_offset, type(op).__name__)] = (
                            node,
                            f"{type(op).__name__} -> {_FLIPS[type(op)].__name__}",
                        )
            elif isinstance(node, ast.BoolOp):
                found[(node.lineno, node.col_offset, "bool")] = (node, "and -> or" if isinstance(node.op, ast.And) else "or -> and")
            elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
                found[(node.lineno, node.col_offset, "not")] = (node, "drop not")
            elif isinstance(node, ast.Constant) and type(node.value) is bool:
                found[(node.lineno, node.col_offset, "bool-const")] = (node, f"{node.value} -> {not node.value}")
            elif isinstance(node, ast.Constant) and type(node.value) is int and node.value not in (0, 1):
                found[(node.lineno, node.col_offset, "int")] = (node, f"{node.value} -> {node.value + 1}")
    return [found[key] for key in sorted(found)]


def mutants(target: str) -> list[Mutant]:
    module, functions, _ = TARGETS[target]
    tree = ast.parse((ROOT / module).read_text())
    return [Mutant(target, module, node.lineno, node.col_offset, operator) for node, operator in _points(tree, functions)]


class _Apply(ast.NodeTransformer):
    def __init__(self, mutant: Mutant) -> None:
        self.mutant = mutant

    def _here(self, node: ast.AST) -> bool:
        return getattr(node, "lineno", -1) == self.mutant.line and getattr(node, "col_offset", -1) == self.mutant.column

    def visit_Compare(self, node: ast.Compare) -> ast.AST:
        self.generic_visit(node)
        if self._here(node) and "->" in self.mutant.operator and not self.mutant.operator[0].isdigit():
            name = self.mutant.operator.split(" -> ")[0]
            node.ops = [_FLIPS[type(op)]() if type(op).__name__ == name else op for op in node.ops]
        return node

    def visit_BoolOp(self, node: ast.BoolOp) -> ast.AST:
        self.generic_visit(node)
        if self._here(node) and self.mutant.operator in ("and -> or", "or -> and"):
            node.op = ast.Or() if isinstance(node.op, ast.And) else ast.And()
        return node

    def visit_UnaryOp(self, node: ast.UnaryOp) -> ast.AST:
        self.generic_visit(node)
        if self._here(node) and self.mutant.operator == "drop not":
            return node.operand
        return node

    def visit_Constant(self, node: ast.Constant) -> ast.AST:
        if self._here(node):
            if type(node.value) is bool and self.mutant.operator.startswith(str(node.value)):
                return ast.copy_location(ast.Constant(not node.value), node)
            if type(node.value) is int and self.mutant.operator == f"{node.value} -> {node.value + 1}":
                return ast.copy_location(ast.Constant(node.value + 1), node)
        return node


def snapshot(into: Path) -> Path:
    """The project as it is when the run starts: every mutant is made from this copy, so
    edits made while the run goes on cannot change its verdicts."""
    copy = into / "snapshot"
    shutil.copytree(ROOT, copy, ignore=shutil.ignore_patterns(".venv", ".git", ".ci", "__pycache__", "*.pyc", ".*_cache"))
    return copy


def run_mutant(mutant: Mutant, source: Path, timeout: float) -> tuple[Mutant, str]:
    """'killed', 'survived' or 'timeout' (a mutant that hangs the tests counts as killed)."""
    _, _, tests = TARGETS[mutant.target]
    with tempfile.TemporaryDirectory(prefix="nc-mutant-") as temp:
        copy = Path(temp) / "project"
        shutil.copytree(source, copy)
        path = copy / mutant.module
        tree = _Apply(mutant).visit(ast.parse(path.read_text()))
        path.write_text(ast.unparse(ast.fix_missing_locations(tree)))
        env = dict(os.environ, PYTHONPATH=str(copy), PYTHONDONTWRITEBYTECODE="1")
        env.pop("CI", None)
        existing = [test for test in tests if (copy / test).exists()]
        command = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", "-o", "addopts=", *existing]
        try:
            done = subprocess.run(command, cwd=copy, env=env, capture_output=True, text=True, timeout=timeout, check=False)
        except subprocess.TimeoutExpired:
            return mutant, "timeout"
    return mutant, "survived" if done.returncode == 0 else "killed"


def equivalents() -> dict[str, str]:
    """``module:line:column operator`` -> why it cannot change what a user sees."""
    known: dict[str, str] = {}
    if EQUIVALENT.exists():
        for line in EQUIVALENT.read_text().splitlines():
            if line.strip() and not line.startswith("#"):
                key, _, reason = line.partition("  ")
                known[key.strip()] = reason.strip()
    return known


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--target", action="append", choices=sorted(TARGETS), help="only these targets (repeatable)")
    parser.add_argument("--list", action="store_true", help="list the mutants and stop")
    parser.add_argument("--jobs", type=int, default=2, help="mutants run at once (default 2)")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds a mutant's tests may take")
    args = parser.parse_args()
    chosen = [mutant for target in (args.target or sorted(TARGETS)) for mutant in mutants(target)]
    if args.list:
        for mutant in chosen:
            print(mutant.key)
        print(f"{len(chosen)} mutants")
        return 0
    known = equivalents()
    started = time.monotonic()
    outcomes: dict[Mutant, str] = {}
    with tempfile.TemporaryDirectory(prefix="nc-mutate-") as temp, concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        source = snapshot(Path(temp))
        for mutant, outcome in pool.map(lambda each: run_mutant(each, source, args.timeout), chosen):
            outcomes[mutant] = outcome
            print(f"{outcome:9s} {mutant.key}", file=sys.stderr, flush=True)
    print(f"\n{len(chosen)} mutants in {time.monotonic() - started:.0f} s\n")
    print("| target | tried | killed | survived | equivalent |")
    print("|---|---:|---:|---:|---:|")
    unexplained: list[Mutant] = []
    for target in sorted({mutant.target for mutant in chosen}):
        mine = [mutant for mutant in chosen if mutant.target == target]
        survived = [mutant for mutant in mine if outcomes[mutant] == "survived"]
        explained = [mutant for mutant in survived if mutant.key in known]
        unexplained += [mutant for mutant in survived if mutant.key not in known]
        print(f"| {target} | {len(mine)} | {len(mine) - len(survived)} | {len(survived) - len(explained)} | {len(explained)} |")
    print()
    for mutant in unexplained:
        print(f"SURVIVED {mutant.key}")
    share = len(unexplained) / len(chosen) if chosen else 0.0
    print(f"\n{len(unexplained)} of {len(chosen)} mutants survive without a reason ({share:.1%}; the bar is 5 %)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
