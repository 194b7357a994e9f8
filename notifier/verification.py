"""Phase one of a run: read the sitemap file by file into the diff, then verify it.

``check`` stops after this phase; ``run`` and ``--dry-run`` go on only when no
error-level rule fired.
"""

from __future__ import annotations

import datetime as dt
import itertools
from pathlib import Path

from notifier.dates import format_utc
from notifier.diff import Diff, DiffBuilder
from notifier.environment import Environment
from notifier.history import HistoryCheck, check_history
from notifier.pages import fingerprints
from notifier.report import Report
from notifier.rules import Context, RuleSettings, verify
from notifier.settings import HistorySettings, Settings
from notifier.sitemap import Entry, ReadOptions, read_sitemap
from notifier.store import State
from notifier.urls import locate, site


def diff_and_verify(
    settings: Settings, env: Environment, state: State, report: Report, *, first_run: bool, writes: bool, now: dt.datetime
) -> Diff:
    """Parse and diff, file by file, then verify; the report gets the changes and the findings.

    A file whose bytes did not change since the last deploy is not parsed again (with
    --site-dir every page is fingerprinted, so every file is read). ``writes``: a run that
    records, so the state's new parts are made as the files are compared.
    """
    site_dir = settings.site_dir
    builder = DiffBuilder(
        state,
        endpoints=list(settings.endpoints),
        now=format_utc(now),
        build=writes,
        fingerprints=(lambda locs: fingerprints(locs, site_dir)) if site_dir is not None else None,
    )
    known = {part.name: part.digest for part in state.parts if part.name} if site_dir is None else None
    sitemap = read_sitemap(
        settings.sitemap,
        ReadOptions(
            site_dir=site_dir,
            request_timeout=settings.request_timeout,
            progress=env.progress,
            known_digests=known,
            url_hashes=writes,
            stamps=not state.parts,  # a first run judges every date: parse them on every core
        ),
        sink=builder.add_file,
    )
    diff = builder.finish()
    report.added, report.changed, report.removed = diff.added, diff.changed, diff.removed
    report.unchanged = diff.unchanged
    extra = list(env.extra_violations)
    backed: set[str] = set()
    if settings.history is not None:
        checked = _history(settings.history, diff, report)
        extra.extend(checked.violations)
        backed = checked.backed
    report.violations = verify(
        Context(
            sitemap=sitemap,
            diff=diff,
            state=state,
            first_run=first_run,
            key_file_missing=_missing_key_files(settings, diff.origins),
            backed_by_history=backed,
            extra=extra,
        ),
        RuleSettings(
            levels=settings.rule_levels,
            now=now,
            clock_skew=settings.clock_skew,
            max_removed=settings.max_removed,
            bulk=settings.bulk,
            sitemap_url=settings.sitemap_url,
        ),
    )
    diff.added.stamps = None  # the rules are done with the dates: 8 MB at a million URLs
    return diff


def _history(history: HistorySettings, diff: Diff, report: Report) -> HistoryCheck:
    """lastmod-vs-history, with one note for the pages it could not check."""
    # like the other rules, history judges the dates this deploy added or changed
    dated = [Entry(change.loc, change.new, -1, 0) for change in itertools.chain(diff.added, diff.changed)]
    checked = check_history(dated, history.sources, history.repo or Path.cwd(), history.tolerance)
    if checked.unmapped:
        report.notes.append(
            f"lastmod-vs-history: {checked.unmapped} page(s) have no source file matching [history] sources "
            f"(e.g. {checked.example_unmapped}); their dates were not checked"
        )
    if checked.untracked:
        report.notes.append(f"lastmod-vs-history: {checked.untracked} page(s) have a source file with no commit yet")
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
