"""The access-log reader (``notifier/accesslog.py``) line by line: what a combined or JSON
line says, and which lines are not requests (counted, never fatal). Each test names the
mutant of scripts/mutate.py it kills (#44): the crawled tests read logs written in +0000
and nanoseconds only, so offsets, units and malformed lines were nobody's."""

from __future__ import annotations

import datetime as dt
import gzip
import json
from pathlib import Path

import pytest

from notifier.accesslog import MAX_LINE, Visit, read_visits

BING = "Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)"
AT = dt.datetime(2000, 10, 10, 20, 55, 36, tzinfo=dt.UTC)


def read(tmp_path: Path, text: str | bytes, name: str = "access.log") -> tuple[list[Visit], int]:
    path = tmp_path / name
    path.write_bytes(text.encode() if isinstance(text, str) else text)
    unparsed = [0]
    return list(read_visits(path, unparsed)), unparsed[0]


def combined(time: str, agent: str = BING) -> str:
    return f'157.55.39.1 - - [{time}] "GET /a.html?x=1 HTTP/1.1" 200 2326 "-" "{agent}"\n'


@pytest.mark.parametrize(
    ("time", "utc"),
    [
        ("10/Oct/2000:13:55:36 -0700", AT),
        ("11/Oct/2000:02:25:36 +0530", AT),  # minutes of the offset count too
        ("10/Oct/2000:20:55:36 +0000", AT),
        ("10/Oct/2000:22:55:36 +0200", AT),
        ("11/Oct/2000:06:55:36 +1000", AT),  # a two-digit hour (Sydney)
    ],
)
def test_a_combined_time_is_read_with_its_offset(tmp_path: Path, time: str, utc: dt.datetime) -> None:
    """Kills _combined_time's offset mutants: ``22:24`` losing its upper bound, 22/24/60/1/21
    moved by one, ``text[21] == "+"`` flipped (every log of the crawled tests is +0000)."""
    visits, unparsed = read(tmp_path, combined(time))
    assert unparsed == 0
    assert [(v.at, v.ip, v.target, v.agent, v.status, v.host) for v in visits] == [(utc, "157.55.39.1", "/a.html?x=1", BING, 200, None)]


@pytest.mark.parametrize(
    "time",
    [
        "10/Oct/2000:13:55:36 -07000",  # too long
        "10-Oct/2000:13:55:36 -0700",
        "10/Oct-2000:13:55:36 -0700",
        "10/Oct/2000:13:55:36_-0700",
        "10/Oct/2000:13:55:36 X0700",  # no sign: not read as west of UTC
        "10/Okt/2000:13:55:36 -0700",
        "31/Feb/2000:13:55:36 -0700",
        "10/Oct/2000:13:55 -0700",
    ],
)
def test_a_combined_time_out_of_its_format_is_a_line_not_read(tmp_path: Path, time: str) -> None:
    """Kills each side of ``len(text) != 26 or text[2] != "/" or ... not in "+-"`` dropped, the
    ``or`` made ``and``, and ``"+-"`` widened: a time read by position must be in its place."""
    visits, unparsed = read(tmp_path, combined(time) + combined("10/Oct/2000:13:55:36 -0700"))
    assert (len(visits), unparsed) == (1, 1)


def test_a_combined_line_without_referer_and_agent_is_read(tmp_path: Path) -> None:
    """Common log format (no referer, no agent): kills ``match.group("agent") or b""`` losing its
    ``b""``, and ``read_visits``' default ``wanted`` made False."""
    visits, unparsed = read(tmp_path, '157.55.39.1 - - [10/Oct/2000:13:55:36 -0700] "GET / HTTP/1.0" 304 -\n')
    assert unparsed == 0
    assert [(v.agent, v.status, v.at) for v in visits] == [("", 304, AT)]


