"""A JSON state is read without holding the file (issue #20: a ten-million-URL state is over a
gigabyte): the file is scanned in chunks, each part's records are read from it when first
needed and let go after use, and a save that replaces the file meanwhile changes nothing the
run reads."""

from __future__ import annotations

from pathlib import Path

import pytest

from notifier.store import JsonStore, Part, RecordedPart, State, decode_state, encode_state, jsonfile, load_state, new_record

STAMP = "2026-11-01T10:00:00Z"


def three_parts(each: int = 40) -> State:
    """A state of three recorded parts of ``each`` URLs."""
    parts: list[Part] = []
    for n in range(3):
        urls = {f"https://e.org/{n}/{m}/": new_record(f"2026-0{n + 1}-{m % 28 + 1:02d}", STAMP) for m in range(each)}
        parts.append(RecordedPart(f"sitemaps/part-{n}.xml", f"{n:032x}", urls))
    return State(parts=parts, created=STAMP, updated=STAMP)


def records(state: State) -> list[tuple[str, dict[str, list[object]]]]:
    return [(part.name, dict(part.urls())) for part in state.parts]


@pytest.mark.parametrize("chunk", [7, 9, 10, 64, 1 << 24])
def test_a_lazily_read_state_is_the_state_parsed_whole_however_the_chunks_fall(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chunk: int
) -> None:
    """Chunks smaller than the records' mark (9 bytes) and of every size around it: a mark
    or a line end across a cut is found once."""
    path = tmp_path / "state.json"
    path.write_bytes(encode_state(three_parts()))
    monkeypatch.setattr(jsonfile, "_SCAN_CHUNK", chunk)
    state = load_state(path)
    assert state is not None and not any(part.decoded for part in state.parts)
    assert records(state) == records(decode_state(path.read_bytes(), "whole"))
    assert [part.count for part in state.parts] == [40, 40, 40]


@pytest.mark.parametrize("head", [1, 9, 20, 200])
def test_a_parts_fields_longer_than_the_first_read_are_read_on(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, head: int) -> None:
    path = tmp_path / "state.json"
    path.write_bytes(encode_state(three_parts()))
    monkeypatch.setattr(jsonfile, "_HEAD", head)
    state = load_state(path)
    assert state is not None and not any(part.decoded for part in state.parts)  # read lazily, not parsed whole
    assert records(state) == records(decode_state(path.read_bytes(), "whole"))
    assert all(part.url_hash_index for part in state.parts)


def test_parts_are_read_when_needed_and_let_go_after_use(tmp_path: Path) -> None:
    path = tmp_path / "state.json"
    path.write_bytes(encode_state(three_parts()))
    state = load_state(path)
    assert state is not None
    part = state.parts[1]
    assert isinstance(part, RecordedPart) and part._raw is None and not part.decoded  # nothing of it held
    assert "https://e.org/1/0/" in part.urls()
    part.unload()
    assert part._raw is None and not part.decoded
    assert part.urls()["https://e.org/1/0/"][0] == "2026-02-01"  # read again


def test_a_save_that_replaces_the_file_leaves_what_a_reader_holds_as_it_was(tmp_path: Path) -> None:
    """A check reading while a run saves: the check's parts are the file it opened."""
    path = tmp_path / "state.json"
    path.write_bytes(encode_state(three_parts()))
    before = load_state(path)
    assert before is not None
    with JsonStore(path) as store:
        state = store.load()
        assert state is not None
        state.parts[0].urls()["https://e.org/0/0/"][0] = "2030-01-01"
        assert isinstance(state.parts[0], RecordedPart)
        state.parts[0].touch()
        store.save(state)
    assert before.parts[0].urls()["https://e.org/0/0/"][0] == "2026-01-01"
    after = load_state(path)
    assert after is not None and after.parts[0].urls()["https://e.org/0/0/"][0] == "2030-01-01"
    assert records(after)[1:] == records(before)[1:]  # the untouched parts were copied as they were


