"""The PostgreSQL store (issue #19) against a real server: the deploy loop, sites that never
mix, the structure checked on load, the advisory lock across processes, and the password
never shown."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from notifier.cli import main
from notifier.database import DatabaseURL, without_password
from notifier.store import read_state
from tests.conftest import BASE, KEY, Site, pages, program, run_records, urlset
from tests.fakeindexnow import FakeIndexNow
from tests.test_sites import DOCS, _grow, _monorepo

psycopg = pytest.importorskip("psycopg")


def _run(site: Site, url: str, name: str, *args: str, command: str = "run") -> tuple[int, str, str]:
    site.state = url  # type: ignore[assignment]  # Site passes it as --state
    result = site.run("--site-name", name, *args, command=command)
    return result.code, result.out, result.err


def test_the_deploy_loop_against_postgresql(site: Site, pg_url: str) -> None:
    assert site.fake is not None
    site.write(urlset(pages(3)))
    code, out, _ = _run(site, pg_url, "shop")
    assert code == 0 and out.startswith("3 added"), out  # a baseline, recorded in the database
    assert "recorded a baseline of 3 URLs and submitted nothing; the next run announces what changed" in out
    assert "state file" not in out  # a database keeps itself: no file to keep between deploys
    state = read_state(DatabaseURL(pg_url, site="shop"))
    assert state is not None and len(state.all_urls()) == 3
    site.write(urlset(pages(5)))
    code, out, _ = _run(site, pg_url, "shop", "--batch-size", "1")
    assert code == 0 and out.startswith("2 added, 0 changed, 0 removed, 2 submitted, 0 pending"), out
    assert site.fake.delivered() == [f"{BASE}/p/3/", f"{BASE}/p/4/"]
    code, out, _ = _run(site, pg_url, "shop")
    assert code == 0 and len(site.fake.posts) == 2  # a rerun: nothing new
    with psycopg.connect(pg_url) as connection:
        rows = connection.execute("SELECT count(*) FROM notify_changes_parts WHERE site = 'shop'").fetchone()
        assert rows == (1,)  # one row per sitemap file, holding its URLs' records


def test_two_sites_in_one_database_never_mix(site: Site, pg_url: str) -> None:
    site.write(urlset(pages(3)))
    assert _run(site, pg_url, "shop")[0] == 0
    site.write(urlset(pages(1)))  # another site's sitemap: its own rows, no mass removal of shop's
    code, out, _ = _run(site, pg_url, "blog", command="check")
    assert code == 0 and out.startswith("1 added, 0 changed, 0 removed"), out
    shop = read_state(DatabaseURL(pg_url, site="shop"))
    assert shop is not None and len(shop.all_urls()) == 3
    assert read_state(DatabaseURL(pg_url, site="blog")) is None


def test_a_postgresql_state_needs_a_site_name(site: Site, pg_url: str) -> None:
    site.write(urlset(pages(1)))
    site.state = pg_url  # type: ignore[assignment]
    result = site.run()
    assert result.code == 2 and "a PostgreSQL state holds many sites; name this one with --site-name NAME" in result.err


def test_check_and_a_dry_run_write_nothing(site: Site, pg_url: str) -> None:
    site.write(urlset(pages(2)))
    assert _run(site, pg_url, "shop", command="check")[0] == 0
    assert _run(site, pg_url, "shop", "--dry-run")[0] == 0
    with psycopg.connect(pg_url) as connection:
        found = connection.execute("SELECT count(*) FROM information_schema.tables WHERE table_name LIKE 'notify_changes_%'").fetchone()
    assert found == (0,)  # not even the tables


def test_a_wrong_column_or_a_newer_schema_is_exit_2_and_nothing_touched(site: Site, pg_url: str) -> None:
    site.write(urlset(pages(2)))
    assert _run(site, pg_url, "shop")[0] == 0
    with psycopg.connect(pg_url, autocommit=True) as connection:
        connection.execute("ALTER TABLE notify_changes_runs RENAME COLUMN record TO entry")
        before = connection.execute("SELECT count(*) FROM notify_changes_parts").fetchone()
    code, _, err = _run(site, pg_url, "shop")
    assert code == 2 and "table notify_changes_runs has the columns ['entry', 'id', 'site'], not ['site', 'id', 'record']" in err, err
    with psycopg.connect(pg_url, autocommit=True) as connection:
        connection.execute("ALTER TABLE notify_changes_runs RENAME COLUMN entry TO record")
        connection.execute("INSERT INTO notify_changes_schema VALUES (99)")
        assert connection.execute("SELECT count(*) FROM notify_changes_parts").fetchone() == before
    code, _, err = _run(site, pg_url, "shop")
    assert code == 2 and "newer than this notify-changes knows" in err and "nothing was changed" in err, err


def test_a_second_run_of_the_site_waits_then_exits_4_and_other_sites_go_on(site: Site, pg_url: str) -> None:
    """The lock is the site's advisory lock: held here by another connection, as a run on
    another machine holds it; a run of another site in the same database is not held up."""
    site.write(urlset(pages(2)))
    assert _run(site, pg_url, "shop")[0] == 0
    with psycopg.connect(pg_url, autocommit=True) as holder:
        holder.execute("SELECT pg_advisory_lock(hashtextextended('notify-changes:shop', 0))")
        code, _, err = _run(site, pg_url, "shop", "--lock-timeout", "0.3")
        assert code == 4 and "another notify-changes run of this site holds its lock after waiting 0.3 s" in err, err
        assert _run(site, pg_url, "blog", "--lock-timeout", "0.3")[0] == 0
    assert _run(site, pg_url, "shop", "--lock-timeout", "0.3")[0] == 0  # released with its connection


def test_a_killed_runner_releases_the_lock_with_its_connection(site: Site, pg_url: str) -> None:
    site.write(urlset(pages(2)))
    assert _run(site, pg_url, "shop")[0] == 0
    with subprocess.Popen([sys.executable, "-c", _HOLD, pg_url], stdout=subprocess.PIPE, text=True) as holder:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        assert _run(site, pg_url, "shop", "--lock-timeout", "0.2")[0] == 4
        holder.kill()  # kill -9: its connection drops, and the lock with it
    code, _, err = _run(site, pg_url, "shop", "--lock-timeout", "30")
    assert code == 0, err


_HOLD = """
import sys, time, psycopg
connection = psycopg.connect(sys.argv[1], autocommit=True)
connection.execute("SELECT pg_advisory_lock(hashtextextended('notify-changes:shop', 0))")
print("locked", flush=True)
time.sleep(3600)
"""


def test_the_password_is_never_printed(site: Site, pg_server: str) -> None:
    site.write(urlset(pages(1)))
    secret_url = "postgresql://notify:s3cr3t-pass@127.0.0.1:1/nowhere?connect_timeout=1&password=s3cr3t-pass"
    code, out, err = _run(site, secret_url, "shop", command="check")
    assert code == 2 and "cannot connect to the PostgreSQL state" in err, err
    assert "s3cr3t-pass" not in out + err and "postgresql://notify@127.0.0.1:1/nowhere?connect_timeout=1 (site shop)" in err
    assert without_password("postgresql://u:p@h:5432/d?sslmode=require&password=p") == "postgresql://u@h:5432/d?sslmode=require"
    assert "s3cr3t-pass" not in repr(DatabaseURL(secret_url, site="shop"))  # a settings repr, a crash log


def test_without_the_driver_a_postgresql_state_says_what_to_install(site: Site, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "psycopg", None)  # as if it were not installed
    site.write(urlset(pages(1)))
    code, _, err = _run(site, "postgresql://localhost/x", "shop", command="check")
    assert code == 2 and "pip install 'notify-changes[postgres]'" in err, err


def test_the_state_commands_read_postgresql(site: Site, pg_url: str) -> None:
    site.write(urlset(pages(2)))
    assert _run(site, pg_url, "shop")[0] == 0
    done = subprocess.run(
        [*program(), "state", "show", "--state", pg_url, "--site-name", "shop", "--format", "json"],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "INDEXNOW_KEY": KEY},
    )
    assert done.returncode == 0, done.stderr
    shown = json.loads(done.stdout)
    assert shown["urls"] == 2 and shown["store"] == "postgresql" and shown["state"].endswith("(site shop)"), shown


# -- the kill, cancel and concurrency tests run on PostgreSQL too: tests/test_crashes.py (any_store) --
def _pg_site(site: Site, pg_url: str) -> Site:
    site.state = DatabaseURL(pg_url, site="shop")  # type: ignore[assignment]
    return site


def test_a_run_that_changed_one_part_of_five_reads_and_writes_that_part_only(
    site: Site, pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The parts' records stay in their rows until the run needs them, and a save keeps the
    row of every part it did not touch: the everyday deploy moves one part's bytes."""
    import notifier.store.postgres as postgres
    from tests.conftest import index

    site = _pg_site(site, pg_url)
    site.write(index({f"/part-{n}.xml": None for n in range(5)}))
    for n in range(5):
        site.write(urlset(pages(3, prefix=f"/s{n}/")), f"part-{n}.xml")
    assert site.run().code == 0
    fetched: list[int] = []
    real_blob, real_save = postgres._blob, postgres.PostgresStore._save_parts

    def counting_blob(connection: object, location: DatabaseURL) -> object:
        fetch = real_blob(connection, location)  # type: ignore[arg-type]

        def counted(row: int) -> bytes:
            fetched.append(row)
            return fetch(row)

        return counted

    kept: list[int] = []

    def counting_save(store: postgres.PostgresStore, state: object) -> list[tuple[object, int]]:
        result = real_save(store, state)  # type: ignore[arg-type]
        kept.append(len(result))
        return result  # type: ignore[return-value]

    monkeypatch.setattr(postgres, "_blob", counting_blob)
    monkeypatch.setattr(postgres.PostgresStore, "_save_parts", counting_save)
    site.write(urlset(pages(4, prefix="/s4/")), "part-4.xml")  # one page more, in the last part
    result = site.run()
    assert result.code == 0 and result.out.startswith("1 added"), result.out
    assert fetched == [4]  # the changed part's records, and no other's
    assert kept and all(count == 4 for count in kept)  # every save kept the four untouched rows
    state = read_state(DatabaseURL(pg_url, site="shop"))
    assert state is not None and len(state.all_urls()) == 16


