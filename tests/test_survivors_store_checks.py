"""What store/checks.py refuses in a recorded state, and what it keeps (#44's survivors).

Every damaged value is refused with a StateError naming the file, never a crash of another
kind (a TypeError, an AttributeError) and never accepted; every honest one is kept as written.
"""

from __future__ import annotations

import base64
from typing import Any

import orjson
import pytest

from notifier.errors import StateError
from notifier.store.checks import (
    check_index,
    check_key_checks,
    check_part_meta,
    check_pending_group,
    check_records,
    check_run,
    check_sent_today,
)

STAMP = "2026-11-01T10:00:00Z"
LATER = "2026-11-02T10:00:00Z"
DIGEST = "0123456789abcdef0123456789abcdef"
KEY = "0a1b2c3d"
EP = "https://api.indexnow.org/indexnow"


def refused(call: Any, *args: Any, **kwargs: Any) -> str:
    """The StateError's text (a crash of any other kind fails the test)."""
    with pytest.raises(StateError) as caught:
        call(*args, **kwargs)
    text = str(caught.value)
    assert "state.json" in text
    return text


# check_sent_today


@pytest.mark.parametrize(
    "count",
    [
        {"day": 20261101, "urls": 3},
        {"day": ["2026-11-01"], "urls": 3},
        {"day": "2026-11-01", "urls": 2.5},
        {"day": "2026-11-01", "urls": "3"},
        {"day": "2026-11-01", "urls": -1},
    ],
    ids=["day-number", "day-list", "urls-fraction", "urls-text", "urls-negative"],
)
def test_a_wrong_sent_today_is_refused(count: object) -> None:
    """fails if `type(day) is not str` (a TypeError then), `type(urls) is not int` or
    `urls < 0` is dropped from the `or` in store/checks.py::check_sent_today"""
    text = refused(check_sent_today, {EP: count}, "state.json")
    assert f'"sent_today" of {EP}' in text


def test_a_day_with_no_urls_sent_is_kept() -> None:
    """fails if `urls < 0` becomes `urls <= 0` or `urls < 1` in store/checks.py::check_sent_today"""
    assert check_sent_today({EP: {"day": "2026-11-01", "urls": 0}}, "state.json") == {EP: {"day": "2026-11-01", "urls": 0}}


# check_key_checks and _is_refusal


@pytest.mark.parametrize(
    "check",
    [
        [],
        "",
        {"key": KEY, "other": 1},
        {"key": KEY, "refused": []},
        {"key": KEY, "refused": "x"},
        {"key": KEY, "refused": {EP: ["runs", "elsewhere"]}},
        {"key": KEY, "refused": {EP: "x"}},
        {"key": KEY, "refused": {EP: {"runs": 1}}},
        {"key": KEY, "refused": {EP: {"runs": 1, "elsewhere": True, "other": 1}}},
        {"key": KEY, "refused": {EP: {"runs": "2", "elsewhere": True}}},
        {"key": KEY, "refused": {EP: {"runs": 1.5, "elsewhere": True}}},
        {"key": KEY, "refused": {EP: {"runs": 0, "elsewhere": True}}},
        {"key": KEY, "refused": {EP: {"runs": 1, "elsewhere": 1}}},
        {"key": KEY, "refused": {EP: {"runs": 1, "elsewhere": "no"}}},
    ],
    ids=[
        "check-list",
        "check-text",
        "extra-key",
        "refused-list",
        "refused-text",
        "streak-list",
        "streak-text",
        "streak-no-elsewhere",
        "streak-extra-key",
        "runs-text",
        "runs-fraction",
        "runs-zero",
        "elsewhere-number",
        "elsewhere-text",
    ],
)
def test_a_wrong_key_check_is_refused(check: object) -> None:
    """fails if any side of the `or`s in store/checks.py::check_key_checks is dropped or they
    become `and`, or if any side of the `and` in store/checks.py::_is_refusal is dropped or it
    becomes `or` (each case a crash of another kind or a damaged streak accepted)"""
    text = refused(check_key_checks, {"example.com": check}, "state.json")
    assert '"key_checks" is not an object of host' in text


def test_honest_key_checks_are_kept_per_host() -> None:
    """fails if `checked[str(host)] = ...` is removed in store/checks.py::check_key_checks"""
    streak = {"runs": 2, "elsewhere": False}
    checked = check_key_checks({"a.example": {"key": KEY}, "b.example": {"key": KEY, "refused": {EP: streak}}}, "state.json")
    assert checked == {"a.example": {"key": KEY}, "b.example": {"key": KEY, "refused": {EP: streak}}}


# check_part_meta and check_index


def part(**fields: object) -> dict[str, object]:
    meta: dict[str, object] = {"name": "sitemap.xml", "digest": DIGEST, "count": 2, "missing": 0, "origins": []}
    meta["index"] = base64.b64encode(bytes(16)).decode()
    meta.update(fields)
    return {key: value for key, value in meta.items() if value is not ...}


