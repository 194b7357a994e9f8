"""What notifier/pipeline/live.py (--wait-live) does that the mutation run found no test stating
(#44): which key files and pages are waited for, that a look is one request (never retried
within it), the rotation's previous key file, the last short wait, and the not-live line. Each
test names the edit it catches. Clocks are injected; nothing sleeps."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any, cast

from notifier.environment import Environment
from notifier.indexnow import Client
from notifier.pipeline.context import Holds
from notifier.pipeline.live import Target, live_targets, not_live_line, wait_until_live
from notifier.pipeline.loop import execute
from notifier.report import Report
from notifier.settings.settings import Settings, build_settings
from notifier.site.pages import PAGE_LIMIT, file_fingerprint
from notifier.store import PendingItem, State
from tests.conftest import BASE, HOST, KEY, Site, pages, urlset
from tests.faketime import FakeTime

T0 = dt.datetime(2030, 6, 1, 12, 0, tzinfo=dt.UTC)
NEW = "fedcba9876543210fedc"
ONE = "https://one.example/indexnow"
TWO = "https://two.example/indexnow"
KEY_FILE = f"http://{HOST}/{KEY}.txt"


def _settings(tmp_path: Path, **options: Any) -> Settings:
    cli: dict[str, Any] = {
        "sitemap": str(tmp_path / "sitemap.xml"),
        "state": str(tmp_path / "state.json"),
        "key": KEY,
        "endpoint": [ONE, TWO],
        **{name.replace("_", "-"): value for name, value in options.items()},
    }
    return build_settings("run", cli, cwd=tmp_path)


def _deploy(site: Site, clock: FakeTime, options: dict[str, Any]) -> Report:
    assert site.fake is not None
    cli: dict[str, Any] = {
        "sitemap": str(site.sitemap),
        "state": str(site.state),
        "endpoint": [site.fake.endpoint],
        "key": KEY,
        "retry-timeout": "30",
        "initial": "submit",
        **options,
    }
    return execute(build_settings("run", cli, cwd=site.root), Environment(now=clock.now, sleep=clock.sleep, clock=clock.clock))


def _changed(*locs: str) -> dict[str, PendingItem]:
    return {loc: PendingItem(reason="changed", since="2030-06-01T00:00:00Z") for loc in locs}


# -- what is waited for -----------------------------------------------------------------------
def test_an_endpoint_whose_day_is_used_up_is_passed_over_only_in_all_mode(tmp_path: Path) -> None:
    """In all mode it sends nothing, so its hosts are not waited for; in first mode another
    endpoint sends its URLs on. fails if ``settings.endpoint_mode != "first"`` becomes ``==``,
    or ``"first"`` becomes ``"XXfirstXX"``, in pipeline/live.py::live_targets"""
    state = State(pending={ONE: _changed("http://other.example/a/"), TWO: _changed(f"{BASE}/b/")})
    holds = Holds({}, {ONE: "took its [announce] per-day 1 URLs today (UTC)"})
    every = live_targets(_settings(tmp_path), state, [ONE, TWO], holds)
    assert [target.url for target in every] == [KEY_FILE]
    first = live_targets(_settings(tmp_path, endpoint_mode="first"), state, [ONE, TWO], holds)
    assert [target.url for target in first] == [f"http://other.example/{KEY}.txt", KEY_FILE]


def test_only_added_or_changed_sendable_pages_with_a_small_built_file_are_looked_at(tmp_path: Path) -> None:
    """fails if ``item["reason"] in ("added", "changed") and loc in sendable`` becomes ``or`` or
    loses a side, if ``path is not None and _small(path)`` becomes ``or`` or loses a side, or if
    ``os.path.getsize(path) < PAGE_LIMIT`` becomes ``<=``, in pipeline/live.py::live_targets / _small"""
    public = tmp_path / "public"
    for path in ("p/0", "p/1", "q/0"):
        (public / path).mkdir(parents=True)
        (public / path / "index.html").write_text(f"<html>{path}</html>")
    (public / "p/3").mkdir(parents=True)
    with (public / "p/3/index.html").open("wb") as large:
        large.truncate(PAGE_LIMIT)  # a page past what a live answer is compared with (sparse: nothing is written)
    pending = {
        f"{BASE}/p/0/": PendingItem(reason="removed", since="2030-06-01T00:00:00Z"),  # removed, its file still built
        **_changed(f"{BASE}/p/1/", f"{BASE}/p/2/", f"{BASE}/p/3/"),  # p/2: not built
        **_changed(f"{BASE}/q/0/"),  # outside the key file's folder: no endpoint can be sent it
    }
    settings = _settings(tmp_path, site_dir=str(public), key_location=f"{BASE}/p/{KEY}.txt")
    found = live_targets(settings, State(pending={ONE: pending}), [ONE])
    assert found == [
        Target(HOST, f"{BASE}/p/{KEY}.txt", key=KEY),
        Target(HOST, f"{BASE}/p/1/", fingerprint=file_fingerprint(str(public / "p/1/index.html"))),
    ]


# -- a look is one request ---------------------------------------------------------------------
def test_a_key_file_answering_503_is_asked_once_a_look_not_retried_within_it(site: Site) -> None:
    """fails if ``polled=True`` becomes ``polled=False`` in the first check of pipeline/live.py::_problem"""
    assert site.fake is not None
    site.fake.get_status = 503
    site.write(urlset(pages(1)))
    clock = FakeTime(T0)
    report = _deploy(site, clock, {"wait-live": "3"})
    assert report.exit_code == 3 and report.not_live == [f"http://{HOST}/0123….txt"]
    assert clock.sleeps == [1.0, 2.0] and len(site.fake.gets) == 3  # three looks, one GET each


def test_during_a_rotation_the_previous_key_file_is_asked_once_a_look(site: Site) -> None:
    """fails if ``polled=True`` becomes ``polled=False`` in the previous key's check of
    pipeline/live.py::_problem"""
    assert site.fake is not None
    site.fake.get_status = 503  # the previous key's file (the new one's is not there: 404)
    site.write(urlset(pages(1)))
    clock = FakeTime(T0)
    report = _deploy(site, clock, {"wait-live": "3", "key": NEW, "key-previous": KEY})
    assert report.exit_code == 3 and clock.sleeps == [1.0, 2.0] and len(site.fake.gets) == 6  # both files, three looks


def test_while_the_new_key_file_is_served_the_previous_one_is_not_asked_for(site: Site) -> None:
    """fails if ``problem is not None and ...`` loses ``problem is not None`` in pipeline/live.py::_problem"""
    assert site.fake is not None
    site.fake.serve_key(HOST, NEW)
    site.write(urlset(pages(1)))
    clock = FakeTime(T0)
    report = _deploy(site, clock, {"wait-live": "60", "key": NEW, "key-previous": KEY})
    assert report.exit_code == 0 and clock.sleeps == []
    assert site.fake.gets == [f"http://{HOST}/{NEW}.txt"] * 2  # the wait's look, then the preflight: never KEY's file


def test_during_a_rotation_with_neither_key_file_served_the_host_is_not_live(site: Site) -> None:
    """fails if ``... and client.check_key_file(*target.previous, polled=True) is None`` loses that
    side in pipeline/live.py::_problem"""
    assert site.fake is not None
    del site.fake.sites[HOST][f"/{KEY}.txt"]
    site.write(urlset(pages(1)))
    report = _deploy(site, FakeTime(T0), {"wait-live": "2", "key": NEW, "key-previous": KEY})
    assert report.exit_code == 3 and report.not_live == [f"http://{HOST}/fedc….txt"] and site.fake.posts == []


# -- the waits -------------------------------------------------------------------------------
class _Looks:
    """A client whose key files are live as ``live`` says: each look recorded."""

    def __init__(self, live: dict[str, bool]) -> None:
        self.live = live
        self.looks: list[str] = []

    def check_key_file(self, url: str, key: str, *, polled: bool = False) -> str | None:
        self.looks.append(url)
        return None if self.live[url] else f"key file {url} answered HTTP 404"


def test_the_last_wait_is_what_is_left_of_the_bound_however_short() -> None:
    """fails if ``left <= 0`` becomes ``left <= 1`` in pipeline/live.py::wait_until_live"""
    clock = FakeTime(T0)
    client = _Looks({KEY_FILE: False})
    missing = wait_until_live([Target(HOST, KEY_FILE, key=KEY)], cast(Client, client), bound=1.5, sleep=clock.sleep, clock=clock.clock)
    assert clock.sleeps == [1.0, 0.5] and len(client.looks) == 3
    assert missing == [(Target(HOST, KEY_FILE, key=KEY), f"key file {KEY_FILE} answered HTTP 404")]


def test_a_file_seen_live_is_not_asked_for_again_and_the_line_counts_only_those_not_live() -> None:
    """fails if ``waiting = [target for target, _ in problems]`` is removed in pipeline/live.py::wait_until_live"""
    clock = FakeTime(T0)
    other = "http://other.example/key.txt"
    client = _Looks({KEY_FILE: True, other: False})
    said: list[str] = []
    targets = [Target(HOST, KEY_FILE, key=KEY), Target("other.example", other, key=KEY)]
    wait_until_live(targets, cast(Client, client), bound=3, sleep=clock.sleep, clock=clock.clock, notice=said.append)
    assert client.looks == [KEY_FILE, other, other, other]
    assert said == [
        f"--wait-live: 1 file not live yet (key file {other} answered HTTP 404); looking again in 1 s",
        f"--wait-live: 1 file not live yet (key file {other} answered HTTP 404); looking again in 2 s",
    ]


# -- the line -------------------------------------------------------------------------------
def _missing(count: int) -> list[tuple[Target, str]]:
    return [(Target(HOST, f"{BASE}/p/{n}/", fingerprint="f"), f"problem {n}") for n in range(count)]


def test_the_not_live_line_shows_three_problems_then_how_many_more() -> None:
    """fails if ``missing[:3]`` loses its bound or becomes ``[:4]``, if ``len(missing) > 3`` becomes
    ``>=`` or ``> 4``, or if the ``3`` of ``len(missing) - 3`` becomes ``4``, in pipeline/live.py::not_live_line"""
    tail = f"; nothing was sent for {HOST}, its URLs stay pending (publish the deploy, or wait longer, and run again)"
    assert not_live_line(_missing(3), 5) == f"not live within --wait-live 5 s: problem 0; problem 1; problem 2{tail}"
    assert not_live_line(_missing(4), 5) == f"not live within --wait-live 5 s: problem 0; problem 1; problem 2; and 1 more{tail}"
    assert not_live_line(_missing(5), 5) == f"not live within --wait-live 5 s: problem 0; problem 1; problem 2; and 2 more{tail}"


def test_a_page_whose_file_is_gone_is_not_compared(tmp_path: Path) -> None:
    """A built page removed between the diff and the wait (a cleaning step of the deploy) is no
    page to compare (edits: ``return False`` made a raise, or ``True``)."""
    from notifier.pipeline.live import _small

    (tmp_path / "page.html").write_text("<html></html>")
    assert _small(str(tmp_path / "page.html")) is True
    assert _small(str(tmp_path / "gone.html")) is False
