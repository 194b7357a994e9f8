"""What every store is to a run, written once: the JSON file, SQLite and PostgreSQL each
satisfy ``Store`` (checked by mypy where ``open_store`` returns one, and by
tests/test_store_contract.py against every backend)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Protocol, runtime_checkable

from notifier.store.ledger import LedgerEntry
from notifier.store.model import State


@runtime_checkable
class Store(Protocol):
    """A state with its lock, used around a run: it loads the State, saves it whole, and
    records each acknowledged batch durably before the next is sent."""

    lock_timeout: float

    def __enter__(self) -> Store: ...

    def __exit__(self, *exc_info: object) -> None: ...

    def acquire(self) -> None:
        """Take the exclusive lock, waiting up to ``lock_timeout``."""

    def release(self) -> None:
        """Give the lock back (idempotent)."""

    def load(self) -> State | None:
        """The recorded state, or None when there is none yet."""

    def save(self, state: State) -> None:
        """Write the whole state durably, replacing the last one."""

    def record_delivered(
        self, state: State, endpoint: str, urls: Iterable[str], at: str, ledger: Sequence[LedgerEntry] = (), keep: int = 0
    ) -> bool:
        """Make one acknowledged batch durable before the next is sent; with it, where the store
        can in the same write, ``ledger`` (the newest ``keep`` kept): whether it did."""

    def record_ledger(self, entries: list[LedgerEntry], keep: int) -> None:
        """Append what each endpoint said, keeping the newest ``keep`` batches."""

    def shared_waits(self) -> dict[str, str]:
        """The endpoints' waits other sites of the same state recorded (none for a file)."""

    def clear_waits(self, state: State, endpoints: Iterable[str]) -> None:
        """Forget the waits of ``endpoints`` that were honoured."""

    @property
    def delivery_log(self) -> str:
        """Where the deliveries are recorded, for messages."""
