"""What notifier/commands/stats.py writes that a mutation run found no test stating (#44):
the whole text of ``state stats``, its JSON's layout, and the notes ``state report`` gives on
stderr; the crawler counts of a report page over its ``--since`` window. Each test names the
edit it catches."""

from __future__ import annotations

import datetime as dt
import io
import json
from pathlib import Path

import lxml.html

from notifier.commands.state_request import StateRequest
from notifier.commands.stats import run_report, run_stats
from tests.conftest import Site
from tests.fakeindexnow import status
from tests.test_report_page import nodes
from tests.test_stats import DAY, T0, deploy, four_days

NOW = T0 + 4 * DAY


def _stats(site: Site, now: dt.datetime, since: str | None, state: Path | None = None, style: str = "text") -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    run_stats(StateRequest("stats", state or site.state, format=style, since=since, now=lambda: now), out, err)
    return out.getvalue(), err.getvalue()


def test_the_whole_text_of_stats(site: Site) -> None:
    """fails if any of _text's lines is left out ("per day (UTC) and endpoint:", "busiest hosts:")"""
    assert site.fake is not None
    four_days(site)
    endpoint = site.fake.endpoint
    out, err = _stats(site, NOW, "all")
    assert out.splitlines() == [
        f"{site.state}: everything the ledger keeps (until 2030-06-05T12:00:00Z)",
        "  5 batches, URLs 7 sent: 5 received, 1 refused, 1 failed",
        "per day (UTC) and endpoint:",
        f"  2030-06-01  {endpoint}  1 batch, 2 sent: 2 received, 0 refused, 0 failed",
        f"  2030-06-02  {endpoint}  2 batches, 3 sent: 2 received, 1 refused, 0 failed",
        f"  2030-06-03  {endpoint}  1 batch, 1 sent: 0 received, 0 refused, 1 failed",
        f"  2030-06-04  {endpoint}  1 batch, 1 sent: 1 received, 0 refused, 0 failed",
        "busiest hosts:",
        "  www.shop-site.org: 7 sent, 5 received",
        "pending: nothing",
    ]
    assert err == ""


def test_a_window_with_no_batch_and_a_pending_set_in_text(site: Site) -> None:
    """fails if ``out.write(f" no batch in that time{kept}")`` or the pending line is left out or raises"""
    assert site.fake is not None
    assert deploy(site, T0, 2).exit_code == 0
    site.fake.plan = [status(429, "slow down", **{"Retry-After": "86400"})]
    assert deploy(site, T0 + DAY, 4).exit_code == 3  # two added, held by the wait
    out, _ = _stats(site, T0 + 40 * DAY, "2d")
    assert out.splitlines() == [
        f"{site.state}: the ledger since 2030-07-09T12:00:00Z (until 2030-07-11T12:00:00Z)",
        "  no batch in that time; its oldest batch is of 2030-06-01T12:00:00Z",
        "pending: 2 URLs, the oldest waiting since 2030-06-02T12:00:00Z",
    ]


def test_the_json_keeps_a_non_ascii_name_as_it_is_indented_by_two(site: Site, tmp_path: Path) -> None:
    """fails if ``ensure_ascii=False`` becomes True (the state's name escaped) or ``indent=2``
    becomes 3 in run_stats"""
    assert site.fake is not None
    state = tmp_path / "état.json"
    assert deploy(site, T0, 2, state=str(state)).exit_code == 0
    out, _ = _stats(site, NOW, "all", state=state, style="json")
    assert out.startswith('{\n  "state": "') and f'"state": "{state}"' in out
    assert json.loads(out)["totals"]["received"] == 2


def test_a_report_says_its_damaged_ledger_lines_and_unread_log_lines(site: Site) -> None:
    """fails if ``_say_damaged(request, stats, err)`` is left out of run_report, or the note on
    log lines not in a known format"""
    from tests.test_crawled import logs

    four_days(site)
    ledger = Path(f"{site.state}.ledger")
    lines = ledger.read_text().splitlines()
    ledger.write_text("\n".join([lines[0][:30], *lines[1:]]) + "\n")  # the first line torn
    page = site.root / "report.html"
    out, err = io.StringIO(), io.StringIO()
    files = tuple(str(each) for each in logs(site.root))
    run_report(StateRequest("report", site.state, html=str(page), logs=files, now=lambda: T0 + 6 * DAY), out, err)
    assert err.getvalue().splitlines() == [
        f"notify-changes: note: 1 ledger line of {site.state} could not be read and were left out of the counts",
        "notify-changes: note: 1 log line not in a format read here: passed over",
    ]
    assert out.getvalue().startswith(f"{page}: the report page (")


def test_a_reports_crawler_counts_are_over_its_window(site: Site) -> None:
    """fails if ``(parse_w3c(stats.since) if stats.since else None) or datetime.min`` loses a side
    or becomes ``and`` in _crawled: the page would count announcements from before its --since
    (or fail with no --since at all); ``crawled`` of the same window says the same"""
    from tests.test_crawled import crawled, logs

    four_days(site)
    files = [str(each) for each in logs(site.root)]
    page = site.root / "report.html"
    for since in ("all", "3d"):
        out, err = io.StringIO(), io.StringIO()
        request = StateRequest("report", site.state, html=str(page), since=since, logs=tuple(files), now=lambda: T0 + 6 * DAY)
        run_report(request, out, err)
        tree = lxml.html.fromstring(page.read_bytes())
        cells = {cell.get("data-engine"): cell.text for cell in nodes(tree, '//table[@id="crawled"]//td[@data-engine]')}
        found = crawled(site, *files, "--since", since)
        assert cells == {engine: f"{each['crawled']} of {each['announced']}" for engine, each in found["engines"].items()}, since
        announced = {each["announced"] for each in found["engines"].values()}
        assert announced == ({5} if since == "all" else {1}), (since, announced)  # the window decides
