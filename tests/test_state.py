"""The state file: atomic, locked, versioned, never silently reset."""

from __future__ import annotations

import io
import json
import os
import threading
from collections.abc import Iterator
from pathlib import Path

import jsonschema
import pytest
from hypothesis import given
from hypothesis import strategies as st

from notifier.errors import LockTimeout, StateError
from notifier.store import (
    FORMAT_VERSION,
    LAST_SUBMITTED,
    JsonStore,
    NewPart,
    PendingItem,
    Record,
    RecordedPart,
    State,
    decode_state,
    encode_state,
    new_record,
)
from notifier.store.durable import write_chunks
from tests.conftest import Site, pages, urlset
from tests.schema import SCHEMA, assert_valid_state


def new_part(name: str, locs: list[str], records: dict[str, Record]) -> NewPart:
    """A part a run made over its dict of records (as diff.DiffBuilder makes them)."""
    missing = sum(1 for loc in locs if records[loc][0] is None)
    return NewPart(name, "", locs, records, missing=missing, origins=["http://a.org"], url_hash_index=None)


def test_save_is_atomic_and_leaves_no_temporary_file(tmp_path: Path) -> None:
    path = tmp_path / "state" / "s.json"
    with JsonStore(path) as store:
        store.save(State.from_urls({"http://a.org/": new_record(lastmod="2024-01-01", first_seen="2024-01-01T00:00:00Z")}))
    assert sorted(p.name for p in path.parent.iterdir()) == ["s.json", "s.json.lock"]
    assert_valid_state(path)


def test_a_state_in_folders_not_made_yet_makes_them(tmp_path: Path) -> None:
    path = tmp_path / "deploy" / "state" / "s.json"
    with JsonStore(path) as store:
        store.save(State())
    assert path.is_file()


def test_a_failed_write_keeps_the_old_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "s.json"
    with JsonStore(path) as store:
        store.save(State())
        before = path.read_bytes()

        def broken_fsync(fd: int) -> None:
            raise OSError(28, "No space left on device")

        monkeypatch.setattr(os, "fsync", broken_fsync)
        with pytest.raises(StateError) as caught:
            store.save(State.from_urls({"http://a.org/": new_record(lastmod=None)}))
    assert str(caught.value) == f"{path}: cannot write the state file (No space left on device); the file on disk was left as it was"
    assert path.read_bytes() == before
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


class _FillingFile(io.BytesIO):
    """A file whose device fills after ``room`` bytes: the write that crosses it fails."""

    def __init__(self, room: int) -> None:
        super().__init__()
        self.room = room

    def write(self, data: bytes | memoryview) -> int:  # type: ignore[override]
        if self.tell() + len(data) > self.room:
            raise OSError(28, "No space left on device")
        return super().write(data)


def test_chunks_are_written_in_order_and_whole() -> None:
    chunks = [str(n).encode() * (n % 7 + 1) for n in range(500)]
    handle = io.BytesIO()
    write_chunks(handle, iter(chunks))
    assert handle.getvalue() == b"".join(chunks)


def test_a_write_that_fails_midway_stops_the_encoding_and_is_raised() -> None:
    encoded: list[int] = []

    def chunks() -> Iterator[bytes]:
        for n in range(1000):
            encoded.append(n)
            yield b"x" * 100

    handle = _FillingFile(room=1000)
    with pytest.raises(OSError, match="No space left"):
        write_chunks(handle, chunks())
    assert handle.getvalue() == b"x" * 1000  # nothing after the failed write
    assert len(encoded) < 100  # the encoding stopped soon after, not at the end
    assert not [each for each in threading.enumerate() if each.name == "notify-changes-writer"]


def test_an_encoding_that_fails_midway_is_raised_after_the_writes_begun() -> None:
    def chunks() -> Iterator[bytes]:
        yield b"a" * 10
        yield b"b" * 10
        raise StateError("s.json: damaged")

    handle = io.BytesIO()
    with pytest.raises(StateError, match="damaged"):
        write_chunks(handle, chunks())
    assert handle.getvalue() == b"a" * 10 + b"b" * 10
    assert not [each for each in threading.enumerate() if each.name == "notify-changes-writer"]


