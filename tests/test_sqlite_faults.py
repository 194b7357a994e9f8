"""The SQLite state under faults (#16): a run killed mid-save leaves a hot journal that the
next open rolls back; a database another program holds is busy, not damaged; and a batch
an endpoint acknowledged but that could not be recorded is exit 5, never "move it away"."""

from __future__ import annotations

import contextlib
import signal
import subprocess
import sys
import textwrap
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from notifier.cli import main
from notifier.store import read_state
from tests.conftest import BASE, Site, pages, urlset

KILLED_MID_SAVE = textwrap.dedent(
    """
    import sqlite3, sys, time
    connection = sqlite3.connect(sys.argv[1], isolation_level=None)
    connection.execute("PRAGMA cache_size = 1")  # the changed pages reach the file: the journal is hot
    connection.execute("BEGIN IMMEDIATE")
    connection.execute("DELETE FROM parts")
    connection.execute("DELETE FROM pending")
    print("mid-save", flush=True)
    time.sleep(120)
    """
)

HOLDER = textwrap.dedent(
    """
    import sqlite3, sys
    connection = sqlite3.connect(sys.argv[1], isolation_level=None)
    connection.execute("BEGIN")
    connection.execute("SELECT count(*) FROM parts").fetchall()  # a reader's SHARED lock, held
    print("holding", flush=True)
    sys.stdin.readline()
    connection.execute("COMMIT")
    """
)


@pytest.fixture
def sqlite_site(site: Site) -> Site:
    site.state = site.root / "state" / "st.sqlite"
    return site


@contextlib.contextmanager
def held(path: Path) -> Iterator[subprocess.Popen[str]]:
    """Another program reading the database (a SHARED lock), until it is let go (a line on
    its stdin) or the block ends."""
    process = subprocess.Popen([sys.executable, "-c", HOLDER, str(path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None and process.stdout.readline() == "holding\n"
        yield process
    finally:
        if process.poll() is None:
            process.kill()
        process.communicate()


def _let_go(reader: subprocess.Popen[str]) -> None:
    assert reader.stdin is not None
    reader.stdin.write("\n")
    reader.stdin.flush()


def _pending_run(site: Site) -> None:
    """A recorded site whose next deploy adds pages, left pending by an endpoint that was down."""
    site.write(urlset(pages(3)))
    assert site.run().code == 0
    site.write(urlset(pages(6)))
    assert site.run("--endpoint", "http://127.0.0.1:9/indexnow", "--retry-timeout", "0").code == 3


def test_a_run_killed_mid_save_leaves_a_journal_the_next_open_rolls_back(sqlite_site: Site, capsys: pytest.CaptureFixture[str]) -> None:
    _pending_run(sqlite_site)
    before = read_state(sqlite_site.state)
    assert before is not None and sum(len(items) for items in before.pending.values()) == 3
    writer = subprocess.Popen([sys.executable, "-c", KILLED_MID_SAVE, str(sqlite_site.state)], stdout=subprocess.PIPE, text=True)
    assert writer.stdout is not None and writer.stdout.readline() == "mid-save\n"
    writer.send_signal(signal.SIGKILL)
    writer.communicate()
    journal = sqlite_site.state.with_name("st.sqlite-journal")
    assert journal.stat().st_size > 0  # hot: SQLite refuses a read-only reader until it is rolled back
    capsys.readouterr()
    assert main(["state", "show", "--state", str(sqlite_site.state)]) == 0, capsys.readouterr().err
    assert not journal.exists()  # rolled back by the first open
    after = read_state(sqlite_site.state)
    assert after is not None and after.pending == before.pending  # the state before the killed save, whole
    assert sqlite_site.check().code == 0
    result = sqlite_site.run()
    assert result.code == 0, result.err
    assert sqlite_site.fake is not None and sorted(sqlite_site.fake.delivered()) == [f"{BASE}/p/{n}/" for n in (3, 4, 5)]


@pytest.mark.parametrize("command", ["check", "state"])
def test_every_command_reads_past_a_hot_journal(sqlite_site: Site, command: str, capsys: pytest.CaptureFixture[str]) -> None:
    sqlite_site.write(urlset(pages(3)))
    assert sqlite_site.run().code == 0
    writer = subprocess.Popen([sys.executable, "-c", KILLED_MID_SAVE, str(sqlite_site.state)], stdout=subprocess.PIPE, text=True)
    assert writer.stdout is not None and writer.stdout.readline() == "mid-save\n"
    writer.send_signal(signal.SIGKILL)
    writer.communicate()
    capsys.readouterr()
    argv = ["check", str(sqlite_site.sitemap)] if command == "check" else ["state", "export"]
    assert main([*argv, "--state", str(sqlite_site.state)]) == 0
    captured = capsys.readouterr()
    assert "not a readable" not in captured.err and captured.err == ""


@pytest.mark.slow
def test_a_database_another_program_holds_is_busy_not_damaged(sqlite_site: Site) -> None:
    """The endpoint said 200; the delivery could not be written while a reader held the file:
    exit 5 (something was sent, not all of it recorded), the report says what was delivered,
    the batch stays pending, the message names the cause."""
    sqlite_site.write(urlset(pages(3)))
    assert sqlite_site.run().code == 0
    sqlite_site.write(urlset(pages(5)))
    assert sqlite_site.fake is not None
    with contextlib.ExitStack() as stack:
        # a reader takes the file once the run has saved what it will send, before the answer
        def hold(record: object) -> None:
            stack.enter_context(held(sqlite_site.state))

        sqlite_site.fake.on_post = hold
        result = sqlite_site.run("--lock-timeout", "0.5")
    assert result.code == 5, result.err
    assert result.out.startswith("2 added, 0 changed, 0 removed, 2 submitted, 2 pending\n"), result.out
    assert "acknowledged a batch of 2 URLs, but it could not be recorded (database is locked: another program holds" in result.out
    assert "not a readable" not in result.out + result.err and "move it away" not in result.out + result.err
    state = read_state(sqlite_site.state)
    assert state is not None and sorted(next(iter(state.pending.values()))) == [f"{BASE}/p/3/", f"{BASE}/p/4/"]  # sent again next
    sqlite_site.fake.on_post = None
    assert sqlite_site.run().code == 0


def test_a_reader_during_the_submission_is_waited_for(sqlite_site: Site) -> None:
    sqlite_site.write(urlset(pages(3)))
    assert sqlite_site.run().code == 0
    sqlite_site.write(urlset(pages(5)))
    assert sqlite_site.fake is not None
    with contextlib.ExitStack() as stack:
        readers: list[subprocess.Popen[str]] = []
        sqlite_site.fake.on_post = lambda record: readers.append(stack.enter_context(held(sqlite_site.state)))
        # it lets go once the endpoint has answered: the delivery's write waits for it, not fails
        sqlite_site.fake.after_answer = lambda record: threading.Thread(target=_let_go, args=(readers[0],)).start()
        result = sqlite_site.run()
    assert result.code == 0, result.err
    state = read_state(sqlite_site.state)
    assert state is not None and not any(state.pending.values())


def test_a_damaged_file_still_says_restore_it(sqlite_site: Site, tmp_path: Path) -> None:
    sqlite_site.write(urlset(pages(2)))
    sqlite_site.state.parent.mkdir(parents=True)
    sqlite_site.state.write_bytes(b"SQLite format 3\x00" + b"\x07" * 4000)
    before = sqlite_site.state_bytes()
    result = sqlite_site.run()
    assert result.code == 2 and "restore" in result.err and result.err.count("\n") == 1
    assert sqlite_site.state_bytes() == before
