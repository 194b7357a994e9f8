"""The report page's drawing, computed before the template lays it out, where a mutant of
report_page.py once went unnoticed (issue #44): the 90 days the chart shows, where each
day's stacked bar sits in its slot and how tall it is, the scale, the labels, the pending
ages' and the crawlers' bars, and the order of the last run's findings. Stated from
``Stats`` and ``Crawled`` values built here (tests/test_report_page.py draws real runs)."""

from __future__ import annotations

from typing import Any

import pytest

from notifier.crawled import Crawled, EngineCrawl
from notifier.report_page import (
    AGE_ROW,
    AGE_WIDTH,
    BOTTOM,
    HEIGHT,
    LEFT,
    TOP,
    WIDTH,
    Bar,
    chart_days,
    crawled_context,
    findings_of,
    page_context,
    received_bars,
    scale_ticks,
)
from notifier.stats import Stats, Tally

UNTIL = "2030-06-30T12:00:00Z"
SLOT = (WIDTH - LEFT - 8) / 90  # a day's slot: 90 of them from the left axis to 8 px from the right edge
A, B = "https://a.example/indexnow", "https://b.example/indexnow"


def _stats(received: dict[tuple[str, str], int], ages: dict[str, int] | None = None) -> Stats:
    days = {key: Tally(batches=1, sent=count, received=count) for key, count in received.items()}
    endpoints: dict[str, Tally] = {}
    for (_, endpoint), count in received.items():
        endpoints.setdefault(endpoint, Tally()).received += count
    return Stats(since=None, until=UNTIL, days=days, endpoints=endpoints, pending_ages=ages or {})


def _hundredths(value: float) -> bool:
    return round(value, 2) == value


def test_the_chart_shows_the_90_days_up_to_the_end() -> None:
    """Fails if the range's stop ``-1`` becomes ``-2`` in report_page.py::chart_days (a day
    after the end, 91 in all)."""
    dates = chart_days(_stats({}))
    assert len(dates) == 90 and dates[0] == "2030-04-02" and dates[-1] == "2030-06-30"


def test_each_bar_is_the_middle_80_percent_of_its_days_slot_stacked_to_its_share_of_the_top() -> None:
    """Endpoints stack in their order from the axis up, the tallest day reaching TOP; each bar
    starts a tenth of a slot in and is eight tenths wide; every coordinate is rounded to
    hundredths. Fails if in report_page.py::received_bars the top's missing-day ``0``
    becomes ``1``, the right margin ``8`` becomes ``9``, ``0.1`` becomes ``0.2``, ``0.8``
    becomes ``1.6``, or any ``round(..., 2)`` rounds to 3 places."""
    stats = _stats({("2030-06-30", A): 1, ("2030-06-30", B): 2, ("2030-06-29", B): 1, ("2030-04-02", A): 3})
    dates = chart_days(stats)
    bars, top = received_bars(stats, [A, B], dates)
    assert top == 3  # the 30th (1 + 2) and the 2nd (3 of A: B's missing day counts nothing)
    by = {(bar.date, bar.endpoint): bar for bar in bars}
    assert sorted(by) == sorted(key for key in stats.days)
    plot = HEIGHT - BOTTOM - TOP
    for (day, _), bar in by.items():
        number = dates.index(day)
        assert bar.x == pytest.approx(LEFT + (number + 0.1) * SLOT, abs=0.005)
        assert bar.width == pytest.approx(0.8 * SLOT, abs=0.005)
        assert bar.height == pytest.approx(plot * bar.received / top, abs=0.005)
        assert all(_hundredths(value) for value in (bar.x, bar.y, bar.width, bar.height)), bar
    last_a, last_b = by[("2030-06-30", A)], by[("2030-06-30", B)]
    assert last_a.y + last_a.height == pytest.approx(HEIGHT - BOTTOM, abs=0.01)  # the first endpoint on the axis
    assert last_b.y + last_b.height == pytest.approx(last_a.y, abs=0.01) and last_b.y == pytest.approx(TOP, abs=0.01)
    assert last_a.x + last_a.width + 0.1 * SLOT == pytest.approx(WIDTH - 8, abs=0.01)  # the last slot ends 8 px in
    assert (last_a.pattern, last_b.pattern) == ("solid", "hatch")


def test_a_ledger_with_nothing_received_has_a_scale_of_1() -> None:
    """Fails if the scale's least top ``[1]`` becomes ``[2]`` in report_page.py::received_bars."""
    stats = _stats({})
    bars, top = received_bars(stats, [], chart_days(stats))
    assert (bars, top) == ([], 1)
    assert scale_ticks(1) == [(224.0, 0), (12.0, 1)]


def test_the_scales_middle_tick_is_half_the_top_rounded_down() -> None:
    """The docstring's own example: 5's middle is 2, drawn at 2. Fails if ``top // 2``
    becomes ``top // 3`` in report_page.py::scale_ticks."""
    plot = HEIGHT - BOTTOM - TOP
    assert scale_ticks(5) == [(HEIGHT - BOTTOM, 0), (HEIGHT - BOTTOM - plot * 2 / 5, 2), (TOP, 5)]
    assert scale_ticks(9) == [(224.0, 0), (129.78, 4), (12.0, 9)]


def _crawled(engines: list[tuple[str, int, int]], never: int = 0, by_address: tuple[str, ...] = ()) -> Crawled:
    crawls = tuple(EngineCrawl(engine, announced, crawled, 600.0, 7200.0) for engine, announced, crawled in engines)
    urls = tuple(f"https://a.example/{number:03d}/" for number in range(never))
    return Crawled("2030-06-01T00:00:00Z", UNTIL, crawls, urls, visits=10, refused=0, unparsed_lines=0, by_address=by_address)


