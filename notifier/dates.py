"""W3C Datetime (https://www.w3.org/TR/NOTE-datetime), the format of ``<lastmod>``.

Six forms are valid: ``YYYY``, ``YYYY-MM``, ``YYYY-MM-DD``, and the date followed by
``Thh:mmTZD``, ``Thh:mm:ssTZD`` or ``Thh:mm:ss.sTZD``. A time always needs its zone
designator (``Z`` or ``+hh:mm`` / ``-hh:mm``). Values are compared as instants in UTC and
recorded exactly as written; a partial date stands for the first instant it names.
"""

from __future__ import annotations

import datetime as dt
import re

_W3C = re.compile(
    r"""
    (?P<year>\d{4})
    (?:-(?P<month>\d{2})
      (?:-(?P<day>\d{2})
        (?:T(?P<hour>\d{2}):(?P<minute>\d{2})
          (?::(?P<second>\d{2})(?:\.(?P<fraction>\d+))?)?
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
    if len(value) >= 10:  # the common forms: let the C parser do the arithmetic
        try:
            if len(value) == 10:
                return dt.datetime.fromisoformat(value).replace(tzinfo=UTC)
            if value[-1] == "Z" or value[-6] in "+-":
                parsed = dt.datetime.fromisoformat(value)
                if parsed.tzinfo is not None and parsed.year > 1:
                    return parsed.astimezone(UTC)
        except (ValueError, OverflowError):
            pass  # e.g. more than six fraction digits: the careful path below decides
    return _parse_parts(match)


def _parse_parts(match: re.Match[str]) -> dt.datetime | None:
    parts = match.groupdict()
    try:
        offset = dt.timedelta(0)
        tzd = parts["tzd"]
        if tzd and tzd != "Z":
            hours, minutes = int(tzd[1:3]), int(tzd[4:6])
            if hours > 23 or minutes > 59:
                return None
            offset = dt.timedelta(hours=hours, minutes=minutes)
            if tzd[0] == "-":
                offset = -offset
        fraction = parts["fraction"] or ""
        instant = dt.datetime(
            int(parts["year"]),
            int(parts["month"] or 1),
            int(parts["day"] or 1),
            int(parts["hour"] or 0),
            int(parts["minute"] or 0),
            int(parts["second"] or 0),
            int((fraction + "000000")[:6]),
            tzinfo=dt.timezone(offset),
        ).astimezone(UTC)
    except (ValueError, OverflowError):  # month 13, February 30, hour 24, year 0 in UTC
        return None
    return instant


def format_utc(instant: dt.datetime) -> str:
    """An instant as the W3C Datetime the state file records for its own timestamps."""
    return instant.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_duration(text: str) -> dt.timedelta | None:
    """``14d``, ``36h``, ``90m``, ``2w``, ``45s`` -> timedelta; None when not understood."""
    match = re.fullmatch(r"(\d+)\s*([smhdw])", text.strip(), re.ASCII)
    if match is None:
        return None
    unit = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days", "w": "weeks"}
    return dt.timedelta(**{unit[match.group(2)]: int(match.group(1))})


def period_of(text: str, instant: dt.datetime) -> tuple[dt.datetime, dt.datetime]:
    """The span a lastmod names: ``2024-05-01`` is the whole day, ``2024-05`` the month."""
    if len(text) == 4:
        return instant, instant.replace(year=instant.year + 1) if instant.year < 9999 else instant
    if len(text) == 7:
        month = instant.month % 12 + 1
        year = instant.year + (1 if month == 1 else 0)
        return instant, instant.replace(year=year, month=month) if year <= 9999 else instant
    if len(text) == 10:
        return instant, instant + dt.timedelta(days=1)
    return instant, instant
