"""The same contract for every store: the JSON file (default), SQLite (.sqlite / .db), and
PostgreSQL (a real server, tests/postgres.py) where it applies to a database."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
from collections.abc import Sequence
from pathlib import Path

import pytest

from notifier.store import Part, read_state
from tests.conftest import BASE, KEY, Site, pages, program, recorded_pending, recorded_urls, urlset
from tests.fakeindexnow import hang, status, wait_until

STORES = ["notify-changes.json", "notify-changes.sqlite", "notify-changes.db"]
POSTGRESQL = "postgresql"


@pytest.fixture(params=STORES)
def any_site(site: Site, request: pytest.FixtureRequest) -> Site:
    site.state = site.root / "state" / request.param
    return site


@pytest.fixture(params=[*STORES, POSTGRESQL])
def every_store(site: Site, request: pytest.FixtureRequest) -> Site:
    """The contract a database shares with the files (not file bytes, links or flock)."""
    from notifier.database import DatabaseURL

    if request.param == POSTGRESQL:
        site.state = DatabaseURL(request.getfixturevalue("pg_url"), site="shop")  # type: ignore[assignment]
    else:
        site.state = site.root / "state" / request.param
    return site


def _absent(site: Site) -> bool:
    return site.state_bytes() is None


def pending_of(site: Site) -> dict[str, list[str]]:
    state = read_state(site.state)
    assert state is not None
    return {endpoint: sorted(items) for endpoint, items in state.pending.items() if items}


def test_baseline_then_a_silent_rerun_that_leaves_the_file_alone(every_store: Site) -> None:
    every_store.write(urlset(pages(4)))
    assert every_store.run().code == 0
    state = read_state(every_store.state)
    assert state is not None and len(state.all_urls()) == 4 and state.parts
    before = every_store.state_bytes()
    assert every_store.run().code == 0
    assert every_store.fake is not None and every_store.fake.posts == []
    assert every_store.state_bytes() == before


def test_changes_are_sent_and_recorded(every_store: Site) -> None:
    every_store.write(urlset(pages(4)))
    every_store.run()
    every_store.write(urlset(pages(6)))
    result = every_store.run("--batch-size", "1")
    assert result.code == 0 and result.out.startswith("2 added, 0 changed, 0 removed, 2 submitted, 0 pending")
    state = read_state(every_store.state)
    assert state is not None and len(state.all_urls()) == 6 and pending_of(every_store) == {}
    assert recorded_urls(every_store.state)[f"{BASE}/p/5/"].get("last_submitted")
    assert every_store.run().code == 0 and every_store.fake is not None and len(every_store.fake.posts) == 2


def test_undelivered_urls_stay_pending_per_endpoint(every_store: Site) -> None:
    every_store.write(urlset(pages(2)))
    every_store.run()
    every_store.write(urlset(pages(5)))
    assert every_store.fake is not None
    every_store.fake.plan = [status(200), status(503)] + [status(503)] * 20
    assert every_store.run("--batch-size", "2").code == 3
    assert pending_of(every_store) == {every_store.fake.endpoint: [f"{BASE}/p/4/"]}
    every_store.fake.plan = []
    assert every_store.run().code == 0 and pending_of(every_store) == {}
    assert every_store.fake.delivered() == [f"{BASE}/p/2/", f"{BASE}/p/3/", f"{BASE}/p/4/"]


def test_check_and_dry_run_never_create_or_write_it(every_store: Site) -> None:
    every_store.write(urlset(pages(3)))
    assert every_store.check().code == 0 and every_store.run("--dry-run").code == 0
    assert _absent(every_store)
    every_store.run()
    before = every_store.state_bytes()
    every_store.write(urlset(pages(5)))
    assert every_store.check().code == 0 and every_store.run("--dry-run").code == 0
    assert every_store.state_bytes() == before


def test_a_verification_failure_leaves_it_untouched(every_store: Site) -> None:
    every_store.write(urlset(pages(3)))
    every_store.run()
    before = every_store.state_bytes()
    every_store.write(urlset({"http://localhost:1313/": "2024-01-01"}))
    assert every_store.run().code == 1 and every_store.state_bytes() == before


def test_a_newer_version_is_refused_and_left_alone(any_site: Site) -> None:
    any_site.write(urlset(pages(3)))
    any_site.run()
    if any_site.state.suffix == ".json":
        any_site.state.write_text('{"version": 99, "urls": {}}')
    else:
        with sqlite3.connect(any_site.state) as connection:
            connection.execute("UPDATE meta SET value = '99' WHERE key = 'version'")
        connection.close()
    before = any_site.state_bytes()
    result = any_site.run()
    assert result.code == 2 and "newer than this notify-changes knows" in result.err
    assert any_site.state_bytes() == before


def test_a_corrupt_file_is_exit_2_and_left_alone(any_site: Site) -> None:
    any_site.write(urlset(pages(3)))
    any_site.state.parent.mkdir(parents=True)
    any_site.state.write_bytes(b"this is not a state file at all" * 10)
    result = any_site.run()
    assert result.code == 2 and str(any_site.state) in result.err and result.err.count("\n") == 1
    assert any_site.state.read_bytes() == b"this is not a state file at all" * 10


def test_the_lock_is_shared(any_site: Site) -> None:
    import fcntl

    any_site.write(urlset(pages(2)))
    any_site.state.parent.mkdir(parents=True)
    fd = os.open(str(any_site.state) + ".lock", os.O_RDWR | os.O_CREAT)
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        result = any_site.run("--lock-timeout", "0.1")
    finally:
        os.close(fd)
    assert result.code == 4
    assert "holds the state lock" in result.err and result.err.count("\n") == 2
    assert result.err.startswith("notify-changes: waiting for the state lock of ")  # said once, as the wait starts
    assert not any_site.state.exists()


@pytest.mark.program
def test_a_kill_between_batches_resends_only_the_batch_in_flight(every_store: Site) -> None:
    every_store.write(urlset(pages(2)))
    every_store.run()
    every_store.write(urlset(pages(8)))
    assert every_store.fake is not None
    every_store.fake.plan = [status(200), hang(60)]
    env = dict(os.environ, INDEXNOW_KEY=KEY)
    argv = [
        *program(),
        str(every_store.sitemap),
        *every_store.state_args,
        "--endpoint",
        every_store.fake.endpoint,
        "--batch-size",
        "2",
    ]
    process = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        assert wait_until(lambda: len(every_store.fake.posts) == 2 or process.poll() is not None, timeout=20)
        assert process.poll() is None, process.communicate()[1]  # it ended before its second batch: why
    finally:
        process.send_signal(signal.SIGKILL)
        process.communicate()
    every_store.fake.plan = []
    assert subprocess.run(argv, env=env, capture_output=True, check=False).returncode == 0
    sent = [post.json["urlList"] for post in every_store.fake.posts if post.answer == 200]
    assert sent[0] == [f"{BASE}/p/2/", f"{BASE}/p/3/"]
    assert sorted(url for batch in sent[1:] for url in batch) == [f"{BASE}/p/{n}/" for n in range(4, 8)]
    assert pending_of(every_store) == {}


def test_an_empty_sqlite_file_is_no_state(site: Site) -> None:
    site.state = site.root / "state" / "s.sqlite"
    site.state.parent.mkdir(parents=True)
    site.state.write_bytes(b"")
    site.write(urlset(pages(2)))
    result = site.run()
    assert result.code == 0 and "no state file" in result.out
    assert Path(site.state).stat().st_size > 0


V1_URLS = {f"{BASE}/p/{n}/": f"2024-05-0{n + 1}T10:0{n}:00Z" for n in range(3)}
V1_SUBMITTED, V1_FINGERPRINT = "2024-05-03T00:00:00Z", "f" * 32


def _write_v1(path: Path) -> None:
    """A state as format 1 wrote it: one record per URL naming its part."""
    if path.suffix == ".json":
        urls = {loc: {"lastmod": lastmod, "part": 0, "first_seen": "2024-05-01T00:00:00Z"} for loc, lastmod in V1_URLS.items()}
        urls[f"{BASE}/p/1/"] |= {"last_submitted": V1_SUBMITTED, "fingerprint": V1_FINGERPRINT}
        pending = {"http://e/indexnow": {f"{BASE}/p/2/": {"reason": "changed", "since": "2024-05-02T00:00:00Z"}}}
        document = {"version": 1, "parts": [{"name": "sitemap.xml", "digest": "0" * 32}], "urls": urls, "pending": pending, "runs": []}
        path.write_text(json.dumps(document))
        return
    connection = sqlite3.connect(path)
    connection.executescript(
        """
        CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
        CREATE TABLE parts (id INTEGER PRIMARY KEY, name TEXT NOT NULL, digest TEXT NOT NULL);
        CREATE TABLE urls (loc TEXT PRIMARY KEY, lastmod TEXT, part INTEGER, fingerprint TEXT, first_seen TEXT, last_submitted TEXT);
        CREATE TABLE pending (endpoint TEXT NOT NULL, loc TEXT NOT NULL, reason TEXT NOT NULL, since TEXT NOT NULL, UNIQUE (endpoint, loc));
        CREATE TABLE runs (id INTEGER PRIMARY KEY, record TEXT NOT NULL);
        INSERT INTO meta VALUES ('version', '1'), ('created', '2024-05-01T00:00:00Z'), ('updated', '2024-05-02T00:00:00Z');
        INSERT INTO parts VALUES (0, 'sitemap.xml', '00000000000000000000000000000000');
        """
    )
    connection.executemany("INSERT INTO urls VALUES (?, ?, 0, NULL, '2024-05-01T00:00:00Z', NULL)", list(V1_URLS.items()))
    connection.execute("UPDATE urls SET fingerprint = ?, last_submitted = ? WHERE loc = ?", (V1_FINGERPRINT, V1_SUBMITTED, f"{BASE}/p/1/"))
    connection.execute("INSERT INTO pending VALUES ('http://e/indexnow', ?, 'changed', '2024-05-02T00:00:00Z')", (f"{BASE}/p/2/",))
    connection.commit()
    connection.close()


def test_a_format_1_state_is_read_and_rewritten_as_format_2(any_site: Site) -> None:
    any_site.state.parent.mkdir(parents=True, exist_ok=True)
    _write_v1(any_site.state)
    any_site.write(urlset({f"/p/{n}/": V1_URLS[f"{BASE}/p/{n}/"] for n in range(3)}))
    result = any_site.check()
    assert result.code == 0 and result.out.startswith("0 added, 0 changed, 0 removed"), result.out
    assert recorded_pending(any_site.state) == {
        "http://e/indexnow": {f"{BASE}/p/2/": {"reason": "changed", "since": "2024-05-02T00:00:00Z"}}
    }
    any_site.write(urlset({"/p/0/": "2024-06-01T10:00:00Z", "/p/1/": V1_URLS[f"{BASE}/p/1/"], "/p/2/": V1_URLS[f"{BASE}/p/2/"]}))
    assert any_site.run().code == 0
    urls = recorded_urls(any_site.state)
    assert urls[f"{BASE}/p/0/"]["lastmod"] == "2024-06-01T10:00:00Z" and urls[f"{BASE}/p/1/"]["first_seen"] == "2024-05-01T00:00:00Z"
    assert (urls[f"{BASE}/p/1/"]["last_submitted"], urls[f"{BASE}/p/1/"]["fingerprint"]) == (V1_SUBMITTED, V1_FINGERPRINT)
    state = read_state(any_site.state)
    assert state is not None and [part.name for part in state.parts] == ["sitemap.xml"]


# format 1's part numbers: in range, out of range either side, and not a number at all
V1_NUMBERS: dict[str, object] = {"in-0": 0, "in-1": 1, "past-the-end": 2, "negative": -1, "text": "x", "none": None}


def _v1_grouping(parts: Sequence[Part]) -> list[tuple[str, list[str]]]:
    return [(part.name, sorted(loc.rsplit("/", 1)[-1] for loc in part.urls())) for part in parts]


def test_format_1_records_go_back_to_the_part_they_name_and_the_rest_to_an_unnamed_one() -> None:
    """A record naming a part that exists goes back to it (an unchanged file is then not
    parsed, its URLs still listed); any other number, or none, to a part with no file
    behind it, read again at the next deploy: never a crash, never a URL lost."""
    from notifier.store.migrate import parts_from_v1

    document = {
        "version": 1,
        "parts": [{"name": "a.xml", "digest": "0" * 32}, {"name": "b.xml", "digest": "1" * 32}],
        "urls": {f"{BASE}/{key}": {"lastmod": "2024-05-01", "part": number} for key, number in V1_NUMBERS.items()}
        | {f"{BASE}/bool": {"lastmod": "2024-05-01", "part": True}},  # JSON's true is no part number
    }
    assert _v1_grouping(parts_from_v1(document, "s.json")) == [
        ("a.xml", ["in-0"]),
        ("b.xml", ["in-1"]),
        ("", ["bool", "negative", "none", "past-the-end", "text"]),
    ]


def test_format_1_rows_go_back_to_the_part_they_name_and_the_rest_to_an_unnamed_one(tmp_path: Path) -> None:
    from notifier.store.migrate import sqlite_parts_from_v1

    connection = sqlite3.connect(tmp_path / "s.sqlite")
    connection.executescript(
        """
        CREATE TABLE parts (id INTEGER PRIMARY KEY, name TEXT NOT NULL, digest TEXT NOT NULL);
        CREATE TABLE urls (loc TEXT PRIMARY KEY, lastmod TEXT, part INTEGER, fingerprint TEXT, first_seen TEXT, last_submitted TEXT);
        INSERT INTO parts VALUES (0, 'a.xml', '00000000000000000000000000000000'), (1, 'b.xml', '11111111111111111111111111111111');
        """
    )
    rows = [(f"{BASE}/{key}", "2024-05-01", number) for key, number in V1_NUMBERS.items()]
    connection.executemany("INSERT INTO urls VALUES (?, ?, ?, NULL, NULL, NULL)", rows)
    assert _v1_grouping(sqlite_parts_from_v1(connection, "s.sqlite")) == [
        ("a.xml", ["in-0"]),
        ("b.xml", ["in-1"]),
        ("", ["negative", "none", "past-the-end", "text"]),
    ]
    connection.close()


def test_a_large_pending_set_survives_an_sqlite_save(tmp_path: Path) -> None:
    from notifier.store import PendingItem, State
    from notifier.store.sqlite import SqliteStore

    item = PendingItem(reason="added", since="2024-02-01T00:00:00Z")
    older = PendingItem(reason="changed", since="2024-01-01T00:00:00Z")
    pending = {"http://e/": {"http://a.org/old": older} | {f"http://a.org/{n}": item for n in range(120_000)}}
    with SqliteStore(tmp_path / "s.sqlite") as store:
        store.save(State(pending=pending))
        store.record_delivered(store.load() or State(), "http://e/", ["http://a.org/old", "http://a.org/7"], "2024-03-01T00:00:00Z")
    loaded = read_state(tmp_path / "s.sqlite")
    assert loaded is not None and len(loaded.pending["http://e/"]) == 119_999
    assert list(loaded.pending["http://e/"])[:2] == ["http://a.org/0", "http://a.org/1"]
    assert loaded.pending["http://e/"]["http://a.org/5"] == item


def test_an_sqlite_load_saves_the_batches_it_folds_in(tmp_path: Path) -> None:
    """A killed run's acknowledged batches are rows of ``delivered``: the next load folds them
    into the pending set and saves that, so the journal does not grow run after run."""
    import sqlite3

    from notifier.store import PendingItem, State
    from notifier.store.sqlite import SqliteStore

    path = tmp_path / "s.sqlite"
    item = PendingItem(reason="added", since="2024-02-01T00:00:00Z")
    with SqliteStore(path) as store:
        store.save(State(pending={"http://e/": {f"http://a.org/{n}": item for n in range(3)}}))
        store.record_delivered(store.load() or State(), "http://e/", ["http://a.org/1"], "2024-03-01T00:00:00Z")

    def rows(table: str) -> int:
        with sqlite3.connect(path) as connection:
            return int(connection.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0])

    assert rows("delivered") == 1  # the journal, as a killed run leaves it
    with SqliteStore(path) as store:
        loaded = store.load()
    assert loaded is not None and list(loaded.pending["http://e/"]) == ["http://a.org/0", "http://a.org/2"]
    assert rows("delivered") == 0  # folded in and saved by the load itself


def test_every_backend_opens_a_store_that_is_the_one_contract(every_store: Site) -> None:
    """The Protocol is the contract the tests above hold each store to: every backend's store
    has each member ``contract.Store`` names, and one locked load-save-load round trips."""
    from notifier.store import Store, backend

    every_store.write(urlset(pages(3)))
    assert every_store.run().code == 0
    chosen = backend(every_store.state)
    store = chosen.open(lock_timeout=5.0)
    assert isinstance(store, Store)
    members = {name for name in vars(Store) if not name.startswith("_")} | {"__enter__", "__exit__"}
    assert {"load", "save", "record_delivered", "record_ledger", "shared_waits", "clear_waits"} <= members
    assert all(hasattr(type(store), name) for name in members)
    with store as held:
        state = held.load()
        assert state is not None and len(state.all_urls()) == 3
        held.save(state)
    again = chosen.read()
    assert again is not None and again.all_urls() == state.all_urls()


def test_one_factory_decides_the_backend_by_the_name_given(tmp_path: Path) -> None:
    """``backend`` decides once, by the name the user gave: a .sqlite or .db name is SQLite,
    any other name the JSON file (a link named .json to a .db file stays JSON), a database
    URL PostgreSQL."""
    from notifier.database import DatabaseURL
    from notifier.store import backend

    assert backend(tmp_path / "notify-changes.json").kind == "JSON"
    assert backend(tmp_path / "state").kind == "JSON"
    assert backend(tmp_path / "notify-changes.sqlite").kind == "SQLite"
    assert backend(tmp_path / "notify-changes.db").kind == "SQLite"
    (tmp_path / "real.db").write_bytes(b"")
    (tmp_path / "link.json").symlink_to(tmp_path / "real.db")
    assert backend(tmp_path / "link.json").kind == "JSON"
    assert backend(DatabaseURL("postgresql://localhost/db", site="shop")).kind == "PostgreSQL"


def test_the_postgresql_store_has_what_the_contract_says_and_no_file_stores_member() -> None:
    """PostgresStore inherited the file store's path, lock file and leftovers (#43 item 1)."""
    from notifier.store.contract import Store
    from notifier.store.jsonfile import JsonStore
    from notifier.store.postgres import PostgresStore

    contract = {name for name in dir(Store) if not name.startswith("_")}
    assert {name for name in dir(PostgresStore) if not name.startswith("_")} - contract == {"connection"}  # the lock's connection
    file_only = {"lock_path", "_remove_leftovers", "_tmp_prefix"}
    assert file_only <= set(dir(JsonStore)) and not file_only & set(dir(PostgresStore))
