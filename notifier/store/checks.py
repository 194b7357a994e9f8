"""The documented structure of a recorded state (``state/schema.json``), checked on load.

Both stores read through these checks. Anything off, a missing key, a value of the wrong
type, a broken JSON column, is a StateError that names the file and what is wrong; the
file is left as it is. Nothing read from a state file reaches the rest of the program
unchecked, so a damaged file can never crash a run half-way (after its POSTs, say).
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, TypedDict

import orjson

from notifier.errors import StateError

PENDING_REASONS = frozenset({"added", "changed", "removed", "pending"})
TIMESTAMP = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z", re.ASCII)  # what notify-changes writes
DIGEST = re.compile(r"([0-9a-f]{32})?", re.ASCII)
_RUN_COUNTS = ("added", "changed", "removed", "submitted", "pending", "exit_code")
_TOTALS = ("received", "refused", "failed")


def restore_hint(name: str) -> str:
    """What to do about a state file that cannot be used: said the same way everywhere."""
    return f"restore {name or 'the state file'} from a backup, or move it away to record a new baseline"


def damaged(name: str, what: str) -> StateError:
    return StateError(f"{name}: {what}; {restore_hint(name)}")


def check_header(document: Mapping[str, Any], name: str, *, required: tuple[str, ...]) -> None:
    """The top-level keys a version requires, and the types of those present."""
    for key in required:
        if key not in document:
            raise damaged(name, f'no "{key}" (a state file always has one: it was cut or edited by hand)')
    for key, kind in (("pending", dict), ("runs", list), ("parts", list), ("urls", dict)):
        if key in document and type(document[key]) is not kind:
            raise damaged(name, f'"{key}" is not {"an object" if kind is dict else "a list"}')
    for key in ("created", "updated"):
        if key in document and not is_timestamp(document[key]):
            raise damaged(name, f'"{key}" is not a timestamp')


def check_backoff(value: object, name: str) -> dict[str, str]:
    """``backoff``: endpoint -> the time before which nothing is sent to it. A value that is
    not a time is kept as text: the run that reads it drops it with a note (``waits.bounded``),
    as it drops a wait beyond a week, rather than refuse the whole state for it."""
    if type(value) is not dict:
        raise damaged(name, '"backoff" is not an object of endpoint URL -> timestamp')
    return {str(endpoint): when if type(when) is str else orjson.dumps(when).decode() for endpoint, when in value.items()}


class SentToday(TypedDict):
    """How many URLs an endpoint took on one UTC day, for ``[announce] per-day``."""

    day: str  # YYYY-MM-DD
    urls: int


DAY = re.compile(r"\d{4}-\d{2}-\d{2}", re.ASCII)


def check_sent_today(value: object, name: str) -> dict[str, SentToday]:
    """``sent_today``: endpoint -> {"day", "urls"}."""
    if type(value) is not dict:
        raise damaged(name, '"sent_today" is not an object of endpoint URL -> {"day", "urls"}')
    checked: dict[str, SentToday] = {}
    for endpoint, count in value.items():
        day, urls = (count.get("day"), count.get("urls")) if type(count) is dict else (None, None)
        if type(day) is not str or DAY.fullmatch(day) is None or type(urls) is not int or urls < 0:
            raise damaged(name, f'"sent_today" of {endpoint} is not {{"day": "YYYY-MM-DD", "urls": N}}')
        checked[str(endpoint)] = SentToday(day=day, urls=urls)
    return checked


class Refusal(TypedDict):
    """One endpoint's streak of 403s for a host (``key-refused``)."""

    runs: int  # consecutive runs that endpoint answered 403 for the host's batches
    elsewhere: bool  # meanwhile another endpoint took the host's batches signed with the same key


class KeyCheck(TypedDict, total=False):
    """What the state keeps of a host's key: never the key, a digest of it, and the streaks."""

    key: str  # 8 hex digits of BLAKE2b over the key that last signed the host's batches
    refused: dict[str, Refusal]  # endpoint -> its streak of 403s for this host


KEY_DIGEST = re.compile(r"[0-9a-f]{8}", re.ASCII)


