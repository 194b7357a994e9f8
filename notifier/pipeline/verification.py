"""Phase one of a run: read the sitemap file by file into the diff, then verify it.

``check`` stops after this phase; ``run`` and ``--dry-run`` go on only when no
error-level rule fired.
"""

from __future__ import annotations

import itertools
from pathlib import Path

from notifier.changes import Change
from notifier.commands.key import existing_key_files
from notifier.history.git import HistoryCheck, check_history, is_shallow_checkout
from notifier.paths import is_url
from notifier.pipeline.context import Run, Verified
from notifier.pipeline.diff import Diff, DiffBuilder
from notifier.pipeline.policy import declared_alternates
from notifier.protocol import DEFAULT_KEY_SOURCE
from notifier.report import plural
from notifier.rules import OFF, RULES, Context, RuleSettings, Violation, verify
from notifier.rules.pages import PAGE_RULES
from notifier.settings.config_tables import HistorySettings
from notifier.settings.settings import Settings
from notifier.site.folder import site_root
from notifier.site.pages import BuiltSite
from notifier.sitemap.files import Sitemap, Wanted
from notifier.sitemap.reader import Entry, ReadOptions, read_sitemap
from notifier.store import State
from notifier.urls import key_host, locate, site, split_url
from notifier.workers import Workers


def diff_and_verify(run: Run, state: State) -> Verified:
    """Parse and diff, file by file, then verify: the changes, the findings and the notes.

    A file whose bytes did not change since the last deploy is not parsed again (with
    --site-dir every page is fingerprinted, so every file is read). A run that records makes
    the state's new parts as the files are compared.
    """
    settings = run.settings
    site_dir = settings.site_dir
    notes: list[str] = []
    # --site-dir: the build is scanned on a worker while the sitemap's parts are parsed
    built = _built_site(settings, run.workers)
    builder = DiffBuilder(
        state,
        endpoints=run.endpoints,
        now=run.stamp,
        makes_parts=run.records,
        fingerprints=built.reader.fingerprints if built is not None and site_dir is not None else None,
    )
    sitemap = _read(run, state, builder)
    diff = builder.finish()
    notes.extend(_what_is_not_announced(diff, built if site_dir is not None else None))
    unlisted_at = len(notes)  # the unlisted note goes here, once the findings say whether the run records
    if built is not None:
        built.reader.read_heads(itertools.chain(diff.added.locs, (change.loc for change in diff.changed)))
        notes.extend(_robots_note(built, settings))
    extra: list[Violation] = []
    backed: set[str] = set()
    current: set[str] = set()
    if settings.history is not None:
        checked = _history(settings.history, diff, notes, settings.base_path)
        extra.extend(checked.violations)
        backed, current = checked.backed, checked.current
    context = Context(
        sitemap=sitemap,
        diff=diff,
        state=state,
        first_run=run.first_run,
        key_file_missing=_missing_key_files(settings, diff.origins),
        backed_by_history=backed,
        current_by_history=current,
        extra=extra,
        built=built,
    )
    violations = verify(context, _rule_settings(run))
    notes.extend(context.notes)
    if settings.announce.alternates:
        heads = built.reader.heads if built is not None and site_dir is not None else None
        diff.alternates = declared_alternates(sitemap.files, diff.changed, heads)
    failed = any(violation.level == "error" for violation in violations)
    if diff.unlisted:  # said once the findings are known, as the held back are
        notes.insert(unlisted_at, _unlisted_note(diff.unlisted, records=run.records and not failed, failed=failed))
    if diff.held_back:  # said once the findings are known: a run they fail records nothing
        notes.insert(0, _held_back_note(len(diff.held_back), records=run.records and not failed, failed=failed))
    diff.added.stamps = None  # the rules are done with the dates: 8 MB at a million URLs
    if any(violation.rule == "lastmod-bulk" for violation in violations):
        violations = _name_a_shallow_clone(settings, violations)
    return Verified(diff, violations, notes)


