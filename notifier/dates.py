"""W3C Datetime (https://www.w3.org/TR/NOTE-datetime), the format of ``<lastmod>``.

Six forms are valid: ``YYYY``, ``YYYY-MM``, ``YYYY-MM-DD``, and the date followed by
``Thh:mmTZD``, ``Thh:mm:ssTZD`` or ``Thh:mm:ss.sTZD``. A time always needs its zone
designator (``Z`` or ``+hh:mm`` / ``-hh:mm``). Values are compared as instants in UTC and
recorded exactly as written; a partial date stands for the first instant it names.
"""

from __future__ import annotations

import array
import datetime as dt
import re
from collections.abc import Sequence

_W3C = re.compile(
    r"""
    (?P<year>\d{4})
    (?:-(?P<month>\d{2})
      (?:-(?P<day>\d{2})
        (?:T(?P<hour>[01]\d|2[0-3]):(?P<minute>[0-5]\d)
          (?::(?P<second>[0-5]\d)(?:\.(?P<fraction>\d+))?)?
          (?P<tzd>Z|[+-]\d{2}:\d{2})
        )?
      )?
    )?
    """,
    re.VERBOSE | re.ASCII,
)

UTC = dt.UTC


def parse_w3c(value: str) -> dt.datetime | None:
    """The UTC instant ``value`` names, or None when it is not a W3C Datetime."""
    match = _W3C.fullmatch(value)
    if match is None:
        return None
    if (match.group("tzd") or "")[4:] > "59":
        return None  # datetime.fromisoformat would take +01:60 as two hours (an offset of 24 hours it refuses itself)
    try:
        if match.group("day") is None:  # YYYY or YYYY-MM: the first instant of the year or month
            return dt.datetime(int(match.group("year")), int(match.group("month") or 1), 1, tzinfo=UTC)
        # the regex vouched for the form; the C parser checks the ranges and does the arithmetic
        parsed = dt.datetime.fromisoformat(value)
        return parsed.astimezone(UTC) if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)
    except (ValueError, OverflowError):  # month 13, February 30, year 0, year 1 in UTC
        return None


_NAN = float("nan")
_CHUNK = 65_536
# The forms nearly every generator writes, and where their separators are.
_UNIFORM = {
    25: ((4, "-"), (7, "-"), (10, "T"), (13, ":"), (16, ":"), (22, ":")),  # 2024-05-01T12:00:00+02:00
    20: ((4, "-"), (7, "-"), (10, "T"), (13, ":"), (16, ":"), (19, "Z")),  # 2024-05-01T12:00:00Z
}


def _uniform(texts: list[str]) -> bool:
    """Whether every text has one of the common forms, the same one, with a year from 1000:
    checked on the joined text with strided slices, a few passes at C speed."""
    if not texts:
        return False
    size = len(texts[0])
    marks = _UNIFORM.get(size)
    if marks is None or set(map(len, texts)) != {size}:
        return False
    joined = "\n".join(texts)
    stride, count = size + 1, len(texts)
    if any(joined[position::stride] != mark * count for position, mark in marks):
        return False
    # YYYY-MM-DDThh:mm:ss+hh:mm: fromisoformat would take +01:60 as two hours; a sign that is
    # no sign, or an offset of 24 hours, it refuses itself (and the texts go one by one)
    if size == 25 and not set(joined[23::stride]) <= set("012345"):
        return False
    if "T24:" in joined:  # newer Pythons read 24:00 as the next midnight; W3C has no hour 24
        return False
    return "0" not in joined[::stride]  # year 1 (and its offsets) is for parse_w3c to judge


def timestamps(values: Sequence[str | None]) -> array.array[float]:
    """``parse_w3c(value).timestamp()`` for many values at once; NaN where there is none.

    Exactly what parse_w3c says, several times faster at a million dates: when every value
    has one common form, the C parser takes them in one sweep (it checks every digit and
    range); anything else goes one by one.
    """
    if len(values) > _CHUNK:  # the checks join the texts: a few megabytes at a time
        result = array.array("d")
        for start in range(0, len(values), _CHUNK):
            result.extend(timestamps(values[start : start + _CHUNK]))
        return result
    texts = [value for value in values if value is not None]
    if len(texts) == len(values) and _uniform(texts):
        try:
            return array.array("d", map(dt.datetime.timestamp, map(dt.datetime.fromisoformat, texts)))
        except (ValueError, OverflowError):  # month 13 or an offset of 24 hours somewhere
            pass
    result = array.array("d", bytes(8 * len(values)))
    for number, value in enumerate(values):
        instant = parse_w3c(value) if value is not None else None
        result[number] = instant.timestamp() if instant is not None else _NAN
    return result


def format_utc(instant: dt.datetime) -> str:
    """An instant as the W3C Datetime the state file records for its own timestamps."""
    return instant.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_duration(text: str) -> dt.timedelta | None:
    """``14d``, ``36h``, ``90m``, ``2w``, ``45s`` -> timedelta; None when not understood."""
    match = re.fullmatch(r"(\d+)\s*([smhdw])", text.strip(), re.ASCII)
    if match is None:
        return None
    seconds = int(match.group(1)) * _UNIT_SECONDS[match.group(2)]
    return dt.timedelta(seconds=seconds) if seconds <= MAX_DURATION_SECONDS else None


_UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86_400, "w": 604_800}
#: No duration of notify-changes means more than a century; longer ones could not be added
#: to a date without leaving the calendar (year 9999), so they are refused when read.
MAX_DURATION_SECONDS = 100 * 366 * 86_400


