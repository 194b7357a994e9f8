"""Worker processes: how many a run may start, and how each behaves.

Work that holds the GIL for short stretches (parsing sitemap parts, reading and hashing
many small page files) goes to processes, not threads: measured at 50,000 8 KB pages,
two threads hashing took longer than one (each file's few microseconds of released GIL
cost more in hand-overs than they won).
"""

from __future__ import annotations

import concurrent.futures
import concurrent.futures.process
import contextlib
import contextvars
import multiprocessing
import os
import signal
import threading
from collections.abc import Iterator

_CANCELS = {signal.SIGINT, signal.SIGTERM}


_JOBS: contextvars.ContextVar[int | None] = contextvars.ContextVar("jobs", default=None)


def usable_cores() -> int:
    """How many processes may work at once: ``--jobs`` when the run gives it (1: none, all
    work here), else the usable cores (at most 8); but one in a threaded process, where fork
    could copy a lock some other thread holds (a Python program using the API)."""
    if threading.active_count() > 1:
        return 1
    chosen = _JOBS.get()
    if chosen is not None:
        return chosen
    return min(len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1), 8)


@contextlib.contextmanager
def jobs(count: int | None) -> Iterator[None]:
    """Within the block, ``usable_cores()`` is ``count`` (None: the machine's)."""
    token = _JOBS.set(count)
    try:
        yield
    finally:
        _JOBS.reset(token)


def quiet_worker() -> None:
    """A worker leaves SIGINT and SIGTERM to the main process (CI signals the whole
    process group): killed in the middle of sending its result, it would leave the pool's
    manager thread waiting forever for the rest, and the run could never exit. It finishes
    its task, sends it whole, and stops when the main process shuts the pool down. Should
    the main process die, the kernel kills the worker too (Linux: PR_SET_PDEATHSIG)."""
    import ctypes

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, _CANCELS)  # blocked while it was forked: now ignored
    with contextlib.suppress(Exception):
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # 1 = PR_SET_PDEATHSIG


def fork_pool(workers: int) -> concurrent.futures.ProcessPoolExecutor:
    """A pool of forked, quiet workers (fork: they start at once and share what is loaded).

    They are forked here, with SIGINT and SIGTERM held back: a cancel that arrived during
    the fork would raise inside Python's at-fork hooks, where the exception is only printed
    (a traceback in the log) and lost. Held back, it is delivered just after, where the run
    handles it."""
    pool = concurrent.futures.ProcessPoolExecutor(
        max_workers=workers, mp_context=multiprocessing.get_context("fork"), initializer=quiet_worker
    )
    held = signal.pthread_sigmask(signal.SIG_BLOCK, _CANCELS)
    try:
        pool.submit(int).result()  # the first task forks every worker (the fork start method starts them all)
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, held)
    return pool


@contextlib.contextmanager
def worker_pool(workers: int) -> Iterator[concurrent.futures.ProcessPoolExecutor]:
    """``fork_pool`` for a ``with`` block. Leaving it normally waits for the workers; leaving
    it by an exception (a cancel) kills them first: waiting could hang for ever, the pool's
    thread joining a worker that is still writing a large result to the pipe it no longer
    reads (CPython's ProcessPoolExecutor, seen here: a cancelled check that never ended)."""
    pool = fork_pool(workers)
    try:
        yield pool
    except BaseException:
        abandon(pool)
        raise
    pool.shutdown(wait=True)


def abandon(pool: concurrent.futures.ProcessPoolExecutor) -> None:
    """Stop a pool without waiting: queued tasks cancelled, workers killed (they ignore
    SIGTERM by design). Python 3.11 has no public call for the kill; 3.14's is kill_workers."""
    processes = dict(getattr(pool, "_processes", None) or {})  # the shutdown forgets them
    results = getattr(pool, "_result_queue", None)  # and this
    pool.shutdown(wait=False, cancel_futures=True)
    for process in processes.values():
        with contextlib.suppress(Exception):
            process.kill()
    for process in processes.values():
        with contextlib.suppress(Exception):
            process.join(5)
    # A worker killed half-way through sending its result leaves the pool's manager thread
    # reading the rest for ever, and Python joins that thread at exit: the run would never
    # end. With every worker gone, closing this process's own end of the results pipe lets
    # that read see the end of the pipe; the thread then finds the pool broken and stops.
    writer = getattr(results, "_writer", None)
    if writer is not None:
        with contextlib.suppress(Exception):
            writer.close()
    # Python 3.11's exit hook then wakes that thread through a pipe the thread may be closing
    # at the same moment ("Exception ignored ... Bad file descriptor", a traceback on an
    # interrupted run's stderr; 3.12 locks it): wait for the thread here, and let the hook
    # forget it.
    manager = getattr(pool, "_executor_manager_thread", None)
    if manager is not None:
        manager.join(5)
        if not manager.is_alive():
            wakeups = getattr(concurrent.futures.process, "_threads_wakeups", None)
            if isinstance(wakeups, dict):
                wakeups.pop(manager, None)
