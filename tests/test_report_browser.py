"""The report page in a real browser (issue #42): Debian's ``chromium`` driven by Playwright
through its executable path (Playwright's own browser downloads are not used). Real runs
against the fake endpoint on an injected clock (five days, two endpoints, pending URLs, a
finding) and a generated access log make the page; the browser opens it from ``file://``
and from a server that sends the strictest Content-Security-Policy the page allows, and
sees no console error, no request but the page's, the charts drawn at a readable size, and
series told apart without colour. A screenshot is kept (``tmp_path``; copied to
``$NOTIFY_CHANGES_ARTIFACTS`` when set, as ``.ci/run`` does).

Without chromium or Playwright the tests skip, saying which; under ``CI=true`` they fail.
"""

from __future__ import annotations

import datetime as dt
import http.server
import os
import re
import shutil
import tempfile
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import KEY, Site, pages, run_at, urlset
from tests.fakeindexnow import FakeIndexNow, status
from tests.test_crawled import BING, YANDEX, combined
from tests.test_report_page import report
from tests.test_stats import DAY, T0

CHROMIUM = Path(os.environ.get("NOTIFY_CHANGES_CHROMIUM", "/usr/bin/chromium"))
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def _missing(reason: str) -> None:
    if os.environ.get("CI") == "true":
        pytest.fail(f"{reason}: CI must open the report page in a real browser (.ci/run installs chromium)")
    pytest.skip(reason)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Chromium, headless, with a fresh profile of its own."""
    try:
        from playwright.sync_api import Error, sync_playwright
    except ImportError:
        _missing("Playwright for Python is not installed (pip install -e '.[test]')")
    if not CHROMIUM.is_file():
        _missing(f"no chromium at {CHROMIUM} (apt-get install chromium)")
    with sync_playwright() as playwright, tempfile.TemporaryDirectory(prefix="nc-chromium-") as profile:
        try:
            context = playwright.chromium.launch_persistent_context(profile, executable_path=str(CHROMIUM), args=ARGS, headless=True)
        except Error as error:
            _missing(f"chromium at {CHROMIUM} does not start under Playwright: {str(error).splitlines()[0]}")
        context.set_default_timeout(30_000)  # a bound on a stuck browser, not a timed assertion
        yield context
        context.close()


def _artifact(made: Path) -> None:
    folder = os.environ.get("NOTIFY_CHANGES_ARTIFACTS")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        shutil.copy(made, Path(folder) / made.name)


def five_days(site: Site, second: FakeIndexNow) -> Path:
    """Two endpoints over five days, a URL refused, pending URLs (a 429 on day 5), a finding,
    and an access log of bingbot and YandexBot visits; returns the log."""
    assert site.fake is not None
    both = {"endpoint": [site.fake.endpoint, second.endpoint]}
    for day in range(4):
        site.write(urlset(pages(3 + 3 * day)))
        if day == 1:
            second.plan = [status(422, "key not valid for this host")]
        assert run_at(site, T0 + day * DAY, **both).exit_code in (0, 3)
    site.fake.plan = [status(429, "slow down", **{"Retry-After": "86400"})]
    second.plan = [status(503, "busy")] * 10
    site.write(urlset({**pages(14), "/undated/": None}))  # a finding: a URL without a lastmod (a warning)
    assert run_at(site, T0 + 4 * DAY, **both).exit_code == 3
    log = site.root / "access.log"
    hour = dt.timedelta(hours=1)
    visits = [("157.55.39.1", T0 + day * DAY + (day + 1) * hour, f"/p/{n}/", BING) for day in range(4) for n in range(3 * day, 3 * day + 3)]
    visits += [("5.255.253.1", T0 + 2 * DAY + 5 * hour, f"/p/{n}/", YANDEX) for n in range(4)]
    log.write_text("".join(combined(*visit) for visit in visits))
    return log


@pytest.fixture
def page(site: Site, second: FakeIndexNow, tmp_path: Path) -> Path:
    log = five_days(site, second)
    made = tmp_path / "report.html"
    said = report(site, made, T0 + 5 * DAY, logs=[str(log)])
    assert said.startswith(f"{made}: the report page")
    return made


def _watch(context: Any, page_url: str) -> tuple[Any, list[str], list[str]]:
    """A new tab that lets only ``page_url`` load: every other request is recorded and aborted."""
    others: list[str] = []
    errors: list[str] = []

    def route(request_route: Any) -> None:
        if request_route.request.url == page_url:
            request_route.continue_()
        else:
            others.append(request_route.request.url)
            request_route.abort()

    tab = context.new_page()
    tab.route("**/*", route)
    tab.on("console", lambda message: errors.append(message.text) if message.type in ("error", "warning") else None)
    tab.on("pageerror", lambda error: errors.append(str(error)))
    tab.on("requestfailed", lambda request: others.append(request.url) if request.url != page_url else None)
    tab.set_viewport_size({"width": 1100, "height": 900})
    return tab, others, errors


def _charts_drawn(tab: Any) -> None:
    for chart in ("#received-chart", "#pending-chart", "#crawled-chart"):
        box = tab.locator(chart).bounding_box()
        assert tab.locator(chart).is_visible() and box is not None, chart
        assert box["width"] >= 560 and box["height"] >= 60, (chart, box)  # a readable size, not a thumbnail
    bars = tab.locator("#received-chart rect.bar")
    assert bars.count() >= 4
    for number in range(bars.count()):
        box = bars.nth(number).bounding_box()
        assert box is not None and box["height"] > 0 and box["width"] >= 2


def test_the_page_opens_from_a_file_with_no_error_and_no_request_elsewhere(browser: Any, page: Path, tmp_path: Path) -> None:
    url = page.as_uri()
    tab, others, errors = _watch(browser, url)
    tab.goto(url)
    _charts_drawn(tab)
    assert tab.locator("#crawled td[data-engine='bingbot']").inner_text().startswith("12 of ")
    assert tab.locator("#findings").inner_text().count("lastmod-missing") == 1
    shot = tmp_path / "report.png"
    tab.screenshot(path=str(shot), full_page=True)
    _artifact(shot)
    tab.close()
    assert shot.stat().st_size > 10_000
    assert errors == [] and others == []


class _StrictServer(http.server.BaseHTTPRequestHandler):
    page = b""
    policy = ""

    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Security-Policy", self.policy)
        self.send_header("Content-Length", str(len(self.page)))
        self.end_headers()
        self.wfile.write(self.page)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def serve() -> Iterator[Callable[[bytes, str], str]]:
    servers: list[http.server.ThreadingHTTPServer] = []

    def start(content: bytes, policy: str) -> str:
        handler = type("Handler", (_StrictServer,), {"page": content, "policy": policy})
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return f"http://127.0.0.1:{server.server_address[1]}/report.html"

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


def test_the_page_needs_nothing_a_strict_policy_refuses(browser: Any, page: Path, serve: Callable[[bytes, str], str]) -> None:
    """Served with no script, no image, no font allowed, and styles only by the page's own
    hash: nothing is refused (a refusal is a console error) and the stylesheet applies."""
    content = page.read_bytes()
    own = re.search(rb"style-src '(sha256-[^']+)'", content)
    assert own is not None
    for policy in (f"default-src 'none'; style-src '{own[1].decode()}'", "default-src 'none'; style-src 'unsafe-inline'; img-src data:"):
        url = serve(content, policy)
        tab, others, errors = _watch(browser, url)
        tab.goto(url)
        _charts_drawn(tab)
        font = tab.evaluate("getComputedStyle(document.body).fontFamily")
        assert "sans-serif" in font, (policy, font)  # report.css applied: not refused
        tab.close()
        assert errors == [] and others == [], policy


def _swatches(tab: Any) -> list[bytes]:
    legend = tab.locator("p.legend svg")
    return [legend.nth(number).screenshot() for number in range(legend.count())]


def test_the_series_are_told_apart_without_colour(browser: Any, page: Path, tmp_path: Path) -> None:
    """Each endpoint's bars and legend carry a fill pattern and its name, so in grayscale and
    under forced colours (Windows' high contrast) the two series still look different."""
    url = page.as_uri()
    tab, _, errors = _watch(browser, url)
    tab.goto(url)
    legend = tab.locator("p.legend span")
    assert legend.count() == 2 and all("(" in legend.nth(n).inner_text() for n in range(2))  # the endpoint and its pattern's name
    bars = tab.locator("#received-chart rect.bar")
    patterns = {bars.nth(n).get_attribute("fill") for n in range(bars.count())}
    assert len(patterns) == 2 and all(value and value.startswith("url(#") for value in patterns)
    tab.evaluate("document.documentElement.style.filter = 'grayscale(1)'")  # CSSOM from the test: not the page's own style
    gray = _swatches(tab)
    assert len(gray) == 2 and gray[0] != gray[1]
    tab.screenshot(path=str(tmp_path / "report-grayscale.png"), full_page=True)
    tab.evaluate("document.documentElement.style.filter = ''")
    tab.emulate_media(forced_colors="active")
    forced = _swatches(tab)
    assert len(forced) == 2 and forced[0] != forced[1]
    shot = tmp_path / "report-forced-colors.png"
    tab.screenshot(path=str(shot), full_page=True)
    _artifact(shot)
    tab.close()
    assert errors == []


def test_without_chromium_the_tests_skip_and_under_ci_they_fail(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match="no chromium"):
        _missing("no chromium at /nowhere")
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="CI must open the report page"):
        _missing("no chromium at /nowhere")


_ = KEY  # the fake endpoints check the site's key (conftest serves it)
