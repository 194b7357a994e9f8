"""Back each page's lastmod with the git history of its source file (``[history]``).

The whole history is read with one ``git log`` pass — never one process per page — into
an index of path -> (first commit, last commit). A page's lastmod must lie between the
two, give or take the configured tolerance.
"""

from __future__ import annotations

import datetime as dt
import subprocess
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

from notifier.dates import UTC, ZONE_SLACK, day_sized, day_span, parse_w3c, period_of
from notifier.errors import HistoryError
from notifier.history.source_files import SourceFinder, front_matter
from notifier.paths import cannot
from notifier.rules import Violation
from notifier.sitemap.files import Entry

_COMMIT_MARK = "/commit "  # a commit's header in `git log -z`: no path git lists begins with "/"


class Span(NamedTuple):
    first: dt.datetime  # the earliest author or committer time of any commit of the file
    last: dt.datetime  # the latest
    newest: tuple[dt.datetime, ...]  # author and committer time of the newest commit
    oldest: tuple[dt.datetime, ...]  # and of the oldest


@dataclass
class HistoryCheck:
    violations: list[Violation]
    backed: set[str]  # pages whose lastmod names their source's date, or its first or last commit
    unmapped: int  # pages with no source file matching the templates
    untracked: int  # pages whose source file has no commit yet
    example_unmapped: str | None
    ignored: dict[str, str] = field(default_factory=dict)  # a date field not in [history] fields -> a source holding it
    warnings: tuple[str, ...] = ()  # what git warned of while reading the history
    # of the ``settled`` pages (a lastmod this deploy kept): those whose source has no commit after
    # their lastmod, so a change of their built page is the build's (a nav, a theme), not their content's
    current: set[str] = field(default_factory=set)


GIT_TIMEOUT = 300.0  # seconds for one git call: one `git log` of 10,000 files takes 0.02 s; a network fetch never ends


def _git(repo: Path, *args: str, check: bool = True, warned: list[str] | None = None) -> str:
    """git's output; ``warned`` collects what a call that succeeded said on stderr (not its hints)."""
    try:
        done = subprocess.run(
            ["git", "-C", str(repo), *args],
            capture_output=True,
            encoding="utf-8",  # text, in UTF-8
            errors="surrogateescape",
            check=False,
            env=_git_env(),
            timeout=GIT_TIMEOUT,
        )
    except FileNotFoundError:
        raise HistoryError("[history] needs git, and git is not installed; install git or remove [history]") from None
    except subprocess.TimeoutExpired:
        raise HistoryError(
            f"[history] repo {repo}: `git {args[0]}` took over {GIT_TIMEOUT:g} s (is it fetching objects over the network?); "
            "use a full clone (`fetch-depth: 0`) and run again"
        ) from None
    if not check:
        return done.stdout if done.returncode == 0 else ""
    if done.returncode != 0:
        message = done.stderr.strip().splitlines()[-1] if done.stderr.strip() else f"git {args[0]} failed"
        raise HistoryError(f"[history] repo {repo}: {message}; point [history] repo at the site's git work tree")
    if warned is not None:
        lines = (line.strip() for line in done.stderr.splitlines())
        warned.extend(dict.fromkeys(line for line in lines if line and not line.startswith("hint:")))
    return done.stdout


def _git_env() -> dict[str, str]:
    import os

    env = {key: value for key, value in os.environ.items() if not key.startswith("GIT_")}
    env["LC_ALL"] = "C"
    return env


def is_shallow_checkout(folder: Path) -> bool:
    """Whether ``folder`` lies in a shallow git clone (False outside git, or without git)."""
    try:
        return _git(folder, "rev-parse", "--is-shallow-repository").strip() == "true"
    except HistoryError:  # not in git, or no git
        return False


def repo_root(repo: Path) -> Path:
    """The work tree's top folder; refuses a shallow clone, which cannot back any date."""
    if not repo.is_dir():
        raise HistoryError(f"[history] repo {repo}: no such folder; point [history] repo at the site's git work tree")
    top = Path(_git(repo, "rev-parse", "--show-toplevel").strip())
    if is_shallow_checkout(repo):
        raise HistoryError(
            f"[history] repo {top} is a shallow clone, so its history cannot back any date; fetch the full history "
            "(`git fetch --unshallow`, or `fetch-depth: 0` in actions/checkout)"
        )
    filters = _git(top, "config", "--get-regexp", r"^remote\..*\.partialclonefilter$", check=False).split()[1::2]
    if any(each.startswith("tree:") for each in filters):
        raise HistoryError(
            f"[history] repo {top} is a treeless partial clone (filter {filters[0]}): git would fetch every commit's "
            "trees one by one over the network to read the history; clone with the full history (`fetch-depth: 0`), or "
            "with `filter: blob:none`, which keeps the trees"
        )
    return top


IGNORE_REVS = ".git-blame-ignore-revs"  # git blame's convention: commits that change no content (a mass reformat)


