"""stats.py where its mutants once went unnoticed (issue #44): which HTTP statuses are a
refusal, the counters a run records (``run_totals``), the pending set's oldest wait and its
age buckets, the edges of ``--since`` and the ledger's counting from exactly ``since``."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from notifier import stats as stats_module
from notifier.dates import format_utc
from notifier.errors import UsageError
from notifier.protocol import BatchResult, BatchStatus
from notifier.stats import ledger_stats, outcome, pending_ages, run_totals, since_attached, since_of
from notifier.store import LedgerEntry, PendingItem, RunRecord, State

NOW = dt.datetime(2030, 6, 1, 12, 0, 0, tzinfo=dt.UTC)
E = "https://e.example/indexnow"
F = "https://f.example/indexnow"


def batch(status: BatchStatus, urls: int, http_status: int | None = 200, attempts: int = 1, endpoint: str = E) -> BatchResult:
    return BatchResult(endpoint, "site.example", urls, status, http_status, "", attempts)


def test_a_499_is_a_refusal() -> None:
    """Every 4xx but 429 is refused, the last of them too. Fails if ``400 <= http_status <=
    499`` becomes ``400 <= http_status < 499`` in stats.py::outcome."""
    assert outcome("failed", 499) == "refused"
    assert outcome("failed", 400) == "refused"
    assert outcome("failed", 500) == "failed"


def test_the_counters_go_on_from_the_newest_run_that_recorded_them() -> None:
    """A newer run without ``totals`` (an older version's) is passed over, not read. Fails if
    ``"totals" in run`` becomes ``not in`` or its ``"totals"`` is changed in
    stats.py::run_totals."""
    runs: list[RunRecord] = [
        {"at": "2030-05-30T00:00:00Z", "command": "run", "totals": {E: {"received": 1, "refused": 0, "failed": 0}}},
        {"at": "2030-05-31T00:00:00Z", "command": "run", "totals": {E: {"received": 5, "refused": 1, "failed": 2}}},
        {"at": "2030-05-31T12:00:00Z", "command": "run"},
    ]
    assert run_totals(runs, [batch("delivered", 3)]) == {E: {"received": 8, "refused": 1, "failed": 2}}
    assert run_totals(runs, []) == {E: {"received": 5, "refused": 1, "failed": 2}}


def test_a_new_endpoint_starts_at_zero_for_each_outcome() -> None:
    """The first batch an endpoint takes starts its three counters at 0. Fails if any ``0`` of
    ``{"received": 0, "refused": 0, "failed": 0}`` becomes 1, or ``counts[what] = ...`` is
    removed, in stats.py::run_totals."""
    assert run_totals([], [batch("delivered", 3)]) == {E: {"received": 3, "refused": 0, "failed": 0}}
    assert run_totals([], [batch("failed", 2, 422)]) == {E: {"received": 0, "refused": 2, "failed": 0}}
    assert run_totals([], [batch("failed", 4, 503)]) == {E: {"received": 0, "refused": 0, "failed": 4}}
    assert run_totals([], [batch("accepted", 1, 202), batch("delivered", 2, endpoint=F)]) == {
        E: {"received": 1, "refused": 0, "failed": 0},
        F: {"received": 2, "refused": 0, "failed": 0},
    }


def test_a_counter_a_recorded_run_lacks_starts_at_zero() -> None:
    """Recorded totals without one of the counters (hand-edited, or an older shape): the
    batch's URLs are its count, nothing more. Fails if ``counts.get(what, 0)`` becomes
    ``counts.get(what, 1)`` in stats.py::run_totals."""
    runs: list[RunRecord] = [{"at": "2030-05-31T00:00:00Z", "command": "run", "totals": {E: {"received": 3}}}]
    assert run_totals(runs, [batch("failed", 2, 422)]) == {E: {"received": 3, "refused": 2}}


def test_a_batch_not_sent_is_not_counted() -> None:
    """A batch with no attempt is no URL sent, whatever its status; a held batch is none
    either, even with an attempt. Fails if ``batch.attempts and what != "held"`` loses
    either side or becomes ``or``, if ``what != "held"`` becomes ``==``, or if its
    ``"held"`` is changed, in stats.py::run_totals."""
    assert run_totals([], [batch("failed", 2, None, attempts=0)]) == {}
    assert run_totals([], [batch("skipped", 2, None, attempts=0)]) == {}
    assert run_totals([], [batch("skipped", 2, None, attempts=1)]) == {}
    assert run_totals([], [batch("skipped", 2, None, attempts=0), batch("delivered", 1)]) == {E: {"received": 1, "refused": 0, "failed": 0}}


def pending(**by_endpoint: dict[str, str]) -> State:
    return State(
        pending={
            endpoint: {loc: PendingItem(reason="changed", since=since) for loc, since in items.items()}
            for endpoint, items in by_endpoint.items()
        }
    )


def test_a_url_waiting_at_two_endpoints_is_as_old_as_its_older_wait() -> None:
    """Its age is the older of its two waits, whichever endpoint comes first. Fails if
    ``loc not in oldest or since < oldest[loc]`` loses its second side in
    stats.py::pending_ages."""
    state = pending(e={"https://s/a": "2030-06-01T11:30:00Z"}, f={"https://s/a": "2030-05-20T12:00:00Z"})
    count, oldest, ages = pending_ages(state, NOW)
    assert (count, oldest) == (1, "2030-05-20T12:00:00Z")
    assert ages == {"under 1 hour": 0, "under 1 day": 0, "under 7 days": 0, "under 30 days": 1, "30 days or more": 0}


def test_the_oldest_wait_is_the_earliest() -> None:
    """Fails if ``min(oldest.values())`` becomes ``max`` in stats.py::pending_ages."""
    state = pending(e={"https://s/a": "2030-06-01T11:30:00Z", "https://s/b": "2030-05-01T00:00:00Z", "https://s/c": "2030-05-31T00:00:00Z"})
    assert pending_ages(state, NOW)[:2] == (3, "2030-05-01T00:00:00Z")


def test_a_wait_of_exactly_an_hour_is_no_longer_under_an_hour() -> None:
    """Each bucket is "under" its bound: exactly 1 hour old is under 1 day, exactly 1 day
    under 7 days. Fails if ``age < bound`` becomes ``age <= bound`` in
    stats.py::pending_ages."""
    state = pending(e={"https://s/a": format_utc(NOW - dt.timedelta(hours=1)), "https://s/b": format_utc(NOW - dt.timedelta(days=1))})
    ages = pending_ages(state, NOW)[2]
    assert ages == {"under 1 hour": 0, "under 1 day": 1, "under 7 days": 1, "under 30 days": 0, "30 days or more": 0}


def test_a_since_of_exactly_now_is_an_empty_window() -> None:
    """Fails if ``instant >= now`` becomes ``instant > now`` in stats.py::since_of."""
    with pytest.raises(UsageError, match="after now"):
        since_of("2030-06-01T12:00:00Z", NOW)
    assert since_of("2030-06-01T11:59:59Z", NOW) == NOW - dt.timedelta(seconds=1)


def test_only_a_since_value_that_looks_like_a_negative_number_is_joined() -> None:
    """A minus-and-digit word after another option stays, and an option after ``--since``
    stays an option (argparse then says ``--since`` lacks its value). Fails if
    ``joined[-1] == "--since"`` or ``word[1:2].isdigit()`` is dropped from the test in
    stats.py::since_attached."""
    assert since_attached(["state", "stats", "--since", "-1d"]) == ["state", "stats", "--since=-1d"]
    assert since_attached(["run", "--batch-size", "-1"]) == ["run", "--batch-size", "-1"]
    assert since_attached(["state", "stats", "--since", "--format", "json"]) == ["state", "stats", "--since", "--format", "json"]


def test_an_entry_at_exactly_since_is_counted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The window is "at or after since". Fails if ``instant >= since`` becomes ``instant >
    since`` in stats.py::ledger_stats."""
    since = NOW - dt.timedelta(days=1)

    def entry(at: dt.datetime, urls: int) -> LedgerEntry:
        return LedgerEntry(
            at=format_utc(at),
            endpoint=E,
            host="s",
            status="delivered",
            http_status=200,
            attempts=1,
            error="",
            urls=[f"https://s/{n}" for n in range(urls)],
        )

    def entries(location: Path, damaged: Callable[[], None] | None = None) -> Iterator[LedgerEntry]:
        yield entry(since - dt.timedelta(seconds=1), 1)
        yield entry(since, 2)
        yield entry(since + dt.timedelta(hours=1), 4)

    monkeypatch.setattr(stats_module, "ledger_entries", entries)
    counted = ledger_stats(tmp_path / "state.json", None, since, NOW)
    assert (counted.entries, counted.totals.received, counted.oldest_entry) == (2, 6, format_utc(since - dt.timedelta(seconds=1)))
