"""Crashes, cancels and concurrent deploys, done for real to real processes.

The promise: every changed URL is announced at least once; a URL is re-sent only when a
crash left its batch unacknowledged; the state file is never torn, mixed or reset.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from notifier.store import JsonStore, decode_state, read_state
from tests.conftest import BASE, KEY, Site, pages, program, recorded_pending, recorded_urls, urlset
from tests.fakeindexnow import hang, status, wait_until

pytestmark = pytest.mark.program

CHANGED = "2024-07-{day:02d}T10:{minute:02d}:00Z"


_spawned: list[subprocess.Popen[str]] = []


@pytest.fixture(autouse=True)
def _no_process_outlives_its_test() -> Iterator[None]:
    """A failed assertion must not leave a run behind: its pipes would be reported
    (ResourceWarning, an error under -W error) in whichever test runs next."""
    yield
    while _spawned:
        process = _spawned.pop()
        if process.poll() is None:
            process.kill()
        process.communicate()


@pytest.fixture(params=["json", "postgresql"])
def any_store(site: Site, request: pytest.FixtureRequest) -> Site:
    """The site with a JSON state, or a PostgreSQL one (a real server, tests/postgres.py)."""
    if request.param == "postgresql":
        from notifier.database import DatabaseURL

        site.state = DatabaseURL(request.getfixturevalue("pg_url"), site="shop")  # type: ignore[assignment]
    return site


def _readable(site: Site) -> None:
    """The state reads whole: a JSON file never torn, a database site's rows never half-written."""
    if isinstance(site.state, Path):
        decode_state(site.state.read_bytes(), "state")
    else:
        assert read_state(site.state) is not None


def spawn(site: Site, *args: str) -> subprocess.Popen[str]:
    assert site.fake is not None
    env = dict(os.environ, INDEXNOW_KEY=KEY)
    argv = [*program(), str(site.sitemap), *site.state_args, "--endpoint", site.fake.endpoint]
    process = subprocess.Popen([*argv, *args], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    _spawned.append(process)
    return process


def finish(process: subprocess.Popen[str], timeout: float = 120) -> tuple[int, str, str]:
    """The process's end. The timeout only keeps a broken test from hanging: it is never what a
    test measures, and a process left behind is killed (no ResourceWarning in a later test)."""
    try:
        out, err = process.communicate(timeout=timeout)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    return process.returncode, out, err


def kill(process: subprocess.Popen[str]) -> None:
    if process.poll() is None:
        process.send_signal(signal.SIGKILL)
    process.communicate(timeout=10)


def changed_site(site: Site, count: int) -> list[str]:
    """Record ``count`` pages, then change them all; returns the changed URLs in order."""
    site.write(urlset(pages(count)))
    assert site.run().code == 0
    site.write(urlset(pages(count, lastmod=CHANGED)))
    return [f"{BASE}/p/{n}/" for n in range(count)]


def batches_sent(site: Site) -> list[list[str]]:
    assert site.fake is not None
    return [post.json["urlList"] for post in site.fake.posts if post.answer in (200, 202)]


# -- the state file under SIGKILL ------------------------------------------------------------
WRITER = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from notifier.store import JsonStore, State, new_record
    path, start = Path(sys.argv[1]), int(sys.argv[2])
    with JsonStore(path) as store:
        for version in range(start, start + 1000):
            urls = {f"https://www.shop-site.org/page/{n}/": new_record(lastmod=f"{version}", first_seen="2024-01-01T00:00:00Z")
                    for n in range(30000)}
            store.save(State.from_urls(urls, created="2024-01-01T00:00:00Z", updated="2024-01-01T00:00:00Z"))
            print(version, flush=True)
    """
)


def _version(path: Path) -> int:
    state = decode_state(path.read_bytes(), str(path))  # raises on a torn or unreadable file
    versions = {record[0] for record in state.all_urls().values()}
    assert len(versions) == 1, "a mixed state file"
    return int(next(iter(versions)) or 0)


def test_random_sigkills_never_leave_an_unreadable_state(tmp_path: Path) -> None:
    path = tmp_path / "state.json"
    rng = random.Random(2024)
    committed = 0
    for _ in range(12):
        process = subprocess.Popen([sys.executable, "-c", WRITER, str(path), str(committed + 1)], stdout=subprocess.PIPE, text=True)
        assert process.stdout is not None
        first = process.stdout.readline()  # one save done, however slowly this machine started it
        time.sleep(rng.uniform(0.0, 0.3))  # then a kill at a random moment of the saves that follow
        process.send_signal(signal.SIGKILL)
        printed = [int(line) for line in (first + process.communicate()[0]).split()]
        last_printed = printed[-1] if printed else committed
        if not path.exists():
            assert not printed
            continue
        found = _version(path)
        # the file holds the last version reported committed, or the one whose rename beat the kill
        assert found in (last_printed, last_printed + 1), (found, last_printed)
        committed = found
    assert committed >= 12  # each of the 12 writers saved at least once before its kill
    assert path.stat().st_size > 2_000_000  # a multi-MB state
    with JsonStore(path, lock_timeout=0):  # the lock died with its holder; leftovers are cleaned
        pass
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []


HOLDER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from notifier.store import JsonStore
    JsonStore(Path(sys.argv[1])).acquire()
    print("held", flush=True)
    time.sleep(60)
    """
)


