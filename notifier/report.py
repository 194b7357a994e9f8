"""The outcome of a run as plain data, and its text and JSON renderings."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from notifier.changes import Change
from notifier.errors import ExitCode
from notifier.protocol import BatchResult
from notifier.rules import Violation

_CONTROLS = {code: f"\\x{code:02x}" for code in [*range(32), *range(127, 160)]}
_CONTROLS.update({ord("\n"): "\\n", ord("\r"): "\\r", ord("\t"): "\\t", 0x2028: "\\u2028", 0x2029: "\\u2029"})


def printable(text: str) -> str:
    """``text`` with every control character written as an escape: a loc can carry any
    character (``&#10;`` is a newline), and none of them may start a line of ours (a
    GitHub workflow command) or steer a terminal."""
    return text.translate(_CONTROLS)


def plural(count: int, word: str) -> str:
    """``1 URL``, ``2 URLs``: every count a user reads."""
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


class PlannedBatch(NamedTuple):
    """A batch a dry run would send, with why each URL is in it."""

    endpoint: str
    host: str
    urls: list[Change]
    held_until: str | None = None  # the endpoint asked to wait (Retry-After): a run would send nothing there before this


@dataclass
class Report:
    """What a run found and did. Returned by :func:`notifier.run` and :func:`notifier.check`."""

    command: str
    dry_run: bool = False
    exit_code: ExitCode = ExitCode.OK
    added: Sequence[Change] = field(default_factory=list)
    changed: list[Change] = field(default_factory=list)
    removed: list[Change] = field(default_factory=list)
    pending: list[str] = field(default_factory=list)  # URLs still undelivered after this run
    unchanged: int = 0
    held_back: list[str] = field(default_factory=list)  # lastmod moved, built page byte-identical: not announced
    submitted: list[str] = field(default_factory=list)  # URLs acknowledged by an endpoint this run
    violations: list[Violation] = field(default_factory=list)
    batches: list[BatchResult] = field(default_factory=list)
    planned: list[PlannedBatch] = field(default_factory=list)  # --dry-run
    notes: list[str] = field(default_factory=list)  # warnings about the run itself
    excluded: dict[str, str] = field(default_factory=dict)  # loc -> why [announce] held it out: recorded, never announced
    deferred: dict[str, str] = field(default_factory=dict)  # loc -> why [announce] kept it pending this run (not a failure)
    alternates: dict[str, str] = field(default_factory=dict)  # loc -> the changed page [announce] alternates announced it with
    not_live: list[str] = field(default_factory=list)  # --wait-live: key files and pages not live in time (nothing sent to their hosts)
    previous_key: list[str] = field(default_factory=list)  # hosts signed with a rotation's previous key (the new key's file not live yet)
    # why each URL was (or is to be) sent: worked out when asked for (a first run sends a million)
    explain: Callable[[], dict[str, Change]] | None = field(default=None, repr=False)
    _reasons: dict[str, Change] | None = field(default=None, repr=False)
    site: str | None = None  # the [[sites]] name of a site's own report
    received_week: int | None = None  # --format github: URLs the endpoints received in the last 7 days (the ledger's)
    sites: dict[str, Report] = field(default_factory=dict)  # several sites: each one's report, in the config's order

    @property
    def reasons(self) -> dict[str, Change]:
        """loc -> why it was (or is to be) sent."""
        if self._reasons is None:
            self._reasons = self.explain() if self.explain is not None else {}
        return self._reasons

    @property
    def errors(self) -> list[Violation]:
        return [violation for violation in self.violations if violation.level == "error"]

    def summary(self) -> str:
        return (
            f"{len(self.added)} added, {len(self.changed)} changed, {len(self.removed)} removed, "
            f"{len(self.submitted)} submitted, {len(self.pending)} pending"
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "command": self.command,
            "dry_run": self.dry_run,
            "added": len(self.added),
            "changed": len(self.changed),
            "removed": len(self.removed),
            "unchanged": self.unchanged,
            "held_back": len(self.held_back),
            "pending": len(self.pending),
            "submitted": len(self.submitted),
            "excluded": len(self.excluded),
            "deferred": len(self.deferred),
            "alternates": len(self.alternates),
            "urls": {
                "added": [change.loc for change in self.added],
                "changed": [change.loc for change in self.changed],
                "removed": [change.loc for change in self.removed],
                "pending": list(self.pending),
                "held_back": list(self.held_back),
                "excluded": list(self.excluded),
                "deferred": list(self.deferred),
                "alternates": list(self.alternates),
            },
            "policy": {"excluded": dict(self.excluded), "deferred": dict(self.deferred), "alternates": dict(self.alternates)},
            "why": {loc: _why(change) for loc, change in self.reasons.items()},
            "violations": [violation._asdict() for violation in self.violations],
            "batches": [
                {
                    "endpoint": batch.endpoint,
                    "host": batch.host,
                    "count": batch.url_count,
                    "status": batch.status,
                    "http_status": batch.http_status,
                    "message": batch.message,
                    "attempts": batch.attempts,
                }
                | ({"moved_to": batch.moved_to} if batch.moved_to else {})
                for batch in self.batches
            ]
            + [
                {"endpoint": plan.endpoint, "host": plan.host, "count": len(plan.urls), "status": "dry-run"}
                | ({"status": "held", "not_before": plan.held_until} if plan.held_until else {})
                for plan in self.planned
            ],
            "not_live": list(self.not_live),
            "previous_key": list(self.previous_key),
            "notes": list(self.notes),
            "exit_code": int(self.exit_code),
        } | ({"sites": {name: report.to_json() for name, report in self.sites.items()}} if self.sites else {})


def _why(change: Change) -> dict[str, Any]:
    why: dict[str, Any] = {"reason": change.reason}
    if change.reason == "changed":
        why["old_lastmod"], why["new_lastmod"] = change.old, change.new
    elif change.reason == "added":
        why["lastmod"] = change.new
    elif change.reason == "removed":
        why["last_lastmod"] = change.old
    elif change.reason == "alternate":
        why["alternate_of"], why["hreflang"] = change.old, change.new
    if change.since:
        why["pending_since"] = change.since
    return why


def reason_line(change: Change) -> str:
    """One short phrase: why this URL is announced."""
    if change.reason == "changed":
        return f"changed  {change.loc}  (lastmod {change.old} -> {change.new})"
    if change.reason == "added":
        return f"added    {change.loc}" + (f"  (lastmod {change.new})" if change.new else "")
    if change.reason == "removed":
        return f"removed  {change.loc}"
    if change.reason == "alternate":
        return f"alternate {change.loc}  ({change.new} alternate of {change.old})"
    return f"pending  {change.loc}" + (f"  (waiting since {change.since})" if change.since else "")


_COLOURS = {"error": "\x1b[31m", "warn": "\x1b[33m", "summary": "\x1b[1m"}
_RESET = "\x1b[0m"


def _paint(text: str, kind: str, colour: bool) -> str:
    return f"{_COLOURS[kind]}{text}{_RESET}" if colour else text


def _sites_label(count: int) -> str:
    """``all 2 sites: ``; one site (``--site NAME``) is ``1 site: ``, never "all 1 sites"."""
    return f"all {count} sites: " if count > 1 else f"{plural(count, 'site')}: "


def render_text(report: Report, *, cap_per_rule: int = 20, colour: bool = False) -> str:
    """The text report: the summary line first, then findings, then batches; for several
    sites, a section a site (its name, then its report), then the summary of all."""
    if report.sites:
        sections = [
            f"== {name} (exit {int(site.exit_code)})\n{render_text(site, cap_per_rule=cap_per_rule, colour=colour)}"
            for name, site in report.sites.items()
        ]
        total = _paint(("dry run: " if report.dry_run else "") + _sites_label(len(report.sites)) + report.summary(), "summary", colour)
        return "\n\n".join([*sections, total])
    lines = [_paint(("dry run: " if report.dry_run else "") + report.summary(), "summary", colour)]
    lines.extend(f"warning: {printable(note)}" for note in report.notes)
    shown: Counter[str] = Counter()
    totals: Counter[str] = Counter(violation.rule for violation in report.violations)
    for violation in report.violations:
        shown[violation.rule] += 1
        label = _paint(f"{violation.level}[{violation.rule}]", violation.level, colour)
        if shown[violation.rule] <= cap_per_rule:
            lines.append(f"{label} {printable(violation.url)}: {printable(violation.message)}")
        elif shown[violation.rule] == cap_per_rule + 1:
            rest = totals[violation.rule] - cap_per_rule
            lines.append(f"{label} … and {rest} more like this")
    for batch in report.batches:
        code = f" (HTTP {batch.http_status})" if batch.http_status else ""
        where = printable(f"{batch.endpoint} {batch.host}")
        lines.append(f"batch {where}: {plural(batch.url_count, 'URL')} {batch.status}{code}: {printable(batch.message)}")
    for plan in report.planned:
        what = f"{printable(plan.endpoint)}: host {printable(plan.host)}, {plural(len(plan.urls), 'URL')}"
        if plan.held_until:
            what = f"held until {plan.held_until} (the endpoint asked to wait, Retry-After), not sent to {what}"
        lines.append(what if plan.held_until else f"would send to {what}")
        lines.extend(f"  {printable(reason_line(change))}" for change in plan.urls)
    if report.errors:
        lines.append(f"verification failed: {plural(len(report.errors), 'error')}; nothing was submitted and the state is unchanged")
    return "\n".join(lines)


def render_json(report: Report) -> str:
    return json.dumps(report.to_json(), ensure_ascii=False, indent=2)
