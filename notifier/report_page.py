"""``state report --html FILE``: one self-contained page of what the ledger says, drawn from
the same counts as ``state stats`` (``notifier.stats``).

The page is rendered by Jinja2 with autoescaping from ``templates/report.html.j2`` (package
data): a summary, an inline SVG chart of the URLs received per day and endpoint, a chart of
the pending set's age, the last recorded run and the numbers as tables. It loads nothing: no
script, no stylesheet or font from elsewhere, and its Content-Security-Policy allows only its
own stylesheet (by its hash), so it opens offline and under a strict CSP. Endpoints are told
apart by a fill pattern and a label as well as by a shade: it reads without colour.
"""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import importlib.resources
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from notifier.crawled import Crawled, delay_text
from notifier.errors import InputError
from notifier.extras import install_hint
from notifier.stats import Stats

CHART_DAYS = 90
WIDTH, HEIGHT, LEFT, BOTTOM, TOP = 900, 260, 56, 36, 12
PATTERNS = ("solid", "hatch", "dots", "cross", "lines")  # one an endpoint, in turn
AGE_WIDTH, AGE_ROW = 600, 26
NEVER_SHOWN = 50  # URLs no crawler fetched, listed on the page (`crawled --format json` lists them all)


@dataclass(frozen=True)
class Bar:
    """One endpoint's part of one day's bar: what it received, where it is drawn."""

    date: str
    endpoint: str
    received: int
    x: float
    y: float
    width: float
    height: float
    pattern: str


def chart_days(stats: Stats, days: int = CHART_DAYS) -> list[str]:
    """The UTC dates the chart shows: the last ``days`` up to the stats' end, oldest first."""
    end = dt.date.fromisoformat(stats.until[:10])
    return [(end - dt.timedelta(days=back)).isoformat() for back in range(days - 1, -1, -1)]


def received_bars(stats: Stats, endpoints: Sequence[str], dates: Sequence[str]) -> tuple[list[Bar], int]:
    """The stacked bars of URLs received per day and endpoint, and the scale's top."""
    received = {(day, endpoint): tally.received for (day, endpoint), tally in stats.days.items()}
    top = max([sum(received.get((day, each), 0) for each in endpoints) for day in dates] + [1])
    plot_height, step = HEIGHT - BOTTOM - TOP, (WIDTH - LEFT - 8) / len(dates)
    bars: list[Bar] = []
    for number, day in enumerate(dates):
        base = float(HEIGHT - BOTTOM)
        for index, endpoint in enumerate(endpoints):
            count = received.get((day, endpoint), 0)
            if not count:
                continue
            height = plot_height * count / top
            base -= height
            x = LEFT + number * step + step * 0.1
            bars.append(Bar(day, endpoint, count, round(x, 2), round(base, 2), round(step * 0.8, 2), round(height, 2), _pattern(index)))
    return bars, top