def test_a_line_longer_than_the_limit_is_passed_over_whole(tmp_path: Path) -> None:
    """A request line of 200 KB (an attack, a broken logger) is one unparsed line, and the line
    after it is read: kills the MAX_LINE conditions of read_visits (``or`` made ``and``, its
    sides dropped, ``<`` made ``<=``, ``==`` flipped, the ``not`` dropped)."""
    long = combined("10/Oct/2000:13:55:36 -0700", agent="x" * (3 * MAX_LINE + 17))
    exact = combined("10/Oct/2000:13:55:36 -0700", agent="y" * 40)
    pad = MAX_LINE - len(exact)  # a line of exactly MAX_LINE bytes, its newline the last: read
    exact = exact.replace("y" * 40, "y" * (40 + pad))
    assert len(exact.encode()) == MAX_LINE
    visits, unparsed = read(
        tmp_path, long + combined("10/Oct/2000:14:55:36 -0700") + exact + combined("10/Oct/2000:15:55:36 -0700").rstrip("\n")
    )
    assert unparsed == 1
    assert [v.at.hour for v in visits] == [21, 20, 22]
    assert visits[1].agent == "y" * (40 + pad)


def test_the_limit_is_64_kib_whatever_the_line_holds(tmp_path: Path) -> None:
    """A request line of 100,000 bytes is over the limit (kills MAX_LINE = 1 << 16 made larger)."""
    visits, unparsed = read(tmp_path, combined("10/Oct/2000:13:55:36 -0700", agent="x" * 100_000))
    assert (visits, unparsed) == ([], 1)


def test_a_line_not_read_of_exactly_the_limit_leaves_the_next_line_alone(tmp_path: Path) -> None:
    """Garbage of exactly MAX_LINE bytes, its newline the last: the line after it is read (kills
    the pass-over loop's ``and`` losing its second side, which ate the next line)."""
    visits, unparsed = read(tmp_path, "x" * (MAX_LINE - 1) + "\n" + combined("10/Oct/2000:13:55:36 -0700"))
    assert (len(visits), unparsed) == (1, 1)


def test_a_last_line_of_garbage_without_newline_ends_the_read(tmp_path: Path) -> None:
    """A log cut mid-line (rotated while written): counted, and the read ends (kills the
    pass-over loop's ``and`` made ``or`` or losing its first side: it read the end for ever)."""
    visits, unparsed = read(tmp_path, combined("10/Oct/2000:13:55:36 -0700") + "157.55.39.1 - - [10/Oct/20")
    assert (len(visits), unparsed) == (1, 1)


def test_lines_of_agents_not_wanted_are_skipped_not_counted(tmp_path: Path) -> None:
    """``wanted`` decides before a time is read: a browser's request is neither yielded nor an
    unparsed line, in either format (kills the ``continue`` and ``return _UNWANTED`` raised)."""
    path = tmp_path / "access.log"
    path.write_text(
        combined("10/Oct/2000:13:55:36 -0700", agent="Firefox")
        + combined("10/Oct/2000:13:55:36 -0700")
        + jsonl({"request_uri": "/j", "time": 971211336, "ua": "Firefox"}, {"request_uri": "/k", "time": 971211336, "ua": BING})
    )
    unparsed = [0]
    visits = list(read_visits(path, unparsed, lambda ip, agent: "bingbot" in agent))
    assert ([v.target for v in visits], unparsed[0]) == (["/a.html?x=1", "/k"], 0)


def test_a_gzip_log_is_read_as_its_lines(tmp_path: Path) -> None:
    visits, unparsed = read(tmp_path, gzip.compress(combined("10/Oct/2000:13:55:36 -0700").encode()), "access.log.gz")
    assert (len(visits), unparsed) == (1, 0)


def jsonl(*lines: object) -> str:
    return "".join(json.dumps(line) + "\n" for line in lines)