def check_key_checks(value: object, name: str) -> dict[str, KeyCheck]:
    """``key_checks``: host -> {"key": digest, "refused": {endpoint: {"runs", "elsewhere"}}}."""
    wrong = damaged(name, '"key_checks" is not an object of host -> {"key": 8 hex digits, "refused": {endpoint: {"runs", "elsewhere"}}}')
    if type(value) is not dict:
        raise wrong
    checked: dict[str, KeyCheck] = {}
    for host, check in value.items():
        if type(check) is not dict or set(check) - {"key", "refused"} or not KEY_DIGEST.fullmatch(str(check.get("key", ""))):
            raise wrong
        refused = check.get("refused", {})
        if type(refused) is not dict or not all(_is_refusal(streak) for streak in refused.values()):
            raise wrong
        checked[str(host)] = KeyCheck(key=check["key"], refused=dict(refused)) if refused else KeyCheck(key=check["key"])
    return checked


def _is_refusal(value: object) -> bool:
    return (
        type(value) is dict
        and set(value) == {"runs", "elsewhere"}
        and type(value["runs"]) is int
        and value["runs"] >= 1
        and type(value["elsewhere"]) is bool
    )


def is_timestamp(value: object) -> bool:
    """A UTC instant as notify-changes writes it (``2024-05-01T12:00:00Z``)."""
    return type(value) is str and TIMESTAMP.fullmatch(value) is not None


@dataclass(frozen=True, slots=True)
class PartMeta:
    """What the state says of one sitemap file, besides its records."""

    name: str
    digest: str
    count: int
    missing: int
    origins: list[str]
    url_hash_index: bytes | None  # None: to be worked out from the records


def check_part_meta(meta: object, name: str, *, full: bool = True) -> PartMeta:
    """One part's fields. ``full``: format 2 requires them all; format 1 had name and digest only."""
    if type(meta) is not dict:
        raise damaged(name, 'an item of "parts" is not an object')
    part_name, digest = meta.get("name"), meta.get("digest")
    if type(part_name) is not str or type(digest) is not str:
        raise damaged(name, 'a part has no "name" or "digest" string')
    if not full:
        return PartMeta(part_name, digest, 0, 0, [], None)
    if DIGEST.fullmatch(digest) is None:
        raise damaged(name, f'part {part_name or "(unnamed)"}: "digest" is not a BLAKE2b-128 digest')
    count, missing, origins = meta.get("count"), meta.get("missing"), meta.get("origins")
    where = f"part {part_name or '(unnamed)'}"
    if type(count) is not int or count < 0 or type(missing) is not int or not 0 <= missing <= count:
        raise damaged(name, f'{where}: "count" and "missing" must be whole numbers, missing at most count')
    if type(origins) is not list or not all(type(each) is str for each in origins):
        raise damaged(name, f'{where}: "origins" must be a list of strings')
    index = check_index(meta.get("index"), name, where)
    if len(index) < 8 * count:  # a hash for every URL its file lists, and it holds the records of some of those
        raise damaged(name, f'{where}: "index" holds the hashes of {len(index) // 8} URLs, fewer than the {count} of "count"')
    return PartMeta(part_name, digest, count, missing, origins, index)


def check_count(urls: dict[str, Any], count: int, name: str, part: str) -> None:
    """The records decoded must be as many as the part's "count" said (the totals and the
    rules of an unread file trust that count)."""
    if len(urls) != count:
        raise damaged(name, f'part {part or "(unnamed)"} holds {len(urls)} URL records where its "count" says {count}')


def check_index(index: object, name: str, where: str) -> bytes:
    """A part's URL-hash index: base64 text (JSON) or bytes (SQLite) of 8-byte numbers."""
    if type(index) is str:
        try:
            index = base64.b64decode(index, validate=True)
        except (binascii.Error, ValueError):
            raise damaged(name, f'{where}: "index" is not base64') from None
    if not isinstance(index, bytes) or len(index) % 8:
        raise damaged(name, f'{where}: "index" is not a list of 64-bit URL hashes')
    return index