def test_each_crawler_has_a_row_of_the_share_it_crawled() -> None:
    """A bar per crawler, AGE_WIDTH - 200 px for every URL announced, a row below the other;
    believed by address or by user agent as --bot-ranges said. Fails if in
    report_page.py::crawled_context ``200`` becomes ``201``, ``in found.by_address``
    becomes ``not in``, the row's ``+ 4`` becomes ``+ 5``, the width is rounded to 3 places,
    or the height's ``+ 8`` becomes ``+ 9``."""
    context = crawled_context(_crawled([("googlebot", 3, 2), ("bingbot", 3, 1)], by_address=("googlebot",)))
    assert context is not None
    assert context["full"] == AGE_WIDTH - 200 == 400
    rows = [{key: row[key] for key in ("engine", "by", "y", "width", "median", "p90")} for row in context["rows"]]
    assert rows == [
        {"engine": "googlebot", "by": "address", "y": 4, "width": 266.67, "median": "10 min", "p90": "2.0 h"},
        {"engine": "bingbot", "by": "user agent", "y": AGE_ROW + 4, "width": 133.33, "median": "10 min", "p90": "2.0 h"},
    ]
    assert context["height"] == 2 * AGE_ROW + 8


def test_with_nothing_announced_every_crawler_bar_is_empty() -> None:
    """Fails if ``if announced else 0`` becomes ``else 1`` in report_page.py::crawled_context."""
    context = crawled_context(_crawled([("googlebot", 0, 0)]))
    assert context is not None and [row["width"] for row in context["rows"]] == [0]


def test_the_page_lists_50_urls_no_crawler_fetched_and_counts_the_rest() -> None:
    """Fails if ``found.never[:NEVER_SHOWN]`` loses its bound in report_page.py::crawled_context."""
    context = crawled_context(_crawled([("googlebot", 60, 9)], never=51))
    assert context is not None
    assert len(context["never"]) == 50 and context["never"][-1] == "https://a.example/049/" and context["more"] == 1


def test_the_last_runs_findings_errors_first_then_by_rule() -> None:
    """Fails if in report_page.py::findings_of ``each[1] != "error"`` becomes ``==``,
    ``each[1]`` becomes ``each[2]``, ``"error"`` another text, or the rule ``each[0]``
    becomes ``each[1]``; or if ``last_run or {}`` loses its ``{}`` (no run recorded)."""
    run: dict[str, Any] = {
        "findings": {"url-invalid": {"warning": 2}, "lastmod-future": {"error": 1}, "canonical": {"warning": 4, "error": 3}}
    }
    assert findings_of(run) == [
        ("canonical", "error", 3),
        ("lastmod-future", "error", 1),
        ("canonical", "warning", 4),
        ("url-invalid", "warning", 2),
    ]
    errors_out_of_order = {"findings": {"z-rule": {"error": 1}, "a-rule": {"error": 2}}}
    assert findings_of(errors_out_of_order) == [("a-rule", "error", 2), ("z-rule", "error", 1)]
    assert findings_of(None) == [] and findings_of({"at": UNTIL}) == []


def test_the_page_context_lays_out_labels_ages_and_the_days_in_the_chart() -> None:
    """A date label every 15 days from the first, at its slot's left edge; the pending ages'
    bars to the widest's share of AGE_WIDTH - 200, a row each; the first and last date; and
    how many of the ledger's rows (a day and an endpoint) fall in the chart. Fails if in
    report_page.py::page_context the ages' least widest ``[1]`` becomes ``[2]``, the step's
    ``8`` becomes ``9``, a ``round(..., 2)`` rounds to 3 places, ``number % 15 == 0``
    becomes ``!=`` or ``% 16``, ``dates[0]`` or ``dates[-1]`` moves by one, the ages' ``+ 4``,
    ``200`` or ``+ 8`` moves by one, or the count of days in the chart adds 2 a row or
    counts those ``not in`` it."""
    received = {("2030-06-30", A): 1, ("2030-06-30", B): 2, ("2030-05-01", A): 1, ("2030-01-01", A): 5, ("2029-12-31", B): 1}
    ages = {"under an hour": 1, "under a day": 0, "older": 0}
    context = page_context(_stats(received, ages), "state.json", None)
    chart = context["chart"]
    dates = chart_days(_stats({}))
    assert chart["labels"] == [(round(LEFT + number * SLOT, 2), dates[number]) for number in (0, 15, 30, 45, 60, 75)]
    assert chart["labels"][1] == (195.33, "2030-04-17")
    assert (chart["first"], chart["last"]) == ("2030-04-02", "2030-06-30")
    assert context["ages"] == [
        {"label": "under an hour", "count": 1, "y": 4, "width": 400.0},
        {"label": "under a day", "count": 0, "y": AGE_ROW + 4, "width": 0.0},
        {"label": "older", "count": 0, "y": 2 * AGE_ROW + 4, "width": 0.0},
    ]
    assert context["ages_height"] == 3 * AGE_ROW + 8
    assert context["days_in_chart"] == 3 and context["dates"] == 4
    assert context["findings"] == [] and context["crawled"] is None
    assert all(isinstance(bar, Bar) for bar in chart["bars"]) and len(chart["bars"]) == 3


def test_ages_bars_are_rounded_to_hundredths() -> None:
    """Fails if the ages' ``round(..., 2)`` rounds to 3 places in report_page.py::page_context."""
    context = page_context(_stats({}, {"under an hour": 3, "under a day": 1}), "state.json", None)
    assert [row["width"] for row in context["ages"]] == [400.0, 133.33]