def test_sites_of_one_config_share_one_database_each_under_its_own_name(
    tmp_path: Path, fake: FakeIndexNow, capsys: pytest.CaptureFixture[str], pg_url: str
) -> None:
    """[[sites]] with one PostgreSQL state at the top: each site's rows carry its name (the
    site-name defaults to the site's), and the lying site leaves its rows as they were."""
    config = _monorepo(tmp_path, fake)
    text = config.read_text().replace('state = "state/docs.json"\n', "").replace('state = "state/blog.json"\n', "")
    config.write_text(f'state = "{pg_url}"\n' + text)
    assert main(["run", "--config", str(config), "--key", KEY]) == 0
    docs, blog = (read_state(DatabaseURL(pg_url, site=name)) for name in ("docs", "blog"))
    assert docs is not None and blog is not None
    assert set(docs.all_urls()) == {f"{DOCS}/p/{n}/" for n in range(3)} and set(blog.all_urls()) == {f"{BASE}/p/{n}/" for n in range(3)}
    with psycopg.connect(pg_url) as connection:
        before = connection.execute("SELECT site, n, urls FROM notify_changes_parts WHERE site = 'blog'").fetchall()
    capsys.readouterr()
    _grow(tmp_path, lie=True)
    assert main(["run", "--config", str(config), "--key", KEY]) == 1
    assert fake.delivered() == [f"{DOCS}/p/3/"]
    with psycopg.connect(pg_url) as connection:
        assert connection.execute("SELECT site, n, urls FROM notify_changes_parts WHERE site = 'blog'").fetchall() == before
    docs = read_state(DatabaseURL(pg_url, site="docs"))
    assert docs is not None and f"{DOCS}/p/3/" in docs.all_urls()