def test_the_lock_dies_with_its_holder(tmp_path: Path) -> None:
    path = tmp_path / "state.json"
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(path)],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
    from notifier.errors import LockTimeout

    open_files = len(os.listdir("/proc/self/fd"))
    with pytest.raises(LockTimeout):
        JsonStore(path, lock_timeout=0).acquire()
    assert len(os.listdir("/proc/self/fd")) == open_files  # the lock file given up was closed
    waits: list[float] = []
    clock = [0.0]

    def sleep(seconds: float) -> None:
        waits.append(seconds)
        clock[0] += seconds

    with pytest.raises(LockTimeout, match=r"after waiting 0\.1 s"):
        JsonStore(path, lock_timeout=0.1, clock=lambda: clock[0], sleep=sleep).acquire()
    assert waits == [0.05, 0.05]  # tried at 0, 0.05 and 0.1 s: the deadline itself is the last try
    holder.send_signal(signal.SIGKILL)
    holder.communicate()
    with JsonStore(path, lock_timeout=0):  # no wait at all: the kernel released the lock with its holder
        pass


# -- killed runs, then run again ----------------------------------------------------------------
def test_sigkill_while_parsing_then_rerun(site: Site) -> None:
    urls = changed_site(site, 3)
    big = pages(3, lastmod=CHANGED) | {
        f"/bulk/{n}/": f"2024-0{1 + n % 6}-{1 + n % 28:02d}T0{n % 10}:{n % 60:02d}:00Z" for n in range(45000)
    }
    site.write(urlset(big))
    before = site.state_bytes()
    process = spawn(site)
    time.sleep(0.3)
    kill(process)
    assert site.fake is not None
    if not site.fake.posts:  # killed before anything was sent: nothing was recorded either
        assert site.state_bytes() == before
    code, _, err = finish(spawn(site))
    assert code == 0, err
    delivered = {url for batch in batches_sent(site) for url in batch}
    assert set(urls) <= delivered


def test_sigkill_between_batches_resends_only_the_batch_in_flight(site: Site) -> None:
    urls = changed_site(site, 6)
    assert site.fake is not None
    site.fake.plan = [status(200), hang(60)]
    process = spawn(site, "--batch-size", "2")
    assert wait_until(lambda: len(site.fake.posts) == 2, timeout=20)
    kill(process)
    site.fake.plan = []
    code, _, err = finish(spawn(site, "--batch-size", "2"))
    assert code == 0, err
    sent = batches_sent(site)
    assert sent[0] == urls[0:2]  # the first run's accepted batch
    assert sorted(url for batch in sent[1:] for url in batch) == sorted(urls[2:])  # never resent
    assert recorded_pending(site.state) == {}


def test_sigkill_between_batches_of_an_sqlite_state_keeps_their_ledger(site: Site) -> None:
    """SQLite commits a batch's ledger row with its delivery, in one transaction: a run killed
    after its first batch has that batch in the ledger, and the next run adds its own."""
    from notifier.store.sqlite import sqlite_ledger_entries

    site.state = site.root / "state" / "notify-changes.sqlite"
    urls = changed_site(site, 6)
    assert site.fake is not None
    site.fake.plan = [status(200), hang(60)]
    process = spawn(site, "--batch-size", "2")
    assert wait_until(lambda: len(site.fake.posts) == 2, timeout=20)
    kill(process)
    assert [(entry["status"], entry["urls"]) for entry in sqlite_ledger_entries(site.state)] == [("delivered", urls[0:2])]
    site.fake.plan = []
    code, _, err = finish(spawn(site, "--batch-size", "2"))
    assert code == 0, err
    ledger = [entry["urls"] for entry in sqlite_ledger_entries(site.state)]
    assert ledger[0] == urls[0:2] and sorted(url for batch in ledger[1:] for url in batch) == sorted(urls[2:])


