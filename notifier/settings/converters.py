"""How one option's value is read and checked: each converter takes the name to blame
(``--batch-size``, ``batch_size=``, ``NOTIFY_CHANGES_BATCH_SIZE``, or the config file and its
key) and returns the function that reads one value, raising UsageError with one line.
``options.OPTIONS`` names the converter of each option."""

from __future__ import annotations

import datetime as dt
import os
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from notifier.dates import MAX_DURATION_SECONDS, parse_duration
from notifier.errors import UsageError
from notifier.paths import is_url
from notifier.urls import userinfo, without_password
from notifier.waits import endpoint_key

INITIAL_CHOICES = ("baseline", "submit", "fail")  # and since:DURATION

Converter = Callable[[str], Callable[[Any], Any]]


def seconds(name: str, maximum: float = 86_400.0, *, minimum: float = 0.0) -> Callable[[Any], float]:
    def convert(value: Any) -> float:
        if isinstance(value, bool) or not isinstance(value, (str, int, float)):
            raise UsageError(f"{name}: {value!r} is not a number of seconds")
        try:
            number = float(value)
        except (ValueError, OverflowError):
            raise UsageError(f"{name}: {value!r} is not a number of seconds") from None
        if not minimum <= number <= maximum:  # nan and inf fail this too
            low = "0" if minimum == 0 else "more than 0"
            raise UsageError(f"{name}: {value!r} must be a number of seconds from {low} to {maximum:g}")
        return number

    return convert


def whole_number(name: str, minimum: int, maximum: int | None = None) -> Callable[[Any], int]:
    allowed = f"{minimum}..{maximum}" if maximum is not None else f"{minimum} or more"

    def convert(value: Any) -> int:
        if isinstance(value, (bool, float)) or not isinstance(value, (str, int)):
            raise UsageError(f"{name}: {value!r} is not a whole number; use {allowed}")
        try:
            number = int(value)
        except ValueError:
            raise UsageError(f"{name}: {value!r} is not a whole number; use {allowed}") from None
        if number < minimum or (maximum is not None and number > maximum):
            raise UsageError(f"{name}: {value!r} is out of range; use {allowed}")
        return number

    return convert


def choice(name: str, choices: tuple[str, ...]) -> Callable[[Any], str]:
    def convert(value: Any) -> str:
        if not isinstance(value, str) or value not in choices:
            raise UsageError(f"{name}: {value!r} is not one of {', '.join(choices)}")
        return str(value)

    return convert


def initial_mode(label: str) -> Callable[[Any], str]:
    def convert(value: Any) -> str:
        if isinstance(value, str):
            if value in INITIAL_CHOICES:
                return value
            if value.startswith("since:") and parse_duration(value[6:]) is not None:
                return value
        raise UsageError(f"{label}: {value!r} is not baseline, submit, since:DURATION (e.g. since:14d, at most 100 years) or fail")

    return convert


def duration(name: str) -> Callable[[Any], dt.timedelta]:
    def convert(value: Any) -> dt.timedelta:
        if isinstance(value, dt.timedelta):
            value = value.total_seconds()
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            if not 0 <= value <= MAX_DURATION_SECONDS:  # nan, inf and negatives fail this too
                raise UsageError(f"{name}: {value!r} must be a number of seconds from 0 to 100 years")
            return dt.timedelta(seconds=float(value))
        duration = parse_duration(value) if isinstance(value, str) else None
        if duration is None:
            raise UsageError(f"{name}: {value!r} is not a duration such as 90s, 30m, 1h or 2d (at most 100 years)")
        return duration

    return convert


def fraction(label: str) -> Callable[[Any], float]:
    def convert(value: Any) -> float:
        if isinstance(value, bool) or not isinstance(value, (str, int, float)):
            raise UsageError(f"{label}: {value!r} is not a share such as 20% or 0.2")
        text = str(value).strip()
        try:
            number = float(text[:-1]) / 100 if text.endswith("%") else float(text)
        except ValueError:
            raise UsageError(f"{label}: {value!r} is not a share such as 20% or 0.2") from None
        if number > 1 and not text.endswith("%"):
            number = number / 100
        if not 0 <= number <= 1:
            raise UsageError(f"{label}: {value!r} must be between 0% and 100%")
        return number

    return convert


def flag(name: str) -> Callable[[Any], bool]:
    def convert(value: Any) -> bool:
        if isinstance(value, bool):
            return value
        raise UsageError(f"{name}: {value!r} must be true or false")

    return convert


def url(name: str) -> Callable[[Any], str]:
    def convert(value: Any) -> str:
        text = value if isinstance(value, str) else ""
        if not is_url(text):
            raise UsageError(f"{name}: {without_password(text) if text else value!r} is not an http(s) URL")
        if userinfo(text) is not None:  # an endpoint, a key file and a sitemap's public URL are public: no credentials
            raise UsageError(
                f"{name}: {without_password(text)} holds a user name or password before its host (its password not shown); "
                "a public URL carries none: remove it"
            )
        return text

    return convert


def endpoint_urls(label: str) -> Callable[[Any], tuple[str, ...]]:
    def convert(value: Any) -> tuple[str, ...]:
        items = list(value) if isinstance(value, (list, tuple)) else [value]  # one URL, or several
        if not items:
            raise UsageError(f"{label}: give at least one endpoint URL")
        one = url(label)
        written: dict[str, str] = {}  # one form -> as first written: an endpoint given twice is sent to once
        for item in items:
            if isinstance(item, str) and re.search(r"[,\s]\s*https?://", item.strip()):  # "a,b", "a b": two URLs, never one
                raise UsageError(
                    f"{label}: {without_password(item)!r} is several URLs separated by a comma or a space: give each on its own "
                    "(one URL a line in NOTIFY_CHANGES_ENDPOINT and the Action's endpoint input, a TOML list in the "
                    "config, --endpoint repeated)"
                )
            written.setdefault(endpoint_key(one(item)), one(item))
        return tuple(written.values())

    return convert


def text(name: str) -> Callable[[Any], str]:
    def convert(value: Any) -> str:
        if isinstance(value, os.PathLike):
            value = os.fspath(value)
        if not isinstance(value, str) or not value or "\x00" in value:
            raise UsageError(f"{name}: {value!r} must be a non-empty text")
        return value

    return convert


def path(name: str) -> Callable[[Any], Path]:
    """A file or folder: a non-empty text (``text``), as a Path."""
    read = text(name)

    def convert(value: Any) -> Path:
        return value if isinstance(value, Path) else Path(read(value))

    return convert


def assignments(label: str) -> Callable[[Any], dict[str, Any]]:
    """``--rule ID=LEVEL`` (each), or the API's ``rules=`` mapping: rule id -> level, as given
    (``settings`` checks the rule and the level)."""
    one = text(label)

    def convert(value: Any) -> dict[str, Any]:
        if isinstance(value, Mapping):
            return dict(value)
        levels: dict[str, Any] = {}
        for item in value if isinstance(value, (list, tuple)) else [value]:
            rule_id, sep, level = one(item).partition("=")
            if not sep:
                raise UsageError(f"{label} {item!r}: write ID=LEVEL, e.g. --rule lastmod-regressed=warn")
            levels[rule_id.strip()] = level.strip()
        return levels

    return convert
