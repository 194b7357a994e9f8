#!/usr/bin/env python3
"""Benchmark the host's rules (``_redirects``, ``_headers``, netlify.toml) on a site migration's
thousands of rules, side by side with the same check without them, in one run:

    .venv/bin/python scripts/bench_hosting.py --urls 20000 --rules 5000 --rounds 3

- no-files: `check --site-dir` of a first run (every URL judged), the build without the files
- netlify: the same with a `_redirects` of N rules and a `_headers` of N blocks
- cloudflare-pages: the same files, `--platform cloudflare-pages` (exact paths, no `!`)
- netlify-toml: the same rules as netlify.toml's [[redirects]] and [[headers]] instead

The rules are what a migration writes: old addresses moved one by one (most of them), whole
sections (`/archive/N/*`), placeholders (`/shop/N/:slug`), full-URL rules for old hosts, a
few forced redirects and noindex headers on listed pages (findings), per-page headers on every
listed page, and the single-page-app fallback `/* /index.html 200` last.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_pages import HOST, PageSite  # the same built site of small pages and gzip sitemap parts
from benchlib import installed_tool, measure  # a command measured in a fresh process


def redirect_rules(count: int, urls: int) -> list[tuple[str, str, str]]:
    """(from, to, status) of ``count`` rules: 80 % single pages, 10 % sections, 8 % placeholders."""
    rules = [(f"/p/item-{n * (urls // 50):07d}/", f"/p/item-{n * (urls // 50):07d}-new/", "301!") for n in range(50)]
    rules += [(f"http://old-{n}.example.org/*", f"https://{HOST}/:splat", "301!") for n in range(50)]
    rules += [(f"/shop/{n}/:slug", "/p/:slug/", "301") for n in range(count * 8 // 100)]
    rules += [(f"/archive/{n}/*", "/p/:splat", "302") for n in range(count // 10)]
    rules += [(f"/old/item-{n:07d}.html", f"/p/item-{n:07d}/", "301") for n in range(count - len(rules) - 1)]
    return [*rules, ("/*", "/index.html", "200")]


def header_blocks(count: int, urls: int) -> list[tuple[str, str, str]]:
    """(for, header, value) of ``count`` blocks: one a listed page (50 of them noindex), sections, and /*."""
    blocks = [("/*", "X-Frame-Options", "DENY")]
    blocks += [(f"/assets-{n}/*", "Cache-Control", "max-age=31536000") for n in range(count // 5)]
    pages = count - len(blocks)
    step = max(1, urls // pages)
    for n in range(pages):
        header = ("X-Robots-Tag", "noindex") if n % max(1, pages // 50) == 0 else ("Link", f"</c/{n}.css>; rel=preload")
        blocks.append((f"/p/item-{n * step:07d}/", *header))
    return blocks


def write_files(folder: Path, redirects: list[tuple[str, str, str]], headers: list[tuple[str, str, str]]) -> None:
    (folder / "_redirects").write_text("".join(f"{source} {target} {status}\n" for source, target, status in redirects))
    (folder / "_headers").write_text("".join(f"{path}\n  {name}: {value}\n" for path, name, value in headers))


def write_toml(folder: Path, redirects: list[tuple[str, str, str]], headers: list[tuple[str, str, str]]) -> None:
    lines = []
    for source, target, status in redirects:
        force = "\nforce = true" if status.endswith("!") else ""
        lines.append(f'[[redirects]]\nfrom = "{source}"\nto = "{target}"\nstatus = {status.rstrip("!")}{force}\n')
    lines += [f'[[headers]]\nfor = "{path}"\n[headers.values]\n{name} = "{value}"\n' for path, name, value in headers]
    (folder / "netlify.toml").write_text("\n".join(lines))


def run(folder: Path, urls: int, rules: int, rounds: int, env: dict[str, str], tool: list[str]) -> dict[str, float]:
    """Each scenario's median seconds, the scenarios interleaved round by round."""
    site = PageSite(folder / "site", urls, 2048)
    redirects, headers = redirect_rules(rules, urls), header_blocks(rules, urls)
    project = folder / "project"  # where netlify.toml is looked for: the folder the run starts in
    project.mkdir()
    write_toml(project, redirects, headers)
    bare = folder / "bare"  # where a run finds no netlify.toml
    bare.mkdir()

    def check(where: Path, *extra: str) -> dict[str, float]:
        os.chdir(where)
        state = folder / "none.json"  # never written: every run is a first run, every URL judged
        command = [*tool, "check", str(site.folder / "sitemap.xml"), "--state", str(state), "--site-dir", str(site.folder)]
        return measure([*command, "--rule", "lastmod-bulk=off", *extra], env, ok=(0, 1))

    def without() -> dict[str, float]:
        return check(bare)

    def netlify() -> dict[str, float]:
        write_files(site.folder, redirects, headers)
        return check(bare, "--platform", "netlify")

    def cloudflare() -> dict[str, float]:
        write_files(site.folder, redirects, headers)
        return check(bare, "--platform", "cloudflare-pages")

    def toml() -> dict[str, float]:
        for name in ("_redirects", "_headers"):
            (site.folder / name).unlink(missing_ok=True)
        return check(project, "--platform", "netlify")

    scenarios = {"netlify": netlify, "cloudflare-pages": cloudflare, "netlify-toml": toml, "no-files": without}
    runs: dict[str, list[float]] = {name: [] for name in scenarios}
    for _ in range(rounds):  # interleaved, so that the machine's noise falls on each alike
        for name, scenario in scenarios.items():
            runs[name].append(scenario()["seconds"])
            print(f"{name:18s} {runs[name][-1]:7.2f} s", file=sys.stderr)
        for name in ("_redirects", "_headers"):  # the next round's no-files run finds none
            (site.folder / name).unlink(missing_ok=True)
    return {name: statistics.median(seconds) for name, seconds in runs.items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--urls", type=int, default=20_000)
    parser.add_argument("--rules", type=int, default=5_000, help="rules in _redirects, and blocks in _headers")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    tool, env = installed_tool()
    started = Path.cwd()
    with tempfile.TemporaryDirectory(prefix="nc-bench-hosting-") as temp:
        try:
            medians = run(Path(temp), args.urls, args.rules, args.rounds, env, tool)
        finally:
            os.chdir(started)
    base = medians["no-files"]
    scale = f"{args.urls:,} URLs (a first check: every URL judged), {args.rules:,} rules, as many header blocks"
    print(f"\n{scale}; {args.rounds} rounds, medians")
    print("\n| measurement | median s | ratio |\n|---|---:|---:|")
    for name, seconds in medians.items():
        print(f"| {name} | {seconds:.2f} | {'' if name == 'no-files' else f'{seconds / base:.2f}x no-files'} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
