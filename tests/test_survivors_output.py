"""Standard output as the commands write it, in this process, where a mutant of output.py
once went unnoticed (issue #44; tests/test_outputs.py drives the program with its stdout
really closed or full, in processes of its own): the failure a guarded stdout keeps and how
it words it, the descriptors put on a closed stdout or stderr, and a silenced stream."""

from __future__ import annotations

import contextlib
import fcntl
import io
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TextIO, cast

import pytest

from notifier.output import GuardedStdout, OutputFailed, _reserve, guarded_streams, silence


class _Failing(io.StringIO):
    """A stream whose write and flush fail with ``error`` once ``armed``."""

    def __init__(self, error: Exception) -> None:
        super().__init__()
        self.error = error
        self.armed = False

    def write(self, text: str) -> int:
        if self.armed:
            raise self.error
        return super().write(text)

    def flush(self) -> None:
        if self.armed:
            raise self.error


def _null_device() -> tuple[int, int]:
    found = os.stat(os.devnull)
    return found.st_dev, found.st_ino


def _on_null(fd: int) -> bool:
    found = os.fstat(fd)
    return (found.st_dev, found.st_ino) == _null_device()


def _lowest_free() -> int:
    fd = os.open(os.devnull, os.O_RDONLY)
    os.close(fd)
    return fd


@pytest.mark.parametrize(
    ("error", "said"),
    [
        (OSError(28, "No space left on device"), "stdout: No space left on device"),  # the reason alone, no [Errno 28]
        (OSError("the disk went away"), "stdout: the disk went away"),  # an OSError without strerror: its text
        (ValueError("I/O operation on closed file."), "stdout: I/O operation on closed file."),
    ],
)
@pytest.mark.parametrize("call", ["write", "flush"])
def test_a_failed_write_or_flush_is_kept_and_said_by_its_reason(error: Exception, said: str, call: str) -> None:
    """The first failure is kept, worded by its reason, and what follows goes nowhere; the
    writes still count their text. Fails if in output.py::GuardedStdout._failed
    ``isinstance(error, OSError) and error.strerror`` loses a side or becomes ``or``, or the
    ``self.failure = ...`` assignment is removed; or if ``self._failed(error)`` in ::write
    or ::flush is left out or made ``raise``."""
    inner = _Failing(error)
    guarded = GuardedStdout(inner)
    assert guarded.write("before\n") == 7 and guarded.lost() is None
    if call == "write":
        inner.armed = True
        assert guarded.write("lost\n") == 5
    else:
        guarded.write("kept in the buffer\n")
        guarded.flush()
        inner.armed = True
        guarded.flush()
    failure = guarded.lost()
    assert isinstance(failure, OutputFailed) and str(failure) == said
    inner.armed = False
    guarded.write("after\n")
    guarded.flush()
    assert inner.getvalue() == ("before\n" if call == "write" else "before\nkept in the buffer\n")  # nothing after the failure
    assert guarded.failure is failure


def test_a_closed_pipe_is_no_kept_failure() -> None:
    """EPIPE stays what it is: the boundary ends quietly on it."""
    inner = _Failing(BrokenPipeError(32, "Broken pipe"))
    guarded = GuardedStdout(inner)
    inner.armed = True
    with pytest.raises(BrokenPipeError):
        guarded.write("x")
    with pytest.raises(BrokenPipeError):
        guarded.flush()
    assert guarded.failure is None


def test_a_guarded_stdout_is_a_writable_stream_on_its_descriptor(tmp_path: Path) -> None:
    """A stream others may ask: writable, on its inner stream's descriptor, or on fd 1 when
    stdout was closed at the start. Fails if in output.py::GuardedStdout.fileno
    ``self.inner is not None`` becomes ``is None`` or ``1`` becomes ``2``; or if
    ::writable's ``True`` becomes ``False``."""
    assert GuardedStdout(None).fileno() == 1
    assert GuardedStdout(None).writable() is True
    with open(tmp_path / "out.txt", "w", encoding="utf-8") as inner:
        assert GuardedStdout(inner).fileno() == inner.fileno() != 1


@pytest.fixture
def closed_fd() -> Iterator[int]:
    """A descriptor number that is closed, above the lowest free one (so /dev/null opens at
    another number); closed again after the test."""
    low = os.open(os.devnull, os.O_RDONLY)
    fd = os.dup2(low, 250)
    os.close(fd)
    os.close(low)
    try:
        yield fd
    finally:
        with contextlib.suppress(OSError):
            os.close(fd)