# -- the store itself (decisions a deploy relies on, each stated once) ----------------------
def test_the_tables_are_made_at_schema_version_1_and_a_newer_site_format_is_refused(pg_url: str) -> None:
    from notifier.errors import StateError
    from notifier.store import State
    from notifier.store.postgres import PostgresStore

    location = DatabaseURL(pg_url, site="shop")
    with PostgresStore(location) as store:
        store.save(State.from_urls({f"{BASE}/a/": ["2024-01-01", "2024-01-01T00:00:00Z", None]}))
    with psycopg.connect(pg_url, autocommit=True) as connection:
        assert connection.execute("SELECT version FROM notify_changes_schema").fetchall() == [(1,)]  # the documented schema
        connection.execute("UPDATE notify_changes_meta SET value = '99' WHERE site = 'shop' AND key = 'version'")
    with pytest.raises(StateError, match="newer"):
        read_state(location)


def test_a_driver_error_is_said_in_its_first_line() -> None:
    from notifier.store.server import reason

    where = DatabaseURL("postgresql://u:pw-1234@h/d")
    assert reason(Exception("connection refused\n\tIs the server running on that host?"), where) == "connection refused"
    assert reason(Exception("one line"), where) == "one line"
    assert reason(Exception(""), where) == "Exception"
    assert reason(Exception('invalid percent-encoded token: "pw-1234"'), where) == 'invalid percent-encoded token: "•••"'


