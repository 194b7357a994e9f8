"""The ledger (issue #19, item 4): what every endpoint said to every batch sent, in every
store, bounded by --keep-batches, read by ``notify-changes state history [URL]``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import cast

import pytest

from notifier.cli import main
from notifier.store import read_ledger
from tests.conftest import BASE, KEY, Site, eight_deploys_keeping_three_batches, pages, urlset
from tests.fakeindexnow import status


def test_every_batch_sent_is_in_the_ledger_with_what_the_endpoint_said(
    site_in_every_store: Site, capsys: pytest.CaptureFixture[str]
) -> None:
    site = site_in_every_store
    assert site.fake is not None
    site.write(urlset(pages(2)))
    assert site.run().code == 0  # a baseline: nothing sent, nothing in the ledger
    assert read_ledger(site.state) == []
    site.write(urlset(pages(5)))
    site.fake.plan = [status(200), status(422, f"bad key {KEY} for this host" + "x" * 300)]
    result = site.run("--batch-size", "2")
    assert result.code == 3 and "ledger of batches could not be written" not in result.out + result.err, result.out + result.err
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


def test_the_ledger_keeps_the_newest_batches(site_in_every_store: Site) -> None:
    site = site_in_every_store
    eight_deploys_keeping_three_batches(site)
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


def _entry(n: int, http_status: int | None = 200) -> dict[str, object]:
    return {
        "at": f"2024-01-01T00:00:0{n}Z",
        "endpoint": "http://e/",
        "host": "a.org",
        "status": "delivered" if http_status == 200 else "failed",
        "http_status": http_status,
        "attempts": 1,
        "error": "" if http_status == 200 else "connection refused",
        "urls": [f"http://a.org/{n}"],
    }


def test_a_ledger_line_that_is_not_an_entry_is_passed_over(tmp_path: Path) -> None:
    """The ledger is a record, nothing decides on it: a damaged line is skipped, never fatal;
    a batch that met a network error (no HTTP status) is an entry like any other."""
    from notifier.store.jsonfile import read_json_ledger

    state = tmp_path / "s.json"
    lines = [
        _entry(1),
        _entry(2, http_status=None),  # a network error: no HTTP status
        [],
        "a line",
        {**_entry(3), "endpoint": 5},
        {**_entry(4), "at": None},
        {**_entry(5), "attempts": "1"},
        {**_entry(6), "http_status": "200"},
        {**_entry(7), "urls": ["http://a.org/7", 7]},
        {key: value for key, value in _entry(8).items() if key != "urls"},
    ]
    (tmp_path / "s.json.ledger").write_text("".join(json.dumps(line) + "\n" for line in lines) + "{torn")
    assert read_json_ledger(state) == [_entry(1), _entry(2, http_status=None)]


def test_the_ledger_file_is_cut_to_the_newest_when_it_passes_twice_the_bound(tmp_path: Path) -> None:
    from notifier.store import JsonStore, LedgerEntry
    from notifier.store.jsonfile import read_json_ledger

    with JsonStore(tmp_path / "s.json") as store:
        store.record_ledger([cast(LedgerEntry, _entry(n)) for n in range(4)], keep=2)
        assert len(read_json_ledger(store.path)) == 4  # twice the bound: left as it is
        store.record_ledger([cast(LedgerEntry, _entry(4))], keep=2)
        assert [entry["urls"] for entry in read_json_ledger(store.path)] == [["http://a.org/3"], ["http://a.org/4"]]


def test_the_ledgers_lines_are_counted_a_megabyte_at_a_time_whatever_falls_on_a_megabytes_edge(tmp_path: Path) -> None:
    """The count decides when the ledger is trimmed; it is read a megabyte at a time, and a line
    ending on the first byte of a later megabyte counts like any other."""
    from notifier.store.ledgerfile import line_count as _line_count

    path = tmp_path / "state.json.ledger"
    path.write_bytes(b"a" * (1 << 20) + b"\n" + b"b" * (1 << 20) + b"\nc\n")
    assert _line_count(path) == 3
    path.write_bytes(b"")
    assert _line_count(path) == 0


def test_the_ledgers_new_lines_are_written_out_before_they_are_synced(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A power cut after a run must not lose the batches it recorded: what the fsync makes
    durable is the whole file, the new lines included (not lines still in Python's buffer)."""
    import os

    from notifier.store import JsonStore, LedgerEntry

    synced: list[int] = []
    real = os.fsync

    def watched(fd: int) -> None:
        synced.append(os.fstat(fd).st_size)
        real(fd)

    with JsonStore(tmp_path / "s.json") as store:
        monkeypatch.setattr(os, "fsync", watched)
        store.record_ledger([cast(LedgerEntry, _entry(n)) for n in range(3)], keep=10)
        monkeypatch.undo()
        size = (tmp_path / "s.json.ledger").stat().st_size
    assert size > 0 and synced == [size]


def test_an_unusual_2xx_is_received_recorded_with_its_code_and_named_once(
    site_in_every_store: Site, capsys: pytest.CaptureFixture[str]
) -> None:
    """Bing's endpoint has answered 203: received (RFC 9110), so nothing stays pending and the
    next run has nothing to send; the ledger and the report keep the code, one note names it."""
    site = site_in_every_store
    assert site.fake is not None
    site.write(urlset(pages(1)))
    assert site.run().code == 0
    site.write(urlset(pages(4)))
    site.fake.success_status = 203
    result = site.run("--batch-size", "2", "--format", "json")
    assert result.code == 0, result.out + result.err
    report = json.loads(result.out)
    assert report["pending"] == 0 and report["submitted"] == 3
    assert [(batch["status"], batch["http_status"]) for batch in report["batches"]] == [("delivered", 203)] * 2
    assert [note for note in report["notes"] if "203" in note] == [
        f"127.0.0.1:{site.fake.port} answered HTTP 203 to 2 batches: an unusual success code, "
        "counted as received (every 2xx is a success); the ledger keeps the code"
    ]
    assert [(each["status"], each["http_status"], each["error"]) for each in read_ledger(site.state)] == [("delivered", 203, "")] * 2
    posts = len(site.fake.posts)
    again = site.run()
    assert again.code == 0 and len(site.fake.posts) == posts and "203" not in again.out
    capsys.readouterr()
    assert main(["state", "history", *site.state_args]) == 0
    assert capsys.readouterr().out.count("delivered (HTTP 203, 1 attempt)") == 2
