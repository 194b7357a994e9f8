"""Phase one of a run: read the sitemap file by file into the diff, then verify it.

``check`` stops after this phase; ``run`` and ``--dry-run`` go on only when no
error-level rule fired.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import datetime as dt
import itertools
from pathlib import Path

from notifier.config_tables import HistorySettings
from notifier.dates import format_utc
from notifier.environment import Environment
from notifier.history.git import HistoryCheck, check_history, is_shallow_checkout
from notifier.paths import is_url
from notifier.pipeline.diff import Diff, DiffBuilder
from notifier.report import Report, plural
from notifier.rules import OFF, RULES, Context, RuleSettings, Violation, verify
from notifier.rules.pages import PAGE_RULES
from notifier.settings import Settings
from notifier.site.folder import site_root
from notifier.site.pages import BuiltSite
from notifier.sitemap.reader import Entry, ReadOptions, read_sitemap
from notifier.store import State
from notifier.urls import locate, site, split_url
from notifier.workers import usable_cores, worker_pool


def diff_and_verify(
    settings: Settings, env: Environment, state: State, report: Report, *, first_run: bool, writes: bool, now: dt.datetime
) -> Diff:
    """Parse and diff, file by file, then verify; the report gets the changes and the findings.

    A file whose bytes did not change since the last deploy is not parsed again (with
    --site-dir every page is fingerprinted, so every file is read). ``writes``: a run that
    records, so the state's new parts are made as the files are compared.
    """
    # --site-dir: the sitemap's parts and the page files are read on the same worker
    # processes, forked now, while this process has one thread
    cores = usable_cores() if settings.site_dir is not None else 1
    with worker_pool(cores) if cores >= 2 else contextlib.nullcontext() as pool:
        return _diff_and_verify(settings, env, state, report, first_run=first_run, writes=writes, now=now, pool=pool)


def _diff_and_verify(
    settings: Settings,
    env: Environment,
    state: State,
    report: Report,
    *,
    first_run: bool,
    writes: bool,
    now: dt.datetime,
    pool: concurrent.futures.Executor | None,
) -> Diff:
    site_dir = settings.site_dir
    built = _built_site(settings, pool)
    builder = DiffBuilder(
        state,
        endpoints=list(settings.endpoints),
        now=format_utc(now),
        makes_parts=writes,
        fingerprints=built.reader.fingerprints if built is not None and site_dir is not None else None,
    )
    known = {part.name: part.digest for part in state.parts if part.name} if site_dir is None else None
    sitemap = read_sitemap(
        settings.sitemap,
        ReadOptions(
            site_dir=site_dir,
            request_timeout=settings.request_timeout,
            progress=env.progress,
            step=env.step,
            known_digests=known,
            url_hashes=writes,
            stamps=not state.parts,  # a first run judges every date: parse them on every core
            pool=pool,
        ),
        sink=builder.add_file,
    )
    diff = builder.finish()
    _what_is_not_announced(diff, built if site_dir is not None else None, report, writes=writes)
    report.added, report.changed, report.removed = diff.added, diff.changed, diff.removed
    report.unchanged = diff.unchanged
    report.held_back = [change.loc for change in diff.held_back]
    if built is not None:
        built.reader.read_heads(itertools.chain(diff.added.locs, (change.loc for change in diff.changed)))
        _robots_note(built, settings, report)
    extra: list[Violation] = []
    backed: set[str] = set()
    if settings.history is not None:
        checked = _history(settings.history, diff, report)
        extra.extend(checked.violations)
        backed = checked.backed
    context = Context(
        sitemap=sitemap,
        diff=diff,
        state=state,
        first_run=first_run,
        key_file_missing=_missing_key_files(settings, diff.origins),
        backed_by_history=backed,
        extra=extra,
        built=built,
    )
    report.violations = verify(
        context,
        RuleSettings(
            levels=settings.rule_levels,
            now=now,
            clock_skew=settings.clock_skew,
            max_removed=settings.max_removed,
            bulk=settings.bulk,
            sitemap_url=settings.sitemap_url,
        ),
    )
    report.notes.extend(context.notes)
    diff.added.stamps = None  # the rules are done with the dates: 8 MB at a million URLs
    if any(violation.rule == "lastmod-bulk" for violation in report.violations):
        report.violations = _name_a_shallow_clone(settings, report.violations)
    return diff


def _name_a_shallow_clone(settings: Settings, violations: list[Violation]) -> list[Violation]:
    """A shallow clone gives every page the one commit it has (Hugo's enableGitInfo, a git
    date plugin): lastmod-bulk's build clock is then the clone's fault, and says so."""
    folder = settings.history.repo if settings.history is not None and settings.history.repo else None
    if folder is None:
        folder = Path.cwd() if is_url(settings.sitemap) else Path(settings.sitemap).resolve().parent
    if not folder.is_dir() or not is_shallow_checkout(folder):
        return violations
    cause = (
        " This checkout is a shallow clone: every file's last commit is the one commit it holds, so dates taken from git "
        "are all that commit's time; fetch the full history (`fetch-depth: 0` in actions/checkout, `GIT_DEPTH: 0` in GitLab)"
    )
    return [
        violation._replace(message=violation.message + cause) if violation.rule == "lastmod-bulk" else violation for violation in violations
    ]


def _what_is_not_announced(diff: Diff, build: BuiltSite | None, report: Report, *, writes: bool) -> None:
    """Pages proven unchanged (held back), and news articles that aged out of a news sitemap:
    a news URL no file lists any more is removed only when ``build`` (--site-dir) lacks its page."""
    if diff.held_back:
        report.notes.append(
            f"{plural(len(diff.held_back), 'URL')} held back, not announced: the lastmod moved but the built page is "
            "byte-identical to the last deploy's (lastmod-without-change); "
            + ("their new lastmods are recorded" if writes else "a run records their new lastmods")
        )
    if not diff.left_news:
        return
    gone = [change for change in diff.left_news if build is not None and build.folder.page_file(change.loc) is None]
    diff.removed.extend(gone)
    left = len(diff.left_news) - len(gone)
    if left:
        still = "their pages are still built" if build is not None else "a news sitemap lists two days of articles"
        report.notes.append(
            f"{plural(left, 'URL')} left the news sitemap and no other file lists them ({still}): "
            "not announced as removed, and no longer recorded"
        )


def _built_site(settings: Settings, pool: concurrent.futures.Executor | None) -> BuiltSite | None:
    """The build the page rules read: --site-dir, or the sitemap's folder when it holds the
    home page; None when there is none, or every rule that would read it is off."""
    root = site_root(settings.site_dir, settings.sitemap, is_url(settings.sitemap))
    if root is None:
        return None
    if settings.site_dir is None and all(settings.rule_levels.get(rule, RULES[rule].level) == OFF for rule in PAGE_RULES):
        return None
    return BuiltSite.load(root, pool, every_page=settings.site_dir is not None, platform=settings.platform, project=settings.project_dir)


def _robots_note(built: BuiltSite, settings: Settings, report: Report) -> None:
    """robots.txt tells crawlers where the sitemap is: say so when it names another one."""
    if built.robots is None:
        return
    if settings.sitemap_url or is_url(settings.sitemap):
        path = split_url(settings.sitemap_url or settings.sitemap).path
    else:
        try:
            path = "/" + Path(settings.sitemap).resolve().relative_to(built.folder.root).as_posix()
        except ValueError:
            return
    if not built.robots.names(path):
        report.notes.append(
            f"robots.txt names {', '.join(built.robots.sitemaps)} as the sitemap, not {path}; "
            "crawlers look where robots.txt points: make it name the sitemap you deploy"
        )


def _history(history: HistorySettings, diff: Diff, report: Report) -> HistoryCheck:
    """lastmod-vs-history, with one note for the pages it could not check."""
    # like the other date rules, history judges every date this deploy added or moved: the
    # held-back ones too (their pages did not change, their dates did)
    dated = [Entry(change.loc, change.new, -1, 0) for change in itertools.chain(diff.added, diff.changed, diff.held_back)]
    checked = check_history(dated, history.sources, history.repo or Path.cwd(), history.tolerance, history.fields, history.ignore_revs)
    if checked.unmapped:
        report.notes.append(
            f"lastmod-vs-history: {checked.unmapped} page(s) have no source file matching [history] sources "
            f"(e.g. {checked.example_unmapped}); their dates were not checked"
        )
    if checked.untracked:
        report.notes.append(
            f"lastmod-vs-history: {checked.untracked} page(s) have a source file with no commit yet and no date in its front matter"
        )
    if checked.ignored:
        name, source = next(iter(checked.ignored.items()))
        report.notes.append(
            f"lastmod-vs-history: front-matter date field(s) {', '.join(map(repr, checked.ignored))} (e.g. {name!r} in {source}) "
            f"are not in [history] fields ({', '.join(history.fields)}), so they were ignored; add a field there to honour it"
        )
    return checked


def _missing_key_files(settings: Settings, origins: list[str]) -> list[tuple[str, str]]:
    """Key files expected in the build (with --site-dir and a key) that are not there, or hold
    another key: (the file, what is wrong and what to do)."""
    if settings.site_dir is None:
        return []
    missing: list[tuple[str, str]] = []
    hosts: dict[str, str] = {}
    for each in origins:
        where = site(each)
        if where.scheme in ("http", "https") and where.host:
            hosts.setdefault(where.host, where.scheme)
    for host, scheme in hosts.items():
        key = settings.keys.key_for(host)
        if key is None:
            continue
        _, url = settings.keys.location_for(host, scheme)
        candidate = Path(settings.site_dir) / locate(url).path.lstrip("/")
        if not candidate.is_file():
            missing.append(
                (
                    str(candidate),
                    f"the IndexNow key file {candidate} is not in the build; "
                    "run `notify-changes key new --write DIR` or copy it into the site",
                )
            )
            continue
        try:
            served = candidate.read_text(encoding="utf-8", errors="replace").strip()
        except OSError:
            served = ""
        if served != key:
            held = f"holds another key ({served[:4]}…)" if served else "is empty"
            missing.append(
                (
                    str(candidate),
                    f"the key file {candidate} is in the build but {held}, not the key this run uses ({key[:4]}…); "
                    "write the current key into it, or set INDEXNOW_KEY to the key it holds",
                )
            )
    return missing