def test_a_reader_sees_one_snapshot_while_a_run_saves(pg_url: str) -> None:
    """``check`` reads a part's records when it first needs them: a run that saved meanwhile
    is not mixed in (the reader holds one repeatable-read snapshot)."""
    from notifier.store import RecordedPart, State
    from notifier.store.postgres import PostgresStore

    location = DatabaseURL(pg_url, site="shop")
    old = {f"{BASE}/a/": ["2024-01-01", "2024-01-01T00:00:00Z", None]}
    with PostgresStore(location) as store:
        store.save(State(parts=[RecordedPart("sitemap.xml", "0" * 32, dict(old))]))
    reader = read_state(location)
    assert reader is not None and not reader.parts[0].decoded  # its records still in the row
    with PostgresStore(location) as store:
        store.save(State(parts=[RecordedPart("sitemap.xml", "1" * 32, {f"{BASE}/a/": ["2030-01-01", "2024-01-01T00:00:00Z", None]})]))
    assert dict(reader.parts[0].urls()) == old


def test_a_second_run_waits_for_the_sites_lock_a_twentieth_of_a_second_at_a_time_then_gives_up(pg_url: str) -> None:
    from notifier.errors import LockTimeout
    from notifier.store.postgres import PostgresStore

    location = DatabaseURL(pg_url, site="shop")
    times = iter([0.0, 0.0, 30.0, 60.0, 90.0])  # the deadline is 60 s after the first
    slept: list[float] = []
    with PostgresStore(location):
        waiting = PostgresStore(location, lock_timeout=60.0, clock=lambda: next(times), sleep=slept.append)
        with pytest.raises(LockTimeout, match="holds its lock after waiting 60 s"):
            waiting.acquire()
    assert slept == [0.05, 0.05]  # at 0 and 30 s; at 60 s the wait is over
    with PostgresStore(location, lock_timeout=0.0):  # the first let go: no wait at all
        pass


def test_a_killed_runs_acknowledged_batches_are_folded_in_and_saved_on_load(pg_url: str) -> None:
    from notifier.store import PendingItem, State
    from notifier.store.postgres import PostgresStore

    location = DatabaseURL(pg_url, site="shop")
    item = PendingItem(reason="added", since="2024-01-01T00:00:00Z")
    with PostgresStore(location) as store:
        store.save(State(pending={"http://e/": {f"{BASE}/{n}": item for n in range(3)}}))
        store.record_delivered(State(), "http://e/", [f"{BASE}/0", f"{BASE}/1"], "2024-01-02T00:00:00Z")  # then the run was killed
    assert list((read_state(location) or State()).pending["http://e/"]) == [f"{BASE}/2"]  # a reader sees the delivery
    with PostgresStore(location) as store:
        loaded = store.load()
    assert loaded is not None and list(loaded.pending["http://e/"]) == [f"{BASE}/2"]
    with psycopg.connect(pg_url) as connection:
        assert connection.execute("SELECT count(*) FROM notify_changes_delivered").fetchone() == (0,)  # folded in, saved


