"""``state report --html FILE`` (issue #42, item 2): real runs against the fake endpoint on
an injected clock, then the page parsed as HTML: its SVG's numbers are ``state stats``'."""

from __future__ import annotations

import datetime as dt
import io
import json
from pathlib import Path
from typing import Any, cast

import lxml.html
import pytest

from notifier.cli import main
from notifier.commands.state import run_state_sites
from notifier.commands.state_request import StateRequest
from tests.conftest import Site
from tests.test_stats import DAY, T0, deploy, four_days, stats


def nodes(tree: Any, path: str) -> list[Any]:
    """What an XPath finds, as a list (lxml's stubs type it as any XPath result)."""
    return cast(list[Any], tree.xpath(path))


def report(site: Site, page: Path, now: dt.datetime, since: str | None = None, logs: list[str] | None = None) -> str:
    out = io.StringIO()
    run_state_sites([StateRequest("report", site.state, html=str(page), since=since, logs=logs or (), now=lambda: now)], out)
    return out.getvalue()


def test_the_charts_numbers_are_the_stats(site: Site) -> None:
    four_days(site)
    page = site.root / "report.html"
    now = T0 + 4 * DAY
    said = report(site, page, now)
    assert said.startswith(f"{page}: the report page (") and "5 batches counted" in said
    counted = stats(site, now, since="90d")
    tree = lxml.html.fromstring(page.read_bytes())
    bars = nodes(tree, '//svg[@id="received-chart"]//rect[@class="bar"]')
    drawn = [(bar.get("data-date"), bar.get("data-endpoint"), int(bar.get("data-received"))) for bar in bars]
    assert drawn == [(day["date"], day["endpoint"], day["received"]) for day in counted["days"] if day["received"]]
    assert len(drawn) == 3 and all(float(bar.get("height")) > 0 for bar in bars)  # day 3 received nothing: no bar
    totals = {cell.get("data-name"): int(cell.text) for cell in nodes(tree, '//table[@id="totals"]//td')}
    assert totals == {**{key: counted["totals"][key] for key in ("batches", "sent", "received", "refused", "failed", "held")}, "pending": 0}
    ages = {rect.get("data-age"): int(rect.get("data-urls")) for rect in nodes(tree, '//svg[@id="pending-chart"]//rect')}
    assert ages == counted["pending"]["ages"]
    rows = nodes(tree, '//table[@id="days"]//tr[td]')
    assert [row[0].text for row in rows] == [day["date"] for day in reversed(counted["days"])]
    assert nodes(tree, '//table[@id="last-run"]//td')[0].text == "2030-06-04T13:00:00Z"


def test_the_page_loads_nothing_from_elsewhere_and_allows_only_its_own_style(site: Site) -> None:
    four_days(site)
    page = site.root / "report.html"
    report(site, page, T0 + 4 * DAY)
    tree = lxml.html.fromstring(page.read_bytes())
    assert nodes(tree, "//script | //link | //img | //iframe | //object | //embed") == []
    referenced = [value for element in tree.iter() for name, value in element.attrib.items() if name in ("src", "href", "xlink:href")]
    assert referenced == []
    assert all(value.startswith("url(#") for value in nodes(tree, "//@fill") if value.startswith("url("))
    policy = nodes(tree, '//meta[@http-equiv="Content-Security-Policy"]/@content')[0]
    assert policy.startswith("default-src 'none'; style-src 'sha256-")
    import base64
    import hashlib

    style = str(nodes(tree, "//style")[0].text)
    assert f"'sha256-{base64.b64encode(hashlib.sha256(style.encode()).digest()).decode()}'" in policy  # the style is allowed by its hash
    assert "http://" not in style and "https://" not in style and "@import" not in style


def test_names_from_the_ledger_are_escaped(site: Site) -> None:
    four_days(site)
    ledger = Path(f"{site.state}.ledger")
    entry = json.loads(ledger.read_text().splitlines()[-1])
    entry.update(endpoint='http://e.test/<script>alert("x")</script>', host="<b>h</b>")
    with ledger.open("a") as handle:
        handle.write(json.dumps(entry) + "\n")
    page = site.root / "report.html"
    report(site, page, T0 + 4 * DAY)
    text = page.read_text()
    assert "<script>" not in text and "&lt;script&gt;" in text
    assert nodes(lxml.html.fromstring(text), "//script") == []


