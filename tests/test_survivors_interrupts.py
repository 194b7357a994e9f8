"""What notifier/interrupts.py decides that a mutation run found no test stating (#44): which
"Exception ignored" reports a cancel keeps quiet, and that a second signal after a cancel is
ignored. Each test names the edit it catches."""

from __future__ import annotations

import signal
import sys
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import pytest

from notifier import interrupts


@pytest.fixture
def reported(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Any]]:
    """What reaches Python's own unraisable hook inside ``handled``."""
    seen: list[Any] = []
    monkeypatch.setattr(sys, "unraisablehook", seen.append)
    yield seen
    interrupts.received.clear()


@pytest.mark.parametrize(
    ("signals", "error", "quiet"),
    [
        ([signal.SIGINT], KeyboardInterrupt(), True),  # the cancel this module raised where it could not propagate
        ([], KeyboardInterrupt(), False),  # no signal came: someone else's KeyboardInterrupt is reported ("received and" dropped)
        (
            [signal.SIGTERM],
            ValueError("a __del__'s bug"),
            False,
        ),  # a bug during a cancel is still reported (the isinstance dropped, or "or")
    ],
)
def test_only_the_cancels_own_interrupt_is_kept_quiet(reported: list[Any], signals: list[int], error: BaseException, quiet: bool) -> None:
    """fails if ``received and isinstance(unraisable.exc_value, KeyboardInterrupt)`` becomes
    ``or`` or loses a side in handled.quiet, or its ``return None`` raises"""
    unraisable = SimpleNamespace(exc_value=error, exc_type=type(error), exc_traceback=None, err_msg=None, object=None)
    with interrupts.handled():
        interrupts.received.extend(signals)
        assert sys.unraisablehook(unraisable) is None
    assert reported == ([] if quiet else [unraisable])


def test_after_a_cancel_a_second_signal_is_ignored() -> None:
    """fails if either ``signal.signal(..., SIG_IGN)`` is left out of ignore_more (CI's SIGTERM
    after its SIGINT would cut the interrupted line short)"""
    before = signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)
    try:
        interrupts.ignore_more()
        assert signal.getsignal(signal.SIGINT) == signal.SIG_IGN and signal.getsignal(signal.SIGTERM) == signal.SIG_IGN
    finally:
        signal.signal(signal.SIGINT, before[0])
        signal.signal(signal.SIGTERM, before[1])
