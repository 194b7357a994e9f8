"""The ledger: what every endpoint said to every batch sent. Per batch: when, to which
endpoint and host, its URLs, the outcome (HTTP status or the network error), the attempts,
and the first 200 characters of an error's text, keys cut to four characters.

It is kept beside the state and outlives nothing but itself: the newest ``keep-batches``
entries (default 1,000, in ``options.py``), the oldest dropped. The JSON store appends one
line per batch to ``STATE.ledger``; SQLite and PostgreSQL keep a table. ``notify-changes
state history [URL]`` reads it.
"""

from __future__ import annotations

from typing import TypedDict

ERROR_TEXT = 200  # characters of an error's text kept


class LedgerEntry(TypedDict):
    at: str
    endpoint: str
    host: str
    status: str  # delivered, accepted or failed
    http_status: int | None
    attempts: int
    error: str  # empty when delivered
    urls: list[str]


def entry(
    at: str, endpoint: str, host: str, status: str, http_status: int | None, attempts: int, message: str, urls: list[str]
) -> LedgerEntry:
    """A batch's entry; ``message`` is already cut of its keys (BatchResult's always is)."""
    error = "" if status in ("delivered", "accepted") else message[:ERROR_TEXT]
    return LedgerEntry(
        at=at, endpoint=endpoint, host=host, status=status, http_status=http_status, attempts=attempts, error=error, urls=urls
    )


def is_entry(value: object) -> bool:
    """Whether a stored line is an entry this version wrote (a damaged line is skipped, not fatal:
    the ledger is a record of what happened, nothing decides on it)."""
    if not isinstance(value, dict):
        return False
    texts = ("at", "endpoint", "host", "status", "error")
    return (
        all(type(value.get(key)) is str for key in texts)
        and type(value.get("attempts")) is int
        and (value.get("http_status") is None or type(value.get("http_status")) is int)
        and type(value.get("urls")) is list
        and all(type(url) is str for url in value["urls"])
    )
