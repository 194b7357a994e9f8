"""What the ledger says happened, counted: per UTC day and endpoint, the batches and URLs
sent and what became of them, the pending set and its age, the busiest hosts.

``state stats``, the report page (``report_page``) and the metrics file (``metrics``) all
count with :func:`outcome` and :func:`ledger_stats`, so their numbers are the same. The
ledger is walked once, an entry at a time: memory grows with days times endpoints and hosts,
never with the ledger's size.
"""

from __future__ import annotations

import datetime as dt
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from notifier.dates import format_utc, parse_duration, parse_w3c
from notifier.errors import UsageError
from notifier.protocol import BatchResult
from notifier.store import DatabaseURL, LedgerEntry, RunRecord, State, ledger_entries

OUTCOMES = ("received", "refused", "failed", "held")
DEFAULT_SINCE = "30d"
BUSIEST = 10  # hosts listed
# The pending set's age, in buckets a chart can show: (label, at most this many seconds old)
AGE_BUCKETS = (("under 1 hour", 3600), ("under 1 day", 86_400), ("under 7 days", 7 * 86_400), ("under 30 days", 30 * 86_400))
OLDER = "30 days or more"


def outcome(status: str, http_status: int | None) -> str:
    """What became of a batch the ledger records: received (any 2xx: delivered or accepted),
    refused (a 4xx other than 429: 400, 403, 422 say the request or the key is wrong, and
    sending it again will not help), failed (429, 5xx, a redirect, no answer: a timeout or a
    connection error) or held (an entry of a batch that was not sent, any status this version
    does not know: counted here, never refused). URLs a cap, a deferral or an endpoint's wait
    keeps back are no batch, so no ledger entry: they are the pending set's."""
    if status in ("delivered", "accepted"):
        return "received"
    if status == "failed":
        if http_status is not None and 400 <= http_status <= 499 and http_status != 429:
            return "refused"
        return "failed"
    return "held"


@dataclass
class Tally:
    """Batches and URLs sent, and the URLs of each outcome."""

    batches: int = 0
    sent: int = 0
    received: int = 0
    refused: int = 0
    failed: int = 0
    held: int = 0

    def add(self, what: str, urls: int) -> None:
        if what != "held":
            self.batches += 1
            self.sent += urls
        setattr(self, what, getattr(self, what) + urls)

    def as_dict(self) -> dict[str, int]:
        return {"batches": self.batches, "sent": self.sent, **{what: getattr(self, what) for what in OUTCOMES}}


@dataclass
class Stats:
    """The counts of the ledger's entries at or after ``since`` (None: all it keeps)."""

    since: str | None
    until: str
    totals: Tally = field(default_factory=Tally)
    days: dict[tuple[str, str], Tally] = field(default_factory=dict)  # (YYYY-MM-DD, endpoint) -> counts
    endpoints: dict[str, Tally] = field(default_factory=dict)
    hosts: Counter[str] = field(default_factory=Counter)  # host -> URLs sent
    hosts_received: Counter[str] = field(default_factory=Counter)
    entries: int = 0  # entries counted
    oldest_entry: str | None = None  # the oldest the ledger keeps, counted or not
    damaged: int = 0  # lines or rows that were no entry, skipped
    pending_urls: int = 0
    pending_oldest: str | None = None
    pending_ages: dict[str, int] = field(default_factory=dict)  # AGE_BUCKETS label -> URLs

    def count(self, entry: LedgerEntry, day: str) -> None:
        what, urls = outcome(entry["status"], entry["http_status"]), len(entry["urls"])
        self.entries += 1
        endpoint = entry["endpoint"]
        for tally in (self.totals, self.days.setdefault((day, endpoint), Tally()), self.endpoints.setdefault(endpoint, Tally())):
            tally.add(what, urls)
        if what != "held":
            self.hosts[entry["host"]] += urls
        if what == "received":
            self.hosts_received[entry["host"]] += urls

    def busiest(self) -> list[tuple[str, int, int]]:
        """The hosts most URLs were sent for: (host, sent, received), most first."""
        return [(host, sent, self.hosts_received[host]) for host, sent in self.hosts.most_common(BUSIEST)]

    def as_dict(self) -> dict[str, Any]:
        """The JSON of ``state stats --format json`` (README: "state stats")."""
        return {
            "since": self.since,
            "until": self.until,
            "totals": self.totals.as_dict(),
            "endpoints": {endpoint: tally.as_dict() for endpoint, tally in sorted(self.endpoints.items())},
            "days": [{"date": day, "endpoint": endpoint, **tally.as_dict()} for (day, endpoint), tally in sorted(self.days.items())],
            "hosts": [{"host": host, "sent": sent, "received": received} for host, sent, received in self.busiest()],
            "pending": {"urls": self.pending_urls, "oldest_since": self.pending_oldest, "ages": dict(self.pending_ages)},
            "ledger": {"entries": self.entries, "oldest": self.oldest_entry, "damaged": self.damaged},
        }


