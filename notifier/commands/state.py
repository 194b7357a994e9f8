"""``notify-changes state``: look into the recorded state, and repair its pending set.

``show``, ``url``, ``pending`` and ``export`` read the state as ``check`` does — without the
lock (a save is an atomic rename, so a reader sees the old file or the new one, whole) —
from either store. ``forget`` takes the lock like a run, drops URLs from the pending set
and saves atomically; it changes nothing without ``--yes``.
"""

from __future__ import annotations

import csv
import difflib
import json
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, TextIO

from notifier.commands.state_request import StateRequest
from notifier.errors import InputError, UsageError
from notifier.pipeline.policy import held_now
from notifier.report import plural, printable
from notifier.store import (
    FIELDS,
    FORMAT_VERSION,
    DatabaseURL,
    PendingItem,
    Record,
    State,
    backend,
    last_batches,
    open_store,
    read_state,
)
from notifier.urls import without_password
from notifier.waits import bounded, endpoint_key, wait_for

HISTORY_SHOWN = 20  # the last batches (of one URL, or of all) that history prints


def run_state_sites(requests: Sequence[StateRequest], out: TextIO) -> None:
    """Do each request; several (``state show`` of every site) are a section a site, or one
    JSON object with a member a site. A site with no state yet is said, not an error."""
    if len(requests) == 1:
        run_state_command(requests[0], out)
        return
    shown: dict[str, Any] = {}
    for number, request in enumerate(requests):
        state = read_state(request.state)
        if request.format == "json":
            shown[str(request.site)] = None if state is None else _summary(request, state)
            continue
        out.write(("\n" if number else "") + f"== {request.site}\n")
        if state is None:
            out.write(f"{printable(str(request.state))}: no state yet; the first `notify-changes run` records one\n")
        else:
            _show(request, state, out)
    if shown:
        out.write(json.dumps({"sites": shown}, ensure_ascii=False, indent=2) + "\n")


def run_state_command(request: StateRequest, out: TextIO) -> None:
    """Do ``request``; a NotifierError says what went wrong (the caller prints it)."""
    if request.action == "forget":
        if request.backoff:
            forget_waits(request, out)
        else:
            _forget(request, out)
        return
    if request.action == "history":
        _history(request, out)
        return
    if request.action in ("stats", "report"):
        from notifier.commands.stats import run_report, run_stats

        (run_stats if request.action == "stats" else run_report)(request, out, sys.stderr)
        return
    state = read_state(request.state)
    if state is None:
        raise InputError(f"{request.state}: no state file yet; the first `notify-changes run` records one (or pass --state PATH)")
    if request.action == "show":
        _show(request, state, out)
    elif request.action == "url":
        _url(request, state, out)
    elif request.action == "pending":
        _pending(request, state, out)
    else:
        _export(request, state, out)


# -- history ---------------------------------------------------------------------------
def _history(request: StateRequest, out: TextIO) -> None:
    """The last batches the endpoints answered, or those that carried one URL (the ledger)."""
    if len(request.urls) > 1:
        raise UsageError("state history takes at most one URL: `state history URL` shows its deliveries")
    shown = last_batches(request.state, request.urls[0] if request.urls else None, HISTORY_SHOWN)  # the ledger walked, not held
    if request.format == "json":
        out.write(json.dumps({"state": str(request.state), "batches": [dict(each) for each in shown]}, ensure_ascii=False, indent=2) + "\n")
        return
    if not shown:
        what = f"no batch carried {printable(request.urls[0])}" if request.urls else "no batch was sent yet"
        out.write(f"{what} (the ledger of {printable(str(request.state))})\n")
        return
    for each in shown:
        code = f"HTTP {each['http_status']}" if each["http_status"] is not None else "no answer"
        line = f"{each['at']}  {each['host']} -> {each['endpoint']}  {each['status']} ({code}, {plural(each['attempts'], 'attempt')})"
        line += f"  {plural(len(each['urls']), 'URL')}" + (f": {each['error']}" if each["error"] else "")
        out.write(printable(line) + "\n")


# -- show ------------------------------------------------------------------------------
def _store_kind(location: Path | DatabaseURL) -> str:
    return backend(location).kind


