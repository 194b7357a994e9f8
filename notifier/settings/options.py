"""Every option of ``run`` and ``check``, written once: its name (the long option and the
config key), how a value is read and checked, its default, its help, and whether only a run
uses it. The parser (``cli``), the ``Settings`` defaults and the names the Python API and the
Action accept are made from this table; tests hold the README's options table and
``action.yml`` to it.

A converter takes the name to blame (``--batch-size``, ``batch_size=``, or the config file and
its key) and returns the function that reads one value, raising UsageError with one line.
"""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from notifier.announce import patterns
from notifier.dates import MAX_DURATION_SECONDS, parse_duration
from notifier.errors import UsageError
from notifier.paths import is_url
from notifier.protocol import DEFAULT_ENDPOINT, MAX_BATCH
from notifier.site.hosting import DEFAULT_PLATFORM, PLATFORMS
from notifier.urls import userinfo, without_password
from notifier.waits import endpoint_key

FORMATS = ("text", "json", "github")
INITIAL_CHOICES = ("baseline", "submit", "fail")  # and since:DURATION
ANNOUNCE = ("include", "exclude", "min-interval", "per-run", "per-day", "alternates")  # the config's [announce] table
ENDPOINT_MODES = ("all", "first")  # IndexNow endpoints share what they receive: one that takes a batch may be enough


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


Converter = Callable[[str], Callable[[Any], Any]]


@dataclass(frozen=True)
class Option:
    name: str  # the long option and the config key
    convert: Converter
    default: Any
    help: str
    metavar: str | None = None
    kind: str = "value"  # "value", "flag" (no value on the command line), "list" (repeatable)
    choices: tuple[str, ...] = ()  # the command line offers these
    run_only: bool = False  # check accepts it, hides it from its help, and the API names it in a note

    @property
    def field(self) -> str:
        """The Settings field and the API's keyword (``batch_size``)."""
        return self.name.replace("-", "_")