def _read(run: Run, state: State, builder: DiffBuilder) -> Sitemap:
    """The sitemap read file by file into ``builder``; a part whose bytes are the recorded ones
    is not parsed again, unless every page is fingerprinted (--site-dir)."""
    settings = run.settings
    known = {part.name: part.digest for part in state.parts if part.name} if settings.site_dir is None else None
    return read_sitemap(
        settings.sitemap,
        ReadOptions(
            site_dir=settings.site_dir,
            base=settings.base_path,
            request_timeout=settings.request_timeout,
            progress=run.env.progress,
            step=run.env.step,
            # a first run judges every date: parse them on every core
            wanted=Wanted(url_hashes=run.records, stamps=not state.parts),
            workers=run.workers,
        ),
        sink=builder.add_file,
        known=known,
        condenser=builder,
    )


def _rule_settings(run: Run) -> RuleSettings:
    settings = run.settings
    return RuleSettings(
        levels=settings.rule_levels,
        now=run.now,
        clock_skew=settings.clock_skew,
        max_removed=settings.max_removed,
        bulk=settings.bulk,
        sitemap_url=settings.sitemap_url,
        own_hosts=frozenset(settings.keys.per_host),
    )


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


def _held_back_note(count: int, *, records: bool, failed: bool) -> str:
    """Pages proven unchanged: never announced; whether this run records their new lastmods."""
    if records:
        outcome = "their new lastmods are recorded"
    elif failed:
        outcome = "nothing is recorded while an error stands: the first run that passes records their new lastmods"
    else:
        outcome = "a run records their new lastmods"
    return (
        f"{plural(count, 'URL')} held back, not announced: the lastmod moved but the built page is "
        f"byte-identical to the last deploy's (lastmod-without-change); {outcome}"
    )


def _what_is_not_announced(diff: Diff, build: BuiltSite | None) -> list[str]:
    """URLs that left the sitemap while their pages are still built (unlisted), and news
    articles that aged out of a news sitemap: a news URL no file lists any more is removed
    only when ``build`` (--site-dir) lacks its page."""
    notes: list[str] = []
    if build is not None:
        _unlisted(diff, build)
    if not diff.left_news:
        return notes
    gone = [change for change in diff.left_news if build is not None and build.folder.page_file(change.loc) is None]
    diff.removed.extend(gone)
    left = len(diff.left_news) - len(gone)
    if left:
        still = "their pages are still built" if build is not None else "a news sitemap lists two days of articles"
        notes.append(
            f"{plural(left, 'URL')} left the news sitemap and no other file lists them ({still}): "
            "not announced as removed, and no longer recorded"
        )
    return notes


def _unlisted(diff: Diff, build: BuiltSite) -> None:
    """With --site-dir, a URL is removed only when its page left the build too: one that left
    the sitemap while its page file is still built is unlisted (a sitemap that lists some of
    the pages, an incremental build's), never announced as removed. It still counts for
    mass-removal: the sitemap lost it all the same."""
    still = [change for change in diff.removed if build.folder.page_file(change.loc) is not None]
    if not still:
        return
    unlisted = {change.loc for change in still}
    diff.removed[:] = [change for change in diff.removed if change.loc not in unlisted]
    diff.unlisted = still


def _unlisted_note(still: list[Change], *, records: bool, failed: bool) -> str:
    """The unlisted URLs, and what becomes of them: the run that records the sitemap drops
    their records, so no later run can announce them as removed (a page file deleted after
    that run is a removal no one hears of)."""
    if records:
        outcome = "no longer recorded, so no later run announces them as removed (deleting their page files now announces nothing)"
    else:
        when = "the first run that passes" if failed else "a run"
        outcome = (
            f"{when} stops recording them, and no run after it announces them as removed: "
            "to announce a removal, delete their page files before that run; or list them again"
        )
    return (
        f"{plural(len(still), 'URL')} left the sitemap while the build still has their pages (e.g. {still[0].loc}): unlisted, "
        f"not announced as removed; {outcome}"
    )


