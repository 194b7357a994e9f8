"""W3C Datetime: all six forms, compared as UTC instants, invalid ones rejected."""

from __future__ import annotations

import datetime as dt
import math
import time

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from notifier.dates import parse_duration, parse_w3c, timestamps

COMMON = ["2024-05-01T12:00:00+02:00", "2024-05-01T10:00:00Z", "1999-12-31T23:59:59-11:30", "2024-02-30T10:00:00+00:00"]

UTC = dt.UTC


@pytest.mark.parametrize(
    ("text", "instant"),
    [
        ("2024", dt.datetime(2024, 1, 1, tzinfo=UTC)),
        ("2024-07", dt.datetime(2024, 7, 1, tzinfo=UTC)),
        ("2024-07-16", dt.datetime(2024, 7, 16, tzinfo=UTC)),
        ("2024-07-16T19:20+01:00", dt.datetime(2024, 7, 16, 18, 20, tzinfo=UTC)),
        ("2024-07-16T19:20:30+01:00", dt.datetime(2024, 7, 16, 18, 20, 30, tzinfo=UTC)),
        ("2024-07-16T19:20:30.45+01:00", dt.datetime(2024, 7, 16, 18, 20, 30, 450000, tzinfo=UTC)),
        ("2023-12-20T21:52:17.375Z", dt.datetime(2023, 12, 20, 21, 52, 17, 375000, tzinfo=UTC)),
        ("2024-01-01T00:30:00-05:30", dt.datetime(2024, 1, 1, 6, 0, tzinfo=UTC)),
    ],
)
def test_the_six_forms(text: str, instant: dt.datetime) -> None:
    assert parse_w3c(text) == instant


@pytest.mark.parametrize(
    "text",
    [
        "",
        "24",
        "2024-7-1",
        "2024-02-30",
        "2024-13",
        "2024-01-01T10:00:00",
        "2024-01-01T10Z",
        "2024-01-01 10:00:00Z",
        "2024-01-01T24:00Z",
        "2024-01-01T10:00+25:00",
        "01/02/2024",
        "yesterday",
        "2024-01-01T10:00:00.Z",
        "0000-01-01",
    ],
)
def test_invalid_values_are_rejected(text: str) -> None:
    assert parse_w3c(text) is None