OPTIONS: tuple[Option, ...] = (
    Option("state", text, None, "the state file (default state/notify-changes.json)", "PATH"),
    Option("key", text, None, "the IndexNow key (prefer the INDEXNOW_KEY environment variable)", "KEY"),
    Option(
        "key-previous",
        text,
        None,
        "the key before a rotation, which signs while the new key's file is not live yet "
        "(prefer the INDEXNOW_KEY_PREVIOUS environment variable; `notify-changes key rotate`)",
        "KEY",
    ),
    Option("key-location", url, None, "where the key file is served, if not SCHEME://HOST/KEY.txt", "URL"),
    Option(
        "endpoint",
        endpoint_urls,
        (DEFAULT_ENDPOINT,),
        f"IndexNow endpoint, repeatable (default {DEFAULT_ENDPOINT})",
        "URL",
        kind="list",
    ),
    Option(
        "site-dir",
        text,
        None,
        "the build output root. Given, every page file is fingerprinted (a page whose bytes did not change is never "
        "announced) and the key file is checked; left out, the sitemap's folder resolves index parts and, when it holds "
        "index.html, gives the page rules the changed pages' heads, without reading every page",
        "DIR",
    ),
    Option(
        "batch-size",
        lambda label: whole_number(label, 1, MAX_BATCH),
        MAX_BATCH,
        f"URLs per request, 1..{MAX_BATCH} (default {MAX_BATCH})",
        "N",
        run_only=True,
    ),
    Option("dry-run", flag, False, "show every batch it would send; no network, no state written", kind="flag", run_only=True),
    Option(
        "format",
        lambda label: choice(label, FORMATS),
        "text",
        "report style (default text; github under GITHUB_ACTIONS=true)",
        choices=FORMATS,
    ),
    Option("retry-timeout", seconds, 120.0, "stop retrying a batch after this long (default 120)", "SECONDS", run_only=True),
    Option("request-timeout", lambda label: seconds(label, minimum=0.001), 30.0, "bound on one request (default 30)", "SECONDS"),
    Option("lock-timeout", seconds, 60.0, "wait this long for another run's state lock (default 60)", "SECONDS", run_only=True),
    Option(
        "initial",
        initial_mode,
        "baseline",
        "with no state file: baseline (default: record only), submit (every URL), since:DURATION, or fail",
        "MODE",
        run_only=True,
    ),
    Option("no-removed", flag, False, "do not announce removed URLs", kind="flag", run_only=True),
    Option(
        "endpoint-mode",
        lambda label: choice(label, ENDPOINT_MODES),
        "all",
        "all (default): every batch to every endpoint; first: to the endpoints in order, stopping at the first that "
        "takes it (a 429, 5xx, timeout or connection failure moves it to the next at once)",
        choices=ENDPOINT_MODES,
        run_only=True,
    ),
    Option(
        "on-submit-error",
        lambda label: choice(label, ("fail", "warn")),
        "fail",
        "incomplete submission: exit 3 (fail, default) or 0 with a warning",
        choices=("fail", "warn"),
        run_only=True,
    ),
    Option("clock-skew", duration, dt.timedelta(hours=1), "how far in the future a lastmod may be (default 1h)", "DURATION"),
    Option("max-removed", fraction, 0.2, "mass-removal threshold, e.g. 20%% (default 20%%, at least 10 URLs)", "SHARE"),
    Option("sitemap-url", url, None, "the sitemap's public URL, for url-out-of-scope", "URL"),
    Option(
        "platform",
        lambda label: choice(label, tuple(PLATFORMS)),
        None,
        "the host that serves the build, for how _headers and _redirects are read "
        f"(default: detected from NETLIFY=true or CF_PAGES=1, else {DEFAULT_PLATFORM})",
        choices=tuple(PLATFORMS),
    ),
    Option(
        "jobs",
        lambda label: whole_number(label, 1, 64),
        None,
        "worker processes for a large sitemap index and the page files (default: the usable cores, at most 8; "
        "1: none, all work in this process; env NOTIFY_CHANGES_JOBS)",
        "N",
    ),
    Option(
        "keep-batches",
        lambda label: whole_number(label, 1, 1_000_000),
        1000,
        "batches the ledger keeps, the newest (default 1000; `notify-changes state history`)",
        "N",
        run_only=True,
    ),
    Option(
        "metrics",
        text,
        None,
        "after the run (or check), write Prometheus metrics to FILE, atomically (text format, for node_exporter's textfile collector)",
        "FILE",
    ),
    Option("site", text, None, "with [[sites]] in the config: only this site (default: every site)", "NAME"),
    Option("site-name", text, None, "with a postgresql:// state: this site's name, which every row carries (required there)", "NAME"),
    Option(
        "wait-live",
        lambda label: seconds(label, 3600.0),
        0.0,
        "before the first batch, wait up to this long until each host's key file (and, with --site-dir, up to 10 "
        "changed pages) is live; not live by then: nothing sent, exit 3 (default 0: no wait)",
        "SECONDS",
        run_only=True,
    ),
    Option(
        "verify-live",
        lambda label: whole_number(label, 0, 1000),
        0,
        "before submitting, fetch up to N changed pages from the live site (default 0: off)",
        "N",
        run_only=True,
    ),
    Option(
        "include",
        patterns,
        (),
        "announce only URLs whose path matches this glob (repeatable; * within a segment, ** across, ? the query too; "
        "config [announce] include)",
        "PATTERN",
        kind="list",
        run_only=True,
    ),
    Option(
        "exclude",
        patterns,
        (),
        "never announce URLs whose path matches this glob (repeatable; they are recorded as usual; config [announce] exclude)",
        "PATTERN",
        kind="list",
        run_only=True,
    ),
    Option(
        "min-interval",
        duration,
        dt.timedelta(0),
        "a URL announced less than this long ago waits, pending, until then (default 0: off; e.g. 10m)",
        "DURATION",
        run_only=True,
    ),
    Option(
        "per-run",
        lambda label: whole_number(label, 1),
        None,
        "at most N URLs to each endpoint a run; the rest stays pending (default: no cap)",
        "N",
        run_only=True,
    ),
    Option(
        "per-day",
        lambda label: whole_number(label, 1),
        None,
        "at most N URLs to each endpoint a UTC day, counted across runs in the state; the rest stays pending (default: no cap)",
        "N",
        run_only=True,
    ),
    Option(
        "alternates",
        flag,
        False,
        "announce a changed page's hreflang alternates with it (the sitemap's xhtml:link, or its head with --site-dir)",
        kind="flag",
        run_only=True,
    ),
)
BY_NAME = {option.name: option for option in OPTIONS}
#: The options only ``run`` uses. ``check`` accepts them too (a deploy script passes one set
#: of options to both commands), hides them from its help, and the API names them in a note.
RUN_ONLY = tuple(option.name for option in OPTIONS if option.run_only)


def default(name: str) -> Any:
    return BY_NAME[name].default


def announce_table(table: Any, where: str) -> dict[str, Any]:
    """The config's ``[announce]`` table as option values (``include = [...]``, ``per-day = 500``)."""
    if not isinstance(table, dict):
        raise UsageError(f'{where}: [announce] must be a table, e.g. exclude = ["/drafts/**"]')
    values: dict[str, Any] = {}
    for raw_key, value in table.items():
        key = raw_key.replace("_", "-")
        if key not in ANNOUNCE:
            raise UsageError(f"{where}: [announce] unknown setting {raw_key!r} (settings: {', '.join(ANNOUNCE)})")
        values[key] = value
    return values
