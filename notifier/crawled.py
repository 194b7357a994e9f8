"""Did the engines crawl what was announced? The ledger's received URLs joined with the
crawlers' visits in access logs (``accesslog``): for each engine's crawler, how many of the
URLs received in the window it fetched after their announcement, and how long after.

The logs are streamed; what is held is the announced URLs (the ledger's, bounded by
``--keep-batches``) and each crawler's first fetch of each, never the log.
"""

from __future__ import annotations

import datetime as dt
import math
import urllib.parse
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from notifier.accesslog import Visit, read_visits
from notifier.bot_ranges import CRAWLERS, Identify, Ranges, identifier
from notifier.stats import outcome
from notifier.store import DatabaseURL, ledger_entries

# an endpoint taking a URL again this soon after its announcement is that announcement (one
# deploy's retries); later, it announces the page again, changed
ANNOUNCEMENT_GAP = dt.timedelta(hours=1)


@dataclass
class Crawls:
    """The join: announced URL -> its latest announcement; (engine, URL) -> first fetch after it."""

    announced: dict[str, dt.datetime] = field(default_factory=dict)
    takers: dict[str, set[str]] = field(default_factory=dict)  # URL -> the endpoints that took its announcement
    by_target: dict[str, list[tuple[str, str]]] = field(default_factory=dict)  # path?query -> [(host, URL)]
    first: dict[tuple[str, str], dt.datetime] = field(default_factory=dict)
    visits: int = 0  # crawler visits believed
    refused: int = 0  # visits with a crawler's user agent from outside its published ranges

    def announce(self, url: str, at: dt.datetime, endpoint: str) -> None:
        """A receipt of ``url`` by ``endpoint`` at ``at``, taken in the ledger's order. An
        endpoint that already took the URL's announcement taking it again over an hour later
        is a new announcement (the page changed and was sent again), which replaces it; any
        other receipt is the same one (a deploy's other endpoints, its retries, an endpoint
        that refused or failed it taking it on a later run)."""
        if url in self.announced:
            takers = self.takers[url]
            if endpoint in takers and at - self.announced[url] > ANNOUNCEMENT_GAP:
                self.announced[url] = at
                takers.clear()
            takers.add(endpoint)
            return
        self.announced[url] = at
        self.takers[url] = {endpoint}
        parts = urllib.parse.urlsplit(url)
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        self.by_target.setdefault(target, []).append((parts.hostname or "", url))

    def see(self, engine: str, visit: Visit) -> None:
        host = visit.host.lower().split(":")[0] if visit.host else None
        for announced_host, url in self.by_target.get(visit.target, ()):
            if host is not None and host != announced_host:
                continue
            if visit.at >= self.announced[url]:
                key = (engine, url)
                if key not in self.first or visit.at < self.first[key]:
                    self.first[key] = visit.at

    def result(self, since: dt.datetime, until: dt.datetime, unparsed_lines: int, by_address: tuple[str, ...] = ()) -> Crawled:
        """What the join found, as a frozen value."""
        engines = []
        for engine in CRAWLERS:
            delays = sorted((at - self.announced[url]).total_seconds() for (name, url), at in self.first.items() if name == engine)
            engines.append(EngineCrawl(engine, len(self.announced), len(delays), _rank(delays, 0.5), _rank(delays, 0.9)))
        fetched = {url for _, url in self.first}
        return Crawled(
            since=since.strftime("%Y-%m-%dT%H:%M:%SZ"),
            until=until.strftime("%Y-%m-%dT%H:%M:%SZ"),
            engines=tuple(engines),
            never=tuple(sorted(url for url in self.announced if url not in fetched)),
            visits=self.visits,
            refused=self.refused,
            unparsed_lines=unparsed_lines,
            by_address=by_address,
        )


@dataclass(frozen=True)
class EngineCrawl:
    """One crawler's fetches of the announced URLs."""

    engine: str
    announced: int
    crawled: int  # announced URLs it fetched after their announcement
    median_delay_s: float | None
    p90_delay_s: float | None


