"""Standard output as the commands write it: a report that cannot be written is an I/O error
of its own, never a crash, and never undoes what the command did.

``cmd >&-`` starts the program with no stdout at all (Python's ``sys.stdout`` is None), and
``> /dev/full`` fails the first flush with ENOSPC. The CLI writes through ``GuardedStdout``,
which keeps either as ``OutputFailed`` and lets the command end as it would have; the
boundary (``cli.main``) then says it in one line on stderr and keeps the code the command
reached (``lost_code``). The job summary's files failing (``github.py``) raise it. A reader that went away
(``| head``, EPIPE) stays what it was: the command ends quietly with its code.
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
from collections.abc import Iterator
from typing import TextIO, cast

from notifier.errors import ExitCode


class OutputFailed(Exception):
    """The command's output could not be written; ``str()`` says where and why."""


class GuardedStdout(io.TextIOBase):
    """``inner`` (None: stdout was closed when the program started) that never fails a write
    but a closed pipe's: the first other failure is kept in ``failure`` and the rest of the
    output goes nowhere, so the command ends as it would have, with its own code, and the
    boundary says the failure once (``cli.main``)."""

    def __init__(self, inner: TextIO | None) -> None:
        super().__init__()
        self.inner = inner
        self.failure: OutputFailed | None = OutputFailed("stdout is closed") if inner is None else None
        self.written = False  # whether the command wrote anything: a closed stdout it never needed is no failure
        self.said = False

    def _failed(self, error: OSError | ValueError) -> None:
        reason = error.strerror if isinstance(error, OSError) and error.strerror else str(error)
        self.failure = OutputFailed(f"stdout: {reason}")

    def write(self, text: str) -> int:
        self.written = self.written or bool(text)
        if self.failure is None and self.inner is not None:
            try:
                self.inner.write(text)
            except BrokenPipeError:
                raise
            except (OSError, ValueError) as error:  # ValueError: the stream was closed
                self._failed(error)
        return len(text)

    def flush(self) -> None:
        if self.failure is None and self.inner is not None:
            try:
                self.inner.flush()
            except BrokenPipeError:
                raise
            except (OSError, ValueError) as error:
                self._failed(error)

    def lost(self) -> OutputFailed | None:
        """The failure the boundary has to say (once), if the output was needed and lost."""
        return self.failure if self.written and not self.said else None

    def isatty(self) -> bool:
        return self.inner is not None and self.failure is None and self.inner.isatty()

    def fileno(self) -> int:
        return self.inner.fileno() if self.inner is not None else 1

    def writable(self) -> bool:
        return True


def _reserve(fd: int) -> bool:
    """Put /dev/null on a standard descriptor the program was started without, so that no file
    the run opens (the state, its lock) becomes fd 1 or 2. True when it was closed."""
    try:
        os.fstat(fd)
        return False
    except OSError:
        null = os.open(os.devnull, os.O_RDWR)
        if null != fd:
            os.dup2(null, fd)
            os.close(null)
        return True


@contextlib.contextmanager
def guarded_streams() -> Iterator[GuardedStdout]:
    """``sys.stdout`` guarded for the block (put back after, unless it was None), and a
    missing stderr replaced by /dev/null (progress and errors then go nowhere; the code stands)."""
    original = sys.stdout
    if original is None:
        _reserve(1)
    if sys.stderr is None:
        _reserve(2)
        sys.stderr = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115  # the process's own stderr from now on
    guarded = GuardedStdout(original)
    sys.stdout = cast(TextIO, guarded)
    try:
        yield guarded
    finally:
        if original is not None:
            sys.stdout = original


def silence(stream: TextIO) -> None:
    """Nothing more is said of ``stream``'s failure (when guarded). What is still buffered for
    a stdout that failed or whose reader has gone (``| head``), and the interpreter's last
    flush, go to /dev/null instead of failing again at exit (a stream without a descriptor is
    left alone)."""
    if isinstance(stream, GuardedStdout):
        stream.said = True
    with contextlib.suppress(OSError, ValueError, io.UnsupportedOperation):
        fd = stream.fileno()
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, fd)
        os.close(null)


def lost_code(reached: int) -> int:
    """The exit code when only the output failed: the command's own when it is not 0 (a run's
    delivery is never undone by its report), else ``OUTPUT_FAILED``."""
    return reached if reached != ExitCode.OK else ExitCode.OUTPUT_FAILED


LOST = (
    "notify-changes: error: the output could not be written ({reason}); nothing the command did is undone "
    "(a run's deliveries and its state stay recorded): give it a writable stdout to see its output\n"
)