def _summary(request: StateRequest, state: State) -> dict[str, Any]:
    """What ``state show`` says, as data: the JSON output, and what the text is written from."""
    pending = {endpoint: items for endpoint, items in state.pending.items() if items}
    waits, notes = bounded(state.backoff.items(), request.now())
    return {
        "state": str(request.state),
        "store": _store_kind(request.state).lower(),
        "version": FORMAT_VERSION,
        "created": state.created or None,
        "updated": state.updated or None,
        "urls": state.url_count(),
        "files": [{"name": without_password(part.name), "urls": part.count, "without_lastmod": part.missing} for part in state.parts],
        "pending": {
            endpoint: {"urls": len(items), "oldest_since": _oldest(items), "not_before": wait_for(waits, endpoint)}
            | _held(request, state, endpoint)
            for endpoint, items in pending.items()
        },
        "backoff": waits,  # endpoint -> not before: what a run waits for
        "refused": [  # the 403 streaks key-refused counts (refusals.py): a key an endpoint may refuse
            {"host": host, "endpoint": endpoint, "runs": streak["runs"], "elsewhere": streak["elsewhere"]}
            for host, check in sorted(state.key_checks.items())
            for endpoint, streak in sorted(check.get("refused", {}).items())
        ],
        "notes": notes,
        "runs": [dict(run) for run in state.runs],
    }


def _show(request: StateRequest, state: State, out: TextIO) -> None:
    summary = _summary(request, state)
    if request.format == "json":
        out.write(json.dumps(summary, ensure_ascii=False, indent=2) + "\n")
        return
    out.write(f"{printable(str(request.state))} ({_store_kind(request.state)} store, format {FORMAT_VERSION})\n")
    out.write(f"  created {state.created or 'unknown'}, last updated {state.updated or 'unknown'}\n")
    out.write(f"  {plural(state.url_count(), 'URL')} in {plural(len(state.parts), 'sitemap file')}\n")
    for part in state.parts:
        missing = f", {part.missing} without lastmod" if part.missing else ""
        out.write(f"    {printable(without_password(part.name) or '(unnamed)')}: {plural(part.count, 'URL')}{missing}\n")
    pending, waits = summary["pending"], summary["backoff"]
    if pending:
        out.write("pending:\n")
        for endpoint, each in pending.items():
            when = f"held: not sent before {each['not_before']}" if each["not_before"] else "sent by the next run"
            if each["held"] and not each["not_before"]:
                held, why = each["held"]["urls"], each["held"]["why"]
                when = f"held: {why}" if held == each["urls"] else f"sent by the next run, but {held} of them wait for {why}"
            out.write(f"  {printable(endpoint)}: {plural(each['urls'], 'URL')}, waiting since {each['oldest_since']}; {when}\n")
    else:
        out.write("pending: nothing\n")
    if waits:
        out.write("waits (the endpoint asked to wait, Retry-After; `state forget --backoff --yes` clears them):\n")
        for endpoint, until in waits.items():
            out.write(f"  {printable(endpoint)}: not before {until}\n")
    if summary["refused"]:
        out.write("403 answers, runs in a row (key-refused after 2 while another endpoint takes the host; `key rotate` ends them):\n")
        for each in summary["refused"]:
            elsewhere = ", another endpoint took the same batches" if each["elsewhere"] else ""
            out.write(f"  {printable(each['endpoint'])} for {printable(each['host'])}: {plural(each['runs'], 'run')}{elsewhere}\n")
    for note in summary["notes"]:
        out.write(f"note: {printable(note)}\n")
    if state.runs:
        out.write("last runs (newest last; those that changed the state: a run with nothing to do writes nothing):\n")
        for run in state.runs[-10:]:
            out.write(
                f"  {run.get('at', '?')} {run.get('command', 'run')}: {run.get('added', 0)} added, {run.get('changed', 0)} changed, "
                f"{run.get('removed', 0)} removed, {run.get('submitted', 0)} submitted, {run.get('pending', 0)} pending, "
                f"exit {run.get('exit_code', 0)}\n"
            )


def _held(request: StateRequest, state: State, endpoint: str) -> dict[str, Any]:
    """What the config's [announce] keeps from the next run at ``endpoint``: a used-up per-day cap, min-interval."""
    held = held_now(request.announce, state, endpoint, request.now())
    return {"held": {"urls": held[0], "why": held[1]} if held else None}


def _oldest(items: dict[str, PendingItem]) -> str:
    return min(item["since"] for item in items.values())


# -- url -------------------------------------------------------------------------------
def _url(request: StateRequest, state: State, out: TextIO) -> None:
    if len(request.urls) != 1:
        raise UsageError("state url: name one URL, e.g. `notify-changes state url https://example.org/about/`")
    loc = request.urls[0]
    found = _find(state, loc)
    waiting = {endpoint: dict(items[loc]) for endpoint, items in state.pending.items() if loc in items}
    if found is None and not waiting:
        near = _nearest(state, loc)
        hint = f"; did you mean {near}?" if near else "; URLs are recorded exactly as the sitemap writes them"
        raise InputError(f"{loc}: not in the state {request.state}{hint}")
    described: dict[str, Any] = {"url": loc}
    if found is not None:
        part, record = found
        described.update({name: record[number] if number < len(record) else None for number, name in enumerate(FIELDS)})
        described["sitemap_file"] = part
    else:
        described["note"] = "no longer listed by the sitemap; pending as removed"
    held_out = request.announce.why_held_out(loc)
    if held_out is not None:
        described["announced"] = f"never: it {held_out} (recorded as usual)"
    described["pending"] = waiting
    if request.format == "json":
        out.write(json.dumps(described, ensure_ascii=False, indent=2) + "\n")
        return
    out.write(f"{printable(loc)}\n")
    for name, value in described.items():
        if name in ("url", "pending"):
            continue
        out.write(f"  {name.replace('_', ' ')}: {printable(str(value)) if value is not None else '-'}\n")
    if waiting:
        for endpoint, item in waiting.items():
            out.write(f"  pending at {printable(endpoint)}: {item['reason']}, since {item['since']}\n")
    else:
        out.write("  pending: nowhere\n")


