"""Compare the built sitemap with the recorded state: added, changed, removed, pending.

Every URL lands in exactly one of the five groups. ``changed`` compares lastmods as
instants (``2024-01-01`` and ``2024-01-01T00:00:00Z`` are the same date); a URL without
a lastmod is changed only when its page file's fingerprint changed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

from notifier.dates import parse_w3c
from notifier.sitemap import Entry
from notifier.store import PendingItem, State, UrlRecord


class Change(NamedTuple):
    """One URL to announce, and why."""

    loc: str
    reason: str  # "added" | "changed" | "removed" | "pending"
    old: str | None = None  # the recorded lastmod
    new: str | None = None  # the sitemap's lastmod
    since: str | None = None  # for pending: when it first waited


@dataclass
class Diff:
    """The outcome of comparing the sitemap with the state."""

    current: dict[str, Entry] = field(default_factory=dict)  # first entry of each loc
    duplicates: list[tuple[Entry, Entry]] = field(default_factory=list)  # (first, repeat)
    added: list[Change] = field(default_factory=list)
    changed: list[Change] = field(default_factory=list)
    removed: list[Change] = field(default_factory=list)
    pending: list[Change] = field(default_factory=list)  # waiting from an earlier run only
    unchanged: int = 0
    rewritten: int = 0  # same instant written differently: recorded, never announced

    @property
    def announced(self) -> list[Change]:
        """What this run found new: added, changed and removed, in sitemap order."""
        return self.added + self.changed + self.removed


def index_entries(entries: list[Entry]) -> tuple[dict[str, Entry], list[tuple[Entry, Entry]]]:
    """loc -> its first entry, and every repeated loc with the entry it repeats."""
    current: dict[str, Entry] = {}
    duplicates: list[tuple[Entry, Entry]] = []
    for entry in entries:
        first = current.setdefault(entry.loc, entry)
        if first is not entry:
            duplicates.append((first, entry))
    return current, duplicates


def same_instant(old: str | None, new: str | None) -> bool:
    """Whether two lastmods name the same instant (strings first: the common, cheap case)."""
    if old == new:
        return True
    if old is None or new is None:
        return False
    old_instant, new_instant = parse_w3c(old), parse_w3c(new)
    if old_instant is None or new_instant is None:
        return False
    return old_instant == new_instant


def compute_diff(
    entries: list[Entry],
    state: State,
    *,
    endpoints: list[str],
    fingerprints: dict[str, str] | None = None,
) -> Diff:
    """Group every URL of the sitemap and of the state. Pure: ``state`` is not touched.

    Only the pending sets of ``endpoints`` (the ones configured now) count.
    """
    current, duplicates = index_entries(entries)
    result = Diff(current=current, duplicates=duplicates)
    recorded = state.urls
    pending_since: dict[str, str] = {}
    for endpoint in endpoints:
        for loc, item in state.pending.get(endpoint, {}).items():
            since = pending_since.get(loc)
            if since is None or item["since"] < since:
                pending_since[loc] = item["since"]
    for loc, entry in current.items():
        record = recorded.get(loc)
        if record is None:
            result.added.append(Change(loc, "added", None, entry.lastmod))
            continue
        old = record.get("lastmod")
        new = entry.lastmod
        fingerprint_moved = False
        if fingerprints is not None:
            fingerprint = fingerprints.get(loc)
            old_fingerprint = record.get("fingerprint")
            if fingerprint is not None and old_fingerprint is not None and fingerprint != old_fingerprint:
                fingerprint_moved = True
        if new is None:
            moved = fingerprint_moved  # no date to go by: the page file decides
        elif old == new:
            moved = False
        elif same_instant(old, new):
            moved = False
            result.rewritten += 1
        else:
            moved = True
        if moved:
            result.changed.append(Change(loc, "changed", old, new))
        elif loc in pending_since:
            result.pending.append(Change(loc, "pending", old, new, pending_since[loc]))
        else:
            result.unchanged += 1
    if current:  # an empty sitemap is a broken build, never "every page was removed"
        for loc, record in recorded.items():
            if loc not in current:
                result.removed.append(Change(loc, "removed", record.get("lastmod"), None))
    removed = {change.loc for change in result.removed}
    for loc, since in pending_since.items():  # removed earlier (or the sitemap is empty), still not delivered
        if loc not in current and loc not in removed:
            result.pending.append(Change(loc, "pending", None, None, since))
    return result


def apply_to_state(
    diff: Diff,
    state: State,
    *,
    endpoints: list[str],
    to_submit: list[Change],
    now: str,
    fingerprints: dict[str, str] | None = None,
) -> None:
    """Record the sitemap as the new truth and add ``to_submit`` to every endpoint's pending set.

    The pending sets are then what each endpoint is sent (older pending first). This is
    written durably before the first request, so a run killed mid-way resends what was
    not acknowledged; each acknowledged batch then leaves the pending set.
    """
    urls = state.urls
    for loc, entry in diff.current.items():
        record = urls.get(loc)
        if record is None:
            record = UrlRecord(lastmod=entry.lastmod, first_seen=now)
            urls[loc] = record
        else:
            record["lastmod"] = entry.lastmod
        if fingerprints is not None and loc in fingerprints:
            record["fingerprint"] = fingerprints[loc]
    for change in diff.removed:
        urls.pop(change.loc, None)
    fresh = {reason: PendingItem(reason=reason, since=now) for reason in ("added", "changed", "removed")}
    for endpoint in endpoints:
        items = state.pending.setdefault(endpoint, {})
        for change in to_submit:
            waiting = items.get(change.loc)
            if waiting is None:  # items are never changed in place: one object serves every URL alike
                items[change.loc] = fresh[change.reason]
            else:
                items[change.loc] = PendingItem(reason=change.reason, since=waiting["since"])
    if not state.created:
        state.created = now
    state.updated = now