@pytest.mark.parametrize("full", [True, False], ids=["format-2", "format-1"])
@pytest.mark.parametrize(
    "fields",
    [{"name": ...}, {"name": 5}, {"digest": ...}, {"digest": 5}, {"name": 5, "digest": 5}],
    ids=["no-name", "name-number", "no-digest", "digest-number", "both-numbers"],
)
def test_a_part_without_a_name_or_digest_string_is_refused(fields: dict[str, object], full: bool) -> None:
    """fails if either side of `type(part_name) is not str or type(digest) is not str` is
    dropped or the `or` becomes `and` in store/checks.py::check_part_meta"""
    assert 'a part has no "name" or "digest" string' in refused(check_part_meta, part(**fields), "state.json", full=full)


@pytest.mark.parametrize(
    "fields",
    [
        {"count": -1, "missing": 0},
        {"count": 2, "missing": 3},
        {"count": 2, "missing": -1},
        {"count": 2, "missing": 1.5},
        {"count": 2, "missing": "1"},
        {"count": 2.0, "missing": 0},
    ],
    ids=["count-negative", "missing-over-count", "missing-negative", "missing-fraction", "missing-text", "count-fraction"],
)
def test_wrong_counts_of_a_part_are_refused(fields: dict[str, object]) -> None:
    """fails if `type(missing) is not int` or `not 0 <= missing <= count` is dropped from the
    `or` in store/checks.py::check_part_meta"""
    text = refused(check_part_meta, part(**fields), "state.json")
    assert 'part sitemap.xml: "count" and "missing" must be whole numbers, missing at most count' in text


@pytest.mark.parametrize(
    ("count", "missing"),
    [(0, 0), (2, 2), (2, 0)],
    ids=["empty-part", "all-missing", "none-missing"],
)
def test_a_part_at_the_bounds_of_its_counts_is_kept(count: int, missing: int) -> None:
    """fails if `count < 0` becomes `count <= 0` or `count < 1`, or `0 <= missing <= count`
    becomes `0 <= missing < count` or `1 <= missing <= count`, in store/checks.py::check_part_meta"""
    meta = check_part_meta(part(count=count, missing=missing), "state.json")
    assert (meta.count, meta.missing, meta.url_hash_index) == (count, missing, bytes(16))


@pytest.mark.parametrize(
    "origins", ["abc", {"a": 1}, [1], ["https://e/a", 1], [None]], ids=["text", "object", "number", "one-number", "null"]
)
def test_origins_that_are_not_a_list_of_strings_are_refused(origins: object) -> None:
    """fails if either side of the `or` on "origins" is dropped, the `or` becomes `and`, or its
    `all` becomes `any`, in store/checks.py::check_part_meta"""
    assert 'part sitemap.xml: "origins" must be a list of strings' in refused(check_part_meta, part(origins=origins), "state.json")


def test_origins_of_strings_are_kept() -> None:
    assert check_part_meta(part(origins=["https://e/sitemap.xml"]), "state.json").origins == ["https://e/sitemap.xml"]


@pytest.mark.parametrize(
    "index",
    [..., None, 5, [0, 0], base64.b64encode(bytes(7)).decode(), base64.b64encode(bytes(20)).decode()],
    ids=["none-given", "null", "number", "list", "seven-bytes", "twenty-bytes"],
)
def test_an_index_that_is_not_8_byte_hashes_is_refused(index: object) -> None:
    """fails if either side of `not isinstance(index, bytes) or len(index) % 8` is dropped or the
    `or` becomes `and` in store/checks.py::check_index (a crash of another kind, or a ragged
    index accepted)"""
    text = refused(check_part_meta, part(count=0, index=index), "state.json")
    assert 'part sitemap.xml: "index" is not a list of 64-bit URL hashes' in text


@pytest.mark.parametrize("index", [bytes(7), bytes(9), 5, None], ids=["seven", "nine", "number", "null"])
def test_an_index_column_that_is_not_8_byte_hashes_is_refused(index: object) -> None:
    """The same of the SQLite column, bytes read as they are: fails if a side of the `or` in
    store/checks.py::check_index is dropped or it becomes `and`."""
    assert '"index" is not a list of 64-bit URL hashes' in refused(check_index, index, "state.json", "parts row 'a'")


def test_an_index_text_with_a_character_outside_base64_is_refused() -> None:
    """fails if `validate=True` becomes `validate=False` in store/checks.py::check_index (the
    stray character would be skipped and the rest read as hashes)"""
    text = base64.b64encode(bytes(8)).decode() + "!"
    assert '"index" is not base64' in refused(check_index, text, "state.json", "part a")
    assert check_index(base64.b64encode(bytes(8)).decode(), "state.json", "part a") == bytes(8)


# check_records


def test_a_record_that_is_an_object_is_refused_as_malformed() -> None:
    """fails if `type(record) is not list` is dropped from the `or` in
    store/checks.py::check_records (a KeyError then, or a text of three characters read as fields)"""
    for record in ({"a": None, "b": None, "c": None}, "abc"):
        assert "the record of 'https://e/a' is malformed" in refused(check_records, {"https://e/a": record}, "state.json")