def test_a_disk_that_fills_while_the_state_is_written_keeps_the_old_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "s.json"
    urls = {f"http://a.org/{n}": new_record(lastmod="2024-01-01") for n in range(3)}
    with JsonStore(path) as store:
        store.save(State.from_urls(urls))
        before = path.read_bytes()

        class Filling(io.BufferedWriter):
            written = 0

            def write(self, data: bytes | memoryview) -> int:  # type: ignore[override]
                Filling.written += len(data)
                if Filling.written > 40:  # the header went, the part's line does not
                    raise OSError(28, "No space left on device")
                return super().write(data)

        monkeypatch.setattr(os, "fdopen", lambda fd, mode: Filling(io.FileIO(fd, mode)))
        with pytest.raises(StateError, match="No space left on device"):
            store.save(State.from_urls({**urls, "http://a.org/new": new_record(lastmod=None)}))
    assert path.read_bytes() == before
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_leftover_temporary_files_are_removed_under_the_lock_and_nothing_else(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    (tmp_path / ".s.json.abc123.tmp").write_text("half")
    (tmp_path / "mine.tmp").write_text("keep")
    (tmp_path / ".other.json.x.tmp").write_text("keep")
    with JsonStore(path):
        pass
    assert sorted(p.name for p in tmp_path.iterdir()) == [".other.json.x.tmp", "mine.tmp", "s.json.lock"]


def test_a_second_run_waits_for_the_lock_then_gives_up(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    now = [0.0]

    def clock() -> float:
        return now[0]

    def sleep(seconds: float) -> None:
        now[0] += seconds

    with JsonStore(path), pytest.raises(LockTimeout, match="another notify-changes run holds the state lock"):
        JsonStore(path, lock_timeout=3, clock=clock, sleep=sleep).acquire()
    assert 3 <= now[0] < 3.2
    with JsonStore(path, lock_timeout=0):  # free again once released
        pass


def test_newer_state_version_is_refused_and_left_byte_identical(site: Site) -> None:
    site.write(urlset(pages(3)))
    site.state.parent.mkdir(parents=True)
    newer = json.dumps({"version": FORMAT_VERSION + 1, "urls": {}, "whatever": [1, 2]}).encode()
    site.state.write_bytes(newer)
    for command in ("run", "check"):
        result = site.run(command=command)
        assert result.code == 2
        assert "newer than this notify-changes knows" in result.err and "upgrade" in result.err
    assert site.state.read_bytes() == newer


@pytest.mark.parametrize(
    "content",
    [
        b"",
        b"{",
        b'{"version": 1, "urls": {"http://a.org/": {"lastmod": 5}}, "pending": {}, "runs": []}',
        b'{"version": 1, "urls": [], "pending": {}, "runs": []}',
        b'{"version": "1"}',
        b"[1, 2, 3]",
        b'{"version": 1, "urls": {}, "pending": {"e": {"http://a.org/": {"reason": "added"}}}, "runs": []}',
        b"\xff\xfe\x00",
    ],
)
def test_a_corrupt_state_file_is_exit_2_and_untouched(site: Site, content: bytes) -> None:
    site.write(urlset(pages(3)))
    site.state.parent.mkdir(parents=True)
    site.state.write_bytes(content)
    result = site.run()
    assert result.code == 2, result
    assert str(site.state) in result.err and "Traceback" not in result.err and result.err.count("\n") == 1
    assert site.state.read_bytes() == content
    assert site.fake is not None and site.fake.posts == []


def test_an_unwritable_state_folder_is_exit_2_with_nothing_sent(site: Site) -> None:
    site.write(urlset(pages(3)))
    blocker = site.root / "state"
    blocker.write_text("a file where the state folder should be")
    result = site.run("--initial", "submit")
    assert result.code == 2 and "cannot create the state folder" in result.err
    assert site.fake is not None and site.fake.posts == []


def test_encode_decode_round_trip() -> None:
    state = State.from_urls(
        {"http://a.org/é": new_record(lastmod="2024-01-01", first_seen="2024-01-01T00:00:00Z")},
        pending={"http://e/indexnow": {"http://a.org/é": {"reason": "added", "since": "2024-01-01T00:00:00Z"}}},
        created="2024-01-01T00:00:00Z",
        updated="2024-01-01T00:00:00Z",
    )
    data = encode_state(state)
    assert encode_state(decode_state(data, "x")) == data


def test_deliveries_go_to_a_journal_that_the_next_load_folds_in(tmp_path: Path) -> None:
    from notifier.store import PendingItem, journal_path, load_state

    path = tmp_path / "s.json"
    urls = [f"http://a.org/{n}" for n in range(4)]
    state = State.from_urls(
        {url: new_record(lastmod="2024-01-01") for url in urls},
        pending={"e": {url: PendingItem(reason="added", since="2024-01-01T00:00:00Z") for url in urls}},
    )
    with JsonStore(path) as store:
        store.save(state)
        saved = path.read_bytes()
        store.record_delivered(state, "e", urls[:2], "2024-02-01T00:00:00Z")
        store.record_delivered(state, "e", urls[2:3], "2024-02-02T00:00:00Z")
        # killed here: the state file is untouched, the journal holds the two acknowledged batches
    assert path.read_bytes() == saved
    with open(journal_path(path), "ab") as handle:
        handle.write(b'{"endpoint":"e","at":"2024-02-03T00:00:00Z","urls":["http://a.o')  # torn by the kill
    seen = load_state(path)  # what `check` sees, without writing
    assert seen is not None and list(seen.pending["e"]) == [urls[3]]
    assert journal_path(path).exists() and path.read_bytes() == saved
    with JsonStore(path) as store:  # the next run folds the journal into the file and drops it
        loaded = store.load()
    assert loaded is not None and list(loaded.pending["e"]) == [urls[3]]
    assert loaded.all_urls()[urls[0]][LAST_SUBMITTED] == "2024-02-01T00:00:00Z"
    assert not journal_path(path).exists()
    assert list(decode_state(path.read_bytes(), "s").pending["e"]) == [urls[3]]


def _journalled(tmp_path: Path) -> tuple[Path, list[str], State]:
    from notifier.store import PendingItem

    path = tmp_path / "s.json"
    urls = [f"http://a.org/{n}" for n in range(3)]
    state = State.from_urls(
        {url: new_record(lastmod="2024-01-01") for url in urls},
        pending={"e": {url: PendingItem(reason="added", since="2024-01-01T00:00:00Z") for url in urls}},
    )
    return path, urls, state


def test_a_journal_line_of_the_wrong_shape_is_passed_over_and_its_urls_stay_pending(tmp_path: Path) -> None:
    from notifier.store import journal_path, load_state

    path, urls, state = _journalled(tmp_path)
    with JsonStore(path) as store:
        store.save(state)
    lines = [
        {"endpoint": 5, "at": "2024-02-01T00:00:00Z", "urls": [urls[0]]},  # not an endpoint
        {"endpoint": "e", "at": None, "urls": [urls[1]]},  # no time
        {"endpoint": "e", "at": "2024-02-01T00:00:00Z", "urls": urls[2]},  # not a list
        {"endpoint": "e", "at": "2024-02-01T00:00:00Z", "urls": [5, urls[2]]},  # the one URL in it is acknowledged
    ]
    journal_path(path).write_text("".join(json.dumps(line) + "\n" for line in lines))
    seen = load_state(path)
    assert seen is not None and list(seen.pending["e"]) == urls[:2]


def test_the_journal_is_written_as_the_state_is_and_a_failure_to_write_it_says_why(tmp_path: Path) -> None:
    from notifier.store import journal_path
    from notifier.store.durable import DeliveryNotRecorded

    path, urls, state = _journalled(tmp_path)
    umask = os.umask(0o022)
    os.umask(umask)
    opened = len(os.listdir("/proc/self/fd"))
    with JsonStore(path) as store:
        store.save(state)
        for url in urls:
            store.record_delivered(state, "e", [url], "2024-02-01T00:00:00Z")
        assert len(os.listdir("/proc/self/fd")) <= opened + 2  # the lock (and the state's handle): no descriptor per batch
        assert journal_path(path).stat().st_mode & 0o777 == 0o644 & ~umask
        journal_path(path).unlink()
        journal_path(path).mkdir()  # where the journal goes, nothing can be appended
        with pytest.raises(DeliveryNotRecorded) as caught:
            store.record_delivered(state, "e", urls[:1], "2024-02-02T00:00:00Z")
    assert "could not be recorded (is a folder, not a regular file)" in str(caught.value)


def test_a_state_file_that_cannot_be_read_is_one_line_and_its_handle_is_closed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from notifier.store import load_state

    path = tmp_path / "s.json"
    path.write_bytes(encode_state(State.from_urls({"http://a.org/": new_record(lastmod="2024-01-01")})))
    opened = len(os.listdir("/proc/self/fd"))

    def failing(fd: int, length: int, offset: int) -> bytes:
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(os, "pread", failing)
    with pytest.raises(StateError, match=r"cannot read the state file \(Input/output error\)"):
        load_state(path)
    assert len(os.listdir("/proc/self/fd")) == opened


def test_a_rerun_does_not_even_replace_the_state_file(tmp_path: Path) -> None:
    """Loading a state with no journal beside it writes nothing: the same file, not a copy of it."""
    path, _, state = _journalled(tmp_path)
    with JsonStore(path) as store:
        store.save(state)
    before = path.stat()
    with JsonStore(path) as store:
        assert store.load() is not None
    after = path.stat()
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)


def test_a_parts_count_of_urls_without_a_lastmod_and_its_origins_come_from_its_records() -> None:
    """What a part says of itself in the state (its "missing" count, its origins) is worked
    out of its records, also after they changed; an unread file's URLs without a lastmod are
    found again by that count."""
    records = {
        "http://a.org/1": new_record(lastmod=None),
        "https://b.org/2": new_record(lastmod=None),
        "http://a.org/3": new_record(lastmod="2024-01-01"),
    }
    part = RecordedPart("sitemap.xml", "0" * 32, dict(records))
    assert (part.count, part.missing, part.origins) == (3, 2, ["http://a.org", "https://b.org"])
    part.urls()["http://a.org/4"] = new_record(lastmod=None)
    part.touch()
    assert (part.count, part.missing, part.meta()["missing"]) == (4, 3, 3)


def test_a_large_pending_set_is_written_in_pieces_and_read_back_whole() -> None:
    from notifier.store import PendingItem

    early = PendingItem(reason="changed", since="2024-01-01T00:00:00Z")
    late = PendingItem(reason="added", since="2024-02-01T00:00:00Z")
    items = {f"http://a.org/{n}": early for n in range(3)} | {f"http://a.org/new/{n}": late for n in range(70_000)}
    state = State(pending={"http://e/indexnow": items, "http://f/indexnow": {"http://a.org/0": late}, "http://g/": {}})
    data = encode_state(state)
    assert json.loads(data)["pending"]["http://f/indexnow"] == [
        {"reason": "added", "since": "2024-02-01T00:00:00Z", "urls": ["http://a.org/0"]}
    ]
    written = [url for group in json.loads(data)["pending"]["http://e/indexnow"] for url in group["urls"]]
    assert written == list(items)  # each URL once, in order, across the pieces (a reader of the file counts them)
    again = decode_state(data, "s")
    assert list(again.pending) == ["http://e/indexnow", "http://f/indexnow"]
    assert again.pending["http://e/indexnow"] == items and list(again.pending["http://e/indexnow"]) == list(items)


def test_records_are_walked_in_step() -> None:
    """The ordering invariant of State.records: the diff inserts a run's records in the order
    of its new parts and their URLs, which the fast paths of settle and the encoder follow."""
    from notifier.pipeline.diff import DiffBuilder
    from notifier.sitemap.files import Entry, SitemapFile, facts_of

    builder = DiffBuilder(State(), endpoints=["e"], now="2024-02-01T00:00:00Z", makes_parts=True)
    for number in range(3):
        entries = [Entry(f"http://a.org/{number}/{n}", "2024-01-01", number, n) for n in range(4)]
        builder.add_file(SitemapFile(f"f{number}.xml", "urlset", key=f"f{number}.xml", facts=facts_of(entries)), entries)
    diff = builder.finish()
    assert diff.records is not None
    assert list(diff.records) == [loc for part in diff.parts for loc in part.urls()]
    walk = iter(diff.records.items())
    assert all(isinstance(part, NewPart) and part.take(walk) is not None for part in diff.parts)


def test_parts_made_by_a_run_encode_the_same_whether_or_not_the_records_are_in_their_order() -> None:
    records = {f"http://a.org/{n}": new_record(f"2024-01-{1 + n:02d}", "2024-02-01T00:00:00Z") for n in range(6)}
    first, second = ["http://a.org/0", "http://a.org/1", "http://a.org/2"], ["http://a.org/3", "http://a.org/4", "http://a.org/5"]
    in_order = State(parts=[new_part("a", first, records), new_part("b", second, records)], records=records)
    shuffled = dict(reversed(list(records.items())))
    out_of_order = State(parts=[new_part("a", first, shuffled), new_part("b", second, shuffled)], records=shuffled)
    assert encode_state(in_order) == encode_state(out_of_order)
    assert list(decode_state(encode_state(in_order), "s").parts[1].urls()) == second


def test_acknowledged_batches_settle_into_pending_sets_and_records_in_step_or_not() -> None:
    from notifier.store import PendingItem, apply_delivery

    records = {f"http://a.org/{n}": new_record("2024-01-01", "2024-02-01T00:00:00Z") for n in range(5)}
    older = {"http://a.org/old": new_record("2023-01-01", "2023-02-01T00:00:00Z")}
    waiting = PendingItem(reason="added", since="2024-02-01T00:00:00Z")
    state = State(
        parts=[RecordedPart("old", "", dict(older)), new_part("new", list(records), records)],
        records=records,
        pending={"e": dict.fromkeys([*records, "http://a.org/old"], waiting), "f": dict.fromkeys(records, waiting)},
    )
    urls = list(records)
    apply_delivery(state, "e", urls[:2], "2024-03-01T00:00:00Z", live=True)  # in step with the records
    apply_delivery(state, "e", ["http://a.org/old", urls[4]], "2024-03-02T00:00:00Z", live=True)  # not in step
    apply_delivery(state, "f", urls, "2024-03-03T00:00:00Z", live=True)  # every URL went: the set empties
    state.settle()
    assert list(state.pending["e"]) == urls[2:4] and state.pending["f"] == {}
    stamps = {loc: record[LAST_SUBMITTED] for loc, record in state.all_urls().items()}
    assert stamps == {
        "http://a.org/old": "2024-03-02T00:00:00Z",
        **dict.fromkeys(urls, "2024-03-03T00:00:00Z"),  # the latest acknowledgement wins
    }


LOCS = st.sampled_from([f"http://a.org/{n}" for n in range(8)] + ["http://a.org/é", 'http://a.org/"q"', "http://a.org/\\n"])
STAMPS = st.sampled_from(["2024-01-01T00:00:00Z", "2024-02-01T00:00:00Z"])
RECORDS = st.builds(
    lambda lastmod, seen, sent, print_: new_record(lastmod, seen, sent, print_),
    st.one_of(st.none(), st.sampled_from(["2024-01-01", "2024-05-01T10:00:00+02:00", "not a date", "}]\n,"])),
    st.one_of(st.none(), STAMPS),
    st.one_of(st.none(), STAMPS),
    st.one_of(st.none(), st.just("0123456789abcdef0123456789abcdef")),
)
STATES = st.builds(
    lambda parts, pending: State(
        parts=[RecordedPart(f"sitemaps/p-{n}.xml\n,", "0" * 32, urls) for n, urls in enumerate(parts)],
        pending={endpoint: dict.fromkeys(urls, PendingItem(reason="added", since="2024-01-01T00:00:00Z")) for endpoint, urls in pending},
        created="2024-01-01T00:00:00Z",
    ),
    st.lists(st.dictionaries(LOCS, RECORDS, max_size=5), max_size=4),
    st.lists(st.tuples(st.sampled_from(["http://e/", "http://f/"]), st.lists(LOCS, max_size=4)), max_size=2),
)


@given(STATES)
def test_any_state_reads_back_as_it_was_written(state: State) -> None:
    data = encode_state(state)
    again = decode_state(data, "s")
    assert encode_state(again) == data
    assert [part.urls() for part in again.parts] == [part.urls() for part in state.parts]
    assert again.pending == {endpoint: items for endpoint, items in state.pending.items() if items}


@pytest.mark.slow
@given(STATES, st.lists(st.tuples(st.integers(min_value=0), st.sampled_from([b"", b"}", b"]", b",", b"\n", b'"', b"x", b"1"])), max_size=4))
def test_a_damaged_state_is_a_state_error_never_a_crash(state: State, edits: list[tuple[int, bytes]]) -> None:
    data = bytearray(encode_state(state))
    for position, replacement in edits:
        position %= len(data)
        data[position : position + 1] = replacement
    try:
        damaged = decode_state(bytes(data), "s")
        damaged.all_urls()  # decodes every part
        written = encode_state(damaged)
    except StateError as error:
        assert "restore s from a backup" in str(error) or "newer than this notify-changes" in str(error)
        return
    # what reads without a StateError is a state as documented, whatever the damage was
    jsonschema.validate(json.loads(written), SCHEMA)


def test_waiting_is_what_each_endpoint_has_not_acknowledged_yet() -> None:
    """State.waiting reads the pending sets net of the acknowledged batches not folded in."""
    from notifier.store import apply_delivery

    item = PendingItem(reason="added", since="2024-02-01T00:00:00Z")
    urls = [f"http://a.org/{n}" for n in range(4)]

    def fresh() -> State:
        return State(pending={"e": dict.fromkeys(urls, item), "f": dict.fromkeys(urls[2:], item), "g": {}})

    state = fresh()
    assert state.waiting(["e", "f", "g", "h"]) == urls  # in order, each once
    apply_delivery(state, "e", urls[:1], "2024-03-01T00:00:00Z", live=True)
    assert state.waiting(["e"]) == urls[1:]
    apply_delivery(state, "e", urls[1:], "2024-03-01T00:00:00Z", live=True)  # every batch went
    assert state.waiting(["e"]) == [] and state.waiting(["e", "f"]) == urls[2:]
    state = fresh()  # replayed from a journal: the same batch twice, as many URLs as pending, not all of them
    apply_delivery(state, "e", urls[:2], "2024-03-01T00:00:00Z")
    apply_delivery(state, "e", urls[:2], "2024-03-01T00:00:00Z")
    assert state.waiting(["e"]) == urls[2:]
    state = fresh()  # this run's batches may repeat a URL too (two hosts' batches never do, one host's never)
    apply_delivery(state, "f", urls[2:3], "2024-03-01T00:00:00Z")
    apply_delivery(state, "f", urls[2:3], "2024-03-01T00:00:00Z", live=True)
    assert state.waiting(["f"]) == urls[3:]
    assert state.pending["e"] == dict.fromkeys(urls, item)  # reading changed nothing


def test_replayed_batches_leave_only_what_they_acknowledged() -> None:
    """A journal may hold one batch twice: as many URLs as are pending, but not all of them."""
    from notifier.store import apply_delivery

    item = PendingItem(reason="added", since="2024-02-01T00:00:00Z")
    state = State(pending={"e": dict.fromkeys(["http://a.org/1", "http://a.org/2"], item)})
    apply_delivery(state, "e", ["http://a.org/1"], "2024-03-01T00:00:00Z")
    apply_delivery(state, "e", ["http://a.org/1"], "2024-03-01T00:00:00Z")
    state.settle()
    assert list(state.pending["e"]) == ["http://a.org/2"]


def test_a_delivery_out_of_step_with_the_runs_records_is_stamped_all_the_same() -> None:
    from notifier.store import apply_delivery

    records = {f"http://a.org/{n}": new_record("2024-01-01", "2024-02-01T00:00:00Z") for n in range(4)}
    item = PendingItem(reason="added", since="2024-02-01T00:00:00Z")
    state = State(parts=[new_part("new", list(records), records)], records=records, pending={"e": dict.fromkeys(records, item)})
    apply_delivery(state, "e", ["http://a.org/3", "http://a.org/1"], "2024-03-02T00:00:00Z", live=True)  # not in order
    state.settle()
    stamps = {loc: record[LAST_SUBMITTED] for loc, record in records.items()}
    assert stamps == {
        "http://a.org/0": None,
        "http://a.org/1": "2024-03-02T00:00:00Z",
        "http://a.org/2": None,
        "http://a.org/3": "2024-03-02T00:00:00Z",
    }


def test_a_json_state_keeps_the_last_twenty_runs(tmp_path: Path) -> None:
    """The log of recent runs holds twenty (state/schema.json's maxItems), the newest last."""
    from tests.conftest import run_records

    store = JsonStore(tmp_path / "state.json")
    store.save(State(runs=run_records(25), updated="2024-05-01T00:00:00Z"))
    loaded = store.load()
    assert loaded is not None and [run["added"] for run in loaded.runs] == list(range(5, 25))
