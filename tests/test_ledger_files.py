"""The ledger and the state as files (issue #39, item 8): a FIFO in their place is refused
before anything opens it (a FIFO's open waits for its other end for ever), and the ledger
is read as a stream, its memory a line's whatever its size (tracemalloc's peak, never a time)."""

from __future__ import annotations

import contextlib
import json
import os
import threading
import tracemalloc
from collections.abc import Iterator
from pathlib import Path
from typing import cast

import pytest

from notifier.cli import main
from notifier.store import JsonStore, LedgerEntry, last_batches
from tests.conftest import BASE, Site, pages, urlset

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes are POSIX")


@contextlib.contextmanager
def writer_waiting(fifo: Path, data: bytes) -> Iterator[None]:
    """A writer of ``data`` that waits on ``fifo`` until a reader opens it: if the code under
    test opens the FIFO to read, it gets ``data`` and an end instead of waiting for ever. Once
    the block is done, the writer is let go by a reader of the test's own (a reader's open with
    O_NONBLOCK never waits), whether or not it was met: no timeout, no race."""

    def write() -> None:
        with contextlib.suppress(BrokenPipeError), open(fifo, "wb") as handle:
            handle.write(data)

    writer = threading.Thread(target=write)
    writer.start()
    try:
        yield
    finally:
        reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
        writer.join()
        os.close(reader)


def _entry(n: int, urls: list[str]) -> LedgerEntry:
    return cast(
        LedgerEntry,
        {
            "at": f"2024-01-01T{n // 3600 % 24:02d}:{n // 60 % 60:02d}:{n % 60:02d}Z",
            "endpoint": "http://e/",
            "host": "a.org",
            "status": "delivered",
            "http_status": 200,
            "attempts": 1,
            "error": "",
            "urls": urls,
        },
    )


def test_a_run_whose_ledger_is_a_fifo_says_so_and_never_opens_it(site: Site) -> None:
    """The FIFO has a reader (the test's, which never waits): a run that opened it would
    write its batches into it and fail on fsync; a run that waited for a reader would hang."""
    assert site.fake is not None
    site.write(urlset(pages(1)))
    assert site.run().code == 0
    ledger = site.state.with_name(site.state.name + ".ledger")
    os.mkfifo(ledger)
    reader = os.open(ledger, os.O_RDONLY | os.O_NONBLOCK)
    try:
        site.write(urlset(pages(3)))
        result = site.run()
        with contextlib.suppress(BlockingIOError):
            assert os.read(reader, 1 << 16) == b""  # nothing was written into it
    finally:
        os.close(reader)
    assert result.code == 0 and len(site.fake.delivered()) == 2, result.out + result.err
    assert f"the ledger of batches could not be written ({ledger}: is a named pipe (FIFO), not a regular file" in result.out


@pytest.mark.parametrize("store", ["state.json", "state.sqlite"])
def test_state_history_of_a_fifo_ledger_or_state_is_refused_without_waiting(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], store: str
) -> None:
    state = tmp_path / store
    fifo = state.with_name(state.name + ".ledger") if store.endswith(".json") else state
    os.mkfifo(fifo)
    line = json.dumps(_entry(1, [f"{BASE}/a/"])).encode() + b"\n"
    for command in (["state", "history"], ["state", "history", f"{BASE}/a/"], ["state", "show"], ["check", str(tmp_path / "s.xml")]):
        if command[0] == "check":
            (tmp_path / "s.xml").write_text(urlset(pages(1)))
            if store.endswith(".json"):
                os.rename(fifo, state)  # the state file itself a FIFO
                fifo = state
        if command == ["state", "show"] and store.endswith(".json"):
            continue  # the ledger is not read by show
        with writer_waiting(fifo, line):
            code = main([*command, "--state", str(state)])
        err = capsys.readouterr().err
        assert code == 2 and err.count("\n") == 1 and "is a named pipe (FIFO), not a regular file" in err, (command, err)
    fifo.unlink()  # the suite's last look at every state file left would wait on it


