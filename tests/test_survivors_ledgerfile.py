"""The JSON store's ledger file on its edges (store/ledgerfile.py, #44): a line over the limit
passed over without being held, a line of exactly the limit read, the last line without its
newline, appends that start no blank line, a trim that keeps only entries. Each test names the
edit it fails with."""

from __future__ import annotations

from pathlib import Path

import orjson

from notifier.store.ledger import LedgerEntry, entry
from notifier.store.ledgerfile import MAX_LINE, append_ledger, json_ledger_entries
from tests.conftest import BASE


def _entry(n: int) -> LedgerEntry:
    return entry(
        f"2024-05-01T00:00:{n:02d}Z", "https://api.indexnow.org/indexnow", "www.example.com", "delivered", 200, 1, "", [f"{BASE}/{n}/"]
    )


def _line(value: LedgerEntry, size: int | None = None) -> bytes:
    """``value``'s line, padded with spaces (JSON's whitespace) to ``size`` bytes with its newline."""
    text = orjson.dumps(value)
    return text + b" " * ((size or len(text) + 1) - len(text) - 1) + b"\n"


def _read(path: Path) -> tuple[list[LedgerEntry], int]:
    said: list[int] = []
    entries = list(json_ledger_entries(path, lambda: said.append(1)))
    return entries, len(said)


def test_a_line_over_the_limit_is_passed_over_and_the_next_is_read(tmp_path: Path) -> None:
    """An entry padded past 32 MB is passed over (edits: MAX_LINE made 33 MB, or 64), without
    being held or said as damage (edit: ``line = b"\\n"`` removed, ``pass`` made a raise); the
    line after it is read (edit: the rest loop's ``and`` made ``or``, which eats the next line too)."""
    path = tmp_path / "state.json.ledger"
    over = [
        orjson.dumps(_entry(n)) + b"x" * (size - len(orjson.dumps(_entry(n))) - 1) + b"\n"
        for n, size in ((2, (32 << 20) + (1 << 19)), (3, 35 << 20))
    ]
    path.write_bytes(_line(_entry(1)) + over[0] + over[1] + _line(_entry(4)))
    assert _read(path) == ([_entry(1), _entry(4)], 0)  # (edit: the rest loop's ``not`` dropped: the rest of a line read as damage)


def test_a_line_of_exactly_the_limit_is_read(tmp_path: Path) -> None:
    """(edits: the ``not endswith`` side dropped, or its ``not`` dropped: a whole line of MAX_LINE bytes skipped)"""
    path = tmp_path / "state.json.ledger"
    path.write_bytes(_line(_entry(1), MAX_LINE) + _line(_entry(2)))
    assert _read(path) == ([_entry(1), _entry(2)], 0)


def test_the_last_line_without_its_newline_is_read(tmp_path: Path) -> None:
    """A run killed before the newline was written, or a file edited by hand (edits: the
    ``len == MAX_LINE`` side dropped or the ``and`` made ``or``: a short line without its
    newline taken for an overlong one)."""
    path = tmp_path / "state.json.ledger"
    path.write_bytes(_line(_entry(1)) + orjson.dumps(_entry(2)))
    assert _read(path) == ([_entry(1), _entry(2)], 0)


def test_appends_make_one_line_a_batch_and_no_blank_line(tmp_path: Path) -> None:
    """(edit: the last byte read as two, which starts every append on a new blank line)"""
    path = tmp_path / "state.json.ledger"
    append_ledger(path, [_entry(1)], 10, ".tmp-")
    append_ledger(path, [_entry(2), _entry(3)], 10, ".tmp-")
    assert path.read_bytes() == b"".join(orjson.dumps(each) + b"\n" for each in (_entry(1), _entry(2), _entry(3)))


def test_a_line_torn_by_a_crash_is_ended_before_the_next(tmp_path: Path) -> None:
    path = tmp_path / "state.json.ledger"
    path.write_bytes(_line(_entry(1)) + b'{"at": "torn')
    append_ledger(path, [_entry(2)], 10, ".tmp-")
    assert _read(path) == ([_entry(1), _entry(2)], 1)


def test_a_trim_keeps_the_newest_entries_and_only_entries(tmp_path: Path) -> None:
    """Past twice ``keep`` lines the file is rewritten with its newest ``keep`` lines; a damaged
    line among them is not copied (edit: the ``_entry(line) is not None`` side dropped)."""
    path = tmp_path / "state.json.ledger"
    path.write_bytes(_line(_entry(1)) + _line(_entry(2)) + b"damaged\n" + _line(_entry(3)))
    append_ledger(path, [_entry(4)], 2, ".tmp-")
    assert path.read_bytes() == _line(_entry(3)) + _line(_entry(4))
    path.write_bytes(b"".join(_line(_entry(n)) for n in range(1, 5)) + b"damaged\n")
    append_ledger(path, [_entry(5)], 2, ".tmp-")
    assert _read(path) == ([_entry(5)], 0)
    assert path.read_bytes() == _line(_entry(5))


def test_a_ledger_of_exactly_twice_keep_lines_is_not_trimmed(tmp_path: Path) -> None:
    """(edit: ``count > 2 * keep`` made ``>=``)"""
    path = tmp_path / "state.json.ledger"
    path.write_bytes(b"".join(_line(_entry(n)) for n in range(1, 4)))
    append_ledger(path, [_entry(4)], 2, ".tmp-")
    assert _read(path) == ([_entry(n) for n in range(1, 5)], 0)


def test_a_blank_first_line_counts_toward_the_trim(tmp_path: Path) -> None:
    """(edit: each megabyte's newlines counted from its second byte, which misses this one)"""
    path = tmp_path / "state.json.ledger"
    path.write_bytes(b"\n" + b"".join(_line(_entry(n)) for n in range(1, 4)))
    append_ledger(path, [_entry(4)], 2, ".tmp-")
    assert path.read_bytes() == _line(_entry(3)) + _line(_entry(4))


def test_no_ledger_file_is_no_entry_and_damage_with_no_one_to_tell_is_passed_over(tmp_path: Path) -> None:
    """(edits: the missing file's ``return`` made a raise; the ``damaged is not None`` side dropped)"""
    path = tmp_path / "state.json.ledger"
    assert list(json_ledger_entries(path)) == []
    path.write_bytes(b"damaged\n" + _line(_entry(1)))
    assert list(json_ledger_entries(path)) == [_entry(1)]
