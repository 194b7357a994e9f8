"""Older state formats, read and regrouped as the current one; and the version rule.

Format 1 kept one "urls" object (JSON) or one row per URL (SQLite), each record naming
its part; format 2 groups the records by part. A format 1 state is read here and written
back as format 2 by the next save. A newer format than this program knows is refused and
left untouched.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from notifier.errors import StateError
from notifier.store.checks import check_part_meta, check_v1_record, damaged
from notifier.store.model import Part, RecordedPart
from notifier.store.records import Record, new_record

FORMAT_VERSION = 2  # 1: one "urls" object of records; 2: the records grouped by sitemap file


def check_version(version: object, name: str) -> int:
    """The format version, or a StateError: not a number, unknown, or newer than this program."""
    if type(version) is not int:
        raise damaged(name, '"version" is not an integer')
    if version > FORMAT_VERSION:
        raise StateError(
            f"{name}: state format version {version} is newer than this notify-changes knows ({FORMAT_VERSION}); "
            "upgrade notify-changes (the file was left untouched)"
        )
    if version < 1:
        raise damaged(name, f"unknown state format version {version}")
    return version


def v1_pending_groups(items: object, name: str, endpoint: str) -> list[dict[str, Any]]:
    """Format 1 kept an endpoint's pending set as url -> {"reason", "since"}: as groups of one."""
    if type(items) is not dict:
        raise damaged(name, f"pending[{endpoint}] is malformed")
    return [
        {"reason": item.get("reason"), "since": item.get("since"), "urls": [url]} if type(item) is dict else {}
        for url, item in items.items()
    ]


def parts_from_v1(document: dict[str, Any], name: str) -> list[Part]:
    """Format 1 kept one "urls" object, each record naming its part: regroup them."""
    metas = [check_part_meta(part, name, full=False) for part in document.get("parts", [])]
    grouped: list[dict[str, Record]] = [{} for _ in metas]
    loose: dict[str, Record] = {}
    for loc, record in document["urls"].items():
        lastmod, first_seen, last_submitted, fingerprint, number = check_v1_record(loc, record, name)
        target = grouped[number] if type(number) is int and 0 <= number < len(grouped) else loose
        target[loc] = new_record(lastmod, first_seen, last_submitted, fingerprint)
    result: list[Part] = [RecordedPart(meta.name, meta.digest, records) for meta, records in zip(metas, grouped, strict=True)]
    if loose:
        result.append(RecordedPart("", "", loose))  # no file named: parsed again next time
    return result


def sqlite_parts_from_v1(connection: sqlite3.Connection, name: str) -> list[Part]:
    """Format 1 kept a row per URL naming its part: regroup them (the next save writes format 2)."""
    names = [
        check_part_meta({"name": part, "digest": digest}, name, full=False)
        for part, digest in connection.execute("SELECT name, digest FROM parts ORDER BY id")
    ]
    grouped: list[dict[str, Record]] = [{} for _ in names]
    loose: dict[str, Record] = {}
    rows = connection.execute("SELECT loc, lastmod, part, fingerprint, first_seen, last_submitted FROM urls")
    for loc, lastmod, part, fingerprint, first_seen, last_submitted in rows:
        fields = {"lastmod": lastmod, "first_seen": first_seen, "last_submitted": last_submitted, "fingerprint": fingerprint}
        lastmod, first_seen, last_submitted, fingerprint, _ = check_v1_record(str(loc), fields, name)
        target = grouped[part] if isinstance(part, int) and 0 <= part < len(grouped) else loose
        target[loc] = new_record(lastmod, first_seen, last_submitted, fingerprint)
    parts: list[Part] = [RecordedPart(meta.name, meta.digest, records) for meta, records in zip(names, grouped, strict=True)]
    if loose:
        parts.append(RecordedPart("", "", loose))
    return parts