def _find(state: State, loc: str) -> tuple[str, Record] | None:
    for part in state.parts:
        if part.may_list(loc):
            record = part.urls().get(loc)
            if record is not None:
                return without_password(part.name), record
    return None


FUZZY_LIMIT = 5_000  # URLs difflib may compare a typo with (0.5 s); beyond, only the usual slips are tried


def _nearest(state: State, loc: str) -> str | None:
    """The recorded URL a mistyped one most likely meant. The usual slips (a trailing slash,
    http for https, www., letter case) are looked up directly, at any size; difflib's
    similarity, quadratic in effect, only on a small state."""
    slips = {loc.rstrip("/") if loc.endswith("/") else loc + "/"}
    for old, new in (("https://", "http://"), ("http://", "https://"), ("://www.", "://"), ("://", "://www.")):
        if old in loc:
            turned = loc.replace(old, new, 1)
            slips |= {turned, turned.rstrip("/") if turned.endswith("/") else turned + "/"}
    folded = loc.casefold()
    small = sum(part.count for part in state.parts) <= FUZZY_LIMIT
    seen: list[str] = []
    for each in _locs(state):
        if each in slips or each.casefold() == folded:
            return each
        if small:
            seen.append(each)
    if not small:
        return None
    near = difflib.get_close_matches(loc, seen, n=1, cutoff=0.8)
    return near[0] if near else None


def _locs(state: State) -> Iterator[str]:
    for part in state.parts:
        yield from part.urls()


# -- pending ---------------------------------------------------------------------------
def _pending(request: StateRequest, state: State, out: TextIO) -> None:
    rows = [(endpoint, loc, item) for endpoint, items in state.pending.items() for loc, item in items.items()]
    if request.format == "json":
        listed = [{"endpoint": endpoint, "url": loc, "reason": item["reason"], "since": item["since"]} for endpoint, loc, item in rows]
        out.write(json.dumps(listed, ensure_ascii=False, indent=2) + "\n")
        return
    if not rows:
        out.write("nothing is pending\n")
        return
    for endpoint, loc, item in rows:
        out.write(f"{printable(endpoint)}\t{printable(loc)}\t{item['reason']}\t{item['since']}\n")


# -- export ----------------------------------------------------------------------------
def _export(request: StateRequest, state: State, out: TextIO) -> None:
    """Every recorded URL: its record, its sitemap file and where it is pending."""
    pending: dict[str, list[str]] = {}
    for endpoint, items in state.pending.items():
        for loc in items:
            pending.setdefault(loc, []).append(endpoint)
    columns = ("url", *FIELDS, "sitemap_file", "pending_at")

    def rows() -> Iterator[tuple[Any, ...]]:
        for part in state.parts:
            for loc, record in part.urls().items():
                values = [record[number] if number < len(record) else None for number in range(len(FIELDS))]
                # a remote SITEMAP an older version recorded with its basic auth: shown without the password
                yield (loc, *values, without_password(part.name), pending.get(loc, []))

    if request.format == "csv":
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(columns)
        for row in rows():
            writer.writerow([_cell("" if value is None else " ".join(value) if isinstance(value, list) else value) for value in row])
        return
    out.write("[")  # one object per line, written as they come: a million URLs never sit in memory twice
    for number, row in enumerate(rows()):
        out.write(("," if number else "") + "\n  " + json.dumps(dict(zip(columns, row, strict=True)), ensure_ascii=False))
    out.write("\n]\n")


def _cell(value: object) -> object:
    """A CSV cell a spreadsheet shows as text: a recorded value that begins with =, +, -, @,
    a tab or a carriage return would be run as a formula (OWASP's CSV injection), so it gets
    a leading apostrophe. Numbers stay numbers."""
    if isinstance(value, str) and value[:1] in ("=", "+", "-", "@", "\t", "\r"):
        return "'" + value
    return value