def ignored_revisions(top: Path, setting: Path | bool) -> frozenset[str]:
    """The commits ``[history] ignore-revs`` names: its file, else the work tree's
    .git-blame-ignore-revs when there is one (``False``: none). One full object name a line;
    ``#`` starts a comment."""
    path = setting if isinstance(setting, Path) else top / IGNORE_REVS if setting else None
    if path is None or (setting is True and not path.is_file()):
        return frozenset()
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError as error:
        raise HistoryError(f"[history] ignore-revs {path}: {cannot('read it', error)}") from None
    names = (line.partition("#")[0].strip().lower() for line in text.splitlines())
    return frozenset(name for name in names if name)


class History(NamedTuple):
    spans: dict[str, Span]  # path (relative to the top, as it is named now) -> its commits' instants
    warnings: tuple[str, ...]  # what git said on stderr while reading it, a line each: the report's notes


def read_history(top: Path, ignored: frozenset[str] = frozenset()) -> dict[str, Span]:
    """path (relative to ``top``, as it is named now) -> first and last commit instants."""
    return git_history(top, ignored).spans


def git_history(top: Path, ignored: frozenset[str] = frozenset()) -> History:
    """Each file's commit instants, from one ``git log``, and what git warned of. Renames are
    followed (a moved file keeps the history it had under its old name), and a pure rename
    (``R100``: the content as it was) is no change of the file (`git mv docs content` dates no
    page); the commits in ``ignored`` do not count."""
    warned: list[str] = []
    # -l0: no rename limit. git's default (diff.renameLimit, 1,000) skips finding the renames of
    # a commit that moves more edited files than that with repeated names (old/x.md ->
    # new/x/index.md, a page-bundle migration: 1,100 such moves take git 0.4 s), and every moved
    # page's history would restart at the move, while `git log --follow` follows it.
    try:
        output = _git(top, "log", "-M", "-l0", "--name-status", "-z", f"--format={_COMMIT_MARK}%H %at %ct", warned=warned)
    except HistoryError as error:
        if "does not have any commits yet" in str(error):  # a new site's first build: no history yet, no spans
            return History({}, ())
        raise
    return History(_spans(output, ignored), tuple(warned))


def _spans(output: str, ignored: frozenset[str]) -> dict[str, Span]:
    """The spans of ``git log -z --name-status``'s output, newest commit first."""
    spans: dict[str, Span] = {}
    renamed: dict[str, str] = {}  # a path as older commits name it -> the name it has now
    times: tuple[dt.datetime, dt.datetime] | None = None
    # -z, record by record: a commit's header (it begins with "/", which no path git lists
    # can), then per file its status (the first after a newline) and its path, or for a
    # rename its status, old path and new path, each ended by NUL. git log runs newest first.
    tokens = iter(output.split("\0"))
    for token in tokens:
        if token.startswith(_COMMIT_MARK):
            times = _commit_times(token[len(_COMMIT_MARK) :], ignored)
            continue
        status = token.lstrip("\n")
        if not status:
            continue
        if status[0] in "RC":  # a rename (or a copy): old path, new path
            old, new = next(tokens, ""), next(tokens, "")
            now = renamed.get(new, new)
            if status != "R100":
                _count(spans, now, times)
            if status[0] == "R" and old:
                renamed[old] = now
            continue
        path = next(tokens, "")
        if path:
            _count(spans, renamed.get(path, path), times)
    return spans


def _commit_times(header: str, ignored: frozenset[str]) -> tuple[dt.datetime, dt.datetime] | None:
    """A commit's author and committer times; None when it is ignored or unreadable."""
    try:
        name, author, committer = header.split()
        if name.lower() in ignored:
            return None
        return dt.datetime.fromtimestamp(int(author), UTC), dt.datetime.fromtimestamp(int(committer), UTC)
    except ValueError:
        return None


def _count(spans: dict[str, Span], name: str, times: tuple[dt.datetime, dt.datetime] | None) -> None:
    if not name or times is None:
        return
    early, late = min(times), max(times)
    span = spans.get(name)
    if span is None:  # the newest commit comes first
        spans[name] = Span(early, late, times, times)
    else:
        spans[name] = Span(min(early, span.first), max(late, span.last), span.newest, times)


class SourceDates:
    """Each page's source file and the dates it gives: the git history read in one pass,
    a source's front matter when its page is asked about."""

    def __init__(self, templates: Iterable[str], repo: Path, fields: Sequence[str], ignore_revs: Path | bool, served: str = "") -> None:
        self.top = repo_root(repo)
        self.spans, self.warnings = git_history(self.top, ignored_revisions(self.top, ignore_revs))
        self.finder = SourceFinder(list(templates), repo, self.top, served)
        self.wanted = {name.lower(): number for number, name in enumerate(fields)}

    def given(self, source: str, name_date: str | None) -> tuple[dict[str, str], tuple[str | None, str] | None]:
        """The source's front-matter dates, and the date it gives its page, as the generators'
        fallback chains do: (the first field of ``fields`` it has, its date), else (None, the
        ``{date}`` of its file name), else None."""
        dates = front_matter(self.top / source)
        named = sorted((self.wanted[name.lower()], name, value) for name, value in dates.items() if name.lower() in self.wanted)
        if named:
            return dates, (named[0][1], named[0][2])
        return dates, (None, name_date) if name_date is not None else None


