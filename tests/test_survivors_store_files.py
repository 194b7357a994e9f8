"""The file stores' decisions the whole suite let a mutant past (store/jsonfile.py,
store/sqlite.py, #44): the delivery journal without a state, an acknowledged batch given as
any iterable, a journal line that is damaged, a format 1 SQLite state's runs and a damaged
format 1 row. Each test names the edit it fails with."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest

import notifier.store.jsonfile as jsonfile
from notifier.errors import StateError
from notifier.store import JsonStore, RecordedPart, State, read_state
from notifier.store.durable import DeliveryNotRecorded
from notifier.store.sqlite import SqliteStore
from tests.conftest import BASE, run_records
from tests.test_store_contract import _write_v1

ENDPOINT = "https://api.indexnow.org/indexnow"
AT = "2030-01-01T12:05:00Z"


def _pending_state(*locs: str) -> State:
    from notifier.store import PendingItem

    item = PendingItem(reason="added", since="2030-01-01T12:00:00Z")
    state = State(updated="2030-01-01T12:00:00Z", pending={ENDPOINT: dict.fromkeys(locs, item)})
    state.parts.append(RecordedPart("part.xml", "0" * 32, {loc: ["2030-01-01", "2030-01-01T12:00:00Z", None] for loc in locs}))
    return state


def _generated(*locs: str) -> Iterator[str]:
    yield from locs


def test_a_journal_with_no_state_file_beside_it_is_no_state(tmp_path: Path) -> None:
    """(edits: the ``state is not None`` side of load's test dropped, or inverted: a save of nothing)"""
    path = tmp_path / "state.json"
    jsonfile.journal_path(path).write_bytes(orjson.dumps({"endpoint": ENDPOINT, "at": AT, "urls": [f"{BASE}/a/"]}) + b"\n")
    assert JsonStore(path).load() is None
    assert not path.exists()


def test_a_journal_is_folded_into_the_state_when_it_is_loaded(tmp_path: Path) -> None:
    path = tmp_path / "state.json"
    state = _pending_state(f"{BASE}/a/", f"{BASE}/b/")
    JsonStore(path).save(state)
    JsonStore(path).record_delivered(state, ENDPOINT, _generated(f"{BASE}/a/"), AT)  # any iterable (edit: ``list(urls)`` removed)
    loaded = JsonStore(path).load()
    assert loaded is not None and list(loaded.pending[ENDPOINT]) == [f"{BASE}/b/"]
    assert not jsonfile.journal_path(path).exists()
    on_disk = read_state(path)
    assert on_disk is not None and list(on_disk.pending[ENDPOINT]) == [f"{BASE}/b/"]


def test_an_sqlite_batch_given_as_any_iterable_is_recorded(tmp_path: Path) -> None:
    """(edit: ``urls = list(urls)`` removed: the URLs consumed before they are written)"""
    path = tmp_path / "state.sqlite"
    state = _pending_state(f"{BASE}/a/", f"{BASE}/b/")
    SqliteStore(path).save(state)
    SqliteStore(path).record_delivered(state, ENDPOINT, _generated(f"{BASE}/a/"), AT)
    with sqlite3.connect(path) as connection:
        assert [json.loads(urls) for (urls,) in connection.execute("SELECT urls FROM delivered")] == [[f"{BASE}/a/"]]
    loaded = read_state(path)
    assert loaded is not None and list(loaded.pending[ENDPOINT]) == [f"{BASE}/b/"]


def test_a_journal_that_cannot_be_written_says_why_in_words(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An error with no strerror still says something (edit: the ``str(error)`` side dropped)."""
    path = tmp_path / "state.json"
    state = _pending_state(f"{BASE}/a/")

    def refused(*_: object) -> int:
        raise OSError("the journal's disk went away")

    monkeypatch.setattr(jsonfile, "open_regular", refused)
    with pytest.raises(DeliveryNotRecorded, match="the journal's disk went away"):
        JsonStore(path).record_delivered(state, ENDPOINT, [f"{BASE}/a/"], AT)


@pytest.mark.parametrize(
    "line",
    [
        {"endpoint": 5, "at": AT, "urls": ["{a}"]},  # no endpoint's name
        {"endpoint": ENDPOINT, "at": AT, "urls": {"{a}": 1}},  # the URLs not a list
    ],
)
def test_a_damaged_journal_line_delivers_nothing(tmp_path: Path, line: dict[str, object]) -> None:
    """(edits: the ``isinstance(endpoint, str)`` or ``isinstance(urls, list)`` side dropped)"""
    path = tmp_path / "state.json"
    loc = f"{BASE}/a/"
    JsonStore(path).save(_pending_state(loc))
    text = json.dumps(line).replace("{a}", loc)
    jsonfile.journal_path(path).write_text(text + "\n")
    loaded = JsonStore(path).load()
    assert loaded is not None and list(loaded.pending[ENDPOINT]) == [loc]
    assert loaded.parts[0].urls()[loc][2] is None


def test_a_format_1_sqlite_state_keeps_its_runs(tmp_path: Path) -> None:
    """(edit: the format 1 reader's ``state.runs = [...]`` removed)"""
    path = tmp_path / "state.sqlite"
    _write_v1(path)
    with sqlite3.connect(path) as connection:
        connection.execute("INSERT INTO runs (record) VALUES (?)", (json.dumps(run_records(2)[1]),))
    state = read_state(path)
    assert state is not None and state.runs == [run_records(2)[1]]


def test_a_format_1_row_whose_lastmod_is_no_text_is_damage(tmp_path: Path) -> None:
    """(edit: the ``check_v1_record`` of each row removed)"""
    path = tmp_path / "state.sqlite"
    _write_v1(path)
    with sqlite3.connect(path) as connection:
        connection.execute("UPDATE urls SET lastmod = ? WHERE loc = ?", (b"\x00\x01", f"{BASE}/p/0/"))
    with pytest.raises(StateError, match="not a string"):
        read_state(path)
