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
import multiprocessing
import os
import signal
import threading

_CANCELS = {signal.SIGINT, signal.SIGTERM}


def usable_cores() -> int:
    """The usable cores (at most 8): how many worker processes a run starts unless ``--jobs`` says."""
    return min(len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1), 8)


class Workers:
    """The worker processes of one run: one pool, forked the first time a step asks for it,
    shut down when the run ends (a ``with`` block). ``jobs``: how many (``--jobs``; None: the
    usable cores); fewer than two means none, and every step works in this process.

    A process that runs other threads (a program using the API) gets none either: fork
    could copy a lock one of them holds. ``note`` then says so when ``--jobs`` asked for
    more. A step whose worker died (killed for memory) calls ``broken``: it and every later
    step go on here."""

    def __init__(self, jobs: int | None = None) -> None:
        wanted = usable_cores() if jobs is None else jobs
        threaded = threading.active_count() > 1
        self.count = 1 if threaded else wanted
        self.note = (
            f"--jobs {jobs}: this process runs other threads, and a forked worker could inherit a lock one of them holds; "
            "every step ran in this process"
            if threaded and jobs is not None and jobs > 1
            else None
        )
        self._pool: concurrent.futures.ProcessPoolExecutor | None = None
        self._broken = False

    def pool(self) -> concurrent.futures.ProcessPoolExecutor | None:
        """The run's pool (forked now if it is not yet), or None: work here."""
        if self.count < 2 or self._broken:
            return None
        if self._pool is None:
            self._pool = fork_pool(self.count)
        return self._pool

    @property
    def started(self) -> bool:
        """Whether the pool is up (a step asked for it): using it costs no fork."""
        return self._pool is not None and not self._broken

    def broken(self) -> None:
        """A worker died: stop the pool without waiting; the rest of the run works here."""
        self._broken = True
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)

    def __enter__(self) -> Workers:
        return self

    def __exit__(self, kind: type[BaseException] | None, *_: object) -> None:
        """Leaving normally waits for the workers; leaving by an exception (a cancel) kills
        them first: waiting could hang for ever, the pool's thread joining a worker that is
        still writing a large result to the pipe it no longer reads (CPython's
        ProcessPoolExecutor, seen here: a cancelled check that never ended)."""
        pool, self._pool, self._broken = self._pool, None, True
        if pool is None:
            return
        if kind is not None:
            abandon(pool)
        else:
            pool.shutdown(wait=True)


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


def abandon(pool: concurrent.futures.ProcessPoolExecutor) -> None:
    """Stop a pool without waiting: queued tasks cancelled, workers killed (they ignore
    SIGTERM by design). Python 3.14's public kill_workers does the shutdown and the kill;
    3.11 to 3.13 have no public call for it, and the kill is done here."""
    processes = dict(getattr(pool, "_processes", None) or {})  # the shutdown forgets them
    results = getattr(pool, "_result_queue", None)  # and this
    kill_workers = getattr(pool, "kill_workers", None)
    if kill_workers is not None:
        kill_workers()
    else:
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
