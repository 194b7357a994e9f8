#!/usr/bin/env python3
"""What ``[announce]`` costs when it is unset: this checkout against an older one, interleaved.

    git archive 4a40c23 | tar -x -C /tmp/before     # the code before #41 item 5
    .venv/bin/python scripts/bench_policy.py --before /tmp/before --urls 1000000 --rounds 3

On the site ``bench.py`` generates, after one recorded baseline, each round runs ``check``
(0.1 % of pages changed in every part) and ``run --initial submit`` of every URL to a local
endpoint, once with the older code (``PYTHONPATH=BEFORE``) and once with this one, in
alternating order, so that both see the same hour of a shared machine. It prints each side's
median and the median of the per-round ratios (after / before).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import bench
from benchlib import measure


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--before", required=True, type=Path, help="a copy of the older code (its notifier/ folder inside)")
    parser.add_argument("--urls", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    if not (args.before / "notifier" / "__init__.py").is_file():
        parser.error(f"--before {args.before}: no notifier/ package there")
    tool = [str(Path(sys.executable).parent / "notify-changes")]
    with tempfile.TemporaryDirectory(prefix="nc-policy-") as temp:
        folder = Path(temp)
        server = subprocess.Popen([sys.executable, "-c", bench.SERVER, bench.KEY], stdout=subprocess.PIPE, text=True)
        try:
            assert server.stdout is not None
            port = int(server.stdout.readline())
            endpoint = f"http://127.0.0.1:{port}/indexnow"
            env = dict(os.environ, INDEXNOW_KEY=bench.KEY, HTTP_PROXY=f"http://127.0.0.1:{port}", NO_PROXY="127.0.0.1")
            env.pop("CI", None)
            env.pop("PYTHONPATH", None)
            sides = {"before": dict(env, PYTHONPATH=str(args.before.resolve())), "after": env}
            site = bench.Site(folder / "site", args.urls)

            def tool_run(side: dict[str, str], *extra: str, state: str) -> float:
                return measure([*tool, *extra, "--state", str(folder / state), "--endpoint", endpoint], side)["seconds"]

            tool_run(env, "run", str(site.sitemap), "--rule", "lastmod-bulk=off", state="state.json")
            site.touch_random(0.001)
            times: dict[str, list[float]] = {f"{case}-{side}": [] for case in ("check", "submit") for side in sides}
            for number in range(args.rounds):
                order = list(sides.items()) if number % 2 == 0 else list(reversed(sides.items()))
                for name, side in order:
                    times[f"check-{name}"].append(tool_run(side, "check", str(site.sitemap), state="state.json"))
                for name, side in order:
                    for path in folder.glob("submit.json*"):
                        path.unlink()
                    submit = ("run", str(site.sitemap), "--initial", "submit", "--rule", "lastmod-bulk=off")
                    times[f"submit-{name}"].append(tool_run(side, *submit, state="submit.json"))
        finally:
            server.terminate()
    for name, values in times.items():
        print(f"{name:14s} median {statistics.median(values):7.2f} s   rounds {', '.join(f'{value:.2f}' for value in values)}")
    for case in ("check", "submit"):
        ratios = [after / before for after, before in zip(times[f"{case}-after"], times[f"{case}-before"], strict=True)]
        print(f"{case}: after / before {statistics.median(ratios):.3f} (rounds {', '.join(f'{ratio:.3f}' for ratio in ratios)})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
