"""What a run takes from the outside world: clocks, sleep, progress and notices, an HTTP session.

Tests replace any of it (a fake clock makes a retry test take milliseconds).
"""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import requests


@dataclass
class Environment:
    """What a run takes from the outside world; tests replace any of it."""

    now: Callable[[], dt.datetime] = lambda: dt.datetime.now(dt.UTC)
    sleep: Callable[[float], None] = time.sleep
    clock: Callable[[], float] = time.monotonic
    progress: Callable[[str], None] | None = None  # what it is doing now: a terminal's status line
    step: Callable[[str], None] | None = None  # a counted step of a long run (a part read, a batch sent): in logs too
    notice: Callable[[str], None] | None = None  # one line as it happens: each retry wait
    session: requests.Session | None = None