@pytest.mark.parametrize(
    "stamp",
    [
        971211336,  # seconds
        971211336.0,
        971211336000,  # milliseconds
        971211336000000,  # microseconds (Fastly, Vector): not nanoseconds of 1970
        971211336000000000,  # nanoseconds (Logpush's default)
        "2000-10-10T20:55:36Z",
        "2000-10-10T13:55:36-07:00",
        "2000-10-10T20:55:36",  # no offset: UTC
        "10/Oct/2000:13:55:36 -0700",  # nginx's $time_local in a JSON log
    ],
)
def test_a_json_time_in_every_unit_is_the_same_moment(tmp_path: Path, stamp: object) -> None:
    """Kills _json_time's thresholds and divisors moved (1e15, 1e11, 1e3) and ``>`` made ``>=``;
    the microseconds row is the bug it found: 9.7e14 µs was read as ms, the year 32746."""
    visits, unparsed = read(tmp_path, jsonl({"remote_addr": "157.55.39.1", "request_uri": "/a", "http_user_agent": BING, "time": stamp}))
    assert unparsed == 0
    assert [(v.at, v.ip, v.agent, v.target) for v in visits] == [(AT, "157.55.39.1", BING, "/a")]


@pytest.mark.parametrize(
    ("stamp", "seconds"),
    [
        (99_999_999_999, 99_999_999_999),  # the last second read as seconds: the year 5138
        (100_000_000_000, 100_000_000),  # from 1e11: milliseconds
        (150_000_000_000, 150_000_000),
        (100_000_000_000_000, 100_000_000),  # from 1e14: microseconds
        (150_000_000_000_000, 150_000_000),
        (100_000_000_000_000_000, 100_000_000),  # from 1e17: nanoseconds
        (150_000_000_000_000_000, 150_000_000),
    ],
)
def test_a_json_unix_time_takes_the_unit_its_size_says(tmp_path: Path, stamp: int, seconds: int) -> None:
    """The documented bounds of _json_time (kills each threshold doubled, ``>=`` made ``>``)."""
    visits, _ = read(tmp_path, jsonl({"request_uri": "/a", "time": stamp}))
    assert [v.at for v in visits] == [dt.datetime.fromtimestamp(seconds, dt.UTC)]


@pytest.mark.parametrize(
    "line",
    [
        {"request_uri": "/a", "time": True},  # a bool is no time (it is an int to Python)
        {"request_uri": "/a"},  # no time
        {"request_uri": 7, "time": 971211336},  # a target that is no text
        {"remote_addr": "157.55.39.1", "time": 971211336},  # no target
        {"request_uri": "/a", "time": "yesterday"},
        {"request_uri": "/a", "time": [1]},
        {"request_uri": "/a", "time": 1e300},  # past every calendar
        ["not", "an", "object"],
    ],
)
def test_a_json_line_that_is_no_request_is_counted_not_fatal(tmp_path: Path, line: object) -> None:
    """Kills ``visit is None or wanted(...)`` losing its first side (a crash on the line), the
    sides of ``not isinstance(target, str) or at is None`` dropped, and the bool guard dropped."""
    good = {"request_uri": "/b", "time": 971211336}
    visits, unparsed = read(tmp_path, jsonl(line, good) + "{not json\n")
    assert ([v.target for v in visits], unparsed) == (["/b"], 2)


def test_a_json_line_with_a_whole_url_gives_its_host_and_path(tmp_path: Path) -> None:
    """Netlify's ``url``: the host from the URL (its user part dropped) unless a host field says
    otherwise; a missing address and agent are empty, never "None": kills the ``or`` of
    ``host or scheme_host...``, and ``found["ip"] or ""`` / ``found["agent"] or ""`` mutants."""
    visits, unparsed = read(
        tmp_path,
        jsonl(
            {"url": "https://bot@www.example.com/a/b?c=1", "timestamp": 971211336, "status": "404"},
            {"url": "https://cdn.example.net/x", "host": "www.example.com", "timestamp": 971211336, "ip": None, "ua": None},
            {"ClientRequestURI": "/z", "ClientRequestHost": "www.example.com", "EdgeStartTimestamp": 971211336, "status": "n/a"},
        ),
    )
    assert unparsed == 0
    assert [(v.host, v.target, v.ip, v.agent, v.status) for v in visits] == [
        ("www.example.com", "/a/b?c=1", "", "", 404),
        ("www.example.com", "/x", "", "", 0),
        ("www.example.com", "/z", "", "", 0),
    ]
