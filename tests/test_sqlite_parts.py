"""An SQLite state keeps the rows of the parts a run did not touch (issue #20, item 3: at ten
million URLs a save that rewrites one part of 200 must not rewrite the other 199), reads a
part's records only when they are needed, and a check reading while a run saves is told so."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from notifier.errors import StateError
from notifier.store import RecordedPart, read_state
from notifier.store.sqlite import PAGE_SIZE, ROW_SPACING, SqliteStore, _places
from tests.conftest import Site, index, pages, run_records, urlset


@pytest.fixture
def sqlite_site(site: Site) -> Site:
    site.state = site.root / "state" / "st.sqlite"
    return site


def build(site: Site, parts: list[dict[str, str | None]], order: list[int] | None = None) -> None:
    for number, part in enumerate(parts):
        site.write(urlset(part), f"sitemaps/part-{number}.xml")
    site.write(index({f"/sitemaps/part-{number}.xml": None for number in order or range(len(parts))}))


def big_parts(count: int) -> list[dict[str, str | None]]:
    return [pages(1500, prefix=f"/p{n}/") for n in range(count)]


def rows(path: Path) -> list[tuple[int, str, bytes]]:
    connection = sqlite3.connect(path)
    try:
        return connection.execute("SELECT id, name, urls FROM parts ORDER BY id").fetchall()
    finally:
        connection.close()


def pages_changed(before: bytes, after: bytes, page: int) -> int:
    return sum(before[at : at + page] != after[at : at + page] for at in range(0, max(len(before), len(after)), page))


def test_a_run_that_changed_one_part_writes_that_part_alone(sqlite_site: Site) -> None:
    parts = big_parts(4)
    build(sqlite_site, parts)
    assert sqlite_site.run().code == 0
    before_rows, before = rows(sqlite_site.state), sqlite_site.state.read_bytes()
    parts[2]["/p2/1/"] = "2024-09-01"
    build(sqlite_site, parts)
    assert sqlite_site.run().code == 0
    after_rows, after = rows(sqlite_site.state), sqlite_site.state.read_bytes()
    assert [row[0] for row in after_rows] == [row[0] for row in before_rows]  # every part in its place
    assert [row[2] == old[2] for row, old in zip(after_rows, before_rows, strict=True)] == [True, True, False, True]
    one_part = len(before_rows[2][2]) // PAGE_SIZE + 1  # in the file's pages (a new file's: 16 KiB)
    assert pages_changed(before, after, PAGE_SIZE) <= one_part + 8, "the untouched parts' pages were written again"


def _page_size(path: Path) -> int:
    connection = sqlite3.connect(path)
    try:
        return int(connection.execute("PRAGMA page_size").fetchone()[0])
    finally:
        connection.close()


def test_a_new_file_has_16_kib_pages_and_an_older_file_keeps_its_own(sqlite_site: Site, tmp_path: Path) -> None:
    """A part's records are a row of megabytes, written a page a call: a new state's pages are
    16 KiB (a quarter of the calls of SQLite's 4 KiB); a file made with other pages keeps them."""
    build(sqlite_site, big_parts(2))
    assert sqlite_site.run().code == 0
    assert _page_size(sqlite_site.state) == PAGE_SIZE == 16384
    older = tmp_path / "older.sqlite"
    connection = sqlite3.connect(older)
    connection.execute("PRAGMA page_size = 4096")
    connection.execute("VACUUM")  # an empty file of 4 KiB pages, as an older version made
    connection.close()
    SqliteStore(older).save(read_state(sqlite_site.state) or pytest.fail("no state"))
    assert _page_size(older) == 4096
    state = read_state(older)
    assert state is not None and state.url_count() == 3000


def test_a_part_new_between_two_others_fits_between_their_rows(sqlite_site: Site) -> None:
    parts = big_parts(3)
    build(sqlite_site, parts)
    assert sqlite_site.run().code == 0
    before = {name: (row, urls) for row, name, urls in rows(sqlite_site.state)}
    parts.append(pages(3, prefix="/new/"))
    build(sqlite_site, parts, order=[0, 3, 1, 2])
    assert sqlite_site.run().code == 0
    after = rows(sqlite_site.state)
    assert [name for _, name, _ in after] == [f"sitemaps/part-{n}.xml" for n in (0, 3, 1, 2)]
    assert all(before[name] == (row, urls) for row, name, urls in after if name in before)
    assert sqlite_site.check().out.startswith("0 added, 0 changed, 0 removed")


def test_reordered_parts_are_all_written_again_and_read_back_in_their_new_order(sqlite_site: Site) -> None:
    parts = big_parts(3)
    build(sqlite_site, parts)
    assert sqlite_site.run().code == 0
    build(sqlite_site, parts, order=[2, 0, 1])
    assert sqlite_site.run().code == 0
    assert [name for _, name, _ in rows(sqlite_site.state)] == [f"sitemaps/part-{n}.xml" for n in (2, 0, 1)]
    assert sqlite_site.check().out.startswith("0 added, 0 changed, 0 removed")


def test_reordered_parts_with_a_new_one_among_them_are_all_written_again(sqlite_site: Site) -> None:
    """Every row moves (the order changed) while a part is new this run: it is written with the others."""
    parts = big_parts(2)
    build(sqlite_site, parts)
    assert sqlite_site.run().code == 0
    parts.append(pages(3, prefix="/new/"))
    build(sqlite_site, parts, order=[1, 2, 0])
    result = sqlite_site.run()
    assert result.code == 0 and result.out.startswith("3 added, 0 changed, 0 removed"), result.out
    assert [name for _, name, _ in rows(sqlite_site.state)] == [f"sitemaps/part-{n}.xml" for n in (1, 2, 0)]
    assert sqlite_site.check().out.startswith("0 added, 0 changed, 0 removed")


def test_a_save_keeps_the_newest_runs(tmp_path: Path) -> None:
    from notifier.store import MAX_RUNS_KEPT, State

    with SqliteStore(tmp_path / "s.sqlite") as store:
        store.save(State(runs=run_records(MAX_RUNS_KEPT + 5)))
    state = read_state(tmp_path / "s.sqlite")
    assert state is not None and [run["added"] for run in state.runs] == list(range(5, MAX_RUNS_KEPT + 5))


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("database is locked", "another program holds the database"),
        ("database is busy", "another program holds the database"),
        ("database or disk is full", "the disk is full; free space"),
        ("attempt to write a readonly database", "is not writable"),
        ("attempt to write a read-only database", "is not writable"),
        ("no such table: parts", None),  # anything else: SQLite's own words
    ],
)
def test_what_a_busy_full_or_read_only_database_means_is_said(text: str, says: str | None) -> None:
    from notifier.store.sqlite import operational

    worded = operational(sqlite3.OperationalError(text))
    assert worded.startswith(text)
    assert (says in worded) if says else worded == text


