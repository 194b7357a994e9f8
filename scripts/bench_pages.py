#!/usr/bin/env python3
"""Benchmark reading the build (``--site-dir``): fingerprints and page rules, side by side
with the floor they must sit near, in one run (bench.py runs it too; or alone):

    .venv/bin/python scripts/bench_pages.py --pages 50000 --rounds 3

- pages-floor: one thread parses the sitemap's parts and hashes every page file with blake2b
- check-site-dir: `check --site-dir` after 1 % of the pages changed (content and lastmod)
- check-no-site-dir: the same check without --site-dir, for reference
- no-files-site-dir / no-files: 200,000 listed URLs and a build holding no page file, with
  and without --site-dir (a URL without a file must cost no more than a set lookup)
- memory-site-dir / memory: peak memory of `check` at 200,000 small pages (1 % changed),
  with and without --site-dir

Pages are 8 KB (the 200,000-page site's 2 KB), with a head a generator would write.
"""

from __future__ import annotations

import argparse
import gzip
import random
import shutil
import statistics
import sys
import tempfile
import textwrap
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchlib import FLOOR, KEY, installed_tool, measure  # the same parse floor and measuring, in a fresh process

NS = "http://www.sitemaps.org/schemas/sitemap/0.9"
HOST = "www.big-retailer.net"
PARTS = 5

# bench.py's parse floor (loc -> lastmod of every part), then every page file hashed
PAGES_FLOOR = FLOOR.replace("print(len(found))", "") + textwrap.dedent(
    """
    import hashlib, urllib.parse
    site = Path(sys.argv[1])
    digests = {}
    for loc in found:
        page = site / urllib.parse.urlsplit(loc).path.strip("/") / "index.html"
        with open(page, "rb") as handle:
            digests[loc] = hashlib.blake2b(handle.read(), digest_size=16).hexdigest()
    print(len(digests))
    """
)