# -- forget ----------------------------------------------------------------------------
def _forget(request: StateRequest, out: TextIO) -> None:
    if not request.urls:
        raise UsageError("state forget: name the URLs to drop from the pending set, e.g. `notify-changes state forget URL --yes`")
    preview = read_state(request.state)
    if preview is None:
        raise InputError(f"{request.state}: no state file yet; nothing is pending")
    if not request.yes:
        dropped = _drop(preview, request)
        for endpoint, loc in dropped:
            out.write(f"would forget {printable(loc)} at {printable(endpoint)}\n")
        raise UsageError(
            f"state forget: {plural(len(dropped), 'pending URL')} would be dropped and never sent; nothing changed: add --yes to drop them"
        )
    store = open_store(request.state, lock_timeout=request.lock_timeout, notice=request.notice)
    with store:
        state = store.load()
        if state is None:
            raise InputError(f"{request.state}: no state file yet; nothing is pending")
        dropped = _drop(state, request)
        if dropped:
            store.save(state)
    for endpoint, loc in dropped:
        out.write(f"forgot {printable(loc)} at {printable(endpoint)}\n")
    out.write(f"{plural(len(dropped), 'pending URL')} dropped from {printable(str(request.state))}\n")


def _drop(state: State, request: StateRequest) -> list[tuple[str, str]]:
    """Drop the request's URLs from the pending set (at its endpoints, or all); what went."""
    wanted = set(request.urls)
    named = {endpoint_key(each): each for each in request.endpoints}
    endpoints = [each for each in state.pending if not named or endpoint_key(each) in named]
    unknown = [each for key, each in named.items() if key not in {endpoint_key(pending) for pending in state.pending}]
    if unknown:
        raise UsageError(f"state forget: nothing is pending at {unknown[0]}; pending endpoints: {', '.join(state.pending) or 'none'}")
    dropped: list[tuple[str, str]] = []
    for endpoint in endpoints:
        items = state.pending.get(endpoint, {})
        for loc in [loc for loc in items if loc in wanted]:
            del items[loc]
            dropped.append((endpoint, loc))
        if endpoint in state.pending and not items:
            del state.pending[endpoint]
    missing = wanted - {loc for _, loc in dropped}
    if missing:
        raise InputError(f"{sorted(missing)[0]}: not pending in {request.state}; `notify-changes state pending` lists what is")
    return dropped


def forget_waits(request: StateRequest, out: TextIO) -> None:
    """``state forget --backoff [--endpoint URL] --yes``: clear the waits endpoints asked for
    (all, or those named, in any spelling), whatever they hold: a time, or garbage."""
    if request.urls:
        raise UsageError("state forget --backoff takes no URL: it clears endpoints' waits (--endpoint URL: only that one)")
    preview = read_state(request.state)
    if preview is None:
        raise InputError(f"{request.state}: no state yet; no endpoint is waited for")
    if not request.yes:
        chosen = _chosen_waits(preview, request)
        if not chosen:
            out.write(f"no endpoint is waited for in {printable(str(request.state))}: nothing to clear\n")
            return
        for endpoint in chosen:
            out.write(f"would clear the wait at {printable(endpoint)} (not before {printable(preview.backoff[endpoint])})\n")
        raise UsageError(
            f"state forget --backoff: {plural(len(chosen), 'wait')} would be cleared, and batches sent there by the next run; "
            "nothing changed: add --yes to clear them"
        )
    with open_store(request.state, lock_timeout=request.lock_timeout, notice=request.notice) as store:
        state = store.load()
        if state is None:
            raise InputError(f"{request.state}: no state yet; no endpoint is waited for")
        chosen = _chosen_waits(state, request)
        cleared = {endpoint: state.backoff[endpoint] for endpoint in chosen}
        if chosen:
            store.clear_waits(state, chosen)
    for endpoint, until in cleared.items():
        out.write(f"cleared the wait at {printable(endpoint)} (not before {printable(until)})\n")
    if not cleared:  # a second --yes, or a state no endpoint asked to wait: nothing was waited for, nothing changed
        out.write(f"no endpoint is waited for in {printable(str(request.state))}: nothing to clear\n")
        return
    out.write(f"{plural(len(cleared), 'wait')} cleared in {printable(str(request.state))}; the next run sends there again\n")


def _chosen_waits(state: State, request: StateRequest) -> list[str]:
    """The stored waits (as spelled there) of the request's endpoints, or all of them."""
    named = {endpoint_key(each): each for each in request.endpoints}
    unknown = [each for key, each in named.items() if key not in {endpoint_key(stored) for stored in state.backoff}]
    if unknown:
        waited = ", ".join(state.backoff) or "none"
        raise UsageError(f"state forget --backoff: {unknown[0]} is not waited for; the endpoints waited for: {waited}")
    return [each for each in state.backoff if not named or endpoint_key(each) in named]
