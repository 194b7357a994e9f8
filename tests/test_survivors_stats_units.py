"""``state stats``' counting on its edges (stats.py, #44): the age buckets' bounds, the ten
busiest hosts, a --since too long to subtract, no state. Each test names the edit it fails with."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from notifier.dates import format_utc
from notifier.stats import OLDER, Stats, ledger_stats, pending_ages, since_of
from notifier.store import PendingItem, State
from tests.conftest import BASE

NOW = dt.datetime(2030, 6, 30, 12, 0, tzinfo=dt.UTC)


def _waiting(*ages: dt.timedelta) -> State:
    pending = {f"{BASE}/{n}/": PendingItem(reason="added", since=format_utc(NOW - age)) for n, age in enumerate(ages)}
    return State(pending={"https://api.indexnow.org/indexnow": pending})


def test_a_wait_of_exactly_a_bucket_s_bound_is_in_the_next_bucket() -> None:
    """ "under 7 days" and "under 30 days" mean under (edits: 7 made 8, either 86,400 made 86,401)."""
    day = dt.timedelta(days=1)
    count, oldest, ages = pending_ages(
        _waiting(7 * day, 7 * day - dt.timedelta(seconds=1), 30 * day, 30 * day - dt.timedelta(seconds=1)), NOW
    )
    assert count == 4 and oldest == "2030-05-31T12:00:00Z"
    assert ages == {"under 1 hour": 0, "under 1 day": 0, "under 7 days": 1, "under 30 days": 2, OLDER: 1}


def test_the_busiest_hosts_are_the_ten_with_most_urls() -> None:
    """(edit: BUSIEST made 11)"""
    stats = Stats(since=None, until=format_utc(NOW))
    for n in range(12):
        stats.hosts[f"www.site{n:02d}.example"] = 100 - n
    assert [host for host, _, _ in stats.busiest()] == [f"www.site{n:02d}.example" for n in range(10)]


def test_a_since_further_back_than_the_calendar_goes_is_everything() -> None:
    """A century back from a clock in the year 50 leaves the calendar: all the ledger keeps
    (edit: the ``return None`` of the overflow made a raise)."""
    assert since_of("36500d", dt.datetime(50, 1, 1, tzinfo=dt.UTC)) is None


def test_no_state_has_nothing_pending(tmp_path: Path) -> None:
    """A ledger counted without a state (edit: ``pending_urls``' default made 1)."""
    stats = ledger_stats(tmp_path / "state.json", None, None, NOW)
    assert stats.pending_urls == 0 and stats.as_dict()["pending"]["urls"] == 0
