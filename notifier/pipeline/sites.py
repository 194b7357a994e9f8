"""Several sites in one run (the config's ``[[sites]]``): every site is read and verified
before any is submitted; a site that fails verification (or whose input is broken) is not
submitted, the others are; one report with a section a site, and one exit code.

The exit code is the most severe of the sites' (``SEVERITY``): a lie (1) before a broken
input (2) before a lock held elsewhere (4) before a delivery the state could not record (5)
before an incomplete submission (3) before 0.
Runs lock every site's state in the config's order before reading any, so two runs of the
same config never wait on each other in a circle.
"""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import Sequence

from notifier.changes import Change
from notifier.environment import Environment
from notifier.errors import ExitCode, NotifierError
from notifier.metrics import after_run
from notifier.pipeline.loop import Begun, begin_site, finish, without_cycle_collection
from notifier.protocol import redact_all
from notifier.report import Report
from notifier.settings.settings import Settings
from notifier.store import Store
from notifier.workers import Workers

SEVERITY = (
    ExitCode.VERIFICATION_FAILED,
    ExitCode.INPUT_ERROR,
    ExitCode.LOCKED,
    ExitCode.NOT_RECORDED,
    ExitCode.SUBMISSION_INCOMPLETE,
    ExitCode.OK,
)


def most_severe(codes: Sequence[ExitCode]) -> ExitCode:
    return min(codes, key=SEVERITY.index, default=ExitCode.OK)


def execute_sites(runs: Sequence[Settings], env: Environment | None = None, *, notes: Sequence[str] = ()) -> Report:
    """Check or run every site of ``runs`` and return one report, ``report.sites`` holding each site's."""
    env = env or Environment()
    reports: dict[str, Report] = {}
    begun: dict[str, tuple[Begun, Store | None]] = {}
    with without_cycle_collection(), Workers(runs[0].jobs) as workers, contextlib.ExitStack() as stack:
        for settings in runs:
            name = settings.site or settings.sitemap
            try:
                begun[name] = begin_site(settings, env, workers, stack)
            except NotifierError as error:
                reports[name] = _failed(settings, error)
        for name, (site, store) in begun.items():  # every site is verified: now each is finished
            try:
                reports[name] = finish(site, store)
            except NotifierError as error:
                reports[name] = _failed(site.run.settings, error)
    report = combined([reports[settings.site or settings.sitemap] for settings in runs], runs, notes)
    states = [begun[name][0].state if (name := settings.site or settings.sitemap) in begun else None for settings in runs]
    return after_run(report, runs, env.now(), states)  # --metrics: every site's, in one file


def _failed(settings: Settings, error: NotifierError) -> Report:
    """A site whose input, state or lock stopped it: its one line, its exit code."""
    return Report(
        command=settings.command,
        dry_run=settings.dry_run,
        exit_code=ExitCode(error.exit_code),
        notes=[redact_all(str(error), settings.keys)],
        site=settings.site,
    )


def combined(reports: list[Report], runs: Sequence[Settings], notes: Sequence[str]) -> Report:
    """One report for all the sites: their lists joined, each note naming its site, the most
    severe exit code; ``sites`` holds each site's own report."""
    for report, settings in zip(reports, runs, strict=True):
        report.site = settings.site
    first = runs[0]
    added: list[Change] = list(itertools.chain.from_iterable(report.added for report in reports))

    def explain() -> dict[str, Change]:
        return {loc: why for report in reports for loc, why in report.reasons.items()}

    return Report(
        command=first.command,
        dry_run=first.dry_run,
        exit_code=most_severe([report.exit_code for report in reports]),
        added=added,
        changed=[change for report in reports for change in report.changed],
        removed=[change for report in reports for change in report.removed],
        pending=[url for report in reports for url in report.pending],
        unchanged=sum(report.unchanged for report in reports),
        held_back=[url for report in reports for url in report.held_back],
        submitted=[url for report in reports for url in report.submitted],
        violations=[violation for report in reports for violation in report.violations],
        batches=[batch for report in reports for batch in report.batches],
        planned=[batch for report in reports for batch in report.planned],
        notes=[f"{report.site}: {note}" for report in reports for note in report.notes] + list(notes),
        explain=explain,
        excluded={loc: why for report in reports for loc, why in report.excluded.items()},
        deferred={loc: why for report in reports for loc, why in report.deferred.items()},
        alternates={loc: why for report in reports for loc, why in report.alternates.items()},
        sites={report.site or "": report for report in reports},
    )