def check_records(urls: object, name: str) -> dict[str, list[Any]]:
    """A part's records, checked one by one: ``[lastmod|null, first_seen|null, last_submitted|null(, fingerprint)]``.

    The timestamps thousands of records share are made one object again (JSON gives each
    its own copy: a hundred megabytes at a million URLs).
    """
    if type(urls) is not dict:
        raise damaged(name, "a part's URL records are not an object")
    shared: dict[object, str] = {}  # each distinct timestamp, checked once
    for loc, record in urls.items():
        if type(record) is not list or not 3 <= len(record) <= 4 or not (record[0] is None or type(record[0]) is str) or not loc:
            raise damaged(name, f"the record of {loc!r} is malformed")
        stamp = record[1]  # written out twice, not looped: this runs once per URL
        if stamp is not None:
            known = shared.get(stamp) if type(stamp) is str else None
            if known is None:
                known = _new_stamp(stamp, shared, name, loc, "first_seen")
            record[1] = known
        stamp = record[2]
        if stamp is not None:
            known = shared.get(stamp) if type(stamp) is str else None
            if known is None:
                known = _new_stamp(stamp, shared, name, loc, "last_submitted")
            record[2] = known
        if len(record) == 4 and type(record[3]) is not str:
            raise damaged(name, f"the record of {loc} has a fingerprint that is not a string")
    return urls


def _new_stamp(stamp: object, shared: dict[object, str], name: str, loc: str, field_name: str) -> str:
    """A timestamp not met before in this part: checked, then shared."""
    if not is_timestamp(stamp):
        raise damaged(name, f"the record of {loc} has a {field_name} that is not a timestamp")
    assert isinstance(stamp, str)
    shared[stamp] = stamp
    return stamp


def check_v1_record(loc: str, record: object, name: str) -> tuple[str | None, str | None, str | None, str | None, object]:
    """A format 1 record, ``{"lastmod", "first_seen", "last_submitted", "fingerprint", "part"}``."""
    if type(record) is not dict:
        raise damaged(name, f"the record of {loc} is malformed")
    fields = [record.get(key) for key in ("lastmod", "first_seen", "last_submitted", "fingerprint")]
    if not all(value is None or type(value) is str for value in fields):
        raise damaged(name, f"the record of {loc} has a field that is not a string")
    return fields[0], fields[1], fields[2], fields[3], record.get("part")


def check_pending_group(group: object, name: str, endpoint: str) -> tuple[str, str, list[str]]:
    """(reason, since, urls) of one group of an endpoint's pending URLs."""
    if (
        type(group) is not dict
        or group.get("reason") not in PENDING_REASONS
        or not is_timestamp(group.get("since"))
        or type(group.get("urls")) is not list
        or not all(type(url) is str and url for url in group["urls"])
    ):
        raise damaged(name, f"pending[{endpoint}] is malformed")
    return group["reason"], group["since"], group["urls"]


def check_run(run: object, name: str) -> dict[str, Any]:
    """One entry of the log of recent runs."""
    if type(run) is not dict or not is_timestamp(run.get("at")) or run.get("command") != "run":
        raise damaged(name, 'an entry of "runs" is malformed')
    if not all(type(run[key]) is int for key in _RUN_COUNTS if key in run):
        raise damaged(name, f'an entry of "runs" has a count that is not a whole number ({run.get("at")})')
    if "totals" in run and not _totals(run["totals"]):
        raise damaged(name, f'an entry of "runs" has totals that are not endpoint -> counts ({run.get("at")})')
    if "findings" in run and not _findings(run["findings"]):
        raise damaged(name, f'an entry of "runs" has findings that are not rule -> level -> count ({run.get("at")})')
    return run


def _totals(value: object) -> bool:
    """A run's ``totals``: endpoint -> {received, refused, failed} -> a whole number of URLs."""
    return type(value) is dict and all(
        type(counts) is dict and all(key in _TOTALS and type(count) is int and count >= 0 for key, count in counts.items())
        for counts in value.values()
    )


def _findings(value: object) -> bool:
    """A run's ``findings``: rule -> level -> a whole number of URLs."""
    return type(value) is dict and all(
        type(levels) is dict and all(type(level) is str and type(count) is int and count > 0 for level, count in levels.items())
        for levels in value.values()
    )


def json_column(value: object, name: str, what: str) -> Any:
    """A JSON text kept in an SQLite column, parsed, or a StateError naming the column."""
    if not isinstance(value, (str, bytes)):
        raise damaged(name, f"{what} is not JSON text")
    try:
        return orjson.loads(value)
    except orjson.JSONDecodeError:
        raise damaged(name, f"{what} is not valid JSON") from None