def check_history(
    entries: Iterable[Entry],
    templates: Iterable[str],
    repo: Path,
    tolerance: dt.timedelta,
    fields: Sequence[str],
    ignore_revs: Path | bool,
    served: str = "",
    settled: Iterable[Entry] = (),
) -> HistoryCheck:
    """lastmod-vs-history for every page with a lastmod and a mapped source file: a date the
    source's front matter (or its file name's ``{date}``) gives backs the lastmod first, as
    the generators' own fallback chains do; else the lastmod must lie within the source's
    commits, give or take ``tolerance``. ``served``: the URL path the site is served under."""
    sources = SourceDates(templates, repo, fields, ignore_revs, served)
    wanted = sources.wanted
    result = HistoryCheck([], set(), 0, 0, None, warnings=sources.warnings)
    result.current = {entry.loc for entry in settled if _current(sources, entry)}
    for entry in entries:
        if entry.lastmod is None:
            continue
        instant = parse_w3c(entry.lastmod)
        if instant is None:
            continue  # lastmod-invalid says so
        found = sources.finder.find(entry.loc)
        if found is None:
            result.unmapped += 1
            result.example_unmapped = result.example_unmapped or entry.loc
            continue
        source, name_date = found
        dates, given = sources.given(source, name_date)
        for name in dates:
            if name.lower() not in wanted:
                result.ignored.setdefault(name, source)
        if given is not None and agrees(entry.lastmod, instant, given[1]):
            result.backed.add(entry.loc)
            continue
        said = _said(given, dates, wanted)
        span = sources.spans.get(source)
        if span is None:
            if given is not None:
                result.violations.append(
                    _violation(entry.loc, f"lastmod {entry.lastmod} is not the date {source} gives{said}; take lastmod from it")
                )
            else:
                result.untracked += 1
            continue
        start, end = period_of(entry.lastmod, instant)
        if any(start <= moment <= end for moment in span.newest + span.oldest):
            result.backed.add(entry.loc)
        if start > span.last + tolerance:
            result.violations.append(
                _violation(
                    entry.loc,
                    f"lastmod {entry.lastmod} is later than the last commit of {source} "
                    f"({span.last:%Y-%m-%dT%H:%M:%SZ}){said}; take lastmod from git or the front matter, not from the build",
                )
            )
        elif end < span.first - tolerance:
            result.violations.append(
                _violation(
                    entry.loc,
                    f"lastmod {entry.lastmod} is earlier than the first commit of {source} "
                    f"({span.first:%Y-%m-%dT%H:%M:%SZ}){said}; take lastmod from git or the front matter",
                )
            )
    return result


def _current(sources: SourceDates, entry: Entry) -> bool:
    """Whether the page's source has no commit after its lastmod: its newest commit is the
    lastmod's instant (or day), or older. Judged only; never a finding."""
    instant = parse_w3c(entry.lastmod) if entry.lastmod is not None else None
    found = sources.finder.find(entry.loc) if instant is not None else None
    span = sources.spans.get(found[0]) if found is not None else None
    if span is None or entry.lastmod is None or instant is None:
        return False
    start, end = period_of(entry.lastmod, instant)
    return span.last <= end or any(start <= moment <= end for moment in span.newest)


def _violation(loc: str, message: str) -> Violation:
    return Violation("lastmod-vs-history", "error", loc, message)


def _said(given: tuple[str | None, str] | None, dates: dict[str, str], wanted: dict[str, int]) -> str:
    """What the source's own dates say, for a message: the field it has, the fields ignored."""
    if given is None:
        said = ""
    elif given[0]:
        said = f", and its {given[0]} says {given[1]}"
    else:
        said = f", and the date in its file name says {given[1]}"
    ignored = [name for name in dates if name.lower() not in wanted]
    if ignored:
        said += f" (its front-matter field {ignored[0]!r} is not in [history] fields, so it was ignored)"
    return said


def agrees(lastmod: str, instant: dt.datetime, given: str) -> bool:
    """Whether a lastmod names the date a source gives: the same second when both are
    instants; when either is a day, the same day in some zone."""
    other = parse_w3c(given)
    assert other is not None, "a source's dates are W3C Datetimes (as_w3c made them)"
    if not day_sized(lastmod) and not day_sized(given):
        return abs((instant - other).total_seconds()) < 1
    start, end = day_span(lastmod, instant)
    other_start, other_end = day_span(given, other)
    return start <= other_end + ZONE_SLACK and other_start - ZONE_SLACK <= end
