"""The ledger (issue #19, item 4): what every endpoint said to every batch sent, in every
store, bounded by --keep-batches, read by ``notify-changes state history [URL]``."""

from __future__ import annotations

import json

import pytest

from notifier.cli import main
from notifier.database import DatabaseURL
from notifier.store import read_ledger
from tests.conftest import BASE, KEY, Site, pages, urlset
from tests.fakeindexnow import status


@pytest.fixture(params=["notify-changes.json", "notify-changes.sqlite", "postgresql"])
def store_site(site: Site, request: pytest.FixtureRequest) -> Site:
    if request.param == "postgresql":
        site.state = DatabaseURL(request.getfixturevalue("pg_url"), site="shop")  # type: ignore[assignment]
    else:
        site.state = site.root / "state" / request.param
    return site


def test_every_batch_sent_is_in_the_ledger_with_what_the_endpoint_said(store_site: Site, capsys: pytest.CaptureFixture[str]) -> None:
    site = store_site
    assert site.fake is not None
    site.write(urlset(pages(2)))
    assert site.run().code == 0  # a baseline: nothing sent, nothing in the ledger
    assert read_ledger(site.state) == []
    site.write(urlset(pages(5)))
    site.fake.plan = [status(200), status(422, f"bad key {KEY} for this host" + "x" * 300)]
    assert site.run("--batch-size", "2").code == 3
    entries = read_ledger(site.state)
    assert [(each["status"], each["http_status"], each["urls"]) for each in entries] == [
        ("delivered", 200, [f"{BASE}/p/2/", f"{BASE}/p/3/"]),
        ("failed", 422, [f"{BASE}/p/4/"]),
    ]
    assert entries[0]["error"] == "" and 0 < len(entries[1]["error"]) <= 200 and KEY not in entries[1]["error"]
    assert all(each["endpoint"] == site.fake.endpoint and each["attempts"] == 1 for each in entries)
    capsys.readouterr()
    assert main(["state", "history", f"{BASE}/p/4/", *site.state_args]) == 0
    out = capsys.readouterr().out
    assert out.count("\n") == 1 and "failed (HTTP 422, 1 attempt)  1 URL: " in out and KEY not in out
    assert main(["state", "history", *site.state_args, "--format", "json"]) == 0
    assert [each["status"] for each in json.loads(capsys.readouterr().out)["batches"]] == ["delivered", "failed"]


def test_the_ledger_keeps_the_newest_batches(store_site: Site) -> None:
    site = store_site
    assert site.fake is not None
    site.write(urlset(pages(1)))
    assert site.run().code == 0
    for count in range(2, 9):  # seven deploys, one new page each: seven batches
        site.write(urlset(pages(count)))
        assert site.run("--keep-batches", "3").code == 0
    entries = read_ledger(site.state)
    assert 3 <= len(entries) <= 6  # the newest kept: at most twice the bound between trims
    assert entries[-1]["urls"] == [f"{BASE}/p/7/"]


def test_history_of_a_url_never_sent_says_so(site: Site, capsys: pytest.CaptureFixture[str]) -> None:
    site.write(urlset(pages(1)))
    assert site.run().code == 0
    capsys.readouterr()
    assert main(["state", "history", f"{BASE}/p/0/", "--state", str(site.state)]) == 0
    assert "no batch carried" in capsys.readouterr().out
    assert main(["state", "history", "a", "b", "--state", str(site.state)]) == 2
