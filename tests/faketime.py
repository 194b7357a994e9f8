"""A clock that moves only when the code under test sleeps: retry tests run in milliseconds."""

from __future__ import annotations

import datetime as dt


class FakeTime:
    def __init__(self, start: dt.datetime) -> None:
        self.start = start
        self.offset = 0.0
        self.sleeps: list[float] = []

    def clock(self) -> float:
        """A monotonic clock, in seconds."""
        return self.offset

    def sleep(self, seconds: float) -> None:
        assert seconds >= 0
        self.sleeps.append(seconds)
        self.offset += seconds

    def now(self) -> dt.datetime:
        """The wall clock (for Retry-After dates and the state's timestamps)."""
        return self.start + dt.timedelta(seconds=self.offset)
