#!/usr/bin/env python3
"""How long robots.txt matching takes for the wildcard rules that stall a backtracking regex.

    .venv/bin/python scripts/bench_robots.py

For each rule: the median of 5 runs of matching N URLs against it, with notifier.site.robots (a
greedy walk of the star-separated pieces) and with the regex translation the project used
before (``.*`` for each star, re.match), the latter stopped after a time limit a URL.
"""

from __future__ import annotations

import re
import statistics
import time

from notifier.site.robots import Robots

# (rule, the URL path, whether the old regex finishes within minutes for it)
CASES = [
    ("Allow: *****************/****.js", "/" + "a" * 30, False),
    ("Disallow: /*a*a*a*a*a*b", "/" + "a" * 243, False),
    ("Disallow: /*/*/*/*/*/*.php", "/seg" * 40 + "/index.html", True),
    ("Disallow: /*.pdf$", "/docs" * 40 + "/a.html", True),
]
URLS = 10_000


def ours(rule: str, path: str) -> float:
    robots = Robots.parse(f"User-agent: *\n{rule}\n")
    started = time.perf_counter()
    for _ in range(URLS):
        robots.allows("bingbot", "https://a.org" + path)
    return (time.perf_counter() - started) / URLS


def regex_one(rule: str, path: str) -> float:
    pattern = rule.split(":", 1)[1].strip()
    anchored = pattern.endswith("$")
    body = pattern[:-1] if anchored else pattern
    compiled = re.compile(".*".join(map(re.escape, body.split("*"))) + ("$" if anchored else ""), re.DOTALL)
    started = time.perf_counter()
    compiled.match(path)
    return time.perf_counter() - started


def main() -> None:
    print("| rule | path length | notifier.site.robots, per URL | the old regex, one URL |")
    print("|---|---:|---:|---:|")
    for rule, path, finishes in CASES:
        mine = statistics.median(ours(rule, path) for _ in range(5))
        theirs = regex_one(rule, path) if finishes else float("nan")
        shown = f"{theirs * 1000:.0f} ms" if theirs == theirs else "not run (minutes to hours)"
        print(f"| `{rule}` | {len(path)} | {mine * 1e6:.1f} µs | {shown} |")


if __name__ == "__main__":
    main()
