"""A cancelled deploy (SIGINT, or SIGTERM as CI sends) stops fast, exit 130, the batch still pending."""

from __future__ import annotations

import concurrent.futures
import os
import signal
import subprocess
import threading
import time
from pathlib import Path

import pytest

from notifier.cli import UNSENT
from tests.conftest import KEY, Site, pages, program, program_python, recorded_pending, urlset
from tests.fakeindexnow import hang, wait_until

pytestmark = pytest.mark.program


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_during_a_request_is_exit_130_with_the_batch_pending(site: Site, signum: int) -> None:
    site.write(urlset(pages(2)))
    site.run()
    site.write(urlset(pages(5)))
    assert site.fake is not None
    site.fake.plan = [hang(60)]
    env = dict(os.environ, INDEXNOW_KEY=KEY)
    process = subprocess.Popen(
        [*program(), str(site.sitemap), "--state", str(site.state), "--endpoint", site.fake.endpoint],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert wait_until(lambda: len(site.fake.posts) == 1, timeout=20)
        started = time.monotonic()
        process.send_signal(signum)
        _, err = process.communicate(timeout=120)
        assert time.monotonic() - started < 30  # the request hangs for 60 s: it was cut, not waited out
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 130
    assert "interrupted" in err and "Traceback" not in err
    pending = recorded_pending(site.state)[site.fake.endpoint]
    assert sorted(pending) == sorted(f"http://www.shop-site.org/p/{n}/" for n in (2, 3, 4))


def catches(pid: int, signum: int) -> bool:
    """Whether process ``pid`` has a handler for ``signum`` (Linux: SigCgt in /proc)."""
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("SigCgt:"):
                return bool(int(line.split()[1], 16) >> (signum - 1) & 1)
    return False


@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="needs Linux's /proc to see the handler installed")
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
@pytest.mark.parametrize("delay", [0.0, 0.01, 0.03, 0.06, 0.1, 0.2, 0.3, 0.4])
def test_a_signal_in_the_first_moments_is_exit_130_without_a_traceback(offline_site: Site, signum: int, delay: float) -> None:
    """CI may cancel while the program is still importing lxml and requests: from the
    program's first instruction (the moment it catches SIGTERM) on, exit 130, one line."""
    offline_site.write(urlset(pages(50)))
    process = subprocess.Popen(
        [*program(), "check", str(offline_site.sitemap), "--state", str(offline_site.state)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert wait_until(lambda: catches(process.pid, signal.SIGTERM) or process.poll() is not None, timeout=10)
    time.sleep(delay)
    process.send_signal(signum)
    _, err = process.communicate(timeout=20)
    assert process.returncode in (0, 130), (process.returncode, err)  # 0: it was done already
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err
    if process.returncode == 130:
        assert err.count("\n") == 1 and "interrupted" in err


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_whose_exception_python_swallowed_still_ends_the_run_as_interrupted(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], signum: int
) -> None:
    """Python only prints an exception raised in an at-fork hook (the worker pool starting)
    or a __del__: the signal must not be lost with it (seen: exit 0 after a cancel)."""
    import notifier.cli

    def swallowing(command: str, args: list[str], word: str | None = None) -> int:
        try:
            os.kill(os.getpid(), signum)
            time.sleep(1)  # the handler runs here
        except KeyboardInterrupt:
            pass  # as an at-fork hook's caller does
        return 0

    monkeypatch.setattr(notifier.cli, "_main", swallowing)
    assert notifier.cli.main(["check", "sitemap.xml"]) == 130
    assert "interrupted" in capsys.readouterr().err
    monkeypatch.setattr(notifier.cli, "_main", lambda command, args, word=None: 0)
    assert notifier.cli.main(["check", "sitemap.xml"]) == 0  # the next run starts afresh


_CANCELLED_IN_A_CALLBACK = """
import os, signal, sys
import notifier.cli

class Dropped:
    def __del__(self):  # the handler runs in here, where Python can only print its exception
        os.kill(os.getpid(), signal.SIG{name})

def command(command, args, word=None):
    Dropped()
    return 0

notifier.cli._main = command
sys.exit(notifier.cli.main(["check", "sitemap.xml"]))
"""


@pytest.mark.parametrize("name", ["INT", "TERM"])
def test_a_cancel_raised_where_python_can_only_print_it_is_one_line_without_a_traceback(tmp_path: Path, name: str) -> None:
    """Seen in CI: a SIGTERM handled inside an import lock's callback printed "Exception
    ignored in: ... KeyboardInterrupt" and its traceback before the interrupted line (fails
    without interrupts.handled's unraisable hook)."""
    done = subprocess.run(
        [program_python(), "-c", _CANCELLED_IN_A_CALLBACK.format(name=name)], cwd=tmp_path, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 130, done.stderr
    assert done.stderr.splitlines() == [UNSENT.strip()]


def _half_sent_result() -> bytes:
    """In a worker: send this task's result only half-way, then hang, as a worker does that
    a cancel kills in the middle of writing a large result to the pool's pipe."""
    import gc
    import multiprocessing.queues
    import struct

    results = next(each for each in gc.get_objects() if isinstance(each, multiprocessing.queues.SimpleQueue))

    def send_half(buffer: bytes) -> None:
        data = bytes(buffer)
        results._writer._send(struct.pack("!i", len(data)))  # type: ignore[attr-defined]
        results._writer._send(data[: len(data) // 2])  # type: ignore[attr-defined]
        time.sleep(3600)

    results._writer.send_bytes = send_half  # type: ignore[attr-defined]
    return b"x" * 1_000_000


class _PoolWithKillWorkers(concurrent.futures.ProcessPoolExecutor):
    """Python 3.14's pool, as far as abandon sees it: a public kill_workers (its documented
    behaviour, shut down then kill each live worker), on the interpreter these tests run on."""

    killed = 0

    def kill_workers(self) -> None:
        processes = list((vars(self)["_processes"] or {}).values())
        self.shutdown(wait=False, cancel_futures=True)
        for process in processes:
            if process.is_alive():
                process.kill()
        type(self).killed += 1


@pytest.mark.parametrize("public_kill", [False, True], ids=["python-3.11-to-3.13", "kill_workers-of-3.14"])
def test_an_abandoned_pool_leaves_no_thread_waiting_for_a_half_sent_result(public_kill: bool) -> None:
    """A cancel kills the workers (workers.abandon). One killed half-way through sending its
    result left the pool's manager thread reading the rest for ever, and Python joins that
    thread at exit: the cancelled run never ended (seen twice under load in the process-
    group cancel test). Now the abandoned pool's pipe is closed, the read ends, the thread too;
    with the public kill_workers (3.14+) as without it."""
    import multiprocessing

    from notifier.workers import abandon, fork_pool, quiet_worker

    if public_kill:
        pool: concurrent.futures.ProcessPoolExecutor = _PoolWithKillWorkers(
            max_workers=1, mp_context=multiprocessing.get_context("fork"), initializer=quiet_worker
        )
        pool.submit(int).result()
    else:
        pool = fork_pool(1)
    pool.submit(_half_sent_result)
    manager: threading.Thread | None = vars(pool)["_executor_manager_thread"]
    assert manager is not None
    time.sleep(0.5)  # the worker has sent half its result; the manager thread waits for the rest
    killed = _PoolWithKillWorkers.killed
    abandon(pool)
    manager.join(5)
    assert not manager.is_alive()
    assert _PoolWithKillWorkers.killed == killed + public_kill  # the public call is used where there is one