def run_totals(runs: Sequence[RunRecord], batches: Iterable[BatchResult]) -> dict[str, dict[str, int]]:
    """The counters a run records: the newest recorded run's ``totals`` plus the URLs of this
    run's batches that were sent (a batch held back is not), by :func:`outcome`. Kept in the
    state, they survive a runner that starts empty and the ledger's trimming; they start at
    0 with the first run that records them."""
    previous = next((run["totals"] for run in reversed(runs) if "totals" in run), {})
    totals = {endpoint: dict(counts) for endpoint, counts in previous.items()}
    for batch in batches:
        what = outcome(batch.status, batch.http_status)
        if batch.attempts and what != "held":
            counts = totals.setdefault(batch.endpoint, {"received": 0, "refused": 0, "failed": 0})
            counts[what] = counts.get(what, 0) + batch.url_count
    return totals


def pending_ages(state: State, now: dt.datetime) -> tuple[int, str | None, dict[str, int]]:
    """The distinct URLs waiting at any endpoint, the oldest wait, and how many are how old
    (each as old as its oldest wait), by ``AGE_BUCKETS``."""
    oldest: dict[str, str] = {}
    for items in state.pending.values():
        for loc, item in items.items():
            since = item["since"]
            if loc not in oldest or since < oldest[loc]:
                oldest[loc] = since
    ages = {label: 0 for label, _ in AGE_BUCKETS} | {OLDER: 0}
    for since in oldest.values():
        instant = parse_w3c(since)
        age = (now - instant).total_seconds() if instant is not None else float("inf")
        ages[next((label for label, bound in AGE_BUCKETS if age < bound), OLDER)] += 1
    return len(oldest), min(oldest.values()) if oldest else None, ages


def since_of(text: str | None, now: dt.datetime) -> dt.datetime | None:
    """``--since``: a duration back from now (``30d``, ``12h``, ``2w``), a date or a time
    (``2026-11-01``, ``2026-11-01T12:00:00Z``), or ``all``; None: all the ledger keeps."""
    text = DEFAULT_SINCE if text is None else text
    if text.strip() == "all":
        return None
    back = parse_duration(text)
    if back is not None:
        if not back:  # the window from now to now: every count would be 0, which is no answer
            raise UsageError(f"--since {text!r}: an empty window; give a duration such as 1d or 30d, a date, or all")
        try:
            return now - back
        except OverflowError:
            return None
    instant = parse_w3c(text.strip())
    if instant is None:
        raise UsageError(f"--since {text!r}: not a duration such as 30d, 12h or 2w, a date such as 2026-11-01, or all")
    if instant >= now:
        raise UsageError(f"--since {text!r}: after now ({now:%Y-%m-%dT%H:%M:%SZ}), an empty window; give an earlier date, or all")
    return instant


def since_attached(args: Sequence[str]) -> list[str]:
    """The command line with a ``--since`` value that starts with a minus (``-1d``, a typo)
    joined to it (``--since=-1d``): argparse would take it for an option and say "expected one
    argument" of an option that was given one; joined, since_of says what is wrong with it."""
    joined: list[str] = []
    for word in args:
        if joined and joined[-1] == "--since" and word[1:2].isdigit() and word.startswith("-"):
            joined[-1] = f"--since={word}"
        else:
            joined.append(word)
    return joined


def ledger_stats(location: Path | DatabaseURL, state: State | None, since: dt.datetime | None, now: dt.datetime) -> Stats:
    """Count the ledger of ``location`` from ``since`` on (streamed), and ``state``'s pending set."""
    stats = Stats(since=format_utc(since) if since is not None else None, until=format_utc(now))

    def damaged() -> None:
        stats.damaged += 1

    for entry, instant in _dated(ledger_entries(location, damaged), stats):
        if stats.oldest_entry is None:
            stats.oldest_entry = format_utc(instant)
        if since is None or instant >= since:
            stats.count(entry, format_utc(instant)[:10])
    if state is not None:
        _pending(stats, state, now)
    return stats


def _dated(entries: Iterable[LedgerEntry], stats: Stats) -> Iterator[tuple[LedgerEntry, dt.datetime]]:
    """Each entry with its instant; one whose ``at`` is not a time is damage, skipped."""
    for entry in entries:
        instant = parse_w3c(entry["at"])
        if instant is None:
            stats.damaged += 1
            continue
        yield entry, instant


def _pending(stats: Stats, state: State, now: dt.datetime) -> None:
    stats.pending_urls, stats.pending_oldest, stats.pending_ages = pending_ages(state, now)