def test_a_year_of_daily_deploys_is_a_small_page(site: Site) -> None:
    """A year of daily deploys to two endpoints: the page stays under 200 KB."""
    four_days(site)
    ledger = Path(f"{site.state}.ledger")
    entry = json.loads(ledger.read_text().splitlines()[0])
    lines = []
    for day in range(365):
        for endpoint in ("https://api.indexnow.org/indexnow", "https://www.bing.com/indexnow"):
            at = (T0 + dt.timedelta(days=4 + day)).strftime("%Y-%m-%dT%H:%M:%SZ")
            lines.append(
                json.dumps({**entry, "at": at, "endpoint": endpoint, "urls": [f"https://www.shop-site.org/p/{day}/{n}/" for n in range(8)]})
            )
    with ledger.open("a") as handle:
        handle.write("\n".join(lines) + "\n")
    page = site.root / "report.html"
    report(site, page, T0 + 368 * DAY + dt.timedelta(hours=1), since="all")  # the last batches: the chart's last day
    size = page.stat().st_size
    assert size <= 200_000, size
    tree = lxml.html.fromstring(page.read_bytes())
    assert len(list(nodes(tree, '//svg[@id="received-chart"]//rect[@class="bar"]'))) == 2 * 90  # the chart: the last 90 days
    assert len(list(nodes(tree, '//table[@id="days"]//tr[td]'))) == 2 * 365 + 4  # the table: every day counted
    summary = nodes(tree, "//details/summary")[0].text
    assert summary == "369 days with a batch, a row for each endpoint that had one, newest first"  # days, not rows


def test_bad_requests_are_one_line_and_exit_2(site: Site, capsys: pytest.CaptureFixture[str]) -> None:
    four_days(site)
    capsys.readouterr()
    for args, said in (
        (["state", "report", "--state", str(site.state)], "name the page to write"),
        (["state", "report", "--state", str(site.state), "--html", str(site.root / "none" / "r.html")], "cannot write the report page"),
        (["state", "report", "--state", str(site.state), "--html", "r.html", "--since", "soon"], "--since"),
        (["state", "stats", "--state", str(site.state), "--html", "r.html"], "only `state report --html FILE` takes it"),
        (["state", "stats", "--state", str(site.state), "--log", "access.log"], "only `state report --html FILE --log LOG` takes"),
        (["state", "report", "--state", str(site.state), "--html", "r.html", "--bot-ranges", "b.json"], "name the access logs too"),
        (["state", "report", "--state", str(site.state), "--html", "r.html", "--log", "missing.log"], "cannot read the log"),
    ):
        assert main(args) == 2, args
        err = capsys.readouterr().err
        assert said in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err, (args, err)
    assert main(["state", "report", "--state", str(site.state), "--html", "r.html"]) == 0
    assert "the report page" in capsys.readouterr().out and Path("r.html").stat().st_size > 0


def test_the_job_summary_says_what_was_received_in_the_last_7_days(site: Site) -> None:
    from notifier.github import _markdown

    four_days(site)  # 7 URLs received on 2030-06-01..04
    week = deploy(site, T0 + 8 * DAY + dt.timedelta(hours=1), 6, format="github")  # one more; days 1 and 2 are past the week
    assert week.exit_code == 0 and week.received_week == 1 + 1
    assert "Received by the endpoints in the last 7 days: 2 URLs" in _markdown(week)
    plain = deploy(site, T0 + 8 * DAY, 6)
    assert plain.received_week is None and "last 7 days" not in _markdown(plain)  # the ledger is walked for the summary only


