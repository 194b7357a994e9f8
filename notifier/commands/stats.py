"""``notify-changes state stats [--since 30d] [--format json]``: what the endpoints did with
what was sent, per UTC day and endpoint, from the ledger (``notifier.stats`` counts); and
``state report --html FILE``, the same counts as a page (``notifier.report_page``)."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from notifier.commands.state_request import StateRequest
from notifier.errors import InputError, UsageError
from notifier.report import plural, printable
from notifier.stats import Stats, Tally, ledger_stats, since_of
from notifier.store import State, read_state

if TYPE_CHECKING:
    from notifier.crawled import Crawled

REPORT_SINCE = "90d"  # the page's chart shows 90 days


def request_stats(request: StateRequest, default_since: str | None = None) -> tuple[Stats, State]:
    """The stats the request asks for: its ``--since`` against its clock, over its state's ledger."""
    now = request.now()
    since = since_of(default_since if request.since is None else request.since, now)
    state = read_state(request.state)
    if state is None:
        raise InputError(f"{request.state}: no state yet; the first `notify-changes run` records one (or pass --state PATH)")
    return ledger_stats(request.state, state, since, now), state


def run_report(request: StateRequest, out: TextIO, err: TextIO) -> None:
    """``state report --html FILE``: the page, written atomically; one line says where."""
    from notifier.report_page import render_page, write_page

    if request.html is None:
        raise UsageError("state report: name the page to write, e.g. `notify-changes state report --html report.html`")
    stats, state = request_stats(request, REPORT_SINCE)
    _say_damaged(request, stats, err)
    found = _crawled(request, stats, err) if request.logs else None
    html = render_page(stats, str(request.state), dict(state.runs[-1]) if state.runs else None, found)
    size = write_page(Path(request.html), html)
    out.write(f"{printable(request.html)}: the report page ({size:,} bytes; {_batches(stats.entries)} counted)\n")


def _crawled(request: StateRequest, stats: Stats, err: TextIO) -> Crawled:
    """``crawled`` over the request's logs, in the page's window."""
    from notifier.bot_ranges import read_ranges
    from notifier.crawled import crawled
    from notifier.dates import parse_w3c

    since = (parse_w3c(stats.since) if stats.since else None) or dt.datetime.min.replace(tzinfo=dt.UTC)
    until = parse_w3c(stats.until) or request.now()
    found = crawled(request.state, [Path(log) for log in request.logs], since, until, read_ranges(request.bot_ranges))
    if found.unparsed_lines:
        err.write(f"notify-changes: note: {plural(found.unparsed_lines, 'log line')} not in a format read here: passed over\n")
    return found


def _say_damaged(request: StateRequest, stats: Stats, err: TextIO) -> None:
    if stats.damaged:
        err.write(
            f"notify-changes: note: {plural(stats.damaged, 'ledger line')} of {printable(str(request.state))} "
            "could not be read and were left out of the counts\n"
        )


def run_stats(request: StateRequest, out: TextIO, err: TextIO) -> None:
    """Write the stats as text or JSON on ``out``; damaged ledger lines are one line on ``err``."""
    stats = request_stats(request)[0]
    _say_damaged(request, stats, err)
    if request.format == "json":
        out.write(json.dumps({"state": str(request.state), **stats.as_dict()}, ensure_ascii=False, indent=2) + "\n")
        return
    _text(request, stats, out)


def _batches(count: int) -> str:
    return f"{count:,} batch" + ("es" if count != 1 else "")


def _counts(tally: Tally) -> str:
    text = f"{tally.sent:,} sent: {tally.received:,} received, {tally.refused:,} refused, {tally.failed:,} failed"
    return text + (f", {tally.held:,} held" if tally.held else "")


def _text(request: StateRequest, stats: Stats, out: TextIO) -> None:
    window = f"the ledger since {stats.since}" if stats.since else "everything the ledger keeps"
    out.write(f"{printable(str(request.state))}: {window} (until {stats.until})\n")
    total = stats.totals
    if not stats.entries:
        kept = f"; its oldest batch is of {stats.oldest_entry}" if stats.oldest_entry else ""
        out.write(f"  no batch in that time{kept}\n")
    else:
        out.write(f"  {_batches(total.batches)}, URLs " + _counts(total) + "\n")
        out.write("per day (UTC) and endpoint:\n")
        for (day, endpoint), tally in sorted(stats.days.items()):
            line = f"  {day}  {endpoint}  {_batches(tally.batches)}, " + _counts(tally)
            out.write(printable(line) + "\n")
        out.write("busiest hosts:\n")
        for host, sent, received in stats.busiest():
            out.write(printable(f"  {host}: {sent:,} sent, {received:,} received") + "\n")
    if stats.pending_urls:
        out.write(f"pending: {plural(stats.pending_urls, 'URL')}, the oldest waiting since {stats.pending_oldest}\n")
    else:
        out.write("pending: nothing\n")
