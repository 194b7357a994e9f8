"""``state stats`` (issue #42, item 1): real runs against the fake endpoint on four days of an
injected clock, then the ledger counted per UTC day and endpoint, in every store."""

from __future__ import annotations

import datetime as dt
import io
import json
from pathlib import Path
from typing import Any

import pytest

from notifier.cli import main
from notifier.commands.state import run_state_sites
from notifier.commands.state_request import StateRequest
from notifier.report import Report
from notifier.stats import outcome
from tests.conftest import Site, pages, run_at, urlset
from tests.fakeindexnow import status

T0 = dt.datetime(2030, 6, 1, 12, 0, tzinfo=dt.UTC)
DAY = dt.timedelta(days=1)


def deploy(site: Site, when: dt.datetime, count: int, **more: Any) -> Report:
    """A deploy of ``count`` pages at ``when`` (the injected clock), against the fake endpoint."""
    site.write(urlset(pages(count)))
    return run_at(site, when, **more)


def four_days(site: Site) -> None:
    """Day 1: 2 pages received. Day 2: 3 more in batches of 2: 2 received, 1 refused (422).
    Day 3: that one again, 429 with a Retry-After of a day: failed (pending). Day 4: received."""
    assert site.fake is not None
    assert deploy(site, T0, 2).exit_code == 0
    site.fake.plan = [status(200), status(422, "key not valid for this host")]
    assert deploy(site, T0 + DAY, 5, **{"batch-size": "2"}).exit_code == 3
    site.fake.plan = [status(429, "slow down", **{"Retry-After": "86400"})]
    assert deploy(site, T0 + 2 * DAY, 5).exit_code == 3
    assert deploy(site, T0 + 3 * DAY + dt.timedelta(hours=1), 5).exit_code == 0


def stats(site: Site, now: dt.datetime, since: str | None = "all") -> dict[str, Any]:
    out = io.StringIO()
    run_state_sites([StateRequest("stats", site.state, format="json", since=since, now=lambda: now)], out)
    return dict(json.loads(out.getvalue()))


def test_stats_count_every_batch_per_day_and_endpoint_in_every_store(site_in_every_store: Site) -> None:
    site = site_in_every_store
    assert site.fake is not None
    four_days(site)
    counted = stats(site, T0 + 4 * DAY)
    endpoint = site.fake.endpoint
    assert counted["totals"] == {"batches": 5, "sent": 7, "received": 5, "refused": 1, "failed": 1, "held": 0}
    assert [(day["date"], day["endpoint"], day["sent"], day["received"], day["refused"], day["failed"]) for day in counted["days"]] == [
        ("2030-06-01", endpoint, 2, 2, 0, 0),
        ("2030-06-02", endpoint, 3, 2, 1, 0),
        ("2030-06-03", endpoint, 1, 0, 0, 1),
        ("2030-06-04", endpoint, 1, 1, 0, 0),
    ]
    assert counted["endpoints"] == {endpoint: counted["totals"]}
    assert counted["hosts"] == [{"host": "www.shop-site.org", "sent": 7, "received": 5}]
    assert counted["pending"] == {"urls": 0, "oldest_since": None, "ages": dict.fromkeys(counted["pending"]["ages"], 0)}
    assert counted["ledger"] == {"entries": 5, "oldest": "2030-06-01T12:00:00Z", "damaged": 0}
    assert counted["since"] is None and counted["until"] == "2030-06-05T12:00:00Z"


def test_since_counts_only_the_batches_from_then_on(site: Site) -> None:
    four_days(site)
    now = T0 + 3 * DAY + dt.timedelta(hours=2)
    recent = stats(site, now, since="2d")  # from 2030-06-02T14:00Z: days 3 and 4
    assert recent["since"] == "2030-06-02T14:00:00Z"
    assert [day["date"] for day in recent["days"]] == ["2030-06-03", "2030-06-04"]
    assert recent["totals"]["sent"] == 2 and recent["totals"]["failed"] == 1 and recent["ledger"]["oldest"] == "2030-06-01T12:00:00Z"
    dated = stats(site, now, since="2030-06-02")
    assert [day["date"] for day in dated["days"]] == ["2030-06-02", "2030-06-03", "2030-06-04"]
    default = stats(site, now + 40 * DAY, since=None)  # 30 days back from then: nothing
    assert default["totals"]["batches"] == 0 and default["days"] == []