@pytest.mark.parametrize(
    "edit",
    [
        lambda data: data.replace(b"\n", b" ", 1),  # the header and the first part on one line
        lambda data: data.replace(b"]}\n", b"]}\n\n"),  # a blank line at the end
        lambda data: data.replace(b'}},\n{"name"', b'}},\n\n{"name"', 1),  # a blank line between parts
        lambda data: data.replace(b'"urls":{', b'"urls": {'),  # another layout of the same JSON
        lambda data: data.replace(b'=","urls":{', b'=", "urls":{'),  # a space after the index: not the records' mark
    ],
)
def test_any_other_layout_of_the_same_json_reads_the_same(tmp_path: Path, edit: object) -> None:
    path = tmp_path / "state.json"
    data = encode_state(three_parts())
    path.write_bytes(edit(data))  # type: ignore[operator]
    state = load_state(path)
    assert state is not None and records(state) == records(decode_state(data, "whole"))


def test_a_save_copies_the_untouched_parts_without_keeping_them(tmp_path: Path) -> None:
    """A run's save reads each untouched part's bytes to copy them, one at a time: memory
    does not end up holding the whole state (at ten million URLs, a gigabyte)."""
    path = tmp_path / "state.json"
    path.write_bytes(encode_state(three_parts()))
    with JsonStore(path) as store:
        state = store.load()
        assert state is not None
        store.save(state)
        assert all(isinstance(part, RecordedPart) and part._raw is None and not part.decoded for part in state.parts)
    assert records(decode_state(path.read_bytes(), "after")) == records(three_parts())


def test_of_a_part_line_only_its_fields_are_read_when_the_state_loads(monkeypatch: pytest.MonkeyPatch) -> None:
    """A part's line is mostly its records (a 50,000-URL part: megabytes): loading reads its
    fields, a little at a time, and leaves the records for when they are needed."""
    data = encode_state(three_parts())
    reads: list[int] = []

    def read(offset: int, length: int) -> bytes:
        reads.append(length)
        return data[offset : offset + length]

    monkeypatch.setattr(jsonfile, "_HEAD", 200)
    state = jsonfile._decode_lazily(read, len(data), "state.json")
    assert state is not None and not any(part.decoded for part in state.parts)
    shortest_line = min(len(line) for line in data.split(b"\n")[1:-2])
    assert max(length for length in reads if length != jsonfile._SCAN_CHUNK) < shortest_line / 2, (reads, shortest_line)


def test_a_state_with_an_empty_part_is_still_read_lazily(tmp_path: Path) -> None:
    """An empty urlset's part (no URLs, an empty index) among the others: the file keeps its
    lazy reading, not parsed whole (a ten-million-URL state would be held at once)."""
    state = three_parts()
    state.parts.insert(1, RecordedPart("sitemaps/empty.xml", "f" * 32, {}))
    path = tmp_path / "state.json"
    path.write_bytes(encode_state(state))
    loaded = load_state(path)
    assert loaded is not None and not any(part.decoded for part in loaded.parts)
    assert records(loaded) == records(decode_state(path.read_bytes(), "whole"))
    assert [part.count for part in loaded.parts] == [40, 0, 40, 40]


def test_a_lazily_read_state_checks_its_header() -> None:
    """The lazy reader checks the first line's fields as a whole parse does: "runs" must be a list."""
    from notifier.errors import StateError

    state = State(parts=[RecordedPart("a.xml", "0" * 32, {"http://e/1": new_record("2024-01-01")})], updated="2024-05-01T00:00:00Z")
    data = encode_state(state)
    first = data.split(b"\n")[0]
    assert b'"runs":[]' in first and first.endswith(b',"parts":[')
    with pytest.raises(StateError, match='"runs" is not a list'):
        decode_state(data.replace(b'"runs":[]', b'"runs":5', 1), "s")