def test_sigkill_right_after_a_batch_was_accepted(any_store: Site) -> None:
    site = any_store
    urls = changed_site(site, 6)
    assert site.fake is not None
    victims: list[subprocess.Popen[str]] = []

    def kill_now(record: object) -> None:
        if victims and victims[0].poll() is None:
            victims[0].send_signal(signal.SIGKILL)

    site.fake.after_answer = kill_now
    process = spawn(site, "--batch-size", "2")
    victims.append(process)
    kill(process)  # waits for the kill the fake triggers
    site.fake.after_answer = None
    code, _, err = finish(spawn(site, "--batch-size", "2"))
    assert code == 0, err
    sent = batches_sent(site)
    delivered = [url for batch in sent for url in batch]
    assert set(urls) <= set(delivered)
    # only the batch the kill interrupted (acknowledged, maybe not yet recorded) can be sent twice
    assert all(delivered.count(url) == 1 for url in urls[2:])


def test_sigkills_at_random_moments_of_runs_lose_nothing(any_store: Site) -> None:
    site = any_store
    urls = changed_site(site, 40)
    assert site.fake is not None
    rng = random.Random(7)
    for _ in range(6):
        process = spawn(site, "--batch-size", "3")
        time.sleep(rng.uniform(0.05, 0.6))
        kill(process)
        _readable(site)  # always readable
    code, _, err = finish(spawn(site, "--batch-size", "3"))
    assert code == 0, err
    delivered = [url for batch in batches_sent(site) for url in batch]
    assert set(urls) <= set(delivered)
    assert recorded_pending(site.state) == {}


# -- cancels ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_cancel_during_a_backoff_sleep_is_exit_130_within_seconds(any_store: Site, signum: int) -> None:
    site = any_store
    urls = changed_site(site, 3)
    assert site.fake is not None
    site.fake.plan = [status(503, Retry_After="60")]
    process = spawn(site, "--retry-timeout", "120")
    assert process.stderr is not None
    said = process.stderr.readline()  # the notice said just before the wait (one batch: no step line before it)
    assert "batch 1/1 to 127.0.0.1" in said and "retrying in 60 s" in said, said  # now it sleeps through Retry-After
    started = time.monotonic()
    process.send_signal(signum)
    code, _, err = finish(process)
    assert time.monotonic() - started < 30  # not the 60 s the endpoint asked for: the sleep was cut
    assert code == 130 and "interrupted" in err and "Traceback" not in err
    assert len(site.fake.posts) == 1  # KeyboardInterrupt is never retried
    assert sorted(recorded_pending(site.state)[site.fake.endpoint]) == sorted(urls)


# -- concurrent deploys -----------------------------------------------------------------------------
def test_two_runs_at_once_one_waits_then_exits_4_and_nothing_is_lost(any_store: Site) -> None:
    site = any_store
    urls = changed_site(site, 4)
    assert site.fake is not None
    arrived, release = threading.Event(), threading.Event()

    def hold(record: object) -> None:  # the first run holds the lock while its request waits here
        arrived.set()
        release.wait(120)

    site.fake.on_post = hold
    first = spawn(site, "--request-timeout", "120")
    try:
        assert arrived.wait(120)
        code, _, err = finish(spawn(site, "--lock-timeout", "0.5"))
        assert code == 4 and ("holds the state lock" in err or "holds its lock" in err) and err.count("\n") == 2, err
        assert err.startswith("notify-changes: waiting for the ") and "waiting up to 0.5 s (--lock-timeout)" in err, err  # said once
    finally:
        release.set()
    code, _, err = finish(first)
    assert code == 0, err
    assert sorted(url for batch in batches_sent(site) for url in batch) == sorted(urls)
    assert recorded_pending(site.state) == {} and len(recorded_urls(site.state)) == 4


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_cancel_of_the_whole_process_group_while_parts_are_parsed(site: Site, signum: int) -> None:
    """CI signals every process of the job: the parse workers must go quietly, the run exits 130."""
    from tests.conftest import index

    for number in range(6):
        bulk = {f"/s{number}/{n}/": f"2024-0{1 + n % 6}-{1 + n % 28:02d}T0{n % 10}:{n % 60:02d}:00Z" for n in range(40000)}
        site.write(urlset(bulk), f"sitemaps/part-{number}.xml")
    site.write(index({f"/sitemaps/part-{number}.xml": None for number in range(6)}))
    env = dict(os.environ, INDEXNOW_KEY=KEY)
    process = subprocess.Popen(
        [*program(), "check", str(site.sitemap), "--state", str(site.state)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    assert process.stderr is not None
    first = process.stderr.readline()  # the first part is read: the workers are parsing the others now
    assert "part 1/6" in first, first  # "read part 1/6" (or, on one core, "reading part 1/6")
    os.killpg(process.pid, signum)
    _, err = finish(process)[1:]
    assert process.returncode == 130, (process.returncode, err)  # handled: not killed by the signal
    assert "Traceback" not in err
