"""The SQLite store's decisions no test stated (#44): a ledger table someone changed, the words
for a full or read-only database, the worker's second read of a part, an empty ledger, a
damaged ledger row. Each test names the edit it fails with."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from notifier.store import RecordedPart, State
from notifier.store.rows import ledger_rows
from notifier.store.sqlite import SqliteStore, operational, read_again, sqlite_ledger_entries
from tests.conftest import BASE, Site, pages, urlset

_KEPT_BY_HAND = "CREATE TRIGGER kept BEFORE DELETE ON ledger BEGIN SELECT RAISE(ABORT, 'the ledger is kept by hand'); END"


def _sqlite(site: Site) -> Path:
    site.state = site.root / "state" / "notify-changes.sqlite"
    return site.state


def _ledger_ids(path: Path) -> list[int]:
    with sqlite3.connect(path) as connection:
        return [row[0] for row in connection.execute("SELECT id FROM ledger ORDER BY id")]


def _pending(path: Path) -> int:
    with sqlite3.connect(path) as connection:
        return int(connection.execute("SELECT count(*) FROM pending").fetchone()[0])


def test_a_ledger_table_that_refuses_a_row_leaves_the_batches_recorded(site: Site) -> None:
    """A ledger table someone changed (a NOT NULL column of their own): the run sends, records
    every acknowledged batch, and says the ledger could not be written, never "restore from a
    backup" for a state that is whole (the fault: only an OperationalError was caught there, so
    a constraint's IntegrityError failed the run after the endpoint had taken the batch)."""
    path = _sqlite(site)
    site.write(urlset(pages(2)))
    assert site.run("--initial", "submit").code == 0
    with sqlite3.connect(path) as connection:
        connection.execute("DROP TABLE ledger")
        connection.execute("CREATE TABLE ledger (id INTEGER PRIMARY KEY, entry TEXT NOT NULL, owner TEXT NOT NULL)")
    site.write(urlset(pages(3)))
    result = site.run()
    assert result.code == 0, result
    assert "cannot add to the ledger" in result.out and "the deliveries themselves are recorded" in result.out, result.out
    assert "restore" not in result.out + result.err, result
    assert site.fake is not None and site.fake.delivered() == [f"{BASE}{path}" for path in pages(3)]
    assert _pending(path) == 0
    assert site.run().code == 0 and len(site.fake.delivered()) == 3  # nothing sent twice


def test_a_ledger_that_keeps_its_rows_by_hand_takes_none_of_a_run_it_cannot_trim(site: Site) -> None:
    """A trigger that refuses the trim of the ledger (--keep-batches): the batch's ledger rows
    are rolled back with the trim, to the savepoint, and the batch itself is recorded (edit:
    ``ROLLBACK TO ledger`` left out keeps a row the ledger then holds twice, or one the trim
    never made room for)."""
    path = _sqlite(site)
    site.write(urlset(pages(1)))
    assert site.run("--keep-batches", "1", "--initial", "submit").code == 0
    with sqlite3.connect(path) as connection:
        connection.execute(_KEPT_BY_HAND)
    before = _ledger_ids(path)
    site.write(urlset(pages(2)))
    result = site.run("--keep-batches", "1")
    assert result.code == 0, result
    assert "cannot add to the ledger" in result.out and "kept by hand" in result.out, result.out
    assert _ledger_ids(path) == before
    assert _pending(path) == 0


def test_the_words_for_a_busy_full_or_read_only_database() -> None:
    """What each operational error means for the user (edits: a test inverted, a word changed, ``or`` made ``and``)."""
    assert operational(sqlite3.OperationalError("database is locked")).endswith("close it and run again")
    assert operational(sqlite3.OperationalError("database or disk is full")).endswith(": the disk is full; free space and run again")
    readonly = ": the file or its folder is not writable; make them writable and run again"
    assert operational(sqlite3.OperationalError("attempt to write a readonly database")).endswith(readonly)
    assert operational(sqlite3.OperationalError("unable to open a read-only file")).endswith(readonly)
    assert operational(sqlite3.OperationalError("no such table: parts")) == "no such table: parts"