@dataclass(frozen=True)
class Crawled:
    """What ``crawled`` found: the value ``notify-changes crawled`` prints and a report page can show."""

    since: str
    until: str
    engines: tuple[EngineCrawl, ...]  # in CRAWLERS' order
    never: tuple[str, ...]  # announced URLs no crawler fetched after their announcement, sorted
    visits: int  # crawler visits believed
    refused: int  # visits with a crawler's user agent from outside its published ranges
    unparsed_lines: int  # log lines in neither format, passed over
    by_address: tuple[str, ...] = ()  # the engines believed by their addresses (--bot-ranges), the others by user agent

    @property
    def announced(self) -> int:
        return self.engines[0].announced if self.engines else 0

    def as_dict(self) -> dict[str, Any]:
        """The JSON of ``crawled --format json`` (README: "Did the engines crawl it?")."""
        return {
            "since": self.since,
            "until": self.until,
            "engines": {
                each.engine: {
                    "announced": each.announced,
                    "crawled": each.crawled,
                    "median_delay_s": each.median_delay_s,
                    "p90_delay_s": each.p90_delay_s,
                }
                for each in self.engines
            },
            "never": list(self.never),
            "visits": {"believed": self.visits, "refused_by_ranges": self.refused, "by_address": list(self.by_address)},
            "unparsed_lines": self.unparsed_lines,
        }


def crawled(
    location: Path | DatabaseURL,
    logs: Sequence[Path],
    since: dt.datetime,
    until: dt.datetime,
    ranges: Mapping[str, Ranges] | None = None,
) -> Crawled:
    """Join the ledger of ``location`` (the URLs received from ``since`` on) with the crawlers'
    visits in ``logs``, streamed; with ``ranges``, those engines' crawlers are believed only
    by their addresses. A plain function of its arguments: the command and a report page call it alike."""
    crawls = Crawls()
    announced_urls(location, since, crawls)
    unparsed = [0]
    identify = identifier(ranges or {})
    for log in logs:
        join(crawls, visits_of(log, unparsed, identify), identify)
    return crawls.result(since, until, unparsed[0], tuple(ranges or {}))


def visits_of(log: Path, unparsed: list[int], identify: Identify) -> Iterator[Visit]:
    """The visits of ``log`` that a crawler made or claims to have made; the others are
    passed over before their time is read."""
    return read_visits(log, unparsed, lambda ip, agent: identify(ip, agent) != (None, None))


def delay_text(seconds: float | None) -> str:
    """A delay as people read it: minutes, hours, days; "-" for none."""
    if seconds is None:
        return "-"
    if seconds < 3600:
        return f"{seconds / 60:.0f} min"
    if seconds < 172_800:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86_400:.1f} days"


def _rank(values: Sequence[float], share: float) -> float | None:
    """The nearest-rank percentile (the median at 0.5); None of nothing."""
    if not values:
        return None
    return values[max(0, math.ceil(share * len(values)) - 1)]


def announced_urls(location: Path | DatabaseURL, since: dt.datetime, crawls: Crawls) -> None:
    """Every URL an endpoint received at or after ``since``, with its latest announcement."""
    from notifier.dates import parse_w3c

    for entry in ledger_entries(location):
        at = parse_w3c(entry["at"])
        if at is not None and at >= since and outcome(entry["status"], entry["http_status"]) == "received":
            for url in entry["urls"]:
                crawls.announce(url, at, entry["endpoint"])


def join(crawls: Crawls, visits: Iterable[Visit], identify: Identify) -> None:
    """Take in every crawler's visit, as ``identify`` tells whose it is; a forged one is refused."""
    for visit in visits:
        engine, forged = identify(visit.ip, visit.agent)
        if forged is not None:
            crawls.refused += 1
        if engine is None:
            continue
        crawls.visits += 1
        crawls.see(engine, visit)
