"""A part's records are checked in bulk on load (store/checks.check_records): every kind of
wrong record is still refused, naming the URL, and an honest part reads with its shared
timestamps made one object."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from notifier.errors import StateError
from notifier.store.checks import check_records

STAMP = "2026-11-01T10:00:00Z"
LATER = "2026-11-02T10:00:00Z"


def decoded(urls: dict[str, Any]) -> dict[str, Any]:
    """As a state file gives them: every string its own object."""
    return orjson.loads(orjson.dumps(urls))  # type: ignore[no-any-return]


@pytest.mark.parametrize(
    "records",
    [
        {"https://e/a": ["2026-01-01", STAMP, None], "https://e/b": [None, STAMP, LATER]},
        {"https://e/a": ["2026-01-01", STAMP, None, "f1"], "https://e/b": [None, STAMP, LATER, "f2"]},
        {"https://e/a": ["2026-01-01", STAMP, None, "f1"], "https://e/b": [None, STAMP, LATER]},
        {"https://e/a": [None, None, None]},
        {},
    ],
    ids=["three-fields", "with-fingerprints", "mixed", "no-stamps", "empty"],
)
def test_honest_records_read_as_written_and_share_their_timestamps(records: dict[str, Any]) -> None:
    urls = check_records(decoded(records), "state.json")
    assert urls == records and list(urls) == list(records)
    firsts = [record[1] for record in urls.values() if record[1] is not None]
    assert all(first is firsts[0] for first in firsts)
    assert all(type(record) is list for record in urls.values())


@pytest.mark.parametrize(
    ("record", "said"),
    [
        ("not a list", "malformed"),
        (["2026-01-01", STAMP], "malformed"),
        (["2026-01-01", STAMP, None, "f", "extra"], "malformed"),
        ([5, STAMP, None], "malformed"),
        (["2026-01-01", "yesterday", None], "first_seen that is not a timestamp"),
        (["2026-01-01", STAMP, 5], "last_submitted that is not a timestamp"),
        (["2026-01-01", STAMP, []], "last_submitted that is not a timestamp"),
        (["2026-01-01", {}, None], "first_seen that is not a timestamp"),
        (["2026-01-01", True, None], "first_seen that is not a timestamp"),
        (["2026-01-01", STAMP, None, 7], "fingerprint that is not a string"),
    ],
)
def test_a_wrong_record_is_refused_by_name_among_honest_ones(record: object, said: str) -> None:
    urls = decoded({"https://e/fine": ["2026-01-01", STAMP, None], "https://e/wrong": record, "https://e/after": [None, STAMP, None]})
    with pytest.raises(StateError) as caught:
        check_records(urls, "state.json")
    assert said in str(caught.value) and "https://e/wrong" in str(caught.value) and "state.json" in str(caught.value)


def test_an_empty_url_and_a_part_that_is_not_an_object_are_refused() -> None:
    with pytest.raises(StateError, match="malformed"):
        check_records({"": ["2026-01-01", STAMP, None]}, "s")
    with pytest.raises(StateError, match="not an object"):
        check_records([["2026-01-01", STAMP, None]], "s")