def test_a_real_read_only_database_is_worded_so(tmp_path: Path) -> None:
    path = tmp_path / "state.sqlite"
    SqliteStore(path).save(State(updated="2024-05-01T00:00:00Z"))
    connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        connection.execute("INSERT INTO meta VALUES ('x', 'y')")
    except sqlite3.OperationalError as error:
        assert "not writable" in operational(error)
    else:  # pragma: no cover - SQLite refuses every write in mode=ro
        raise AssertionError("a read-only connection wrote")
    finally:
        connection.close()


def _saved(path: Path) -> tuple[int, tuple[str, str]]:
    state = State(updated="2024-05-01T00:00:00Z")
    state.parts.append(RecordedPart("part.xml", "0" * 32, {f"{BASE}/{n}/": ["2024-05-01", None, None] for n in range(3)}))
    SqliteStore(path).save(state)
    with sqlite3.connect(path) as connection:
        (row,) = connection.execute("SELECT id FROM parts").fetchone()
    return int(row), ("part.xml", "0" * 32)


def test_a_worker_reads_a_parts_row_again_only_while_it_is_the_part_loaded(tmp_path: Path) -> None:
    """The bytes of the row (edits: ``found[1]`` or ``[0][1]``, the query replaced by a raise);
    None for another digest, a row that is gone, a file that is no database (edit: the
    ``return None`` of the trouble replaced by a raise)."""
    import orjson

    path = tmp_path / "state.sqlite"
    row, loaded = _saved(path)
    data = read_again(path, row, loaded)
    assert data is not None and orjson.loads(data) == {f"{BASE}/{n}/": ["2024-05-01", None, None] for n in range(3)}
    assert read_again(path, row, ("part.xml", "1" * 32)) is None
    assert read_again(path, row + 1, loaded) is None
    broken = tmp_path / "broken.sqlite"
    broken.write_bytes(b"this is no database" * 100)
    assert read_again(broken, row, loaded) is None
    with sqlite3.connect(path) as connection:  # the records as TEXT, as an SQL client may write them
        connection.execute("UPDATE parts SET urls = CAST(urls AS TEXT) WHERE id = ?", (row,))
    assert read_again(path, row, loaded) == data
    with sqlite3.connect(path) as connection:
        connection.execute("UPDATE parts SET urls = 7 WHERE id = ?", (row,))
    assert read_again(path, row, loaded) is None


def test_no_ledger_yet_is_an_empty_ledger(tmp_path: Path) -> None:
    """No file, or a state saved before its first batch: no entries, no error (edits: each ``return`` replaced by a raise)."""
    path = tmp_path / "state.sqlite"
    assert list(sqlite_ledger_entries(path)) == []
    SqliteStore(path).save(State(updated="2024-05-01T00:00:00Z"))
    assert list(sqlite_ledger_entries(path)) == []


def test_a_damaged_ledger_row_is_passed_over_and_said(tmp_path: Path) -> None:
    """A row that is no JSON, or no entry: skipped, and ``damaged`` called once for each (edits:
    ``value = None`` removed or replaced by a raise, ``damaged is not None`` inverted, the call left out)."""
    entry = {
        "at": "2024-05-01T00:00:00Z",
        "endpoint": "https://api.indexnow.org/indexnow",
        "host": "www.example.com",
        "status": "delivered",
        "http_status": 200,
        "attempts": 1,
        "error": "",
        "urls": [f"{BASE}/1/"],
    }
    import json

    said: list[int] = []
    rows = ["{not json", json.dumps({"at": 1}), json.dumps(entry), None]
    assert list(ledger_rows(rows, lambda: said.append(1))) == [entry]
    assert said == [1, 1, 1]
    assert list(ledger_rows(rows)) == [entry]  # no one to tell: passed over all the same
