"""What ``notify-changes state`` is asked: its options, and one checked request a site.

The command covers the config's ``[[sites]]``: ``--site NAME`` picks one; ``show`` shows every
site when none is named, the others ask for ``--site`` when there are several (each works on
one site's records, and ``forget`` writes them).
"""

from __future__ import annotations

import argparse
import datetime as dt
import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from notifier.announce import Announce
from notifier.database import DatabaseURL
from notifier.errors import LOCK_TIMEOUT, UsageError
from notifier.settings.config_sites import SiteState
from notifier.settings.options import add_options

ACTIONS = ("show", "url", "pending", "forget", "export", "history", "stats", "report")
DESCRIPTION = (
    "Inspect and repair the recorded state. show: counts, pending per endpoint, the endpoints waited for (not before T), "
    "the last runs. url URL: one URL's record (lastmod, first seen, last submitted, fingerprint, sitemap file), where it "
    "is pending, and which [announce] pattern holds it out. pending: every pending URL. forget URL... --yes: drop URLs "
    "from the pending set (they are never sent); "
    "forget --backoff --yes: clear the waits endpoints asked for (Retry-After). export: every record, as JSON or CSV. "
    "history [URL]: the last batches the endpoints answered (of that URL). stats [--since 30d]: per UTC day and endpoint, "
    "the URLs sent, received (2xx), refused (4xx), failed (429, 5xx, no answer) and held, the pending set's age, the busiest "
    "hosts, counted from the ledger. report --html FILE [--since 90d]: the same as one self-contained page with charts. "
    "With [[sites]] in the config, --site NAME "
    "picks a site; show shows every site, the others need --site when there are several. Works on every store; only "
    "forget takes the state lock."
)
EPILOG = (
    "Exit codes: 0 done, 2 usage or input error (no state, an unknown URL or site, forget without --yes, a --since that "
    "is no duration or date), 4 state locked."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``notify-changes state``."""
    parser.add_argument("action", nargs="?", choices=ACTIONS, help="what to do")
    parser.add_argument("urls", nargs="*", metavar="URL", help="url: the URL; forget: the URLs to drop")
    parser.add_argument("--format", choices=("text", "json", "csv"), help="output: text (default), json; export: json (default) or csv")
    parser.add_argument("--endpoint", metavar="URL", action="append", help="forget: only at this endpoint (repeatable; default all)")
    parser.add_argument("--backoff", action="store_true", help="forget: clear the endpoints' waits (Retry-After) instead of URLs")
    parser.add_argument("--yes", action="store_true", help="forget: really drop them")
    parser.add_argument(
        "--since",
        metavar="WHEN",
        help="stats, report: count from then on: a duration back (default 30d, report 90d), a date (2026-11-01), or all",
    )
    parser.add_argument("--html", metavar="FILE", help="report: the page to write (atomically)")
    parser.add_argument("--log", metavar="LOG", action="append", help="report: an access log, for what the crawlers fetched (repeatable)")
    parser.add_argument("--bot-ranges", metavar="[ENGINE=]FILE", action="append", help="report --log: as for `crawled`")
    add_options(parser, "state")  # --state, --site, --site-name, --config, --lock-timeout: the table's


@dataclass(frozen=True)
class StateRequest:
    action: str
    state: Path | DatabaseURL
    urls: Sequence[str] = ()
    endpoints: Sequence[str] = ()  # forget: only at these endpoints (default: all)
    yes: bool = False
    format: str = "text"
    lock_timeout: float = LOCK_TIMEOUT
    backoff: bool = False  # forget: the endpoints' waits, not URLs
    site: str | None = None  # one of the config's [[sites]]
    announce: Announce = Announce()  # url: the config's [announce] patterns, to say when one holds the URL out
    since: str | None = None  # stats, report: --since as given (None: the default, 30d; report 90d)
    html: str | None = None  # report: the page to write
    logs: Sequence[str] = ()  # report: access logs, for the page's "Did the engines crawl it?" (``crawled``)
    bot_ranges: Sequence[str] = ()  # report: --bot-ranges, as for ``crawled``
    now: Callable[[], dt.datetime] = functools.partial(dt.datetime.now, dt.UTC)  # what a stored wait is measured against
    notice: Callable[[str], None] | None = None  # forget: says once that it waits for a run's lock


def state_requests(namespace: argparse.Namespace, sites: Sequence[SiteState]) -> list[StateRequest]:
    """The request for each site the command covers, its options checked."""
    if namespace.action is None:
        raise UsageError(f"state: say what to do: {', '.join(ACTIONS)} (see `notify-changes state --help`)")
    style = namespace.format or ("json" if namespace.action == "export" else "text")
    if style == "csv" and namespace.action != "export":
        raise UsageError("--format csv: only `state export` writes CSV; use text or json")
    if style == "text" and namespace.action == "export":
        raise UsageError("state export: --format json or csv")
    if namespace.urls and namespace.action not in ("url", "forget", "history"):
        raise UsageError(f"state {namespace.action} takes no URL; `state url URL` shows one")
    if namespace.backoff and namespace.action != "forget":
        raise UsageError(f"--backoff: only `state forget --backoff` takes it; `state {namespace.action}` shows the waits in `state show`")
    if namespace.since is not None and namespace.action not in ("stats", "report"):
        raise UsageError(f"--since: only `state stats` and `state report` take it; `state {namespace.action}` does not count over time")
    if namespace.html is not None and namespace.action != "report":
        raise UsageError(f"--html: only `state report --html FILE` takes it; `state {namespace.action}` writes to stdout")
    if (namespace.log or namespace.bot_ranges) and namespace.action != "report":
        raise UsageError("--log, --bot-ranges: only `state report --html FILE --log LOG` takes them; see `notify-changes crawled`")
    if namespace.bot_ranges and not namespace.log:
        raise UsageError("--bot-ranges: the ranges are for the visits of --log LOG; name the access logs too")
    if len(sites) > 1 and namespace.action != "show":
        names = ", ".join(str(each.name) for each in sites)
        raise UsageError(
            f"state {namespace.action}: the config lists {len(sites)} sites ({names}): name one with --site NAME "
            "(`state show` shows them all)"
        )
    return [
        StateRequest(
            namespace.action,
            each.state,
            urls=namespace.urls,
            endpoints=namespace.endpoint or (),
            yes=namespace.yes,
            format=style,
            lock_timeout=each.lock_timeout,
            backoff=namespace.backoff,
            site=each.name,
            announce=each.announce,
            since=namespace.since,
            html=namespace.html,
            logs=namespace.log or (),
            bot_ranges=namespace.bot_ranges or (),
        )
        for each in sites
    ]