def page_html(loc: str, size: int, version: int) -> bytes:
    head = (
        f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta name="viewport" content="width=device-width, initial-scale=1"><title>{loc} | Shop</title>'
        f'<meta name="description" content="A product page of the shop, as a generator writes it.">'
        f'<link rel="canonical" href="{loc}"><link rel="stylesheet" href="/css/main.3f4a.css">'
        f'<meta property="og:url" content="{loc}"><script src="/js/app.js" defer></script></head>\n<body>'
    )
    body = f"<p>version {version}</p>" + "<p>Lorem ipsum dolor sit amet, consectetur adipiscing elit.</p>\n" * (size // 62)
    return (head + body)[:size].encode() + b"</body></html>\n"


class PageSite:
    """A built site of ``count`` pages in ``folder``, its sitemap an index of gzip parts."""

    def __init__(self, folder: Path, count: int, size: int, with_files: bool = True, seed: int = 7) -> None:
        self.folder, self.size, self.rng = folder, size, random.Random(seed)
        self.rows = [
            (f"http://{HOST}/p/item-{n:07d}/", f"2024-{1 + n % 12:02d}-{1 + n % 28:02d}T{n % 24:02d}:{n % 60:02d}:00Z")
            for n in range(count)
        ]
        (folder / "sitemaps").mkdir(parents=True, exist_ok=True)
        (folder / "index.html").write_bytes(page_html(f"http://{HOST}/", 512, 0))
        (folder / f"{KEY}.txt").write_text(KEY)
        if with_files:
            for loc, _ in self.rows:
                self._page(loc, 0)
        self._write_sitemap()

    def _page(self, loc: str, version: int) -> None:
        path = self.folder / loc.split(HOST, 1)[1].strip("/") / "index.html"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(page_html(loc, self.size, version))

    def _write_sitemap(self) -> None:
        per_part = (len(self.rows) + PARTS - 1) // PARTS
        names = []
        for part in range(PARTS):
            rows = self.rows[part * per_part : (part + 1) * per_part]
            body = "".join(f"<url><loc>{loc}</loc><lastmod>{lastmod}</lastmod></url>\n" for loc, lastmod in rows)
            data = f'<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="{NS}">\n{body}</urlset>\n'.encode()
            name = f"sitemaps/part-{part}.xml.gz"
            (self.folder / name).write_bytes(gzip.compress(data, compresslevel=6, mtime=0))
            names.append(name)
        listing = "".join(f"<sitemap><loc>http://{HOST}/{name}</loc></sitemap>\n" for name in names)
        (self.folder / "sitemap.xml").write_text(
            f'<?xml version="1.0" encoding="UTF-8"?>\n<sitemapindex xmlns="{NS}">\n{listing}</sitemapindex>\n'
        )

    def change(self, share: float) -> None:
        """Change ``share`` of the pages: new content and a later lastmod."""
        for n in self.rng.sample(range(len(self.rows)), int(len(self.rows) * share)):
            loc = self.rows[n][0]
            self.rows[n] = (loc, f"2026-11-{1 + n % 28:02d}T10:{n % 60:02d}:00Z")
            self._page(loc, 1)
        self._write_sitemap()


def run_pages(folder: Path, pages: int, big: int, rounds: int, env: dict[str, str], tool: list[str]) -> list[dict[str, object]]:
    """Every page scenario, medians of ``rounds``; returns the result rows."""
    results: list[dict[str, object]] = []

    def median(name: str, runs: list[dict[str, float]]) -> None:
        row = {
            "name": name,
            "seconds": statistics.median(run["seconds"] for run in runs),
            "peak_mib": statistics.median(run["peak_mib"] for run in runs),
            "rounds": len(runs),
        }
        results.append(row)
        print(f"{name:28s} {row['seconds']:8.2f} s  {row['peak_mib']:7.0f} MiB", file=sys.stderr)

    def check(site: PageSite, state: Path, *extra: str) -> dict[str, float]:
        return measure([*tool, "check", str(site.folder / "sitemap.xml"), "--state", str(state), *extra], env, ok=(0, 1))

    def record(site: PageSite, state: Path, *extra: str) -> None:
        for path in state.parent.glob(state.name + "*"):
            path.unlink()
        measure([*tool, "run", str(site.folder / "sitemap.xml"), "--state", str(state), "--rule", "lastmod-bulk=off", *extra], env)

    # 1. fingerprints and page rules at `pages` pages of 8 KB, 1 % changed
    site = PageSite(folder / "pages", pages, 8192)
    state_site, state_plain = folder / "pages-site.json", folder / "pages-plain.json"
    record(site, state_site, "--site-dir", str(site.folder))
    record(site, state_plain)
    site.change(0.01)
    floor = [sys.executable, "-c", PAGES_FLOOR, str(site.folder)]
    runs: dict[str, list[dict[str, float]]] = {"pages-floor": [], "check-site-dir": [], "check-no-site-dir": []}
    for _ in range(rounds):  # interleaved, so that the machine's noise falls on each alike
        runs["pages-floor"].append(measure(floor, env))
        runs["check-site-dir"].append(check(site, state_site, "--site-dir", str(site.folder)))
        runs["check-no-site-dir"].append(check(site, state_plain))
    for name, measured in runs.items():
        median(name, measured)
    shutil.rmtree(site.folder)

    # 2. `big` listed URLs, no page file in the build
    bare = PageSite(folder / "bare", big, 0, with_files=False)
    (bare.folder / "index.html").unlink()  # without --site-dir, no build is found beside the sitemap
    runs = {"no-files-site-dir": [], "no-files": []}
    for _ in range(rounds):
        runs["no-files-site-dir"].append(check(bare, folder / "none-1.json", "--site-dir", str(bare.folder)))
        runs["no-files"].append(check(bare, folder / "none-2.json"))
    for name, measured in runs.items():
        median(name, measured)
    shutil.rmtree(bare.folder)

    # 3. peak memory at `big` small pages, 1 % changed
    small = PageSite(folder / "small", big, 2048)
    (small.folder / "index.html").unlink()  # the check without --site-dir must not find a build beside the sitemap
    state_site, state_plain = folder / "small-site.json", folder / "small-plain.json"
    record(small, state_site, "--site-dir", str(small.folder))
    record(small, state_plain)
    small.change(0.01)
    runs = {"memory-site-dir": [], "memory": []}
    for _ in range(rounds):
        runs["memory-site-dir"].append(check(small, state_site, "--site-dir", str(small.folder)))
        runs["memory"].append(check(small, state_plain))
    for name, measured in runs.items():
        median(name, measured)
    shutil.rmtree(small.folder)
    return results


def report(results: list[dict[str, object]]) -> None:
    by_name = {str(row["name"]): row for row in results}

    def ratio(name: str, base: str, field: str = "seconds") -> str:
        if name not in by_name or base not in by_name:
            return ""
        return f"{float(by_name[name][field]) / float(by_name[base][field]):.2f}x {base}"  # type: ignore[arg-type]

    print("\n| measurement | median s | peak MiB | ratio |\n|---|---:|---:|---:|")
    against = {
        "check-site-dir": ("pages-floor", "seconds"),
        "no-files-site-dir": ("no-files", "seconds"),
        "memory-site-dir": ("memory", "peak_mib"),
    }
    for row in results:
        name = str(row["name"])
        base, field = against.get(name, ("", "seconds"))
        print(f"| {name} | {float(row['seconds']):.2f} | {float(row['peak_mib']):.0f} | {ratio(name, base, field) if base else ''} |")  # type: ignore[arg-type]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pages", type=int, default=50_000)
    parser.add_argument("--big", type=int, default=200_000, help="URLs of the no-file and memory scenarios")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    tool, env = installed_tool()
    with tempfile.TemporaryDirectory(prefix="nc-bench-pages-") as temp:
        results = run_pages(Path(temp), args.pages, args.big, args.rounds, env, tool)
    print(f"\n{args.pages:,} pages of 8 KB, {args.big:,} URLs for the no-file and memory rows; {args.rounds} rounds, medians")
    report(results)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
