"""Remake the README's picture of the report page (docs/images/report.png) from a demo state.

    .venv/bin/python scripts/report_screenshot.py [--out docs/images/report.png]

Eight weeks of daily deploys of a made-up site run for real against two fake IndexNow
endpoints (tests/fakeindexnow.py on 127.0.0.1, an injected clock), with the refusals, 429s
and a finding a real site sees; a generated access log of bingbot and YandexBot visits;
then `state report --html --log` writes the page and Debian's chromium, driven by
Playwright (the test extra), photographs it down to the crawlers' chart. Needs the test extra and
`apt-get install chromium`; nothing leaves the machine.
"""

from __future__ import annotations

import argparse
import datetime as dt
import io
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from notifier.commands.state import run_state_sites  # noqa: E402  # after the checkout is on the path
from notifier.commands.state_request import StateRequest  # noqa: E402
from notifier.pipeline.loop import Environment, execute  # noqa: E402
from notifier.settings.settings import build_settings  # noqa: E402
from tests.conftest import urlset  # noqa: E402
from tests.fakeindexnow import FakeIndexNow, status  # noqa: E402
from tests.faketime import FakeTime  # noqa: E402
from tests.test_report_browser import ARGS, CHROMIUM  # noqa: E402

HOST, KEY = "www.shop-site.org", "0123456789abcdef"
START = dt.datetime(2030, 5, 1, 9, 0, tzinfo=dt.UTC)
DAYS = 56
SHOWN = ("https://api.indexnow.org/indexnow", "https://www.bing.com/indexnow")  # the fake endpoints, shown as these
BING = "Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)"
YANDEX = "Mozilla/5.0 (compatible; YandexBot/3.0; +http://yandex.com/bots)"


def story(folder: Path) -> tuple[Path, Path]:
    """The deploys and the access log; returns the state and the log."""
    first, second = FakeIndexNow(), FakeIndexNow()
    for each in (first, second):
        each.serve_key(HOST, KEY)
    os.environ["HTTP_PROXY"], os.environ["NO_PROXY"] = first.url, "127.0.0.1,localhost"  # the key file, from the fake (http://)
    sitemap, state = folder / "public" / "sitemap.xml", folder / "state" / "notify-changes.json"
    sitemap.parent.mkdir(parents=True)
    pages: dict[str, str | None] = {}
    announced: list[tuple[str, dt.datetime]] = []
    try:
        for day in range(DAYS):
            when = START + dt.timedelta(days=day, minutes=7 * (day % 5))
            for n in range(1 + (day * 7) % 4):  # one to four new posts a day
                pages[f"http://{HOST}/posts/{day}-{n}/"] = when.strftime("%Y-%m-%dT%H:%M:%SZ")
            if day % 6 == 3:  # an old page edited
                pages[f"http://{HOST}/posts/{day - 3}-0/"] = when.strftime("%Y-%m-%dT%H:%M:%SZ")
            if day == DAYS - 1:
                pages[f"http://{HOST}/drafts/untitled/"] = None  # a finding: no lastmod
            sitemap.write_text(urlset(pages))
            second.plan = [status(422, "key not valid for this host")] if day in (9, 10) else []
            first.plan = [status(429, "slow down", **{"Retry-After": "86400"})] if day == DAYS - 1 else []
            cli = {
                "sitemap": str(sitemap),
                "state": str(state),
                "endpoint": [first.endpoint, second.endpoint],
                "key": KEY,
                "retry-timeout": "30",
                "initial": "submit",
            }
            clock = FakeTime(when)
            report = execute(build_settings("run", cli, cwd=folder), Environment(now=clock.now, sleep=clock.sleep, clock=clock.clock))
            announced += [(url, when) for url in report.submitted]
    finally:
        first.close()
        second.close()
    for path in state.parent.iterdir():  # the fake endpoints' addresses, shown as the real ones
        path.write_text(path.read_text().replace(first.endpoint, SHOWN[0]).replace(second.endpoint, SHOWN[1]))
    log = folder / "access.log"
    with log.open("w") as handle:
        for number, (url, when) in enumerate(announced):
            target = url.split(HOST, 1)[1]
            for agent, ip, hours, every in ((BING, "157.55.39.20", 1 + number % 9, 1), (YANDEX, "5.255.253.40", 20 + number % 50, 3)):
                if number % every == 0 and number % 11 != 5:
                    at = (when + dt.timedelta(hours=hours)).strftime("%d/%b/%Y:%H:%M:%S +0000")
                    handle.write(f'{ip} - - [{at}] "GET {target} HTTP/1.1" 200 5120 "-" "{agent}"\n')
    return state, log


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(ROOT / "docs" / "images" / "report.png"))
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory(prefix="nc-report-") as temporary:
        folder = Path(temporary)
        state, log = story(folder)
        page = folder / "report.html"
        now = START + dt.timedelta(days=DAYS, hours=1)
        out = io.StringIO()
        run_state_sites([StateRequest("report", state, html=str(page), logs=[str(log)], now=lambda: now)], out)
        html = page.read_text().replace(str(state), "state/notify-changes.json")
        page.write_text(html)
        with sync_playwright() as playwright:
            context = playwright.chromium.launch_persistent_context(
                str(folder / "profile"), executable_path=str(CHROMIUM), args=ARGS, headless=True
            )
            tab = context.new_page()
            tab.set_viewport_size({"width": 960, "height": 1000})
            tab.route("**/*", lambda route: route.continue_() if route.request.url == page.as_uri() else route.abort())
            tab.goto(page.as_uri())
            bottom = tab.locator("#crawled-chart").bounding_box()
            assert bottom is not None
            Path(args.out).parent.mkdir(parents=True, exist_ok=True)
            height = bottom["y"] + bottom["height"] + 16  # down to the crawlers' chart
            tab.screenshot(path=args.out, full_page=True, clip={"x": 0, "y": 0, "width": 960, "height": height})
            context.close()
    size = Path(args.out).stat().st_size
    print(f"{args.out}: {size:,} bytes")
    return 0 if size <= 150_000 else 1


if __name__ == "__main__":
    raise SystemExit(main())
