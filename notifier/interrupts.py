"""A cancel while a command runs: SIGINT and SIGTERM alike (CI sends both), raised as
KeyboardInterrupt, and remembered even where Python could only print the exception.

Python prints, and drops, an exception raised in an at-fork hook (the worker pool
starting), a ``__del__`` or an import lock's callback. The signal is noted before it is
raised, so the run still ends as interrupted, and the printing (an "Exception ignored"
traceback) is left out: the command says it was interrupted in its one line.
"""

from __future__ import annotations

import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any

received: list[int] = []  # the signals the command received, even one whose exception was swallowed


def _on_signal(signum: int, frame: FrameType | None) -> None:
    received.append(signum)
    raise KeyboardInterrupt


def main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


@contextmanager
def handled() -> Iterator[None]:
    """SIGINT and SIGTERM raise KeyboardInterrupt inside the block (in the main thread);
    Python's own handlers are back after it, and ``received`` says whether one came."""
    received.clear()
    previous = signal.signal(signal.SIGTERM, _on_signal) if main_thread() else None
    if previous is not None:
        signal.signal(signal.SIGINT, _on_signal)
    hook = sys.unraisablehook

    def quiet(unraisable: Any) -> object:
        if received and isinstance(unraisable.exc_value, KeyboardInterrupt):
            return None  # the cancel this module raised, where it could not propagate
        return hook(unraisable)

    sys.unraisablehook = quiet
    try:
        yield
    finally:
        sys.unraisablehook = hook
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
            signal.signal(signal.SIGINT, signal.default_int_handler)


def ignore_more() -> None:
    """After a cancel: CI follows SIGINT with SIGTERM, and the second must not cut the message short."""
    if main_thread():
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