def scale_ticks(top: int) -> list[tuple[float, int]]:
    """The scale's ticks, (y, value): 0, the middle and the top, each a whole number of URLs
    drawn at its own height (5's middle is 2, at 2: a tick at 2.5 saying "2" reads a bar wrong)."""
    plot_height = HEIGHT - BOTTOM - TOP
    return [(round(HEIGHT - BOTTOM - plot_height * value / top, 2), value) for value in sorted({0, top // 2, top})]


def _pattern(index: int) -> str:
    return PATTERNS[index % len(PATTERNS)]


def crawled_context(found: Crawled | None) -> dict[str, Any] | None:
    """The page's "Did the engines crawl it?": a bar per crawler, of the URLs announced."""
    if found is None:
        return None
    full, announced = AGE_WIDTH - 200, found.announced
    rows = [
        {
            "engine": each.engine,
            "crawled": each.crawled,
            "median": delay_text(each.median_delay_s),
            "p90": delay_text(each.p90_delay_s),
            "by": "address" if each.engine in found.by_address else "user agent",
            "y": number * AGE_ROW + 4,
            "width": round(full * each.crawled / announced, 2) if announced else 0,
        }
        for number, each in enumerate(found.engines)
    ]
    shown = found.never[:NEVER_SHOWN]
    return {
        "found": found,
        "rows": rows,
        "full": full,
        "height": len(rows) * AGE_ROW + 8,
        "never": shown,
        "more": len(found.never) - len(shown),
    }


def findings_of(last_run: dict[str, Any] | None) -> list[tuple[str, str, int]]:
    """The last run's findings, (rule, level, URLs), errors first."""
    found = (last_run or {}).get("findings") or {}
    return sorted(
        ((rule, level, count) for rule, levels in found.items() for level, count in levels.items()),
        key=lambda each: (each[1] != "error", each[0]),
    )


def page_context(stats: Stats, state_name: str, last_run: dict[str, Any] | None, found: Crawled | None = None) -> dict[str, Any]:
    """Everything the template shows, computed here: the template only lays it out."""
    endpoints = sorted(stats.endpoints)
    dates = chart_days(stats)
    bars, top = received_bars(stats, endpoints, dates)
    ages = list(stats.pending_ages.items())
    widest = max([count for _, count in ages] + [1])
    shown, step = set(dates), (WIDTH - LEFT - 8) / len(dates)
    newest_first = sorted(stats.days.items(), reverse=True)
    return {
        "state": state_name,
        "stats": stats,
        "totals": stats.totals.as_dict(),
        "endpoints": [
            {"url": endpoint, "pattern": _pattern(index), **stats.endpoints[endpoint].as_dict()} for index, endpoint in enumerate(endpoints)
        ],
        "chart": {
            "width": WIDTH,
            "height": HEIGHT,
            "left": LEFT,
            "bottom": HEIGHT - BOTTOM,
            "top": TOP,
            "scale": top,
            "ticks": scale_ticks(top),
            "labels": [(round(LEFT + number * step, 2), day) for number, day in enumerate(dates) if number % 15 == 0],
            "bars": bars,
            "first": dates[0],
            "last": dates[-1],
        },
        "ages": [
            {"label": label, "count": count, "y": number * AGE_ROW + 4, "width": round((AGE_WIDTH - 200) * count / widest, 2)}
            for number, (label, count) in enumerate(ages)
        ],
        "ages_height": len(ages) * AGE_ROW + 8,
        "days": [{"date": day, "endpoint": endpoint, **tally.as_dict()} for (day, endpoint), tally in newest_first],
        "days_in_chart": sum(1 for day, _ in stats.days if day in shown),
        "dates": len({day for day, _ in stats.days}),  # a row is a day and an endpoint: two endpoints, two rows a day
        "hosts": stats.busiest(),
        "last_run": last_run,
        "findings": findings_of(last_run),
        "crawled": crawled_context(found),
    }


def render_page(stats: Stats, state_name: str, last_run: dict[str, Any] | None, found: Crawled | None = None) -> str:
    """The page's HTML."""
    try:
        import jinja2
    except ImportError:
        raise InputError(f"state report needs Jinja2, which is not installed: {install_hint('report')}") from None
    folder = importlib.resources.files("notifier") / "templates"
    environment = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    style = (folder / "report.css").read_text(encoding="utf-8")
    digest = base64.b64encode(hashlib.sha256(style.encode("utf-8")).digest()).decode("ascii")
    template = environment.from_string((folder / "report.html.j2").read_text(encoding="utf-8"))
    return template.render(
        style=style,  # our own stylesheet: not escaped (a <style> is raw text), allowed by its hash
        style_hash=f"sha256-{digest}",
        **page_context(stats, state_name, last_run, found),
    )


def write_page(path: Path, html: str) -> int:
    """Write the page atomically; its size in bytes."""
    from notifier.store import write_atomic

    data = html.encode("utf-8")

    def failed(where: Path, reason: str, *, begun: bool) -> Exception:
        return InputError(f"{where}: cannot write the report page ({reason})")

    write_atomic(path, [data], f".{path.name}.", failed)
    return len(data)
