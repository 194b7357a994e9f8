"""Benchmark lastmod-bulk, the one rule that counts every date, on a first run of N URLs.

    .venv/bin/python scripts/bench_bulk.py --urls 1000000 --rounds 5

scripts/bench.py turns the rule off (its sites' dates are random, not a build's), so its
cost is measured here, alone, beside its floor: parsing the same dates once
(``dates.timestamps``), which every first run does anyway. Three sites:

- honest: distinct dates spread over ten years, none near the run (the common case);
- build clock: every date within milliseconds, minutes before the run (the rule fires);
- shared: every page at one instant finer than a second (the rule fires at once).
"""

from __future__ import annotations

import argparse
import array
import datetime as dt
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from notifier.changes import Diff
from notifier.dates import timestamps
from notifier.rules.bulk import lastmod_bulk
from notifier.rules.context import Context
from notifier.rules.table import RuleSettings
from notifier.sitemap.files import Sitemap
from notifier.store import State

NOW = dt.datetime(2026, 11, 30, 12, tzinfo=dt.UTC)


def sites(count: int) -> dict[str, list[str]]:
    rng = random.Random(1)
    start = dt.datetime(2015, 1, 1, tzinfo=dt.UTC)
    honest = [(start + dt.timedelta(seconds=rng.randrange(330_000_000))).strftime("%Y-%m-%dT%H:%M:%SZ") for _ in range(count)]
    build = NOW - dt.timedelta(minutes=3)
    clock = [(build + dt.timedelta(microseconds=n * 7)).isoformat(timespec="milliseconds").replace("+00:00", "Z") for n in range(count)]
    return {"honest": honest, "build clock": clock, "shared": ["2026-11-30T11:57:00.125Z"] * count}


def measure(lastmods: list[str], rounds: int) -> tuple[float, float, str]:
    parse, rule = [], []
    fired = ""
    for _ in range(rounds):
        started = time.perf_counter()
        stamps = timestamps(lastmods)
        parse.append(time.perf_counter() - started)
        diff = Diff()
        diff.added.locs.extend(f"https://example.org/p{n}/" for n in range(len(lastmods)))
        diff.added.lastmods.extend(lastmods)
        diff.added.stamps = array.array("d", stamps)
        diff.total = len(lastmods)
        context = Context(sitemap=Sitemap(), diff=diff, state=State(), first_run=True)
        started = time.perf_counter()
        found = list(lastmod_bulk(context, RuleSettings(dt.timedelta(hours=1), 0.2, now=NOW)))  # --clock-skew, --max-removed
        rule.append(time.perf_counter() - started)
        fired = found[0][2][:60] if found else "silent"
    return statistics.median(parse), statistics.median(rule), fired


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--urls", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    print(f"| site ({args.urls:,} URLs, first run) | parse the dates (floor) | lastmod-bulk | ratio | verdict |")
    print("|---|---:|---:|---:|---|")
    for name, lastmods in sites(args.urls).items():
        parse, rule, fired = measure(lastmods, args.rounds)
        print(f"| {name} | {parse:.2f} s | {rule:.2f} s | {rule / parse:.2f}x | {fired} |")


if __name__ == "__main__":
    main()
