"""What every phase of one run shares, fixed when the run starts, and what each phase returns.

A phase reads the run (``Run``) and the state, and returns a small frozen result; only the
loop (``loop.py``) puts the results together into the ``Report``. Where each command stops
is written once, in ``STOPS``.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Literal, NamedTuple

from notifier.changes import Change, Diff
from notifier.dates import format_utc
from notifier.environment import Environment
from notifier.protocol import BatchResult
from notifier.report import PlannedBatch
from notifier.rules import Violation
from notifier.settings.settings import Settings
from notifier.workers import Workers

Mode = Literal["check", "dry-run", "run"]
Phase = Literal["verify", "plan", "record"]

# where each command stops: check after verifying, a dry run after planning (it shows the
# batches), a run after sending what is pending and recording the outcome
STOPS: dict[Mode, Phase] = {"check": "verify", "dry-run": "plan", "run": "record"}


def mode_of(settings: Settings) -> Mode:
    if settings.command == "check":
        return "check"
    return "dry-run" if settings.dry_run else "run"


@dataclass(frozen=True)
class Run:
    """One run: its settings, the injected environment, the moment it started (every date it
    writes is this one), whether the state existed, and its worker processes."""

    settings: Settings
    env: Environment
    now: dt.datetime
    first_run: bool
    workers: Workers

    @property
    def mode(self) -> Mode:
        return mode_of(self.settings)

    @property
    def stops_after(self) -> Phase:
        return STOPS[self.mode]

    @property
    def records(self) -> bool:
        """Whether this run writes the state (a run, not check nor a dry run)."""
        return self.stops_after == "record"

    @property
    def endpoints(self) -> list[str]:
        return list(self.settings.endpoints)

    @property
    def stamp(self) -> str:
        return format_utc(self.now)


@dataclass(frozen=True)
class Verified:
    """Phase one: the diff, what the rules found, and the notes about what was read."""

    diff: Diff
    violations: list[Violation]
    notes: list[str]

    @property
    def failed(self) -> bool:
        return any(violation.level == "error" for violation in self.violations)


class Holds(NamedTuple):
    """What waits, pending, at each endpoint this run (loc -> why), and the endpoints whose
    day is used up (``--endpoint-mode first`` passes over them). Not a failure: exit 0."""

    waiting: dict[str, dict[str, str]]
    full: dict[str, str]

    def at(self, endpoint: str) -> Mapping[str, str]:
        return self.waiting.get(endpoint, _NOTHING)

    def urls(self) -> dict[str, str]:
        """Every URL held at some endpoint, with why (the first endpoint's reason)."""
        every: dict[str, str] = {}
        for held in self.waiting.values():
            for loc, why in held.items():
                every.setdefault(loc, why)
        return every


_NOTHING: Mapping[str, str] = MappingProxyType({})
NO_HOLDS = Holds({}, {})


@dataclass(frozen=True)
class Plan:
    """Phase two: what this deploy announces (recorded in the state as pending), the notes,
    why each URL is sent (worked out when asked: a first run sends a million), and for a dry
    run the batches it would send."""

    to_submit: list[Sequence[Change]]
    notes: list[str]
    explain: Callable[[], dict[str, Change]]
    planned: list[PlannedBatch]
    excluded: dict[str, str] = field(default_factory=dict)  # loc -> the [announce] pattern that held it out
    holds: Holds = NO_HOLDS  # what [announce] keeps pending this run
    alternates: dict[str, str] = field(default_factory=dict)  # loc -> whose hreflang alternate [announce] added it as


@dataclass(frozen=True)
class Deliveries:
    """Phase three: each batch's outcome, and the URLs the endpoints acknowledged."""

    batches: list[BatchResult]
    delivered: list[str]
    notes: list[str] = field(default_factory=list)
    unrecorded: list[str] = field(default_factory=list)  # acknowledged, but the store could not record them: still pending
    not_live: list[str] = field(default_factory=list)  # --wait-live: the key files and pages not live in time
    previous_key: list[str] = field(default_factory=list)  # the hosts that signed with a rotation's previous key
    findings: list[Violation] = field(default_factory=list)  # what the answers showed: key-refused


@dataclass(frozen=True)
class Recorded:
    """Phase four: what is still pending, what was acknowledged, and the run's outcome."""

    submitted: list[str]
    pending: list[str]
    notes: list[str]
    incomplete: bool
    not_recorded: bool = False  # delivered, and the state could not record all of it (exit 5)
