"""Every option, written once: its name (the long option), how a value is read and checked
(``converters``), its default, its help, the commands that take it, its config key (the same
name) and its environment variable (``NOTIFY_CHANGES_<NAME>``, as cibuildwheel's
``CIBW_<NAME>``; a few older names are read too, as ``INDEXNOW_KEY``). The parser of each
command, the ``Settings`` and their resolution, the names the Python API and the Action
accept, and the docs' options page are made from this table; tests hold the README, the
docs and ``action.yml`` to it. A command's own words (``state forget --yes``, ``key file
--host``) are that command's arguments, not options: no config key, no variable.

Adding an option is one row here and one line in ``tests/test_options.py`` saying where
its value lands in ``Settings`` (CONTRIBUTING.md shows it).
"""

from __future__ import annotations

import argparse
import datetime as dt
from dataclasses import dataclass
from typing import Any

from notifier.announce import patterns
from notifier.errors import LOCK_TIMEOUT, UsageError
from notifier.protocol import DEFAULT_ENDPOINT, MAX_BATCH
from notifier.settings.converters import (
    Converter,
    assignments,
    choice,
    duration,
    endpoint_urls,
    flag,
    fraction,
    initial_mode,
    path,
    seconds,
    text,
    url,
    whole_number,
)
from notifier.site.hosting import DEFAULT_PLATFORM, PLATFORMS

FORMATS = ("text", "json", "github")
ANNOUNCE = ("include", "exclude", "min-interval", "per-run", "per-day", "alternates")  # the config's [announce] table
ENDPOINT_MODES = ("all", "first")  # IndexNow endpoints share what they receive: one that takes a batch may be enough
COMMANDS = ("run", "check", "state", "key", "stamp", "crawled")  # the commands whose parsers take options
ENVIRONMENT_PREFIX = "NOTIFY_CHANGES_"
RUN = ("run", "check")  # check accepts every option of run: a deploy script passes one set to both
SITE_COMMANDS = COMMANDS  # --config and --site: every command reads the config's [[sites]]
STATE_COMMANDS = ("run", "check", "state", "crawled")  # the commands that read a state


@dataclass(frozen=True)
class Option:
    name: str  # the long option and the config key
    convert: Converter
    default: Any
    help: str
    metavar: str | None = None
    kind: str = "value"  # "value", "flag" (no value on the command line), "list" (repeatable)
    choices: tuple[str, ...] = ()  # the command line offers these
    commands: tuple[str, ...] = RUN  # whose parser takes it; run without check: check accepts it, hides it from its help
    aliases: tuple[str, ...] = ()  # environment variables read after NOTIFY_CHANGES_<NAME>, as documented before it
    in_config: bool = True  # a key of the config file (``config`` names the file; ``rule`` is its [rules] table)
    into: str = ""  # the Settings field it lands in (default: ``field``); ``keys``, ``announce``, ``state``: part of one
    api: str = ""  # the Python API's keyword (default: ``field``)

    @property
    def field(self) -> str:
        """The Settings field and the API's keyword (``batch_size``)."""
        return self.name.replace("-", "_")

    @property
    def setting(self) -> str:
        """The ``Settings`` field the option's value lands in, alone or as a part of it."""
        return self.into or self.field

    @property
    def keyword(self) -> str:
        """The keyword of ``notifier.run`` and ``notifier.check`` (``batch_size``, ``endpoints``)."""
        return self.api or self.field

    @property
    def run_only(self) -> bool:
        """Only ``run`` uses it: ``check`` accepts it, hides it from its help, and the API names it in a note."""
        return "run" in self.commands and "check" not in self.commands

    @property
    def config_key(self) -> str | None:
        return self.name if self.in_config else None

    @property
    def environment(self) -> tuple[str, ...]:
        """The variables that set it, the first set one winning: ``NOTIFY_CHANGES_<NAME>``, then the older names."""
        return (ENVIRONMENT_PREFIX + self.name.upper().replace("-", "_"), *self.aliases)

    def taken_by(self, command: str) -> bool:
        return command in self.commands or (command == "check" and "run" in self.commands)