def test_a_closed_descriptor_is_reserved_with_dev_null_and_nothing_leaks(closed_fd: int) -> None:
    """Fails if in output.py::_reserve ``os.fstat(fd)`` is left out, ``null != fd`` becomes
    ``==``, ``os.dup2(null, fd)`` is left out or made ``raise``, ``os.close(null)`` is
    left out, or ``os.open(os.devnull, ...)`` is made ``raise``."""
    free = _lowest_free()
    assert free != closed_fd
    _reserve(closed_fd)
    assert _on_null(closed_fd)
    assert _lowest_free() == free  # the /dev/null it opened to copy from is closed


def test_the_lowest_closed_descriptor_is_reserved_as_it_opens() -> None:
    """When /dev/null opens at the closed number itself, it stays open there. Fails if
    ``null != fd`` becomes ``==`` in output.py::_reserve (the copy over itself, then closed)."""
    fd = _lowest_free()
    try:
        _reserve(fd)
        assert _on_null(fd)
    finally:
        os.close(fd)


def test_an_open_descriptor_is_left_as_it_is(tmp_path: Path) -> None:
    """Fails if ``os.fstat(fd)`` is made ``raise`` in output.py::_reserve."""
    with open(tmp_path / "file", "w", encoding="utf-8") as file:
        before = os.fstat(file.fileno())
        _reserve(file.fileno())
        assert os.path.samestat(os.fstat(file.fileno()), before)


@contextlib.contextmanager
def _closed(fd: int) -> Iterator[None]:
    """Standard descriptor ``fd`` closed for the block, put back after (pytest's capture is
    on it, and puts it back itself between a test's phases: so closed in the test's body)."""
    for stream in (sys.stdout, sys.stderr):
        if stream is not None:
            stream.flush()
    saved = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 100)  # not at a low number another block closes
    os.close(fd)
    try:
        yield
    finally:
        os.dup2(saved, fd)
        os.close(saved)


def test_a_program_started_without_stdout_has_dev_null_on_fd_1(monkeypatch: pytest.MonkeyPatch) -> None:
    """``cmd >&-``: no file the run opens (its state, a lock) becomes fd 1. Fails if
    ``_reserve(1)`` is left out, made ``raise``, or given fd 2 in output.py::guarded_streams."""
    monkeypatch.setattr(sys, "stdout", None)
    with _closed(1), guarded_streams() as guarded:
        on_null = _on_null(1)
        failure, lost = guarded.failure, guarded.lost()
    assert on_null
    assert isinstance(failure, OutputFailed) and lost is None  # said only once written to


def test_a_program_started_without_stderr_writes_its_errors_to_dev_null(monkeypatch: pytest.MonkeyPatch) -> None:
    """``cmd <&- 2>&-``: fd 2 is /dev/null and so is a new sys.stderr, so that progress and
    errors go nowhere instead of failing, and no file the run opens becomes fd 2 (with fd 0
    closed too, the new sys.stderr alone would take fd 0). Fails if ``_reserve(2)`` is left out, made ``raise``, or
    given fd 3, or if ``sys.stderr = open(os.devnull, ...)`` is removed in
    output.py::guarded_streams."""
    monkeypatch.setattr(sys, "stderr", None)
    with _closed(0), _closed(2), guarded_streams():
        on_null = _on_null(2)
        stderr: TextIO | None = sys.stderr
        try:
            assert stderr is not None
            stderr_on_null = _on_null(stderr.fileno())
            stderr.write("notify-changes: error: nowhere\n")
            stderr.flush()
        finally:
            if stderr is not None:
                stderr.close()
    assert on_null and stderr_on_null


def test_a_silenced_failure_is_not_said_again_and_its_buffer_goes_to_dev_null(tmp_path: Path) -> None:
    """Once the boundary has said the failure, lost() is None; what is left goes to
    /dev/null. Fails if ``stream.said = True`` is removed or its ``True`` becomes ``False``
    in output.py::silence, or ``os.dup2(null, fd)`` or ``os.close(null)`` there is left out."""
    with open(tmp_path / "out.txt", "w", encoding="utf-8") as inner:
        guarded = GuardedStdout(inner)
        guarded.write("said\n")
        guarded.failure = OutputFailed("stdout: No space left on device")
        assert guarded.lost() is guarded.failure
        free = _lowest_free()
        silence(cast(TextIO, guarded))  # as the CLI passes sys.stdout
        assert guarded.lost() is None
        assert _on_null(inner.fileno())
        assert _lowest_free() == free
        inner.write("buffered")
    assert (tmp_path / "out.txt").read_text(encoding="utf-8") == ""


def test_a_stream_without_a_descriptor_is_left_alone() -> None:
    stream = io.StringIO()
    silence(stream)
    stream.write("still here")
    assert stream.getvalue() == "still here"