def test_last_submitted_times_are_shared_too() -> None:
    """fails if `record[2] = known` is removed in store/checks.py::check_records (each record
    would keep its own copy of the same time: memory at a million URLs)"""
    urls = orjson.loads(orjson.dumps({f"https://e/{n}": [None, STAMP, LATER] for n in range(3)}))
    checked = check_records(urls, "state.json")
    lasts = [record[2] for record in checked.values()]
    assert lasts == [LATER] * 3 and all(last is lasts[0] for last in lasts)


# check_pending_group


@pytest.mark.parametrize("urls", ["https://e/a", {"https://e/a": 1}], ids=["text", "object"])
def test_pending_urls_that_are_not_a_list_are_refused(urls: object) -> None:
    """fails if `type(group.get("urls")) is not list` is dropped from the `or` in
    store/checks.py::check_pending_group (a text's characters or an object's keys taken as URLs)"""
    group = {"reason": "changed", "since": STAMP, "urls": urls}
    assert f"pending[{EP}] is malformed" in refused(check_pending_group, group, "state.json", EP)


# check_run, _totals, _findings


def run(**fields: object) -> dict[str, object]:
    entry: dict[str, object] = {"at": STAMP, "command": "run", "added": 1, "exit_code": 0}
    entry.update(fields)
    return {key: value for key, value in entry.items() if value is not ...}


@pytest.mark.parametrize(
    "entry",
    [[], "run", run(at=...), run(at="yesterday"), run(command="check")],
    ids=["list", "text", "no-at", "at-not-a-time", "other-command"],
)
def test_a_malformed_run_is_refused(entry: object) -> None:
    """fails if `type(run) is not dict` (an AttributeError then) or `not is_timestamp(...)` is
    dropped from the `or` in store/checks.py::check_run"""
    assert 'an entry of "runs" is malformed' in refused(check_run, entry, "state.json")


@pytest.mark.parametrize(
    "totals",
    [
        [],
        "x",
        {EP: []},
        {EP: "x"},
        {EP: {"other": 1}},
        {EP: {"received": 1, "other": 2}},
        {EP: {"received": 1.5}},
        {EP: {"received": "1"}},
        {EP: {"received": -1}},
        {EP: {"received": 1, "refused": -1}},
        {"https://a/indexnow": {"received": 1}, EP: {"received": -1}},
    ],
    ids=[
        "list",
        "text",
        "counts-list",
        "counts-text",
        "unknown-key",
        "one-unknown-key",
        "fraction",
        "text-count",
        "negative",
        "one-negative",
        "one-endpoint-wrong",
    ],
)
def test_wrong_totals_of_a_run_are_refused(totals: object) -> None:
    """fails if "totals" is misspelt in `"totals" in run` in store/checks.py::check_run, or if any
    side of the `and`s in store/checks.py::_totals is dropped or they become `or`, or an `all`
    becomes `any`"""
    text = refused(check_run, run(totals=totals), "state.json")
    assert f'an entry of "runs" has totals that are not endpoint -> counts ({STAMP})' in text


def test_honest_totals_are_kept() -> None:
    totals = {EP: {"received": 3, "refused": 0, "failed": 0}, "https://a/indexnow": {}}
    assert check_run(run(totals=totals), "state.json")["totals"] == totals


@pytest.mark.parametrize(
    "findings",
    [
        [],
        "x",
        {"lastmod-future": []},
        {"lastmod-future": "x"},
        {"lastmod-future": {"warning": 0}},
        {"lastmod-future": {"warning": -1}},
        {"lastmod-future": {"warning": 1.5}},
        {"lastmod-future": {"warning": "2"}},
        {"lastmod-future": {"warning": 2, "error": 0}},
        {"lastmod-bulk": {"warning": 1}, "lastmod-future": {"warning": 0}},
    ],
    ids=["list", "text", "levels-list", "levels-text", "zero", "negative", "fraction", "text-count", "one-zero", "one-rule-wrong"],
)
def test_wrong_findings_of_a_run_are_refused(findings: object) -> None:
    """fails if "findings" is misspelt in `"findings" in run` in store/checks.py::check_run, or if
    `type(value) is dict`, `type(levels) is dict`, `type(count) is int` or `count > 0` is dropped
    from the `and`s of store/checks.py::_findings, an `and` becomes `or`, an `all` becomes
    `any`, or `count > 0` becomes `count >= 0` (a run only records a level it found)"""
    text = refused(check_run, run(findings=findings), "state.json")
    assert f'an entry of "runs" has findings that are not rule -> level -> count ({STAMP})' in text


def test_honest_findings_are_kept() -> None:
    findings = {"lastmod-future": {"warning": 2, "error": 1}, "lastmod-bulk": {"warning": 1}}
    assert check_run(run(findings=findings), "state.json")["findings"] == findings
