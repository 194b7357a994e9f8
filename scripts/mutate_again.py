"""Which verdicts of an earlier mutation run still hold (``scripts/mutate.py --again LOG@REV``).

A verdict is kept only where nothing it rests on changed since ``REV``, the commit that run
mutated:

- the code of the mutant's function (or class, or module, for a mutant made at import) is the
  same now (``ast.dump``, which leaves positions out, so code that only moved lines is the same);
- for a kill, the test that killed it is the same: its own code, the module-level lines of its
  file, and the fixtures and helpers it names (in its file or ``tests/conftest.py``, followed
  through the ones they name), and the autouse fixtures of ``tests/conftest.py``. A log written
  before runs named their killers (``killed  KEY`` with no test after a tab) keeps a kill only if
  no test, fixture or helper of the suite changed or went since, and no data file under ``tests/``.

Code moved to another module (a module renamed, or a function moved into another, as
configuration modules moved into ``notifier/settings/``) keeps its verdicts: a key whose module has
no such mutant now is looked for by function, text and operator (``function | text | operator``)
among the mutants of every module, and taken when exactly one mutant has them and its function's
code now is the code the earlier run mutated. Two candidates, or changed code, and it is judged
again: a move never hides a survivor, and never re-opens a kill that still stands.
"""

from __future__ import annotations

import ast
import json
import subprocess
from collections import defaultdict
from collections.abc import Mapping
from pathlib import Path
from typing import Protocol

OUTCOMES = ("killed", "timeout", "survived", "uncovered", "uncollected", "error")
IMPORT_KILL = "<import>"  # the mutant breaks its module's import: no test is needed to kill it


class _Keyed(Protocol):
    @property
    def module(self) -> str: ...

    @property
    def scope(self) -> str: ...


def read_verdicts(results: Path) -> dict[str, tuple[str, str]]:
    """key -> (outcome, the test that killed it or ""), from a ``--results`` file or a run's stderr log."""
    text = results.read_text(encoding="utf-8", errors="replace")
    try:
        raw: dict[str, str] = json.loads(text)
    except ValueError:  # the log a run prints on stderr, "outcome key[<tab>killer]" a line (maybe unfinished)
        raw = {}
        for line in text.replace("\0", "").splitlines():
            outcome, _, rest = line.partition(" ")
            if outcome in OUTCOMES:
                key, _, killer = rest.strip().partition("\t")
                raw[key.strip()] = f"{outcome}\t{killer.strip()}"
    verdicts = {}
    for key, value in raw.items():
        outcome, _, killer = value.partition("\t")
        verdicts[key] = (outcome, killer)
    return verdicts


def _git_show(root: Path, revision: str, path: str) -> str | None:
    shown = subprocess.run(["git", "show", f"{revision}:{path}"], cwd=root, capture_output=True, text=True, check=False)
    return shown.stdout if shown.returncode == 0 else None


