#!/usr/bin/env python3
"""Benchmark notify-changes at scale, side by side with the floors it must sit near.

    .venv/bin/python scripts/bench.py --urls 1000000 --rounds 3

Generates a site of N URLs (a sitemap index of 50,000-URL .xml.gz parts, distinct
realistic lastmods), records a state, changes pages, and measures, each in its own
process (wall time and peak RSS), several rounds, reporting medians and ratios:

- floor: a bare lxml iterparse loop collecting loc -> lastmod into a dict
- check-all-parts: `notify-changes check` with 0.1 % of pages changed at random (every part
  touched; `--changed 0.01` for 1 %)
- check-one-part: `notify-changes check` when only the newest part changed (pages appended)
- run-one-part: `notify-changes run` of that deploy, with the MiB its save wrote to disk
- state-size: the state on disk after the baseline
- submit-floor: parse and POST 10,000-URL batches on one requests session
- submit-all: `notify-changes run --initial submit` of every URL to a local endpoint
  (`--paired`: each round of it and of check-all-parts beside a round of its floor, with the
  median of the ratios: on a noisy machine, side by side)
  (and submit-all-sqlite, the same with the SQLite state)
- check-metrics, run-policy, submit-policy: check-all-parts with --metrics, run-one-part and
  submit-all with the [announce] policy set (POLICY), each round beside the same command
  without it (always paired: the ratio is with / without)
- --parts N: the URLs in N gzip parts (200,000 URLs make 4 by default, 10,000,000 make 200)
- the same checks with the SQLite state store
- ultimate-sitemap-parser parsing the same files (when installed), for reference
- history: a git history index of 10,000 files, one `git log` pass vs one process per file
- pages: reading the build (--site-dir) beside its floor, see scripts/bench_pages.py
  (`--pages 50000`; `--skip pages` to leave it out)

Nothing here touches the internet: the endpoint and the "live site" (for the key file)
are a local server on 127.0.0.1, reached for the site's host through HTTP_PROXY.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import benchdb as postgres  # a PostgreSQL server for the postgresql rows
from benchlib import FLOOR, measure

ROOT = Path(__file__).resolve().parents[1]
NS = "http://www.sitemaps.org/schemas/sitemap/0.9"
HOST = "www.big-retailer.net"
KEY = "bench0123456789abcdef"
PART_SIZE = 50_000
# [announce] set on every side (#45 item 5): patterns every URL is matched against, an interval
# and caps that hold nothing back here (a first submission's URLs were never announced), alternates
POLICY = ("--include", "/**", "--exclude", "/drafts/**", "--exclude", "/*/item-*/print/", "--min-interval", "10m",
          "--per-run", "100000000", "--per-day", "100000000", "--alternates")  # fmt: skip
CATEGORIES = ["shoes", "shirts", "garden", "kitchen", "toys", "books", "audio", "tools", "sports", "beauty"]


# -- the site -------------------------------------------------------------------------------------
def url_of(n: int) -> str:
    return f"http://{HOST}/{CATEGORIES[n % len(CATEGORIES)]}/item-{n:07d}/"


def lastmod_of(rng: random.Random) -> str:
    moment = 1_640_995_200 + rng.randrange(3 * 365 * 86_400)  # 2022-01-01 + up to 3 years
    return time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime(moment))


def write_part(path: Path, rows: list[tuple[str, str]]) -> None:
    body = "".join(f"<url><loc>{loc}</loc><lastmod>{lastmod}</lastmod></url>\n" for loc, lastmod in rows)
    data = f'<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="{NS}">\n{body}</urlset>\n'.encode()
    path.write_bytes(gzip.compress(data, compresslevel=6, mtime=0))


def write_index(site: Path, part_count: int) -> None:
    rows = "".join(f"<sitemap><loc>http://{HOST}/sitemaps/part-{n:03d}.xml.gz</loc></sitemap>\n" for n in range(part_count))
    (site / "sitemap.xml").write_text(f'<?xml version="1.0" encoding="UTF-8"?>\n<sitemapindex xmlns="{NS}">\n{rows}</sitemapindex>\n')


class Site:
    """The generated site, and the changes the scenarios make to it."""

    def __init__(self, folder: Path, count: int, seed: int = 1) -> None:
        self.folder = folder
        self.rng = random.Random(seed)
        self.rows = [(url_of(n), lastmod_of(self.rng)) for n in range(count)]
        (folder / "sitemaps").mkdir(parents=True, exist_ok=True)
        (folder / f"{KEY}.txt").write_text(KEY)
        self.part_count = (count + PART_SIZE - 1) // PART_SIZE
        for part in range(self.part_count):
            self._write(part)
        write_index(folder, self.part_count)

    def _write(self, part: int) -> None:
        write_part(self.folder / "sitemaps" / f"part-{part:03d}.xml.gz", self.rows[part * PART_SIZE : (part + 1) * PART_SIZE])

    def reload(self) -> None:
        self.rows = _rows_from(self.folder)
        self.part_count = (len(self.rows) + PART_SIZE - 1) // PART_SIZE

    @property
    def sitemap(self) -> Path:
        return self.folder / "sitemap.xml"

    def touch_random(self, share: float) -> None:
        """Change ``share`` of the pages, spread over every part (later lastmods)."""
        for n in self.rng.sample(range(len(self.rows)), int(len(self.rows) * share)):
            self.rows[n] = (self.rows[n][0], "2026-11-01T10:00:00+00:00")
        for part in range(self.part_count):
            self._write(part)

    def append(self, count: int) -> None:
        """New pages at the end: only the newest part's bytes change (or a new part appears)."""
        start = len(self.rows)
        self.rows.extend((url_of(n), lastmod_of(self.rng)) for n in range(start, start + count))
        first_changed = start // PART_SIZE
        self.part_count = (len(self.rows) + PART_SIZE - 1) // PART_SIZE
        for part in range(first_changed, self.part_count):
            self._write(part)
        write_index(self.folder, self.part_count)