def period_of(text: str, instant: dt.datetime) -> tuple[dt.datetime, dt.datetime]:
    """The span a lastmod names: ``2024-05-01`` is the whole day, ``2024-05`` the month."""
    if len(text) == 4:
        return instant, instant.replace(year=instant.year + 1) if instant.year < 9999 else instant
    if len(text) == 7:
        month = instant.month % 12 + 1
        year = instant.year + (1 if month == 1 else 0)
        return instant, instant.replace(year=year, month=month) if year <= 9999 else instant
    if len(text) == 10:
        return instant, instant + dt.timedelta(days=1) if instant.date() < dt.date.max else instant
    return instant, instant


_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_DAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
_ZONES = {"ut": 0, "gmt": 0, "z": 0, "est": -5, "edt": -4, "cst": -6, "cdt": -5, "mst": -7, "mdt": -6, "pst": -8, "pdt": -7}
# RFC 2822 4.3: the military zones, one letter but J. RFC 822 gave their signs backwards, so
# they "SHOULD all be considered equivalent to -0000": UTC, the local offset unknown.
_MILITARY = frozenset("abcdefghiklmnopqrstuvwxyz")
# RFC 2822 3.3 and 4.3: white space around the comma and the colons is the obsolete syntax's
# CFWS (comments are taken out first); a two- or three-digit year is obsolete; second 60 is
# a leap second.
_RFC822 = re.compile(
    r"""(?:(?P<weekday>[A-Za-z]{3})\s*,\s*)?(?P<day>\d{1,2})\s+(?P<month>[A-Za-z]{3})\s+(?P<year>\d{2,4})
    \s+(?P<hour>[01]\d|2[0-3])\s*:\s*(?P<minute>[0-5]\d)(?:\s*:\s*(?P<second>[0-5]\d|60))?\s+(?P<zone>[+-]\d{4}|[A-Za-z]{1,3})""",
    re.VERBOSE | re.ASCII,
)


def _uncommented(text: str) -> str | None:
    """``text`` with every RFC 2822 comment (3.2.3: ``(CET)``, nested, ``\\)`` quoted inside)
    made one space, as the white space it stands for; None when a parenthesis is unmatched."""
    if "(" not in text and ")" not in text:
        return text
    kept: list[str] = []
    depth, position = 0, 0
    while position < len(text):
        character = text[position]
        if depth and character == "\\":  # a quoted-pair: the next character is only text
            position += 2
            continue
        if character == "(":
            kept += " " if depth == 0 else ""
            depth += 1
        elif character == ")":
            if depth == 0:
                return None
            depth -= 1
        elif depth == 0:
            kept.append(character)
        position += 1
    return "".join(kept) if depth == 0 else None


def _year(written: str) -> int:
    """RFC 2822 4.3: a two-digit year below 50 is 20YY, else 19YY; a three-digit one is 1900 later."""
    year = int(written)
    if len(written) == 2:
        return year + (2000 if year < 50 else 1900)
    return year + 1900 if len(written) == 3 else year


def rfc822_to_w3c(text: str) -> str | None:
    """An RSS ``<pubDate>`` (RFC 822 as RFC 2822 reads it: comments anywhere, the obsolete
    two- and three-digit years, military zones, a leap second) as the W3C Datetime of the
    same instant and offset; None when it is not a valid date (a weekday that does not fit
    the date included). A leap second, 23:59:60, is read as 23:59:59: W3C Datetime and
    Python have no second 60, and the date stays on the day and minute it names."""
    uncommented = _uncommented(text)
    match = _RFC822.fullmatch(uncommented.strip()) if uncommented is not None else None
    if match is None:
        return None
    month_name, zone = match.group("month").lower(), match.group("zone").lower()
    numeric = zone.startswith(("+", "-"))
    if month_name not in _MONTHS or (not numeric and zone not in _ZONES and zone not in _MILITARY):
        return None
    if numeric:  # +hhmm: a timedelta takes 60 minutes as an hour; dt.timezone refuses 24 hours itself
        if zone[3:] > "59":
            return None
        offset = dt.timedelta(hours=int(zone[1:3]), minutes=int(zone[3:])) * (-1 if zone[0] == "-" else 1)
    else:
        offset = dt.timedelta(hours=_ZONES.get(zone, 0))
    try:
        instant = dt.datetime(
            _year(match.group("year")),
            _MONTHS.index(month_name) + 1,
            int(match.group("day")),
            int(match.group("hour")),
            int(match.group("minute")),
            min(int(match.group("second") or 0), 59),
            tzinfo=dt.timezone(offset),
        )
    except ValueError:  # 31 April, 29 February of a common year
        return None
    weekday = match.group("weekday")
    if weekday is not None and (weekday.lower() not in _DAYS or _DAYS.index(weekday.lower()) != instant.weekday()):
        return None  # a weekday that is not the date's: which of the two is wrong cannot be told
    written = instant.isoformat()
    return written[:-6] + "Z" if offset == dt.timedelta(0) else written


# -- dates as days ---------------------------------------------------------------------
ZONE_SLACK = dt.timedelta(hours=14)  # a day written in any zone: UTC-12 to UTC+14

# a date, a month, a year, or midnight written as a datetime: a day (or more), not an instant
_DAY_SIZED = re.compile(r"\d{4}(-\d\d(-\d\d(T00:00(:00(\.0+)?)?(Z|[+-]\d\d:\d\d))?)?)?", re.ASCII)


def day_sized(lastmod: str) -> bool:
    return _DAY_SIZED.fullmatch(lastmod) is not None


def day_span(text: str, instant: dt.datetime) -> tuple[dt.datetime, dt.datetime]:
    """The span a date names: a year, a month, a day, midnight written as a datetime (its
    whole day); any other instant is itself."""
    if day_sized(text) and "T" in text:
        return instant, instant + dt.timedelta(days=1)
    return period_of(text, instant)