def test_a_save_keeps_the_newest_runs_and_drops_waits_that_are_over(pg_url: str) -> None:
    from notifier.store import MAX_RUNS_KEPT, State
    from notifier.store.postgres import PostgresStore

    location = DatabaseURL(pg_url, site="shop")
    with PostgresStore(location) as store:
        store.save(
            State(runs=run_records(MAX_RUNS_KEPT + 5), backoff={"http://e/": "2024-01-01T00:00:00Z"}, updated="2024-01-01T00:00:00Z")
        )
        store.save(State(updated="2024-01-02T00:00:00Z"))  # a day after the endpoint's wait ended
    with psycopg.connect(pg_url) as connection:
        assert connection.execute("SELECT count(*) FROM notify_changes_backoff").fetchone() == (0,)
    with PostgresStore(location) as store:
        store.save(State(runs=run_records(MAX_RUNS_KEPT + 5)))
    state = read_state(location)
    assert state is not None and [run["added"] for run in state.runs] == list(range(5, MAX_RUNS_KEPT + 5))


def test_a_delivered_row_naming_something_else_than_urls_is_damage(pg_url: str) -> None:
    from notifier.errors import StateError
    from notifier.store import State
    from notifier.store.postgres import PostgresStore

    location = DatabaseURL(pg_url, site="shop")
    with PostgresStore(location) as store:
        store.save(State())
    with psycopg.connect(pg_url, autocommit=True) as connection:
        connection.execute(
            "INSERT INTO notify_changes_delivered (site, endpoint, at, urls) VALUES ('shop', 'http://e/', '2024-01-01T00:00:00Z', %s)",
            ('["http://a/", 5]',),
        )
    with pytest.raises(StateError, match=r"damaged|malformed|delivered"):
        read_state(location)


def test_runners_starting_at_once_on_a_new_database_make_its_tables_one_at_a_time(pg_url: str) -> None:
    """Two runners' first runs may meet on an empty database: the one that makes the tables holds
    a lock the other waits on, so the second never sees them half made (CREATE ... IF NOT EXISTS
    of one table at once from two sessions can fail on PostgreSQL's catalog)."""
    import threading

    from notifier.store.postgres import _CREATING, PostgresStore

    location = DatabaseURL(pg_url, site="shop")
    done = threading.Event()
    failed: list[BaseException] = []

    def first_run() -> None:
        try:
            with PostgresStore(location):
                pass
        except BaseException as error:  # reported below, by the test's own thread
            failed.append(error)
        finally:
            done.set()

    waiting_query = "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted"
    with psycopg.connect(pg_url, autocommit=True) as other:  # a runner busy making them
        other.execute("SELECT pg_advisory_lock(%s)", (_CREATING,))
        runner = threading.Thread(target=first_run)
        runner.start()
        seen_waiting = False
        while not done.is_set() and not seen_waiting:  # until it waits, or (wrongly) goes on without waiting
            seen_waiting = other.execute(waiting_query).fetchone() != (0,)
        tables = other.execute("SELECT count(*) FROM information_schema.tables WHERE table_name LIKE 'notify_changes_%'").fetchone()
        other.execute("SELECT pg_advisory_unlock(%s)", (_CREATING,))
    runner.join()
    assert seen_waiting and tables == (0,), (seen_waiting, tables)  # it waited, and made nothing meanwhile
    assert failed == []
    with psycopg.connect(pg_url) as connection:
        assert connection.execute("SELECT version FROM notify_changes_schema").fetchall() == [(1,)]