def test_the_page_shows_crawled_and_the_last_runs_findings(site: Site) -> None:
    """With --log, the page's crawler table is ``crawled``'s; the last run's findings are its
    record's (counted: no URL)."""
    from notifier.store import read_state
    from tests.conftest import pages, run_at, urlset
    from tests.test_crawled import crawled, logs

    four_days(site)
    site.write(urlset({**pages(5), "/undated/": None, "/undated-too/": None}))  # two URLs without a lastmod: a warning each
    assert run_at(site, T0 + 4 * DAY + dt.timedelta(hours=2)).exit_code == 0
    files = [str(each) for each in logs(site.root)]
    page = site.root / "report.html"
    report(site, page, T0 + 6 * DAY, logs=files)
    tree = lxml.html.fromstring(page.read_bytes())
    found = crawled(site, *files, "--since", "90d")
    cells = {cell.get("data-engine"): cell.text for cell in nodes(tree, '//table[@id="crawled"]//td[@data-engine]')}
    assert cells == {engine: f"{each['crawled']} of {each['announced']}" for engine, each in found["engines"].items()}
    drawn = {
        bar.get("data-engine"): int(bar.get("data-crawled")) for bar in nodes(tree, '//svg[@id="crawled-chart"]//rect[@class="crawled"]')
    }
    assert drawn == {engine: each["crawled"] for engine, each in found["engines"].items()}
    rows = [[cell.text for cell in row] for row in nodes(tree, '//table[@id="findings"]//tr[td]')]
    assert rows == [["lastmod-missing", "warn", "2"]]
    state = read_state(site.state)
    assert state is not None and state.runs[-1].get("findings") == {"lastmod-missing": {"warn": 2}}
    report(site, page, T0 + 6 * DAY)  # no log: the section says how to add it
    assert "--log ACCESS_LOG" in page.read_text() and nodes(lxml.html.fromstring(page.read_bytes()), '//table[@id="crawled"]') == []


def test_each_tick_of_the_scale_is_drawn_at_its_own_value(site: Site) -> None:
    """A scale whose top is odd (5 a day): its middle tick is 2, drawn at 2, not at 2.5."""
    assert deploy(site, T0, 5).exit_code == 0  # 5 received: the scale's top
    assert deploy(site, T0 + DAY, 7).exit_code == 0  # 2 more
    page = site.root / "report.html"
    report(site, page, T0 + 2 * DAY)
    chart = nodes(lxml.html.fromstring(page.read_bytes()), '//svg[@id="received-chart"]')[0]
    bottom, top = 260 - 36, 12  # the plot's baseline and its top, as report_page draws them
    ticks = [(float(text.get("y")) - 4, int(text.text)) for text in chart.xpath("./text[@text-anchor='end']")]
    assert [value for _, value in ticks] == [0, 2, 5]
    for y, value in ticks:
        assert y == pytest.approx(bottom - (bottom - top) * value / 5), (y, value)
    two = next(bar for bar in nodes(chart, './/rect[@class="bar"]') if bar.get("data-received") == "2")
    assert float(two.get("y")) == pytest.approx(ticks[1][0])  # the bar of 2 reaches the tick that says 2


def test_a_column_of_text_has_its_heading_aligned_with_it(site: Site) -> None:
    """Text columns are left-aligned, numbers right: a heading sits over its column's cells
    (the per-day table's "endpoint" stood at the right of a column of left-aligned URLs)."""
    four_days(site)
    log = site.root / "access.log"
    log.write_text('157.55.39.1 - - [02/Jun/2030:12:00:00 +0000] "GET /p/0 HTTP/1.1" 200 5 "-" "bingbot/2.0"\n')
    page = site.root / "report.html"
    report(site, page, T0 + 4 * DAY, logs=[str(log)])
    tables = nodes(lxml.html.fromstring(page.read_bytes()), "//table")
    checked = 0
    for table in tables:
        headings, rows = table.xpath(".//tr[th]/th"), table.xpath(".//tr[td]")
        for column, heading in enumerate(headings):
            cells = [row.xpath("./td")[column] for row in rows if len(row.xpath("./td")) > column]
            text = bool(cells) and all("text" in (cell.get("class") or "") for cell in cells)
            first = column == 0  # the stylesheet left-aligns every first column
            assert first or text == ("text" in (heading.get("class") or "")), (table.get("id"), heading.text)
            checked += text and not first
    assert checked >= 3  # pattern, believed by, the per-day endpoint (and a finding's level)