@given(
    st.datetimes(min_value=dt.datetime(1000, 1, 1), max_value=dt.datetime(9990, 1, 1)),
    st.integers(min_value=-14 * 60, max_value=14 * 60),
    st.sampled_from(["minutes", "seconds", "milliseconds", "microseconds"]),
)
def test_generated_dates_round_trip(moment: dt.datetime, offset_minutes: int, precision: str) -> None:
    zone = dt.timezone(dt.timedelta(minutes=offset_minutes))
    aware = moment.replace(tzinfo=zone)
    if precision == "minutes":
        aware = aware.replace(second=0, microsecond=0)
    elif precision == "seconds":
        aware = aware.replace(microsecond=0)
    elif precision == "milliseconds":
        aware = aware.replace(microsecond=aware.microsecond // 1000 * 1000)
    text = aware.isoformat(timespec=precision if precision != "microseconds" else "microseconds")
    if precision == "minutes":
        text = aware.isoformat(timespec="minutes")
    assert parse_w3c(text) == aware.astimezone(UTC)
    assert parse_w3c(aware.date().isoformat()) == dt.datetime.combine(aware.date(), dt.time(), UTC)


@given(st.text(max_size=40))
def test_any_text_parses_or_is_rejected_without_raising(text: str) -> None:
    result = parse_w3c(text)
    assert result is None or result.tzinfo == UTC


def test_durations() -> None:
    assert parse_duration("14d") == dt.timedelta(days=14)
    assert parse_duration("36h") == dt.timedelta(hours=36)
    assert parse_duration("2w") == dt.timedelta(weeks=2)
    assert parse_duration("soon") is None


@given(st.lists(st.one_of(st.none(), st.text(alphabet="0123456789-:TZ+.\n ", max_size=26), st.sampled_from(COMMON)), max_size=30))
@example(["2024-01-01T10:00:00+00:00", "2024-13-01T10:00:00+00:00"])
@example(["0001-01-01T00:00:00+01:00"])
@example(["2024-05-01T12:00:00+02:00", "1999-12-31T23:59:59-11:30"])
@example(["2024-05-01T10:00:00Z", "2024-05-01T10:00:00Z"])
@example(["2024-05-01T12:00:00+24:00", "2024-05-01T12:00:00+02:00"])
@example(["2024-01-01T10:00:00+24:00", None, "2024"])
def test_timestamps_in_bulk_equal_parse_w3c_one_by_one(values: list[str | None]) -> None:
    expected = []
    for value in values:
        instant = parse_w3c(value) if value is not None else None
        expected.append(instant.timestamp() if instant is not None else None)
    got = [None if math.isnan(stamp) else stamp for stamp in timestamps(values)]
    assert got == expected


def test_timestamps_of_more_values_than_one_sweep_takes() -> None:
    values: list[str | None] = [f"2024-05-{1 + n % 28:02d}T10:{n % 60:02d}:00+02:00" for n in range(70_000)]
    values[69_999], values[3] = "2024-05-01", None
    stamps = timestamps(values)
    assert len(stamps) == 70_000 and math.isnan(stamps[3])
    for number in (0, 65_535, 65_536, 69_998, 69_999):
        instant = parse_w3c(values[number] or "")
        assert instant is not None and stamps[number] == instant.timestamp()


@pytest.mark.parametrize(
    ("text", "valid"),
    [
        ("2024-01-01T10:00:00+23:59", True),
        ("2024-01-01T10:00:00+24:00", False),
        ("2024-01-01T10:00:00+01:59", True),
        ("2024-01-01T10:00:00+01:60", False),
        ("2024-01-01T10:00:00-23:59", True),
        # more than six fraction digits: the careful path, not the C parser, decides
        ("2024-01-01T10:00:00.1234567+23:59", True),
        ("2024-01-01T10:00:00.1234567+24:00", False),
        ("2024-01-01T10:00:00.1234567+01:59", True),
        ("2024-01-01T10:00:00.1234567+01:60", False),
        ("2024-01-01T10:00:00.1234567-01:30", True),
    ],
)
def test_a_zone_offset_is_at_most_23_59(text: str, valid: bool) -> None:
    assert (parse_w3c(text) is not None) is valid


def test_a_date_only_lastmod_names_midnight_utc_whatever_the_machines_zone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TZ", "Asia/Kolkata")
    time.tzset()
    try:
        assert parse_w3c("2024-05-01") == dt.datetime(2024, 5, 1, tzinfo=UTC)
        assert parse_w3c("2024-05-01T00:00:00+05:30") == dt.datetime(2024, 4, 30, 18, 30, tzinfo=UTC)
        assert list(timestamps(["2024-05-01", "2024-05-02"])) == [1714521600.0, 1714608000.0]
    finally:
        monkeypatch.undo()
        time.tzset()


@pytest.mark.parametrize("text", ["2024-05-01T24:00:00Z", "2024-05-01T12:60:00Z", "2024-05-01T12:00:60Z", "2024-05-01T23:59:59.999Z"])
def test_the_clock_runs_from_00_00_00_to_23_59_59(text: str) -> None:
    # the same answer on every Python: newer ones read 24:00 as the next midnight
    assert (parse_w3c(text) is not None) is text.startswith("2024-05-01T23")


@pytest.mark.parametrize(
    ("text", "instant"),
    [
        ("0001-01-01T00:00:00+01:00", None),
        ("0001-01-01T00:00:00-01:00", dt.datetime(1, 1, 1, 1, tzinfo=UTC)),
        ("9999-12-31T23:00:00-01:00", None),
        ("0000-01-01", None),
        ("0001", dt.datetime(1, 1, 1, tzinfo=UTC)),
        ("2024-13", None),
        ("2024-12", dt.datetime(2024, 12, 1, tzinfo=UTC)),
    ],
)
def test_the_edges_of_the_calendar(text: str, instant: dt.datetime | None) -> None:
    assert parse_w3c(text) == instant


def test_the_careful_path_keeps_the_offset_sign_and_the_fraction() -> None:
    assert parse_w3c("2024-01-01T10:00:00.1234567-01:30") == dt.datetime(2024, 1, 1, 11, 30, 0, 123456, tzinfo=dt.UTC)
    assert parse_w3c("2024-01-01T10:00:00.1234567+01:30") == dt.datetime(2024, 1, 1, 8, 30, 0, 123456, tzinfo=dt.UTC)


@pytest.mark.parametrize("offset", ["+01:60", "+24:00", "+23:59", "+14:00", "-01:30"])
def test_timestamps_in_bulk_judge_offsets_as_parse_w3c_does(offset: str) -> None:
    values = [f"2024-01-{day:02d}T10:00:00{offset}" for day in range(1, 29)]
    expected = [instant.timestamp() if (instant := parse_w3c(value)) is not None else None for value in values]
    got = [None if stamp != stamp else stamp for stamp in timestamps(values)]
    assert got == expected


def _one_by_one(values: list[str]) -> list[float | None]:
    return [instant.timestamp() if (instant := parse_w3c(value)) is not None else None for value in values]


def _common_dates(form: str) -> list[str]:
    """Every digit a common form can hold in each place: both offset signs, offsets 00:00 to 19:59,
    hours 00 to 23, years 1000 to 9999."""
    values = []
    for number in range(240):
        year = 1000 + number * 37
        stamp = f"{year:04d}-{number % 12 + 1:02d}-{number % 28 + 1:02d}T{number % 24:02d}:{number % 60:02d}:{(number * 7) % 60:02d}"
        if form == "Z":
            values.append(stamp + "Z")
        else:
            values.append(f"{stamp}{'+-'[number % 2]}{number % 20:02d}:{(number * 11) % 60:02d}")
    return values


@pytest.mark.parametrize("form", ["Z", "offset"])
def test_the_common_forms_are_read_in_one_sweep(form: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # the speed a million-URL sitemap relies on: not one of these goes through parse_w3c one by one
    values = _common_dates(form)
    expected = _one_by_one(values)

    def one_by_one(value: str) -> None:
        raise AssertionError(f"{value} was parsed one by one")

    monkeypatch.setattr("notifier.dates.parse_w3c", one_by_one)
    assert list(timestamps(values)) == expected


@pytest.mark.parametrize(
    "odd",
    [
        "2024-05-01 12:00:00Z",  # a space for the T: the C parser takes it, W3C does not
        "2024-05-01T12:00:00+01:60",
        "2024-05-01T12:00:00+24:00",
        "2024-05-01T12:00:00+20:00",
        "2024-05-01T12:00+02:00:00",  # seconds in the offset, same length
        "2024-05-01T24:00:00Z",
        "2024-05-01T24:00:00+00:00",
        "0001-01-01T00:00:00+01:00",
        "0999-05-01T12:00:00Z",
        "2024-13-01T12:00:00Z",
        "2024-05-01T12:00:00.5Z"[:20],  # the same length, the fraction cut: 2024-05-01T12:00:00.
        "2024-05-01T12-00:00Z",
        "2024-05-01T12:00-00Z",
        "2024-05-01X12:00:00Z",
        "2024/05-01T12:00:00Z",
        "2024-05/01T12:00:00Z",
        "2024-05-01T12:00:00+01-00",
        "2024-05-01T12:00:00*01:00",
    ],
)
@pytest.mark.parametrize("place", [0, 17, -1])
def test_one_odd_value_in_a_sweep_is_judged_as_parse_w3c_judges_it(odd: str, place: int) -> None:
    values = _common_dates("Z" if odd.endswith("Z") or odd.endswith(".") else "offset")[:40]
    values[place] = odd
    assert [None if stamp != stamp else stamp for stamp in timestamps(values)] == _one_by_one(values)


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("45s", 45), ("90m", 5400), ("36h", 129_600), ("14d", 1_209_600), ("2w", 1_209_600), (" 7 d ", 604_800), ("0s", 0),
     ("36600d", 3_162_240_000), ("36601d", None), ("3162240000s", 3_162_240_000), ("3162240001s", None),
     ("14", None), ("d", None), ("1.5h", None), ("-1d", None), ("14D", None), ("１４d", None)],
)  # fmt: skip
def test_durations_unit_by_unit_and_at_most_a_century(text: str, seconds: int | None) -> None:
    """The --clock-skew, [history] tolerance and --initial since: values; a century of 366-day years at most."""
    assert parse_duration(text) == (dt.timedelta(seconds=seconds) if seconds is not None else None)


@pytest.mark.parametrize(
    ("text", "end"),
    [
        ("2024", dt.datetime(2025, 1, 1, tzinfo=UTC)),
        ("2024-05", dt.datetime(2024, 6, 1, tzinfo=UTC)),
        ("2024-12", dt.datetime(2025, 1, 1, tzinfo=UTC)),
        ("2024-05-31", dt.datetime(2024, 6, 1, tzinfo=UTC)),
        ("2024-05-01T12:00Z", None),  # a time is an instant: the span is that instant
        ("2024-05-01T12:00:00+02:00", None),
        ("9999", None),  # the last year: its span cannot end in the calendar, so it is its first instant
        ("9999-12", None),
        ("9999-11", dt.datetime(9999, 12, 1, tzinfo=UTC)),
    ],
)
def test_the_span_a_lastmod_names(text: str, end: dt.datetime | None) -> None:
    from notifier.dates import period_of

    start = parse_w3c(text)
    assert start is not None
    assert period_of(text, start) == (start, end if end is not None else start)