def _built_site(settings: Settings, workers: Workers) -> BuiltSite | None:
    """The build the page rules read: --site-dir, or the sitemap's folder when it holds the
    home page; None when there is none, or every rule that would read it is off."""
    root = site_root(settings.site_dir, settings.sitemap, is_url(settings.sitemap))
    if root is None:
        return None
    if settings.site_dir is None and all(settings.rule_levels.get(rule, RULES[rule].level) == OFF for rule in PAGE_RULES):
        return None
    every_page = settings.site_dir is not None
    return BuiltSite.load(
        root, workers, every_page=every_page, platform=settings.platform, project=settings.project_dir, base=settings.base_path
    )


def _robots_note(built: BuiltSite, settings: Settings) -> list[str]:
    """robots.txt tells crawlers where the sitemap is: say so when it names another one."""
    if built.robots is None:
        return []
    if settings.sitemap_url or is_url(settings.sitemap):
        path = split_url(settings.sitemap_url or settings.sitemap).path
    else:
        try:
            path = "/" + Path(settings.sitemap).resolve().relative_to(built.folder.root).as_posix()
        except ValueError:
            return []
    if built.robots.names(path):
        return []
    return [
        f"robots.txt names {', '.join(built.robots.sitemaps)} as the sitemap, not {path}; "
        "crawlers look where robots.txt points: make it name the sitemap you deploy"
    ]


def _history(history: HistorySettings, diff: Diff, notes: list[str], served: str) -> HistoryCheck:
    """lastmod-vs-history, with one note for the pages it could not check."""
    # like the other date rules, history judges every date this deploy added or moved: the
    # held-back ones too (their pages did not change, their dates did)
    dated = [Entry(change.loc, change.new, -1, 0) for change in itertools.chain(diff.added, diff.changed, diff.held_back)]
    # a page built anew under a date this deploy kept: is its source unchanged since (change-without-lastmod)?
    settled = [Entry(each.loc, each.new, -1, 0) for each in diff.page_findings if each.rule == "change-without-lastmod"]
    repo = history.repo or Path.cwd()
    checked = check_history(dated, history.sources, repo, history.tolerance, history.fields, history.ignore_revs, served, settled)
    if checked.unmapped:
        notes.append(
            f"lastmod-vs-history: {checked.unmapped} page(s) have no source file matching [history] sources "
            f"(e.g. {checked.example_unmapped}); their dates were not checked"
        )
    if checked.untracked:
        notes.append(
            f"lastmod-vs-history: {checked.untracked} page(s) have a source file with no commit yet and no date in its front matter"
        )
    if checked.warnings:  # git reads on after a warning: what it read may not be the history
        notes.append(
            f"lastmod-vs-history: git warned while reading the history ({'; '.join(checked.warnings)}); "
            "the dates it backs may be wrong until what git names is fixed"
        )
    if checked.ignored:
        name, source = next(iter(checked.ignored.items()))
        notes.append(
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
            hosts.setdefault(key_host(where.host, where.scheme), where.scheme)  # one key file for every spelling of a host
    for host, scheme in hosts.items():
        key = settings.keys.key_for(host)
        if key is None:
            continue
        _, url = settings.keys.location_for(host, scheme)
        candidate = Path(settings.site_dir) / locate(url).path.lstrip("/")
        source = settings.keys.source_of(host)
        if candidate.name == f"{key}.txt":
            fix = f"`notify-changes key file --host {host} --write {candidate.parent}` writes it (the key of {source})"
        else:  # a --key-location of another name: the command writes KEY.txt
            fix = f"write the key of {source} into it"
        instead = "; or set INDEXNOW_KEY to the key it holds" if source == DEFAULT_KEY_SOURCE else ""
        if not candidate.is_file():
            others = existing_key_files(str(candidate.parent))  # a key of before: `key file` refuses a second
            if others:
                fix = f"delete the other key's file {others[0][:4]}….txt there: {fix}{instead}"
            missing.append((str(candidate), f"the IndexNow key file {candidate} is not in the build; {fix}, or copy it into the site"))
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
                    f"delete it: {fix}{instead}",
                )
            )
    return missing
