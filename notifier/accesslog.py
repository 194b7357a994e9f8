"""Access logs read as a stream: nginx/Apache combined format, and JSON lines with the usual
field names (Cloudflare Logpush, Netlify log drains, nginx ``escape=json`` logs), plain or
gzip. Memory is a line, whatever the file's size; a line that is neither is counted, not fatal.
"""

from __future__ import annotations

import datetime as dt
import gzip
import re
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import orjson

from notifier.errors import InputError
from notifier.paths import cannot

# 127.0.0.1 - - [10/Oct/2000:13:55:36 -0700] "GET /a.html HTTP/1.1" 200 2326 "referer" "agent"
_COMBINED = re.compile(
    rb'^(?P<ip>\S+) \S+ \S+ \[(?P<time>[^\]]+)\] "(?P<method>[A-Z]+) (?P<target>\S+)[^"]*" (?P<status>\d{3}) \S+'
    rb'(?: "(?:[^"\\]|\\.)*" "(?P<agent>(?:[^"\\]|\\.)*)")?'
)
_FIELDS = {  # what each field is called, in the order they are tried
    "ip": ("ClientIP", "client_ip", "remote_addr", "ip", "clientIp"),
    "host": ("ClientRequestHost", "host", "http_host", "domain"),
    "target": ("ClientRequestURI", "request_uri", "url", "path", "uri"),
    "agent": ("ClientRequestUserAgent", "http_user_agent", "user_agent", "userAgent", "ua"),
    "time": ("EdgeStartTimestamp", "time_iso8601", "timestamp", "time", "@timestamp", "time_local"),
    "status": ("EdgeResponseStatus", "status", "status_code", "statusCode"),
}
MAX_LINE = 1 << 16  # bytes: no log line of a request is longer; a longer one is passed over


@dataclass(frozen=True)
class Visit:
    """One request of the log: who asked, for what, when, and what it got."""

    ip: str
    host: str | None
    target: str  # the path and query, as requested
    agent: str
    at: dt.datetime
    status: int


_UNWANTED = Visit("", None, "", "", dt.datetime.min.replace(tzinfo=dt.UTC), 0)  # a request of a user agent not asked for


def read_visits(path: Path, unparsed: list[int], wanted: Callable[[str, str], bool] = lambda ip, agent: True) -> Iterator[Visit]:
    """The requests of the log ``path`` whose address and user agent are ``wanted``, one at a time;
    ``unparsed[0]`` counts the lines that were not a request in either format."""
    try:
        raw = path.open("rb")
    except OSError as error:
        raise InputError(f"{path}: {cannot('read the log', error)}") from None
    with raw:
        handle: IO[bytes] = gzip.GzipFile(fileobj=raw) if raw.peek(2)[:2] == b"\x1f\x8b" else raw  # type: ignore[assignment]
        try:
            while line := handle.readline(MAX_LINE):
                visit = _visit(line, wanted) if line.endswith(b"\n") or len(line) < MAX_LINE else None
                if visit is _UNWANTED:
                    continue
                if visit is None:
                    if line.strip():
                        unparsed[0] += 1
                    while len(line) == MAX_LINE and not line.endswith(b"\n"):
                        line = handle.readline(MAX_LINE)
                    continue
                yield visit
        except (OSError, EOFError, zlib.error) as error:  # zlib.error: a gzip whose data is damaged, not cut short
            raise InputError(f"{path}: cannot read the log ({error})") from None


def _visit(line: bytes, wanted: Callable[[str, str], bool]) -> Visit | None:
    text = line.strip()
    if text.startswith(b"{"):
        visit = _json_visit(text)
        return visit if visit is None or wanted(visit.ip, visit.agent) else _UNWANTED
    match = _COMBINED.match(text)
    if match is None:
        return None
    agent = (match.group("agent") or b"").decode("utf-8", "replace")
    ip = match.group("ip").decode("ascii", "replace")
    if not wanted(ip, agent):  # most lines: not a crawler's, whose time is never read
        return _UNWANTED
    at = _combined_time(match.group("time").decode("ascii", "replace"))
    if at is None:
        return None
    return Visit(
        ip,
        None,
        match.group("target").decode("utf-8", "replace"),
        agent,
        at,
        int(match.group("status")),
    )


_MONTHS = {
    name: number for number, name in enumerate(("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"), 1)
}


def _combined_time(text: str) -> dt.datetime | None:
    """``10/Oct/2000:13:55:36 -0700`` read by position (strptime took two thirds of a line's time)."""
    try:
        if len(text) != 26 or text[2] != "/" or text[6] != "/" or text[20] != " " or text[21] not in "+-":
            raise ValueError(text)
        offset = (int(text[22:24]) * 60 + int(text[24:26])) * (1 if text[21] == "+" else -1)
        local = dt.datetime(int(text[7:11]), _MONTHS[text[3:6]], int(text[0:2]), int(text[12:14]), int(text[15:17]), int(text[18:20]))
        return (local - dt.timedelta(minutes=offset)).replace(tzinfo=dt.UTC)
    except (ValueError, KeyError, OverflowError):
        return None


def _json_visit(text: bytes) -> Visit | None:
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError:
        return None
    found = {name: next((value[key] for key in keys if key in value), None) for name, keys in _FIELDS.items()}
    target, at = found["target"], _json_time(found["time"])
    if not isinstance(target, str) or at is None:
        return None
    host = found["host"] if isinstance(found["host"], str) else None
    if "://" in target:  # a whole URL (Netlify's url): its host and its path
        scheme_host, _, rest = target.partition("://")[2].partition("/")
        host, target = host or scheme_host.split("@")[-1], "/" + rest
    status = found["status"]
    return Visit(str(found["ip"] or ""), host, target, str(found["agent"] or ""), at, status if isinstance(status, int) else _int(status))


def _int(value: Any) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return 0


def _json_time(value: Any) -> dt.datetime | None:
    """An ISO 8601 time, a combined-format time, or Unix time in s, ms, µs or ns (Logpush's
    default), told apart by size: a time of these decades is about 1.7e9 seconds, so each unit
    owns three digits (s below 1e11, the year 5138; ms below 1e14; µs below 1e17)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        seconds = value / 1e9 if value >= 1e17 else value / 1e6 if value >= 1e14 else value / 1e3 if value >= 1e11 else value
        try:
            return dt.datetime.fromtimestamp(seconds, dt.UTC)
        except (OverflowError, OSError, ValueError):
            return None
    if not isinstance(value, str):
        return None
    try:
        parsed = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return _combined_time(value)
    return parsed.astimezone(dt.UTC) if parsed.tzinfo else parsed.replace(tzinfo=dt.UTC)
