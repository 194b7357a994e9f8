"""A state from the rows of a database store (SQLite, PostgreSQL): the same layout in both,
one row per sitemap file holding its URLs' records, each value checked as it is read."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, cast

from notifier.store.checks import (
    check_backoff,
    check_index,
    check_key_checks,
    check_part_meta,
    check_pending_group,
    check_run,
    check_sent_today,
    damaged,
    json_column,
)
from notifier.store.ledger import LedgerEntry, is_entry
from notifier.store.model import PendingItem, RecordedPart, RunRecord, State, apply_delivery

PartRow = tuple[Any, Any, Any, Any, Any, Any, "Blob"]  # name, digest, count, missing, origins, URL-hash index, where its urls are


@dataclass(frozen=True)
class Blob:
    """A part's records left in the database: its row, and how to read them when first needed."""

    row: int
    fetch: Callable[[int], bytes]  # the row -> its records' bytes
    elsewhere: Callable[[], bytes | None] | None = None  # the same bytes read by another process (picklable), or None


PendingRow = tuple[Any, Any, Any, Any]  # endpoint, reason, since, urls
DeliveredRow = tuple[Any, Any, Any]  # endpoint, at, urls


def ledger_rows(texts: Iterable[Any], damaged: Callable[[], None] | None = None) -> Iterator[LedgerEntry]:
    """A database store's ledger rows (JSON text), oldest first, one at a time; a damaged row
    is skipped, and ``damaged`` called for it."""
    for text in texts:
        try:
            value = json.loads(text)
        except (TypeError, ValueError):
            value = None
        if is_entry(value):
            yield cast(LedgerEntry, value)
        elif damaged is not None:
            damaged()


def state_from_rows(
    meta: Mapping[str, Any],
    parts: Iterable[PartRow],
    pending: Iterable[PendingRow],
    delivered: list[DeliveredRow],
    runs: Iterable[Any],
    name: str,
) -> tuple[State, bool]:
    """The state the rows hold (the version already checked), and whether acknowledged
    batches not yet folded in were found (``delivered``: the next save folds them)."""
    for key in ("created", "updated"):
        if type(meta.get(key, "")) is not str:
            raise damaged(name, f"meta {key} is not a timestamp")
    backoff = check_backoff(json_column(meta["backoff"], name, "meta backoff"), name) if "backoff" in meta else {}
    state = State(created=meta.get("created", ""), updated=meta.get("updated", ""), backoff=backoff)
    if "sent_today" in meta:
        state.sent_today = check_sent_today(json_column(meta["sent_today"], name, "meta sent_today"), name)
    if "key_checks" in meta:  # a meta row, as backoff's: written once a run has sent a batch
        state.key_checks = check_key_checks(json_column(meta["key_checks"], name, "meta key_checks"), name)
    for part_name, digest, count, missing, origins, prints, urls in parts:
        where = f"parts row {part_name!r}"
        checked = check_part_meta(
            {
                "name": part_name,
                "digest": digest,
                "count": count,
                "missing": missing,
                "origins": json_column(origins, name, f"{where}: origins"),
                "index": check_index(bytes(prints) if isinstance(prints, memoryview) else prints, name, where),
            },
            name,
        )
        state.parts.append(
            RecordedPart(
                checked.name,
                checked.digest,
                fetch=urls.fetch,  # its records stay in the row until a run needs them (checked as they are decoded)
                row=urls.row,
                elsewhere=urls.elsewhere,
                count=checked.count,
                missing=checked.missing,
                origins=checked.origins,
                url_hash_index=checked.url_hash_index,
                source=name,
            )
        )
    items: dict[tuple[str, str], PendingItem] = {}
    for endpoint, reason, since, urls in pending:
        if type(endpoint) is not str:
            raise damaged(name, "a pending row has no endpoint")
        group = {"reason": reason, "since": since, "urls": json_column(urls, name, f"pending row of {endpoint}: urls")}
        reason, since, locs = check_pending_group(group, name, endpoint)
        item = items.setdefault((reason, since), PendingItem(reason=reason, since=since))
        state.pending.setdefault(endpoint, {}).update(dict.fromkeys(locs, item))
    for endpoint, at, urls in delivered:  # acknowledged since the last full save: folded in as a journal is
        locs = json_column(urls, name, "a delivered row's urls")
        if type(endpoint) is not str or type(at) is not str or type(locs) is not list or not all(type(loc) is str for loc in locs):
            raise damaged(name, "a delivered row is malformed")
        apply_delivery(state, endpoint, locs, at)
    state.runs = [cast(RunRecord, check_run(json_column(record, name, "a runs row"), name)) for record in runs]
    state.settle()
    return state, bool(delivered)
