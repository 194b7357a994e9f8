"""``--format github``: annotations, a job summary and step outputs for GitHub Actions."""

from __future__ import annotations

import html
from collections.abc import Mapping
from typing import TextIO

from notifier.errors import ExitCode
from notifier.output import OutputFailed
from notifier.protocol import Keys
from notifier.report import Report, printable, render_text


def _escape(text: str) -> str:
    """Workflow-command data escaping (%, CR, LF), so a message cannot inject a command; every
    other control or line-separator character is written as an escape first (printable)."""
    return printable(text).replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def mask_secrets(keys: Keys, stream: TextIO) -> None:
    """``::add-mask::`` every key, so that no log line of this job can show one."""
    for key in keys.secrets:
        stream.write(f"::add-mask::{key}\n")
    stream.flush()


def write_github(report: Report, stream: TextIO, env: Mapping[str, str]) -> None:
    """Annotations and the text report on ``stream``; summary and outputs to their files."""
    for violation in report.violations[:50]:
        kind = "error" if violation.level == "error" else "warning"
        stream.write(f"::{kind} title={violation.rule}::{_escape(violation.url + ': ' + violation.message)}\n")
    for note in report.notes:
        stream.write(f"::warning title=notify-changes::{_escape(note)}\n")
    stream.write(render_text(report) + "\n")  # every field printable(): no sitemap byte begins a line
    outputs, summary = env.get("GITHUB_OUTPUT"), env.get("GITHUB_STEP_SUMMARY")
    try:
        _write_files(report, outputs, summary)
    except OSError as error:  # a report that cannot be written is an I/O error of its own (output.py)
        raise OutputFailed(f"{error.filename or outputs or summary}: {error.strerror or error}") from None


def _write_files(report: Report, outputs: str | None, summary: str | None) -> None:
    """The step's outputs and the job summary, appended to the files GitHub names."""
    if outputs:
        with open(outputs, "a", encoding="utf-8") as handle:
            for name, value in (
                ("added", len(report.added)),
                ("changed", len(report.changed)),
                ("removed", len(report.removed)),
                ("submitted", len(report.submitted)),
                ("pending", len(report.pending)),
                ("held-back", len(report.held_back)),
            ):
                handle.write(f"{name}={value}\n")
    if summary:
        with open(summary, "a", encoding="utf-8") as handle:
            handle.write(_markdown(report))


def write_github_error(message: str, exit_code: int, stream: TextIO, env: Mapping[str, str]) -> None:
    """An input error (or a bug) under ``--format github``: an ``::error`` annotation, and the
    same line in the job summary, where a reader of the run looks first."""
    stream.write(f"::error title=notify-changes::{_escape(message)}\n")
    stream.flush()
    summary = env.get("GITHUB_STEP_SUMMARY")
    if summary:
        try:
            with open(summary, "a", encoding="utf-8") as handle:
                handle.write(f"### notify-changes\n\n**Stopped with exit {exit_code}:** {_cell(message)}\n\n")
        except OSError:  # the annotation above already says it
            pass


def _cell(text: str) -> str:
    """Sitemap text in the Markdown summary: one line, no HTML, no table breaks."""
    return html.escape(printable(text)).replace("|", "\\|").replace("`", "\\`")


COUNTS = "| added | changed | removed | submitted | pending | held back |"


def _counts(report: Report) -> str:
    return (
        f"| {len(report.added)} | {len(report.changed)} | {len(report.removed)} | {len(report.submitted)} | {len(report.pending)} "
        f"| {len(report.held_back)} |"
    )


def _markdown(report: Report) -> str:
    """The job summary: the counts, then what was added, changed and removed, the findings and
    the batches; for several sites (``[[sites]]``) a row of counts a site, and a section each."""
    lines = ["### notify-changes" + (" (dry run)" if report.dry_run else ""), ""]
    if report.received_week is not None:
        lines.extend([f"Received by the endpoints in the last 7 days: {report.received_week:,} URLs (`notify-changes state stats`).", ""])
    if not report.sites:
        lines.extend([COUNTS, "|---:|---:|---:|---:|---:|---:|", _counts(report), "", *_details(report)])
        return "\n".join(lines) + "\n"
    lines.extend(["| site | exit " + COUNTS, "|---|---:|---:|---:|---:|---:|---:|---:|"])
    lines.extend(f"| {_cell(name)} | {int(site.exit_code)} " + _counts(site) for name, site in report.sites.items())
    if len(report.sites) > 1:  # one site (--site): its row is the whole
        lines.append(f"| all {len(report.sites)} sites | {int(report.exit_code)} " + _counts(report))
    lines.append("")
    for name, site in report.sites.items():
        lines.extend([f"#### {_cell(name)} (exit {int(site.exit_code)})", ""])
        if site.exit_code in (ExitCode.INPUT_ERROR, ExitCode.LOCKED):  # stopped before its report: why, and no more
            lines.extend([f"**Stopped with exit {int(site.exit_code)}:** {_cell(note)}" for note in site.notes] + [""])
        else:
            lines.extend(_details(site) or ["Nothing added, changed or removed.", ""])
    return "\n".join(lines) + "\n"


def _details(report: Report) -> list[str]:
    lines = _policy(report)
    for title, changes in (("Added", report.added), ("Changed", report.changed), ("Removed", report.removed)):
        if changes:
            shown = f"first 10 of {len(changes)}" if len(changes) > 10 else str(len(changes))  # "first 1 of 1" says nothing is left out
            lines.append(f"**{title}** ({shown}):")
            lines.extend(f"- {_cell(change.loc)}" for change in changes[:10])
            lines.append("")
    if report.violations:
        lines.append("**Findings:**")
        lines.extend(f"- `{v.level}[{v.rule}]` {_cell(v.url)}: {_cell(v.message)}" for v in report.violations[:50])
        lines.append("")
    if report.batches:
        lines.append("| endpoint | host | URLs | status |")
        lines.append("|---|---|---:|---|")
        lines.extend(f"| {_cell(b.endpoint)} | {_cell(b.host)} | {b.url_count} | {b.status} |" for b in report.batches)
        lines.append("")
    return lines


def _policy(report: Report) -> list[str]:
    """One line of what the config's [announce] did this run, when it did anything."""
    parts = [
        f"{len(urls):,} {what}"
        for urls, what in (
            (report.excluded, "excluded (recorded, never announced)"),
            (report.deferred, "deferred (pending for a later run)"),
            (report.alternates, "announced as alternates of a changed page"),
        )
        if urls
    ]
    return [f"**[announce]:** {'; '.join(parts)}.", ""] if parts else []