def test_the_pending_set_and_its_age(site: Site) -> None:
    assert site.fake is not None
    assert deploy(site, T0, 2).exit_code == 0
    site.fake.plan = [status(429, "slow down", **{"Retry-After": "86400"})]
    assert deploy(site, T0 + DAY, 4).exit_code == 3  # two added, held by the wait
    counted = stats(site, T0 + 3 * DAY)
    assert counted["pending"]["urls"] == 2 and counted["pending"]["oldest_since"] == "2030-06-02T12:00:00Z"
    assert counted["pending"]["ages"]["under 7 days"] == 2 and sum(counted["pending"]["ages"].values()) == 2
    assert counted["totals"]["failed"] == 2


def test_the_text_says_the_same(site: Site, capsys: pytest.CaptureFixture[str]) -> None:
    four_days(site)
    capsys.readouterr()
    assert main(["state", "stats", "--state", str(site.state), "--since", "all"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"{site.state}: everything the ledger keeps (until ")  # --since all
    assert "5 batches, URLs 7 sent: 5 received, 1 refused, 1 failed" in out
    assert f"2030-06-02  {site.fake.endpoint if site.fake else ''}  2 batches, 3 sent: 2 received, 1 refused, 0 failed" in out
    assert "www.shop-site.org: 7 sent, 5 received" in out and "pending: nothing" in out


@pytest.mark.parametrize("since", ["garbage", "30x", "-3d", "2030-13-01", ""])
def test_a_since_that_is_no_time_is_one_line_and_exit_2(site: Site, capsys: pytest.CaptureFixture[str], since: str) -> None:
    four_days(site)
    capsys.readouterr()
    assert main(["state", "stats", "--state", str(site.state), "--since", since]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and len(captured.err.strip().splitlines()) == 1 and f"--since '{since}'" in captured.err  # what was typed
    assert "Traceback" not in captured.err
    assert main(["state", "show", "--state", str(site.state), "--since", "2d"]) == 2  # only stats counts over time
    assert "only `state stats` and `state report` take it" in capsys.readouterr().err


def test_a_damaged_ledger_line_is_left_out_and_said_once(site: Site, capsys: pytest.CaptureFixture[str]) -> None:
    four_days(site)
    ledger = Path(f"{site.state}.ledger")
    lines = ledger.read_text().splitlines()
    lines[1] = lines[1][:40]  # torn
    lines.insert(2, json.dumps({**json.loads(lines[0]), "at": "yesterday"}))  # an entry whose time is no time
    ledger.write_text("\n".join(lines) + "\n\n")
    capsys.readouterr()
    assert main(["state", "stats", "--state", str(site.state), "--since", "all", "--format", "json"]) == 0
    captured = capsys.readouterr()
    counted = json.loads(captured.out)
    assert counted["ledger"]["damaged"] == 2 and counted["totals"]["batches"] == 4 and counted["totals"]["sent"] == 5
    assert captured.err.count("\n") == 1 and "2 ledger lines" in captured.err and "left out of the counts" in captured.err


def test_no_state_is_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["state", "stats", "--state", str(tmp_path / "none.json")]) == 2
    assert "no state yet" in capsys.readouterr().err


def test_what_each_ledger_status_counts_as() -> None:
    """Received is any 2xx; refused a 4xx but 429; failed 429, 5xx, a redirect or no answer;
    anything else the ledger records (a hold, a deferral: #41's outcomes) is held, never lost."""
    assert [outcome("delivered", code) for code in (200, 203)] == ["received", "received"]
    assert outcome("accepted", 202) == "received"
    assert [outcome("failed", code) for code in (400, 403, 422, 404)] == ["refused"] * 4
    assert [outcome("failed", code) for code in (429, 500, 503, 301, None)] == ["failed"] * 5
    assert [outcome(status, None) for status in ("held", "deferred", "skipped", "capped")] == ["held"] * 4


def test_a_held_entry_is_counted_held_not_sent(site: Site) -> None:
    four_days(site)
    ledger = Path(f"{site.state}.ledger")
    entry = json.loads(ledger.read_text().splitlines()[0])
    entry.update(status="deferred", http_status=None, attempts=0, error="per-day cap", at="2030-06-04T18:00:00Z")
    with ledger.open("a") as handle:
        handle.write(json.dumps(entry) + "\n")
    counted = stats(site, T0 + 4 * DAY)
    assert counted["totals"] == {"batches": 5, "sent": 7, "received": 5, "refused": 1, "failed": 1, "held": 2}
    assert counted["days"][-1]["held"] == 2 and counted["hosts"][0]["sent"] == 7