def scopes(source: str) -> dict[str, str]:
    """Each function's and class's code, and the module's, by the scope name its mutants carry."""
    tree = ast.parse(source)
    found = {"<module>": ast.dump(tree)}

    def walk(node: ast.AST, scope: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = child.name if scope == "<module>" else f"{scope}.{child.name}"
                found[name] = ast.dump(child)
                walk(child, name)
            else:
                walk(child, scope)

    walk(tree, "<module>")
    return found


class _Code:
    """A file's scopes at ``revision`` and now, each read once."""

    def __init__(self, root: Path, revision: str) -> None:
        self.root, self.revision = root, revision
        self.then: dict[str, dict[str, str]] = {}
        self.now: dict[str, dict[str, str]] = {}

    def before(self, path: str) -> dict[str, str]:
        if path not in self.then:
            source = _git_show(self.root, self.revision, path)
            self.then[path] = scopes(source) if source is not None else {}
        return self.then[path]

    def current(self, path: str) -> dict[str, str]:
        if path not in self.now:
            file = self.root / path
            self.now[path] = scopes(file.read_text()) if file.is_file() else {}
        return self.now[path]


def _binds(node: ast.stmt) -> list[str]:
    """The names a top-level statement binds (a def, a class, an import, an assignment), if only that."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [node.name]
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return [(alias.asname or alias.name).partition(".")[0] for alias in node.names]
    if isinstance(node, (ast.Assign, ast.AnnAssign)):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        return [each.id for target in targets for each in ast.walk(target) if isinstance(each, ast.Name)]
    return []


class _Tests:
    """Whether the test that killed a mutant at ``revision`` is the same test now."""

    def __init__(self, root: Path, revision: str) -> None:
        self.root, self.revision, self.code = root, revision, _Code(root, revision)
        self.trees: dict[tuple[str, bool], dict[str, ast.AST]] = {}
        self._suite: bool | None = None

    def _top(self, path: str, then: bool) -> dict[str, ast.AST]:
        """The top-level definitions of a test file (``<lines>``: the rest of its top level)."""
        if (path, then) not in self.trees:
            file = self.root / path
            source = _git_show(self.root, self.revision, path) if then else (file.read_text() if file.is_file() else None)
            found: dict[str, ast.AST] = {}
            if source is not None:
                tree = ast.parse(source)
                rest: list[ast.stmt] = []
                for node in tree.body:  # a name a test uses is followed to what binds it: a def, an import, an assignment
                    names = _binds(node)
                    for name in names:
                        found[name] = ast.Module(body=[*getattr(found.get(name), "body", []), node], type_ignores=[])
                    if not names:
                        rest.append(node)
                found["<lines>"] = ast.Module(body=rest, type_ignores=[])
            self.trees[(path, then)] = found
        return self.trees[(path, then)]

    def _same(self, path: str, name: str) -> bool:
        then, now = self._top(path, True).get(name), self._top(path, False).get(name)
        return then is not None and now is not None and ast.dump(then) == ast.dump(now)

    def unchanged(self, killer: str) -> bool:
        if killer == IMPORT_KILL:
            return True
        if not killer:
            return self.suite_unchanged()
        file, _, rest = killer.partition("::")
        name = rest.partition("[")[0].split("::")[0]  # a parametrised test's id; a class's test: the class
        conftest = "tests/conftest.py"
        if not self._same(file, name) or not self._same(file, "<lines>") or not self._same(conftest, "<lines>"):
            return False
        places = {file: self._top(file, True), conftest: self._top(conftest, True)}
        fixtures = {**places[conftest], **self._top(conftest, False)}  # one that came since runs before every test too
        autouse = [each for each, node in fixtures.items() if "autouse" in ast.dump(node)[:2000] and each != "<lines>"]
        todo, seen = [(file, name), *[(conftest, each) for each in autouse]], set()
        while todo:
            path, each = todo.pop()
            if (path, each) in seen:
                continue
            seen.add((path, each))
            if not self._same(path, each):
                return False
            node = places[path][each]  # (_same: there then and now)
            named = {part.id for part in ast.walk(node) if isinstance(part, ast.Name)}
            named |= {part.arg for part in ast.walk(node) if isinstance(part, ast.arg)}  # fixtures, by parameter
            todo += [(where, word) for word in named for where in places if word in places[where] and word != each]
        return all(self._support_unchanged(path) for path in self._imports(file))

    def _imports(self, file: str) -> set[str]:
        """The helper modules of tests/ that a test file imports (tests/faketime.py, ...)."""
        lines = self._top(file, False).get("<lines>")
        found = set()
        for node in ast.walk(lines) if lines is not None else ():
            if isinstance(node, ast.ImportFrom) and node.module and (node.module.startswith("tests.") or node.level):
                found.add(f"tests/{node.module.removeprefix('tests.').replace('.', '/')}.py")
        return found

    def _support_unchanged(self, path: str) -> bool:
        """Every definition a helper module had then is the same now (what it added cannot change a test)."""
        then = self._top(path, True)
        return all(self._same(path, name) for name in then)

    def suite_unchanged(self) -> bool:
        if self._suite is None:
            listed = subprocess.run(
                ["git", "ls-tree", "-r", "--name-only", self.revision, "--", "tests"],
                cwd=self.root,
                capture_output=True,
                text=True,
                check=True,
            )
            paths = listed.stdout.split()
            data = [path for path in paths if not path.endswith(".py")]
            changed = subprocess.run(["git", "diff", "--quiet", self.revision, "--", *data], cwd=self.root, check=False) if data else None
            self._suite = (changed is None or changed.returncode == 0) and all(
                self._support_unchanged(path) for path in paths if path.endswith(".py")
            )
        return self._suite


def earlier(results: Path, since: str, current: Mapping[str, _Keyed], root: Path) -> dict[str, tuple[str, str]]:
    """The verdicts of the run whose log is ``results``, made at ``since``, that hold now, by the
    key of the mutant they are now (``current``: key -> mutant). A survivor of unchanged code is
    returned as it was: a run judges it again (a new test may kill it), and ``--report`` shows it
    alive until a run says otherwise, so a changed test never hides it."""
    code, tests = _Code(root, since), _Tests(root, since)
    by_place: dict[str, list[str]] = defaultdict(list)  # "function | text | operator[ #n]" -> the keys now
    for key in current:
        by_place[key.partition("::")[2]].append(key)
    kept = {}
    for key, (outcome, killer) in read_verdicts(results).items():
        module, _, place = key.partition("::")
        scope = place.partition(" | ")[0]
        mutated = code.before(module).get(scope)
        found = [key] if key in current else by_place.get(place, []) if _may_have_moved(key, current, root) else []
        if mutated is None or len(found) != 1:
            continue
        now = current[found[0]]
        if code.current(now.module).get(now.scope) != mutated:
            continue
        if outcome in ("killed", "timeout") and not tests.unchanged(killer):
            continue
        kept[found[0]] = (outcome, killer)
    return kept


def _may_have_moved(key: str, current: Mapping[str, _Keyed], root: Path) -> bool:
    """Whether a key no mutant has now may have moved to another module: its module is gone, or
    it is one of those judged (``current``) and has no such mutant. A module not judged in this
    run (``--module``) still has its mutants, and module-level code never moves alone."""
    module, _, place = key.partition("::")
    if place.startswith("<module> |"):
        return False
    return not (root / module).is_file() or any(each.module == module for each in current.values())


def moved_equivalents(known: Mapping[str, str], current: Mapping[str, _Keyed], root: Path) -> dict[str, str]:
    """Listed equivalent key -> the key of the mutant it is now, for a key no mutant has (its code
    moved to another module) that exactly one mutant's function, text and operator match."""
    by_place: dict[str, list[str]] = defaultdict(list)
    for key in current:
        by_place[key.partition("::")[2]].append(key)
    moved = {}
    for key in known:
        found = by_place.get(key.partition("::")[2], [])
        if key not in current and len(found) == 1 and found[0] not in known and _may_have_moved(key, current, root):
            moved[key] = found[0]
    return moved
