"""No PostgreSQL server holds a deploy for good (issue #39 items 6, 10, 14), against the real
server the suite starts: a session holding a lock on the state's tables ends the run by
``--lock-timeout`` with exit 4; a server that stops answering (SIGSTOP: it accepts, and
its kernel acknowledges, but nothing answers) ends it with exit 2 and one line naming what
did not answer; a cancel while it does not answer ends the run at once. A connection the
server drops mid-run and a URI libpq cannot parse are state errors, never exit 70. A
missing ledger table is made again and the run goes on."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from notifier.cli import INTERRUPTED
from notifier.database import DatabaseURL
from tests.conftest import KEY, Site, pages, program, program_python, urlset
from tests.fakeindexnow import wait_until

psycopg = pytest.importorskip("psycopg")

SITE = "shop"
ENOUGH = 60  # seconds a child process is given before the test calls it hung (a bound, never asserted on)


def _use(site: Site, pg_url: str) -> Site:
    site.state = DatabaseURL(pg_url, site=SITE)  # type: ignore[assignment]
    return site


def _recorded(site: Site, pg_url: str, count: int = 2) -> None:
    _use(site, pg_url).write(urlset(pages(count)))
    result = site.run()
    assert result.code == 0, result


def _backends(pg_url: str) -> list[int]:
    """The server processes serving notify-changes connections now."""
    with psycopg.connect(pg_url, autocommit=True) as connection:
        rows = connection.execute(  # this test's database only: another process's tests may be running on the server
            "SELECT pid FROM pg_stat_activity WHERE application_name = 'notify-changes' AND datname = current_database()"
        ).fetchall()
    return [pid for (pid,) in rows]


def _postmaster(pg_url: str) -> int:
    """The server's postmaster, the parent of every backend (the suite's server runs on this machine)."""
    with psycopg.connect(pg_url, autocommit=True) as connection:  # read while the backend lives: it ends with the connection
        (backend,) = connection.execute("SELECT pg_backend_pid()").fetchone()
        try:
            stat = Path(f"/proc/{backend}/stat").read_text()
        except OSError:
            pytest.skip("the PostgreSQL server does not run on this machine: it cannot be stopped from here")
    return int(stat.rpartition(")")[2].split()[1])


@contextlib.contextmanager
def _stopped(pid: int) -> Iterator[None]:
    """``pid`` stopped (SIGSTOP) for the block, and always let go after."""
    os.kill(pid, signal.SIGSTOP)
    try:
        yield
    finally:
        os.kill(pid, signal.SIGCONT)


# x86-64 and arm64 system call numbers of the waits for a socket (poll, select, epoll and their
# p-forms): what the driver's wait for an answer sits in; time.sleep is clock_nanosleep
_SOCKET_WAITS = {"x86_64": {7, 23, 232, 270, 271, 281, 441}, "aarch64": {22, 72, 73, 441}}


def _waiting_for_the_server(pid: int) -> bool:
    """Whether the main thread of ``pid`` sits in a wait for a socket (``/proc/PID/syscall``)."""
    waits = _SOCKET_WAITS.get(os.uname().machine)
    if waits is None:
        pytest.skip(f"no system call numbers known for {os.uname().machine}")
    try:
        number = Path(f"/proc/{pid}/syscall").read_text().split()[0]
    except (OSError, IndexError):
        return False
    return number.isdigit() and int(number) in waits


@contextlib.contextmanager
def _site_lock_held(pg_url: str) -> Iterator[None]:
    """The site's advisory lock held by another session: a run waits for it, polling the server."""
    with psycopg.connect(pg_url, autocommit=True) as holder:
        holder.execute("SELECT pg_advisory_lock(hashtextextended(%s, 0))", (f"notify-changes:{SITE}",))
        yield


# the program, with what the driver logs shown on stderr: a cancel request it sends and waits
# for says so ("query not terminated after cancellation"), which the program never shows
_WITH_THE_DRIVERS_LOG = "import logging, sys; logging.basicConfig(); from notifier._launch import main; sys.exit(main())"


