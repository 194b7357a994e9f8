"""``notify-changes crawled LOG... [--since 14d] [--bot-ranges FILE] [--format json]``: of the
URLs the endpoints received, which each engine's crawler fetched after, and how soon."""

from __future__ import annotations

import argparse
import datetime as dt
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TextIO

from notifier.bot_ranges import CRAWLERS, read_ranges
from notifier.crawled import Crawled, crawled, delay_text
from notifier.errors import InputError, UsageError
from notifier.report import plural, printable
from notifier.settings.config_sites import site_states
from notifier.settings.options import add_options, given
from notifier.stats import since_attached, since_of

DESCRIPTION = (
    "Did the engines crawl what was announced? Reads access logs (nginx/Apache combined format, or JSON lines: "
    "Cloudflare Logpush, Netlify log drains, remote_addr/request_uri/http_user_agent; plain or gzip) as a stream and "
    f"joins them with the ledger: for each crawler ({', '.join(CRAWLERS)}), how many of the URLs received in the window "
    "it fetched after their announcement, the median and 90th-percentile delay, and the URLs never fetched. A crawler "
    "is believed by its user agent, unless --bot-ranges gives its engine's published IP ranges: then only by its address."
)
EPILOG = "Exit codes: 0 done, 2 usage or input error (no state, an unreadable log or ranges file, a --since that is no time)."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("logs", nargs="*", metavar="LOG", help="access log files (plain or .gz)")
    parser.add_argument("--since", metavar="WHEN", help="the URLs received from then on: a duration back (default 14d), a date, or all")
    parser.add_argument(
        "--bot-ranges", metavar="[ENGINE=]FILE", action="append", help="published IP ranges: Bing's JSON or a CIDR a line (default bingbot)"
    )
    parser.add_argument("--format", choices=("text", "json"), help="output: text (default) or json")
    add_options(parser, "crawled")  # --state, --site, --site-name, --config: the table's


def run_crawled(
    namespace: argparse.Namespace, out: TextIO, now: Callable[[], dt.datetime] | None = None, err: TextIO | None = None
) -> None:
    """Do the command of ``namespace``; a NotifierError says what went wrong, a note on ``err`` what was passed over."""
    if not namespace.logs:
        raise UsageError("crawled: name the access logs to read, e.g. `notify-changes crawled /var/log/nginx/access.log*`")
    sites = site_states(given(namespace, "crawled"))
    if len(sites) > 1:
        raise UsageError(
            f"crawled: the config lists {len(sites)} sites ({', '.join(str(each.name) for each in sites)}): name one with --site NAME"
        )
    location = sites[0].state
    if isinstance(location, Path) and not location.exists():  # a mistyped --state is no empty ledger: "0 URLs received" would lie
        raise InputError(f"{location}: no state yet; the first `notify-changes run` records one (or pass --state PATH)")
    until = (now or (lambda: dt.datetime.now(dt.UTC)))()
    since = since_of(namespace.since or "14d", until) or dt.datetime.min.replace(tzinfo=dt.UTC)
    ranges = read_ranges(namespace.bot_ranges or ())
    result = crawled(location, [Path(log) for log in namespace.logs], since, until, ranges)
    if result.unparsed_lines and err is not None:  # said once, in either format
        err.write(f"notify-changes: note: {plural(result.unparsed_lines, 'log line')} not in a format read here: passed over\n")
    if namespace.format == "json":
        out.write(json.dumps(result.as_dict(), ensure_ascii=False, indent=2) + "\n")
        return
    _text(result, out)


def _text(result: Crawled, out: TextIO) -> None:
    announced = result.announced
    out.write(f"{plural(announced, 'URL')} received from {result.since} to {result.until}; fetched after:\n")
    for each in result.engines:
        if each.crawled:
            out.write(
                f"  {each.engine}: {each.crawled} of {announced}, median {delay_text(each.median_delay_s)}, "
                f"90% within {delay_text(each.p90_delay_s)}\n"
            )
        else:
            out.write(f"  {each.engine}: none\n")
    if result.never:
        out.write(f"never fetched by any of them ({len(result.never)}):\n")
        out.writelines(f"  {printable(url)}\n" for url in result.never[:20])
        if len(result.never) > 20:
            out.write(f"  ... and {len(result.never) - 20} more (--format json lists them all)\n")
    if result.by_address:
        out.write(f"believed by their published addresses: {', '.join(result.by_address)}; the others by their user agents\n")
    if result.refused:
        out.write(f"{plural(result.refused, 'visit')} with a crawler's user agent from outside its published ranges: refused\n")


def parse(args: Sequence[str], parser: argparse.ArgumentParser) -> argparse.Namespace:
    add_arguments(parser)
    return parser.parse_args(since_attached(args))