# -- measuring: scripts/benchlib.py (MEASURE, measure, FLOOR) --------------------------------
SUBMIT_FLOOR = textwrap.dedent(
    """
    import gzip, json, sys
    from pathlib import Path
    import requests
    from lxml import etree
    NS = "{http://www.sitemaps.org/schemas/sitemap/0.9}"
    endpoint, host, key = sys.argv[2], sys.argv[3], sys.argv[4]
    session = requests.Session()
    batch = []
    def post():
        body = json.dumps({"host": host, "key": key, "urlList": batch}).encode()
        session.post(endpoint, data=body, headers={"Content-Type": "application/json; charset=utf-8"}, timeout=30).raise_for_status()
    for path in sorted(Path(sys.argv[1]).glob("sitemaps/*.xml.gz")):
        with gzip.open(path) as handle:
            for _, url in etree.iterparse(handle, events=("end",), tag=NS + "url"):
                batch.append(url.findtext(NS + "loc"))
                url.clear()
                while url.getprevious() is not None:
                    del url.getparent()[0]
                if len(batch) == 10000:
                    post()
                    batch = []
    if batch:
        post()
    """
)

USP = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from usp.fetch_parse import SitemapFetcher  # noqa: F401  (import cost counted)
    from usp.tree import sitemap_from_str
    count = 0
    for path in sorted(Path(sys.argv[1]).glob("sitemaps/*.xml.gz")):
        import gzip
        sitemap = sitemap_from_str(gzip.decompress(path.read_bytes()).decode())
        count += sum(1 for _ in sitemap.all_pages())
    print(count)
    """
)

SERVER = textwrap.dedent(
    """
    import sys
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
    key = sys.argv[1].encode()
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        def log_message(self, *args): pass
        def do_GET(self):  # the live site's key file, reached through HTTP_PROXY
            body = key if self.path.endswith(".txt") else b"ok"
            self.send_response(200); self.send_header("Content-Length", str(len(body))); self.end_headers(); self.wfile.write(body)
        def do_POST(self):
            self.rfile.read(int(self.headers["Content-Length"]))
            self.send_response(200); self.send_header("Content-Length", "0"); self.end_headers()
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    print(server.server_address[1], flush=True)
    server.serve_forever()
    """
)


def median_row(name: str, runs: list[dict[str, float]]) -> dict[str, float | str]:
    return {
        "name": name,
        "seconds": statistics.median(run["seconds"] for run in runs),
        "peak_mib": max(run["peak_mib"] for run in runs),
        "written_mib": statistics.median(run.get("written_mib", 0.0) for run in runs),
        "rounds": len(runs),
    }


def history_bench(folder: Path, files: int) -> dict[str, float]:
    """One `git log` pass over a repository of ``files`` files vs one `git log` per file."""
    repo = folder / "repo"
    repo.mkdir()
    env = dict(os.environ, GIT_AUTHOR_NAME="b", GIT_AUTHOR_EMAIL="b@b", GIT_COMMITTER_NAME="b", GIT_COMMITTER_EMAIL="b@b")
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    for commit in range(5):
        for n in range(commit, files, 5):
            path = repo / "content" / f"page-{n:05d}.md"
            path.parent.mkdir(exist_ok=True)
            path.write_text(f"page {n} revision {commit}\n")
        subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
        env["GIT_AUTHOR_DATE"] = env["GIT_COMMITTER_DATE"] = f"2024-0{commit + 1}-01T10:00:00Z"
        subprocess.run(["git", "commit", "-qm", f"c{commit}"], cwd=repo, check=True, env=env)
    sys.path.insert(0, str(ROOT))
    from notifier.history.git import read_history

    started = time.perf_counter()
    spans = read_history(repo)
    one_pass = time.perf_counter() - started
    assert len(spans) == files
    sample = 500  # one process per file, timed on a sample and scaled
    started = time.perf_counter()
    for n in range(sample):
        subprocess.run(["git", "log", "--format=%at %ct", "--", f"content/page-{n:05d}.md"], cwd=repo, capture_output=True, check=True)
    per_file = (time.perf_counter() - started) / sample * files
    return {"files": files, "one_pass_s": one_pass, "per_file_s": per_file}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--urls", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--history-files", type=int, default=10_000)
    parser.add_argument("--pages", type=int, default=50_000, help="pages of the build-reading scenarios (bench_pages.py)")
    parser.add_argument("--skip", default="", help="comma-separated scenario names to skip")
    parser.add_argument("--changed", type=float, default=0.001, help="share of pages check-all-parts changes (default 0.001)")
    parser.add_argument("--paired", action="store_true", help="each round of check-all-parts and submit-all beside a round of its floor")
    parser.add_argument("--stores", default="json,sqlite,postgresql", help="the state stores measured (default json,sqlite,postgresql)")
    parser.add_argument("--json", metavar="PATH", help="also write the results as JSON")
    parser.add_argument("--parts", type=int, help="gzip parts the URLs are split into (default: 50,000 URLs a part)")
    args = parser.parse_args()
    if args.parts:
        global PART_SIZE
        PART_SIZE = -(-args.urls // args.parts)
    skip = set(filter(None, args.skip.split(",")))
    tool = [str(Path(sys.executable).parent / "notify-changes")]
    results: list[dict[str, float | str]] = []
    notes: dict[str, object] = {"urls": args.urls, "rounds": args.rounds, "cpus": os.cpu_count()}

    with tempfile.TemporaryDirectory(prefix="nc-bench-") as temp:
        folder = Path(temp)
        server = subprocess.Popen([sys.executable, "-c", SERVER, KEY], stdout=subprocess.PIPE, text=True)
        try:
            assert server.stdout is not None
            port = int(server.stdout.readline())
            endpoint = f"http://127.0.0.1:{port}/indexnow"
            env = dict(os.environ, INDEXNOW_KEY=KEY, HTTP_PROXY=f"http://127.0.0.1:{port}", NO_PROXY="127.0.0.1")
            env.pop("CI", None)
            started = time.perf_counter()
            site = Site(folder / "site", args.urls)
            print(f"generated {args.urls} URLs in {site.part_count} parts in {time.perf_counter() - started:.1f} s", file=sys.stderr)

            def tool_run(*extra: str, state: str, ok: tuple[int, ...] = (0,)) -> dict[str, float]:
                where = [state, "--site-name", "bench"] if state.startswith("postgresql://") else [str(folder / state)]
                return measure([*tool, *extra, "--state", *where, "--endpoint", endpoint], env, ok)

            def rounds(name: str, make: object, floor: object = None, against: str = "") -> None:
                """``args.rounds`` runs of ``make``; with --paired, each beside a run of its floor
                (``against``: a feature's row, always beside the same run without it)."""
                if name in skip:
                    return
                runs, ratios = [], []
                for _ in range(args.rounds):
                    before = floor() if (args.paired or against) and floor is not None else None  # type: ignore[operator]
                    runs.append(make())  # type: ignore[operator]
                    if before is not None:
                        ratios.append(runs[-1]["seconds"] / before["seconds"])
                results.append(median_row(name, runs))
                row = results[-1]
                if ratios:
                    row["paired_ratio"] = statistics.median(ratios)
                if against:
                    row["against"] = against
                print(f"{name:28s} {row['seconds']:8.2f} s  {row['peak_mib']:7.0f} MiB", file=sys.stderr)

            floor_cmd = [sys.executable, "-c", FLOOR, str(site.folder)]

            def parse_floor() -> dict[str, float]:
                return measure(floor_cmd, env)

            rounds("floor", parse_floor)

            pristine = folder / "pristine"
            shutil.copytree(site.folder, pristine)

            def reset() -> None:
                shutil.rmtree(site.folder)
                shutil.copytree(pristine, site.folder)
                site.reload()

            wanted = set(args.stores.split(","))
            stores = [(store, state) for store, state in (("json", "state.json"), ("sqlite", "state.sqlite")) if store in wanted]
            database = postgres.start(folder) if "check-postgresql" not in skip and "postgresql" in wanted else None
            if database is not None:
                stores.append(("postgresql", database.url))
            metrics = ("--metrics", str(folder / "metrics.prom"))
            for store, state in stores:
                if f"check-{store}" in skip:
                    continue
                if store == "postgresql" and database is not None:
                    database.empty()
                for path in folder.glob(state + "*"):
                    path.unlink()
                record = tool_run("run", str(site.sitemap), "--rule", "lastmod-bulk=off", state=state)
                print(f"recorded baseline ({store}) in {record['seconds']:.2f} s, {record['peak_mib']:.0f} MiB", file=sys.stderr)
                results.append({"name": f"baseline-{store}", "seconds": record["seconds"], "peak_mib": record["peak_mib"], "rounds": 1})
                if store != "postgresql":
                    size = sum(path.stat().st_size for path in folder.glob(state + "*")) / 2**20
                    results.append({"name": f"state-size-{store}", "seconds": 0.0, "peak_mib": 0.0, "size_mib": size, "rounds": 1})
                    print(f"state on disk ({store}): {size:.0f} MiB", file=sys.stderr)
                site.touch_random(args.changed)
                rounds(f"check-all-parts-{store}", lambda state=state: tool_run("check", str(site.sitemap), state=state), parse_floor)
                if store == stores[0][0]:  # #45 item 5: --metrics beside the same check without it (goal < 1.02x)
                    rounds(
                        f"check-metrics-{store}",
                        lambda state=state: tool_run("check", str(site.sitemap), *metrics, state=state),
                        lambda state=state: tool_run("check", str(site.sitemap), state=state),
                        against=f"check-all-parts-{store} without --metrics",
                    )
                reset()
                site.append(1000)  # the everyday deploy: new pages in the newest part
                rounds(f"check-one-part-{store}", lambda state=state: tool_run("check", str(site.sitemap), state=state))
                if store != "postgresql":
                    baseline = folder / "baseline-state"
                    shutil.copyfile(folder / state, baseline)

                    def run_one_part(state: str = state, baseline: Path = baseline, extra: tuple[str, ...] = ()) -> dict[str, float]:
                        shutil.copyfile(baseline, folder / state)  # the same deploy every round
                        return tool_run("run", str(site.sitemap), *extra, state=state)

                    rounds(f"run-one-part-{store}", run_one_part)
                    if store == stores[0][0]:  # #45 item 5: the [announce] policy set, beside the same run without it
                        rounds(
                            f"run-policy-{store}",
                            lambda state=state, baseline=baseline: run_one_part(state, baseline, POLICY),
                            lambda state=state, baseline=baseline: run_one_part(state, baseline),
                            against=f"run-one-part-{store} without [announce]",
                        )
                    shutil.copyfile(baseline, folder / state)
                    baseline.unlink()
                reset()

            submit_floor_cmd = [sys.executable, "-c", SUBMIT_FLOOR, str(site.folder), endpoint, HOST, KEY]
            rounds("submit-floor", lambda: measure(submit_floor_cmd, env))

            def submit_all() -> dict[str, float]:
                for path in folder.glob("submit.json*"):
                    path.unlink()
                return tool_run("run", str(site.sitemap), "--initial", "submit", "--rule", "lastmod-bulk=off", state="submit.json")

            rounds("submit-all", submit_all, lambda: measure(submit_floor_cmd, env))

            def submit_policy() -> dict[str, float]:
                for path in folder.glob("submit.json*"):
                    path.unlink()
                return tool_run("run", str(site.sitemap), "--initial", "submit", "--rule", "lastmod-bulk=off", *POLICY, state="submit.json")

            # #45 item 5: every URL through the [announce] patterns, caps and interval, beside the same submission without them
            rounds("submit-policy", submit_policy, submit_all, against="submit-all without [announce]")

            def submit_all_sqlite() -> dict[str, float]:
                for path in folder.glob("submit.sqlite*"):
                    path.unlink()
                return tool_run("run", str(site.sitemap), "--initial", "submit", "--rule", "lastmod-bulk=off", state="submit.sqlite")

            rounds("submit-all-sqlite", submit_all_sqlite, lambda: measure(submit_floor_cmd, env))

            if "usp" not in skip:
                usp_cmd = [sys.executable, "-c", USP, str(site.folder)]
                try:
                    rounds("ultimate-sitemap-parser", lambda: measure(usp_cmd, env))
                except SystemExit as error:
                    print(f"ultimate-sitemap-parser not measured: {str(error)[:200]}", file=sys.stderr)
            if "history" not in skip:
                notes["history"] = history_bench(folder, args.history_files)
                print(f"history: {notes['history']}", file=sys.stderr)
            if "pages" not in skip:
                from bench_pages import run_pages

                shutil.rmtree(site.folder)  # the disk the page sites need
                page_rows = run_pages(folder / "pages", args.pages, 4 * args.pages, args.rounds, env, tool)
        finally:
            server.kill()
            server.wait()

    floors = {row["name"]: float(row["seconds"]) for row in results}
    print(f"\n{args.urls:,} URLs, {args.rounds} rounds, medians; ratios against the floor they must sit near\n")
    print("| measurement | median s | peak MiB | ratio | written MiB |\n|---|---:|---:|---:|---:|")
    for row in results:
        name = str(row["name"])
        if "size_mib" in row:
            print(f"| {name} | | | | {float(row['size_mib']):.0f} on disk |")
            continue
        base = floors.get("submit-floor") if name.startswith("submit-all") else floors.get("floor")
        ratio = f"{float(row['seconds']) / base:.3f}x" if base and name not in ("floor", "submit-floor") else ""
        if "against" in row:  # a feature's row: its ratio is to the same command without the feature
            ratio = f"paired {float(row.get('paired_ratio', 0.0)):.3f}x {row['against']}"
        elif "paired_ratio" in row:
            ratio += f" (paired {float(row['paired_ratio']):.3f}x)"
        written = f"{float(row['written_mib']):.0f}" if name.startswith("run-one-part") else ""
        print(f"| {name} | {float(row['seconds']):.2f} | {float(row['peak_mib']):.0f} | {ratio} | {written} |")
    by_name = {str(row["name"]): row for row in results}
    sqlite, postgresql = by_name.get("check-all-parts-sqlite"), by_name.get("check-all-parts-postgresql")
    if sqlite and postgresql:  # #45 item 4: goal <= 1.2x, memory within 1.5x
        against = float(postgresql["seconds"]) / float(sqlite["seconds"])
        paired = [float(row["paired_ratio"]) for row in (postgresql, sqlite) if "paired_ratio" in row]
        each = f" (paired against the floor: {paired[0] / paired[1]:.3f}x)" if len(paired) == 2 else ""
        memory = float(postgresql["peak_mib"]) / float(sqlite["peak_mib"])
        print(f"\ncheck-all-parts, PostgreSQL vs SQLite: {against:.3f}x{each}, peak memory {memory:.2f}x")
    if "history" in notes:
        history = notes["history"]
        assert isinstance(history, dict)
        print(
            f"\nhistory of {history['files']:,} files: one git log pass {history['one_pass_s']:.2f} s, "
            f"one process per file {history['per_file_s']:.1f} s ({history['per_file_s'] / history['one_pass_s']:.0f}x)"
        )
    if "pages" not in skip:
        from bench_pages import report

        print(f"\nreading the build: {args.pages:,} pages of 8 KB; {4 * args.pages:,} URLs for the no-file and memory rows")
        report(page_rows)
    if args.json:
        Path(args.json).write_text(json.dumps({"notes": notes, "results": results}, indent=2))
    return 0


def _rows_from(folder: Path) -> list[tuple[str, str]]:
    rows: list[tuple[str, str]] = []
    for path in sorted((folder / "sitemaps").glob("part-*.xml.gz")):
        text = gzip.decompress(path.read_bytes()).decode()
        for chunk in text.split("<url><loc>")[1:]:
            loc, _, rest = chunk.partition("</loc><lastmod>")
            rows.append((loc, rest.partition("</lastmod>")[0]))
    return rows


if __name__ == "__main__":
    raise SystemExit(main())