def test_state_history_keeps_only_what_it_prints(tmp_path: Path) -> None:
    """A ledger of 30 MB (1,500 batches of 100 long URLs, one URL in every third batch):
    history of that URL and of all hold the twenty batches they print, not the file."""
    state = tmp_path / "state.json"
    wanted = f"{BASE}/wanted/"
    with JsonStore(state) as store:
        filler = [f"{BASE}/p/{'x' * 180}/{n}" for n in range(100)]
        for start in range(0, 1500, 100):
            store.record_ledger([_entry(n, filler + ([wanted] if n % 3 == 0 else [])) for n in range(start, start + 100)], keep=10_000)
    size = state.with_name("state.json.ledger").stat().st_size
    assert size > 30_000_000
    for url, last in ((wanted, 1497), (None, 1499)):
        tracemalloc.start()
        try:
            shown = last_batches(state, url, 20)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert len(shown) == 20 and shown[-1]["at"] == _entry(last, [])["at"]
        assert peak < size / 8, (url, peak, size)  # twenty parsed batches and a line, not 30 MB


def test_a_run_appends_and_trims_a_large_ledger_without_reading_it_whole(tmp_path: Path) -> None:
    state = tmp_path / "state.json"
    with JsonStore(state) as store:
        filler = [f"{BASE}/p/{'y' * 200}/{n}" for n in range(200)]
        store.record_ledger([_entry(n, filler) for n in range(700)], keep=1000)  # 30 MB, no trim yet
        ledger = state.with_name("state.json.ledger")
        size = ledger.stat().st_size
        assert size > 30_000_000
        tracemalloc.start()
        try:
            store.record_ledger([_entry(700, [f"{BASE}/last/"])], keep=1000)  # appended: counted, not read
            appended = tracemalloc.get_traced_memory()[1]
            tracemalloc.reset_peak()
            store.record_ledger([_entry(701, [f"{BASE}/last/"])], keep=300)  # past twice the bound: trimmed to the newest 300
            trimmed = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    entries = last_batches(state, None, 1000)
    assert len(entries) == 300 and entries[-1]["urls"] == [f"{BASE}/last/"] and entries[0]["at"] == _entry(402, [])["at"]
    assert appended < size / 8 and trimmed < size / 8, (appended, trimmed, size)


def test_a_line_torn_by_a_crash_does_not_swallow_the_next_batch(tmp_path: Path) -> None:
    state = tmp_path / "state.json"
    state.with_name("state.json.ledger").write_bytes(json.dumps(_entry(1, ["http://a.org/1"])).encode() + b'\n{"at": "2024')
    with JsonStore(state) as store:
        store.record_ledger([_entry(2, ["http://a.org/2"])], keep=10)
    assert [each["urls"] for each in last_batches(state, None, 10)] == [["http://a.org/1"], ["http://a.org/2"]]


def test_a_new_ledger_past_twice_its_bound_is_trimmed_at_once(tmp_path: Path) -> None:
    """A first run's batches go to a ledger that did not exist: its lines are the entries just
    written, not read back to be counted (store/ledgerfile.py::append_ledger), and seven of
    them under a bound of three leave the newest three. Fails with the count of a new file
    taken as 0 (no trim), or as the lines before the append."""
    state = tmp_path / "state.json"
    with JsonStore(state) as store:
        store.record_ledger([_entry(n, [f"{BASE}/p/{n}"]) for n in range(7)], keep=3)
    assert [each["urls"] for each in last_batches(state, None, 10)] == [[f"{BASE}/p/{n}"] for n in (4, 5, 6)]
    with JsonStore(state) as store:  # then the usual path: counted, six lines stay, a seventh trims
        store.record_ledger([_entry(n, [f"{BASE}/p/{n}"]) for n in (7, 8, 9)], keep=3)
        assert len(last_batches(state, None, 10)) == 6
        store.record_ledger([_entry(10, [f"{BASE}/p/10"])], keep=3)
    assert [each["urls"] for each in last_batches(state, None, 10)] == [[f"{BASE}/p/{n}"] for n in (8, 9, 10)]
