"""store/jsonfile.py where its mutants once went unnoticed (issue #44): the bytes a state is
written as (JSON, a part a line), a state in memory read lazily like a file, a line end at a
scan chunk's first byte, and the layouts that are not ``encode_chunks``' read whole (or
refused) rather than misread."""

from __future__ import annotations

import json
from pathlib import Path

import orjson
import pytest

import tests.test_state_lazy as lazy
from notifier.errors import StateError
from notifier.store import State, decode_state, encode_state, jsonfile, load_state
from tests.test_state_lazy import STAMP, records


def three_parts() -> State:
    return lazy.three_parts(5)


EXPECTED = records(three_parts())


def test_the_bytes_written_are_json_with_a_part_a_line() -> None:
    """Every part line but the last ends in a comma: the file is JSON any reader parses.
    Fails if ``last = len(state.parts) - 1`` becomes ``- 2`` in
    store/jsonfile.py::encode_chunks."""
    data = encode_state(three_parts())
    document = json.loads(data)
    assert [part["name"] for part in document["parts"]] == ["sitemaps/part-0.xml", "sitemaps/part-1.xml", "sitemaps/part-2.xml"]
    lines = data.split(b"\n")
    assert [line[-2:] for line in lines[1:4]] == [b"},", b"},", b"}}"]
    assert lines[4:] == [b"]}", b""]


def test_a_state_in_memory_is_read_lazily() -> None:
    """The bytes of ``encode_chunks``' layout are read part by part, each part's records
    left encoded until asked for, and then the same. Fails if the slice ``data[offset :
    offset + length]`` loses a bound in store/jsonfile.py::decode_state; or in
    ::_decode_lazily if ``ends[-1] != size - 1``, ``ends[-2] != size - 4`` or
    ``read(size - 3, 3) != b"]}\\n"`` becomes ``==``, or ``size - 1``, ``size - 4``, ``size - 3`` or ``ends[-1]`` is moved by one."""
    state = decode_state(encode_state(three_parts()), "state")
    assert [part.decoded for part in state.parts] == [False, False, False]
    assert records(state) == EXPECTED


def test_a_line_end_at_a_scan_chunks_first_byte_is_found(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The header line's end is the first byte of the second chunk. Fails if ``at >= 0``
    becomes ``at > 0`` or ``at >= 1`` in store/jsonfile.py::_line_ends."""
    data = encode_state(three_parts())
    monkeypatch.setattr(jsonfile, "_SCAN_CHUNK", data.index(b"\n"))
    state = decode_state(data, "state")
    assert [part.decoded for part in state.parts] == [False, False, False]
    assert records(state) == EXPECTED
    path = tmp_path / "state.json"
    path.write_bytes(data)
    loaded = load_state(path)
    assert loaded is not None and not any(part.decoded for part in loaded.parts)
    assert records(loaded) == EXPECTED


def test_each_part_read_from_a_file_is_its_own(tmp_path: Path) -> None:
    """A file's parts are read from it when first needed, each its own span. Fails if
    ``row=len(spans) - 1`` is moved by one in store/jsonfile.py::_decode_lazily."""
    path = tmp_path / "state.json"
    path.write_bytes(encode_state(three_parts()))
    state = load_state(path)
    assert state is not None and not any(part.decoded for part in state.parts)
    assert records(state) == EXPECTED


def test_a_state_whose_parts_are_all_on_its_last_line_is_read_whole() -> None:
    """The same JSON, the parts on the line of ``]}`` (the line before is no part). Fails if
    ``ends[-2] != size - 4`` is dropped from the test in store/jsonfile.py::_decode_lazily."""
    data = encode_state(three_parts()).replace(b",\n", b",")
    data = data[: data.index(b',"parts":[') + 11] + data[data.index(b',"parts":[') + 11 :].replace(b"\n", b"", 1)
    assert data.count(b"\n") == 2 and data.endswith(b"}}]}\n")
    state = decode_state(data, "state")
    assert records(state) == EXPECTED


def test_a_state_whose_parts_are_all_on_its_first_line_is_read_whole() -> None:
    """The header line that ends in no ``,"parts":[`` but holds them all. Fails if
    ``not first.endswith(b',"parts":[')`` is dropped from the test in
    store/jsonfile.py::_decode_lazily."""
    document = json.loads(encode_state(three_parts()))
    body = orjson.dumps(document)[:-1]  # the parts inside the first line
    data = body + b',"x":[' + b" " * 4 + b"\n]}\n"
    assert orjson.loads(data)["x"] == []
    assert records(decode_state(data, "state")) == EXPECTED


def test_a_version_1_file_in_the_new_layout_is_refused() -> None:
    """Format 1 kept its URLs under ``urls``: a file that says version 1 and has none is
    damaged, whatever its layout. Fails if ``not first.startswith(b'{"version":2')`` is
    dropped from the test in store/jsonfile.py::_decode_lazily."""
    data = encode_state(State(created=STAMP, updated=STAMP)).replace(b'{"version":2', b'{"version":1', 1)
    with pytest.raises(StateError, match='"urls"'):
        decode_state(data, "state")


def test_a_part_line_with_a_space_before_its_end_is_read_whole() -> None:
    """Whitespace after a part's closing braces is the same JSON; its records are read
    right, not with a brace too many. Fails if ``closing != b"}}"`` is dropped from the test
    in store/jsonfile.py::_decode_lazily."""
    data = encode_state(three_parts()).replace(b"}},\n", b"}}, \n").replace(b"}}\n]}", b"}} \n]}")
    assert orjson.loads(data)
    assert records(decode_state(data, "state")) == EXPECTED


def test_a_last_line_that_is_not_the_closing_is_damage() -> None:
    """A file whose last line is two bytes but not ``]}`` is no JSON: refused, not read.
    Fails if ``read(size - 3, 3) != b"]}\\n"`` is dropped from the test in
    store/jsonfile.py::_decode_lazily."""
    data = encode_state(three_parts())[:-3] + b"]x\n"
    with pytest.raises(StateError, match="not valid JSON"):
        decode_state(data, "state")


@pytest.mark.parametrize("data", [b"5", b'"version"', b"[]", b"null"])
def test_json_that_is_no_object_is_no_state(data: bytes) -> None:
    """Fails if ``not isinstance(document, dict)`` is dropped from the test in
    store/jsonfile.py::_decode_whole (``"version" in 5`` raises TypeError; a string holds
    "version")."""
    with pytest.raises(StateError, match='no "version"'):
        decode_state(data, "state")