def _start(site: Site, *args: str, drivers_log: bool = False) -> subprocess.Popen[str]:
    start = [program_python(), "-c", _WITH_THE_DRIVERS_LOG] if drivers_log else program()
    argv = [*start, "run", str(site.sitemap), *site.state_args, "--key", KEY, *args]
    if site.fake is not None:
        argv += ["--endpoint", site.fake.endpoint]
    return subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env={**os.environ, "NO_COLOR": "1"})


def _ended(process: subprocess.Popen[str]) -> tuple[int, str, str]:
    try:
        out, err = process.communicate(timeout=ENOUGH)
    except subprocess.TimeoutExpired:
        process.kill()
        out, err = process.communicate()
        pytest.fail(f"the run never ended: {err}")
    return process.returncode, out, err


# -- item 6: every wait for the server is bounded ------------------------------------------------
def test_a_session_holding_a_table_lock_ends_the_run_by_lock_timeout_with_exit_4(site: Site, pg_url: str) -> None:
    """A session (a migration, a dump, a hand-run ``LOCK TABLE``) holds the state's tables:
    the run's statement gives up on the server after --lock-timeout, exit 4, one line."""
    _recorded(site, pg_url)
    site.write(urlset(pages(3)))
    with psycopg.connect(pg_url) as holder:  # a transaction, open until the block ends
        holder.execute("LOCK TABLE notify_changes_parts IN ACCESS EXCLUSIVE MODE")
        code, _, err = _ended(_start(site, "--lock-timeout", "0.5"))
    assert code == 4, err
    assert err.count("\n") == 1 and "another PostgreSQL session holds a lock on the state's tables after waiting 0.5 s" in err
    assert site.run().code == 0  # let go: the run goes through


def test_a_server_that_accepts_and_never_answers_a_connection_is_exit_2_in_one_line(site: Site, pg_alone: str) -> None:
    """The postmaster stopped: the kernel takes the connection, no one answers it; the
    connection is given up after --request-timeout (libpq's connect_timeout)."""
    _recorded(site, pg_alone)
    with _stopped(_postmaster(pg_alone)):
        code, _, err = _ended(_start(site, "--request-timeout", "2"))
    assert code == 2, err
    assert err.count("\n") == 1 and "cannot connect to the PostgreSQL state" in err and "timeout" in err, err


def test_a_server_that_stops_answering_mid_run_is_exit_2_naming_what_did_not_answer(site: Site, pg_url: str) -> None:
    """The run's own backend stopped while the run waits for the site's lock: its next
    statement gets no answer, and the run ends by its bound with one line saying so."""
    _recorded(site, pg_url)
    with _site_lock_held(pg_url):
        process = _start(site, "--lock-timeout", "3", "--request-timeout", "1")
        assert wait_until(lambda: _backends(pg_url), timeout=ENOUGH), "the run never connected"
        (backend,) = _backends(pg_url)
        with _stopped(backend):
            code, _, err = _ended(process)
    assert code == 2, err
    *before, last = err.splitlines()
    assert all("wait" in line for line in before) and len(before) <= 1, err  # at most the lock wait, said once
    assert last.startswith("notify-changes: error: ") and "the PostgreSQL server did not answer within 5 s" in last, err


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_cancel_while_the_server_does_not_answer_ends_the_run_at_once(site: Site, pg_url: str, signum: int) -> None:
    """The bound is far away (--lock-timeout 3000: the server is given 50 minutes); a cancel
    ends the run now, exit 130, with its own line only: no cancel request to a server that
    will never confirm it, no line of the driver's."""
    _recorded(site, pg_url)
    with _site_lock_held(pg_url):
        process = _start(site, "--lock-timeout", "3000", "--request-timeout", "2", drivers_log=True)
        assert wait_until(lambda: _backends(pg_url), timeout=ENOUGH), "the run never connected"
        (backend,) = _backends(pg_url)
        with _stopped(backend):
            # the cancel comes while the run waits for an answer that never comes (not between two polls of the lock)
            assert wait_until(lambda: _waiting_for_the_server(process.pid), timeout=ENOUGH), "the run never waited for the server"
            process.send_signal(signum)
            code, _, err = _ended(process)
    assert code == 130, err
    lines = err.splitlines()
    assert lines[-1] + "\n" == INTERRUPTED and all("wait" in line for line in lines[:-1]) and len(lines) <= 2, err
    assert "did not answer" not in err  # the cancel ended it, not the bound