def test_after_a_save_that_moved_every_row_the_state_still_reads_and_saves(sqlite_site: Site) -> None:
    build(sqlite_site, big_parts(3))
    assert sqlite_site.run().code == 0
    with SqliteStore(sqlite_site.state) as store:
        state = store.load()
        assert state is not None
        state.parts.reverse()
        store.save(state)  # out of order: every row written again
        assert all(isinstance(part, RecordedPart) and part.urls() for part in state.parts)
        state.parts.reverse()
        store.save(state)
    reread = read_state(sqlite_site.state)
    assert reread is not None and [part.name for part in reread.parts] == [f"sitemaps/part-{n}.xml" for n in range(3)]
    assert all(len(part.urls()) == 1500 for part in reread.parts)


def test_a_check_reading_while_a_run_saves_says_so(sqlite_site: Site) -> None:
    parts = big_parts(2)
    build(sqlite_site, parts)
    assert sqlite_site.run().code == 0
    reader = read_state(sqlite_site.state)  # a check's state: records not read yet
    assert reader is not None and not reader.parts[1].decoded
    parts[1]["/p1/1/"] = "2024-09-01"
    build(sqlite_site, parts)
    assert sqlite_site.run().code == 0  # another run saves: part 1's row now holds other records
    assert reader.parts[0].urls()  # untouched: still the part that was loaded
    with pytest.raises(StateError, match="another run saved the state while this one read it; run again"):
        reader.parts[1].urls()


@pytest.mark.parametrize(
    ("kept", "places"),
    [
        ([None, None, None], [0, ROW_SPACING, 2 * ROW_SPACING]),
        ([0, None, 2], [0, 1, 2]),  # in place: the part's own row was let go
        ([0, 1, 2, None], [0, 1, 2, 2 + ROW_SPACING]),  # a new last part
        ([None, 5, 9], [5 - ROW_SPACING, 5, 9]),  # a new first part
        ([0, None, None, 9], [0, 3, 6, 9]),
        ([0, None, 1], None),  # no room between dense rows
        ([3, 1], None),  # out of order
    ],
)
def test_places(kept: list[int | None], places: list[int] | None) -> None:
    assert _places(kept) == places
