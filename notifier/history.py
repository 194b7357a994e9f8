"""Back each page's lastmod with the git history of its source file (``[history]``).

The whole history is read with one ``git log`` pass — never one process per page — into
an index of path -> (first commit, last commit). A page's lastmod must lie between the
two, give or take the configured tolerance.
"""

from __future__ import annotations

import datetime as dt
import subprocess
import urllib.parse
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from notifier.dates import UTC, parse_w3c, period_of
from notifier.errors import HistoryError
from notifier.rules import Violation
from notifier.sitemap_files import Entry
from notifier.source import is_inside, resolved
from notifier.urls import split_url

_COMMIT_MARK = "\x1ecommit "


class Span(NamedTuple):
    first: dt.datetime  # the earliest author or committer time of any commit of the file
    last: dt.datetime  # the latest
    newest: tuple[dt.datetime, ...]  # author and committer time of the newest commit
    oldest: tuple[dt.datetime, ...]  # and of the oldest


@dataclass(frozen=True)
class HistoryCheck:
    violations: list[Violation]
    backed: set[str]  # pages whose lastmod names their source's first or last commit
    unmapped: int  # pages with no source file matching the templates
    untracked: int  # pages whose source file has no commit yet
    example_unmapped: str | None


def _git(repo: Path, *args: str) -> str:
    try:
        done = subprocess.run(
            ["git", "-C", str(repo), *args],
            capture_output=True,
            text=True,
            encoding="utf-8",
            errors="surrogateescape",
            check=False,
            env=_git_env(),
        )
    except FileNotFoundError:
        raise HistoryError("[history] needs git, and git is not installed; install git or remove [history]") from None
    if done.returncode != 0:
        message = done.stderr.strip().splitlines()[-1] if done.stderr.strip() else f"git {args[0]} failed"
        raise HistoryError(f"[history] repo {repo}: {message}; point [history] repo at the site's git work tree")
    return done.stdout


def _git_env() -> dict[str, str]:
    import os

    env = {key: value for key, value in os.environ.items() if not key.startswith("GIT_")}
    env["LC_ALL"] = "C"
    return env


def repo_root(repo: Path) -> Path:
    """The work tree's top folder; refuses a shallow clone, which cannot back any date."""
    if not repo.is_dir():
        raise HistoryError(f"[history] repo {repo}: no such folder; point [history] repo at the site's git work tree")
    top = Path(_git(repo, "rev-parse", "--show-toplevel").strip())
    if _git(repo, "rev-parse", "--is-shallow-repository").strip() == "true":
        raise HistoryError(
            f"[history] repo {top} is a shallow clone, so its history cannot back any date; fetch the full history "
            "(`git fetch --unshallow`, or `fetch-depth: 0` in actions/checkout)"
        )
    return top


def read_history(top: Path) -> dict[str, Span]:
    """path (relative to ``top``) -> first and last commit instants, from one ``git log``."""
    output = _git(top, "log", "--no-renames", "--name-only", "-z", f"--format={_COMMIT_MARK}%at %ct")
    spans: dict[str, Span] = {}
    for block in output.split(_COMMIT_MARK):
        if not block:
            continue
        header, _, names = block.partition("\n")
        try:
            author, committer = (int(value) for value in header.strip("\0").split())
        except ValueError:
            continue
        times = (dt.datetime.fromtimestamp(author, UTC), dt.datetime.fromtimestamp(committer, UTC))
        early, late = min(times), max(times)
        for name in names.split("\0"):
            name = name.strip("\n")
            if not name:
                continue
            span = spans.get(name)
            if span is None:  # git log runs newest first
                spans[name] = Span(early, late, times, times)
            else:
                spans[name] = Span(min(early, span.first), max(late, span.last), span.newest, times)
    return spans


def template_path(loc: str) -> str:
    """``{path}``: the URL's path without its leading and trailing ``/`` (``index`` for the root)."""
    path = urllib.parse.unquote(split_url(loc).path).strip("/")
    return path or "index"


def source_for(loc: str, templates: Iterable[str], base: Path, top: Path) -> str | None:
    """The first template that names an existing file, as a path relative to ``top``."""
    path = template_path(loc)
    for template in templates:
        candidate = resolved(base / template.replace("{path}", path))
        if candidate.is_file() and is_inside(candidate, top):
            return candidate.relative_to(top).as_posix()
    return None


def check_history(
    entries: Iterable[Entry],
    templates: Iterable[str],
    repo: Path,
    tolerance: dt.timedelta,
) -> HistoryCheck:
    """lastmod-vs-history for every page with a lastmod and a mapped source file."""
    top = repo_root(repo)
    spans = read_history(top)
    base = resolved(repo)
    templates = list(templates)
    violations: list[Violation] = []
    unmapped = untracked = 0
    example: str | None = None
    backed: set[str] = set()
    for entry in entries:
        if entry.lastmod is None:
            continue
        instant = parse_w3c(entry.lastmod)
        if instant is None:
            continue  # lastmod-invalid says so
        source = source_for(entry.loc, templates, base, top)
        if source is None:
            unmapped += 1
            example = example or entry.loc
            continue
        span = spans.get(source)
        if span is None:
            untracked += 1
            continue
        start, end = period_of(entry.lastmod, instant)
        if any(start <= moment <= end for moment in span.newest + span.oldest):
            backed.add(entry.loc)
        if start > span.last + tolerance:
            violations.append(
                Violation(
                    "lastmod-vs-history",
                    "error",
                    entry.loc,
                    f"lastmod {entry.lastmod} is later than the last commit of {source} "
                    f"({span.last:%Y-%m-%dT%H:%M:%SZ}); take lastmod from git, not from the build",
                )
            )
        elif end < span.first - tolerance:
            violations.append(
                Violation(
                    "lastmod-vs-history",
                    "error",
                    entry.loc,
                    f"lastmod {entry.lastmod} is earlier than the first commit of {source} "
                    f"({span.first:%Y-%m-%dT%H:%M:%SZ}); take lastmod from git",
                )
            )
    return HistoryCheck(violations, backed, unmapped, untracked, example)