OPTIONS: tuple[Option, ...] = (
    Option(
        "state",
        text,
        None,
        "the state file, or a postgresql:// URL (default state/notify-changes.json)",
        "PATH",
        commands=STATE_COMMANDS,
        into="state",
    ),
    Option(
        "key",
        text,
        None,
        "the IndexNow key (prefer the INDEXNOW_KEY environment variable)",
        "KEY",
        aliases=("INDEXNOW_KEY",),
        into="keys",
    ),
    Option(
        "key-previous",
        text,
        None,
        "the key before a rotation, which signs while the new key's file is not live yet "
        "(prefer the INDEXNOW_KEY_PREVIOUS environment variable; `notify-changes key rotate`)",
        "KEY",
        aliases=("INDEXNOW_KEY_PREVIOUS",),
        into="keys",
    ),
    Option("key-location", url, None, "where the key file is served, if not SCHEME://HOST/KEY.txt", "URL", into="keys"),
    Option(
        "endpoint",
        endpoint_urls,
        (DEFAULT_ENDPOINT,),
        f"IndexNow endpoint, repeatable (default {DEFAULT_ENDPOINT})",
        "URL",
        kind="list",
        into="endpoints",
        api="endpoints",
    ),
    Option(
        "site-dir",
        path,
        None,
        "the build output root. Given, every page file is fingerprinted (a page whose bytes did not change is never "
        "announced) and the key file is checked; left out, the sitemap's folder resolves index parts and, when it holds "
        "index.html, gives the page rules the changed pages' heads, without reading every page",
        "DIR",
        commands=(*RUN, "stamp"),
    ),
    Option(
        "batch-size",
        lambda label: whole_number(label, 1, MAX_BATCH),
        MAX_BATCH,
        f"URLs per request, 1..{MAX_BATCH} (default {MAX_BATCH})",
        "N",
        commands=("run",),
    ),
    Option("dry-run", flag, False, "show every batch it would send; no network, no state written", kind="flag", commands=("run",)),
    Option(
        "format",
        lambda label: choice(label, FORMATS),
        "text",
        "report style (default text; github under GITHUB_ACTIONS=true)",
        choices=FORMATS,
    ),
    Option("retry-timeout", seconds, 120.0, "stop retrying a batch after this long (default 120)", "SECONDS", commands=("run",)),
    Option("request-timeout", lambda label: seconds(label, minimum=0.001), 30.0, "bound on one request (default 30)", "SECONDS"),
    Option(
        "lock-timeout",
        seconds,
        LOCK_TIMEOUT,
        f"wait this long for another run's state lock (default {LOCK_TIMEOUT:g}; state: forget's)",
        "SECONDS",
        commands=("run", "state"),
    ),
    Option(
        "initial",
        initial_mode,
        "baseline",
        "with no state file: baseline (default: record only), submit (every URL), since:DURATION, or fail",
        "MODE",
        commands=("run",),
    ),
    Option(
        "config",
        path,
        None,
        "a TOML config file (default notify-changes.toml, else pyproject.toml)",
        "PATH",
        commands=SITE_COMMANDS,
        in_config=False,
        into="config_path",
    ),
    Option("no-removed", flag, False, "do not announce removed URLs", kind="flag", commands=("run",)),
    Option(
        "endpoint-mode",
        lambda label: choice(label, ENDPOINT_MODES),
        "all",
        "all (default): every batch to every endpoint; first: to the endpoints in order, stopping at the first that "
        "takes it (a 429, 5xx, timeout or connection failure moves it to the next at once)",
        choices=ENDPOINT_MODES,
        commands=("run",),
    ),
    Option(
        "on-submit-error",
        lambda label: choice(label, ("fail", "warn")),
        "fail",
        "incomplete submission: exit 3 (fail, default) or 0 with a warning",
        choices=("fail", "warn"),
        commands=("run",),
    ),
    Option(
        "rule",
        assignments,
        None,
        "set a rule to error, warn or off, ID=LEVEL (repeatable; config [rules]); rules: `notify-changes --help` lists them",
        "ID=LEVEL",
        kind="list",
        in_config=False,
        into="rule_levels",
        api="rules",
    ),
    Option("clock-skew", duration, dt.timedelta(hours=1), "how far in the future a lastmod may be (default 1h)", "DURATION"),
    Option("max-removed", fraction, 0.2, "mass-removal threshold, e.g. 20% (default 20%, at least 10 URLs)", "SHARE"),
    Option(
        "sitemap-url",
        url,
        None,
        "the sitemap's public URL, for url-out-of-scope (a site under a path maps its pages to sources with it)",
        "URL",
        commands=(*RUN, "stamp"),
    ),
    Option(
        "platform",
        lambda label: choice(label, tuple(PLATFORMS)),
        None,
        "the host that serves the build, for how _headers and _redirects are read "
        f"(default: detected from NETLIFY=true or CF_PAGES=1, else {DEFAULT_PLATFORM})",
        choices=tuple(PLATFORMS),
        into="platform",
    ),
    Option(
        "jobs",
        lambda label: whole_number(label, 1, 64),
        None,
        "worker processes for a large sitemap index and the page files (default: the usable cores, at most 8; "
        "1: none, all work in this process)",
        "N",
    ),
    Option(
        "keep-batches",
        lambda label: whole_number(label, 1, 1_000_000),
        1000,
        "batches the ledger keeps, the newest (default 1000; `notify-changes state history`)",
        "N",
        commands=("run",),
    ),
    Option(
        "metrics",
        path,
        None,
        "after the run (or check), write Prometheus metrics to FILE, atomically (text format, for node_exporter's textfile collector)",
        "FILE",
        kind="value",
    ),
    Option(
        "site",
        text,
        None,
        "with [[sites]] in the config: only this site (default: every site)",
        "NAME",
        commands=SITE_COMMANDS,
        in_config=False,  # it picks one of the config's own [[sites]]
        into="site",
    ),
    Option(
        "site-name",
        text,
        None,
        "with a postgresql:// state: this site's name, which every row carries (required there)",
        "NAME",
        commands=STATE_COMMANDS,
        into="state",
    ),
    Option(
        "wait-live",
        lambda label: seconds(label, 3600.0),
        0.0,
        "before the first batch, wait up to this long until each host's key file (and, with --site-dir, up to 10 "
        "changed pages) is live; not live by then: nothing sent, exit 3 (default 0: no wait)",
        "SECONDS",
        commands=("run",),
    ),
    Option(
        "verify-live",
        lambda label: whole_number(label, 0, 1000),
        0,
        "before submitting, fetch up to N changed pages from the live site (default 0: off)",
        "N",
        commands=("run",),
    ),
    Option(
        "include",
        patterns,
        (),
        "announce only URLs whose path matches this glob (repeatable; * within a segment, ** across, ? the query too; "
        "config [announce] include)",
        "PATTERN",
        kind="list",
        commands=("run",),
        into="announce",
    ),
    Option(
        "exclude",
        patterns,
        (),
        "never announce URLs whose path matches this glob (repeatable; they are recorded as usual; config [announce] exclude)",
        "PATTERN",
        kind="list",
        commands=("run",),
        into="announce",
    ),
    Option(
        "min-interval",
        duration,
        dt.timedelta(0),
        "a URL announced less than this long ago waits, pending, until then (default 0: off; e.g. 10m)",
        "DURATION",
        commands=("run",),
        into="announce",
    ),
    Option(
        "per-run",
        lambda label: whole_number(label, 1),
        None,
        "at most N URLs to each endpoint a run; the rest stays pending (default: no cap)",
        "N",
        commands=("run",),
        into="announce",
    ),
    Option(
        "per-day",
        lambda label: whole_number(label, 1),
        None,
        "at most N URLs to each endpoint a UTC day, counted across runs in the state; the rest stays pending (default: no cap)",
        "N",
        commands=("run",),
        into="announce",
    ),
    Option(
        "alternates",
        flag,
        False,
        "announce a changed page's hreflang alternates with it (the sitemap's xhtml:link, or its head with --site-dir)",
        kind="flag",
        commands=("run",),
        into="announce",
    ),
)
BY_NAME = {option.name: option for option in OPTIONS}
#: The options only ``run`` uses. ``check`` accepts them too (a deploy script passes one set
#: of options to both commands), hides them from its help, and the API names them in a note.
RUN_ONLY = tuple(option.name for option in OPTIONS if option.run_only)


def default(name: str) -> Any:
    return BY_NAME[name].default


def of(command: str) -> tuple[Option, ...]:
    """The options ``command``'s parser takes."""
    return tuple(option for option in OPTIONS if option.taken_by(command))


def add_options(parser: argparse.ArgumentParser, command: str) -> None:
    """Every option of ``command`` (``COMMANDS``) on its parser, from the table; ``check``
    hides run's own."""
    for option in of(command):
        shown = argparse.SUPPRESS if command == "check" and option.run_only else option.help.replace("%", "%%")
        flag = f"--{option.name}"
        if option.kind == "flag":
            parser.add_argument(flag, action="store_const", const=True, help=shown)
        elif option.choices:
            parser.add_argument(flag, choices=option.choices, help=shown)
        else:
            parser.add_argument(flag, metavar=option.metavar, action="append" if option.kind == "list" else "store", help=shown)


def given(namespace: argparse.Namespace, command: str) -> dict[str, Any]:
    """The options of ``command`` as its parser read them: option name -> value, None when not given."""
    return {option.name: getattr(namespace, option.field) for option in of(command)}


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
