#!/usr/bin/env python3
"""How fast ``notify-changes crawled`` reads an access log, and that its memory does not grow
with the log.

    .venv/bin/python scripts/bench_crawled.py --lines 10000000

Writes a combined-format log of LINES requests (one in ten a crawler's, over 20,000 paths, of
which 5,000 were announced) to a temporary folder, gzips a copy, then joins each with the
announced URLs as the command does, in a fresh process each, and prints lines a second and
the process's peak memory (ru_maxrss). The floor is one pass of ``readline`` over the same
file, so the ratio shows what parsing and joining cost on this machine today.
"""

from __future__ import annotations

import argparse
import datetime as dt
import gzip
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

AGENTS = ("Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)", "Mozilla/5.0 Firefox/140.0")
T0 = dt.datetime(2030, 6, 1, tzinfo=dt.UTC)

CHILD = """
import datetime as dt, resource, sys, time
from pathlib import Path
from notifier.bot_ranges import identifier
from notifier.crawled import Crawls, join, visits_of
crawls = Crawls()
for n in range(5000):
    crawls.announce(f"https://www.example.org/p/{n}/", dt.datetime(2030, 6, 1, tzinfo=dt.UTC), "https://api.indexnow.org/indexnow")
started, unparsed = time.perf_counter(), [0]
if sys.argv[2] == "floor":
    with open(sys.argv[1], "rb") as handle:
        while handle.readline(): pass
else:
    identify = identifier({})
    join(crawls, visits_of(Path(sys.argv[1]), unparsed, identify), identify)
print(time.perf_counter() - started, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, len(crawls.first))
"""


def write_log(path: Path, lines: int) -> None:
    with path.open("w") as handle:
        for n in range(lines):
            at = (T0 + dt.timedelta(seconds=n)).strftime("%d/%b/%Y:%H:%M:%S +0000")
            agent = AGENTS[0] if n % 10 == 0 else AGENTS[1]
            handle.write(f'157.55.39.{n % 250} - - [{at}] "GET /p/{n % 20000}/ HTTP/1.1" 200 {n % 9000} "-" "{agent}"\n')


def measure(path: Path, mode: str) -> tuple[float, int, int]:
    done = subprocess.run([sys.executable, "-c", CHILD, str(path), mode], capture_output=True, text=True, check=True)
    seconds, rss, crawled = done.stdout.split()
    return float(seconds), int(rss), int(crawled)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=1_000_000)
    lines = parser.parse_args().lines
    with tempfile.TemporaryDirectory() as folder:
        plain = Path(folder) / "access.log"
        write_log(plain, lines)
        packed = Path(folder) / "access.log.gz"
        with plain.open("rb") as source, gzip.open(packed, "wb", compresslevel=1) as target:
            shutil.copyfileobj(source, target)
        floor = measure(plain, "floor")[0]
        print(f"{lines:,} lines, {plain.stat().st_size / 1e6:.0f} MB plain; readline floor {floor:.2f} s")
        for label, path in (("plain", plain), ("gzip", packed)):
            started = time.perf_counter()
            seconds, rss, crawled = measure(path, "join")
            print(
                f"  {label}: {seconds:.2f} s ({lines / seconds:,.0f} lines/s, {seconds / floor:.1f}x the floor), "
                f"peak memory {rss / 1024:.0f} MB, {crawled:,} announced URLs seen crawled ({time.perf_counter() - started:.1f} s in all)"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
