"""Worker processes: how many a run may start, and how each behaves.

Work that holds the GIL for short stretches (parsing sitemap parts, reading and hashing
many small page files) goes to processes, not threads: measured at 50,000 8 KB pages,
two threads hashing took longer than one (each file's few microseconds of released GIL
cost more in hand-overs than they won).
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import multiprocessing
import os
import threading


def usable_cores() -> int:
    """How many processes may work at once: the usable cores, but one in a threaded process,
    where fork could copy a lock some other thread holds (a Python program using the API)."""
    if threading.active_count() > 1:
        return 1
    return min(len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1), 8)


def quiet_worker() -> None:
    """A worker leaves SIGINT and SIGTERM to the main process (CI signals the whole
    process group): killed in the middle of sending its result, it would leave the pool's
    manager thread waiting forever for the rest, and the run could never exit. It finishes
    its task, sends it whole, and stops when the main process shuts the pool down. Should
    the main process die, the kernel kills the worker too (Linux: PR_SET_PDEATHSIG)."""
    import ctypes
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    with contextlib.suppress(Exception):
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # 1 = PR_SET_PDEATHSIG


def fork_pool(workers: int) -> concurrent.futures.ProcessPoolExecutor:
    """A pool of forked, quiet workers (fork: they start at once and share what is loaded)."""
    return concurrent.futures.ProcessPoolExecutor(
        max_workers=workers, mp_context=multiprocessing.get_context("fork"), initializer=quiet_worker
    )
