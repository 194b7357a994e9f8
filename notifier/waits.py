"""The shared back-off: endpoint -> "not before T", kept in the state when a 429 or 503 asked
to wait beyond ``--retry-timeout`` (``indexnow.Client``).

Endpoints are compared in one form (``endpoint_key``), so ``…/indexnow`` and ``…/indexnow/``
wait together. A stored wait is bounded when it is read, whoever wrote it: beyond a week from
now (a hand-edited or damaged state) or not a time at all (a garbage row in a shared
database would otherwise hold an endpoint for every site forever), it is dropped with a note.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable, Mapping

from notifier.dates import format_utc
from notifier.urls import split_url

MAX_WAIT = dt.timedelta(days=7)  # a Retry-After of a year is a server's mistake: a week at most is kept, or believed
_TIMESTAMP = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z", re.ASCII)  # what notify-changes writes
_DEFAULT_PORTS = {"http": 80, "https": 443}


def endpoint_key(endpoint: str) -> str:
    """The one form endpoints are compared in: scheme and host in lower case, no default port,
    no trailing slash, no fragment (``HTTPS://Api.IndexNow.org:443/indexnow/`` is
    ``https://api.indexnow.org/indexnow``). The URL that is sent to stays as written."""
    split = split_url(endpoint.strip())
    if not split.scheme or not split.hostname:
        return endpoint.strip()
    scheme, host = split.scheme.lower(), split.hostname.lower()
    if ":" in host:
        host = f"[{host}]"
    port = f":{split.port}" if split.port is not None and split.port != _DEFAULT_PORTS.get(scheme) else ""
    query = f"?{split.query}" if split.query else ""
    return f"{scheme}://{host}{port}{split.path.rstrip('/')}{query}"


def same_endpoint(one: str, other: str) -> bool:
    return endpoint_key(one) == endpoint_key(other)


def wait_for(backoff: Mapping[str, str], endpoint: str) -> str | None:
    """The time before which nothing goes to ``endpoint`` (any spelling of it), or None."""
    key = endpoint_key(endpoint)
    found = [until for each, until in backoff.items() if endpoint_key(each) == key]
    return max(found) if found else None


def bounded(waits: Iterable[tuple[str, object]], now: dt.datetime) -> tuple[dict[str, str], list[str]]:
    """The stored waits (endpoint, time) as they are believed at ``now``: each endpoint once,
    in its one form, with its latest wait; those that are over left out; those beyond a week
    from now or not a time at all dropped, with one note for them all."""
    kept: dict[str, str] = {}
    dropped: list[str] = []
    current, latest = format_utc(now), format_utc(now + MAX_WAIT)
    for endpoint, until in waits:
        if not isinstance(until, str) or not _TIMESTAMP.fullmatch(until):
            dropped.append(f"{endpoint} ({str(until)[:40]!r} is not a time)")
        elif until > latest:
            dropped.append(f"{endpoint} (not before {until}: more than a week from now)")
        elif until > current:
            key = endpoint_key(endpoint)
            kept[key] = max(until, kept.get(key, ""))
    notes = []
    if dropped:
        # each reason said only when it is one of these waits': a garbage row was never a week long
        why = [
            reason
            for marker, reason in (("more than a week", "no Retry-After is kept beyond a week"), ("is not a time", "a wait is a time"))
            if any(marker in each for each in dropped)
        ]
        notes.append(
            f"dropped the stored wait of {'; '.join(dropped)}: {', and '.join(why)}; "
            "batches go there again (a hand-edited or damaged state?)"
        )
    return kept, notes
