"""Shared fixtures: an isolated working folder, a network guard, the fake endpoint, a site builder."""

from __future__ import annotations

import datetime as dt
import ipaddress
import os
import resource
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import urllib.parse
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape

import pytest
from hypothesis import settings

from notifier.cli import main
from notifier.report import Report
from notifier.store import RunRecord
from tests.fakeindexnow import FakeIndexNow
from tests.postgres import pg_alone, pg_server, pg_share, pg_url  # noqa: F401  # fixtures: a real PostgreSQL server, a database a test

# No timed assertions on shared machines: hypothesis's per-example deadline is one.
settings.register_profile("notify-changes", deadline=None)
settings.load_profile("notify-changes")

HOST = "www.shop-site.org"
BASE = f"http://{HOST}"
KEY = "0123456789abcdef"
NS = "http://www.sitemaps.org/schemas/sitemap/0.9"
CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"
ROOT = Path(__file__).resolve().parents[1]

# -- quick and slow tests ----------------------------------------------------------------
# ``pytest -m "not slow"`` checks a change in well under a minute; the README's command runs
# everything. Slow: whole modules that start processes, build generators' sites, build the
# package, send signals or sweep generated inputs, the end-to-end ``program`` tests, and
# single tests over a second (``@pytest.mark.slow`` where they are).
SLOW_MODULES = {
    "test_action",
    "test_boundary",
    "test_corpus",
    "test_crashes",
    "test_delivery",
    "test_deploy_hook",
    "test_diff_property",
    "test_fuzz",
    "test_generators",
    "test_interrupt",
    "test_jobs",
    "test_packaging",
    "test_postgres_bounds",
    "test_report_browser",
}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.path.stem in SLOW_MODULES or item.get_closest_marker("program") is not None:
            item.add_marker(pytest.mark.slow)


# -- the program under test ------------------------------------------------------------
# The end-to-end tests (marked ``program``) drive notify-changes as a separate process.
# CI points NOTIFY_CHANGES_PROGRAM at the program a user installs (the built wheel in a
# fresh virtual environment, .ci/run); by default it is this environment's own.
_INSTALLED = os.environ.get("NOTIFY_CHANGES_PROGRAM", "")


def program() -> list[str]:
    """The argv prefix that starts the notify-changes program under test."""
    if _INSTALLED:
        return [_INSTALLED]
    script = Path(sys.executable).parent / "notify-changes"
    return [str(script)] if script.is_file() else [sys.executable, "-m", "notifier"]


def program_python() -> str:
    """The Python interpreter the program under test runs with (``python -m notifier``)."""
    return str(Path(_INSTALLED).parent / "python") if _INSTALLED else sys.executable


def program_folder() -> Path:
    """The folder of the program under test, for a PATH that finds it as ``notify-changes``."""
    return Path(program()[0]).parent


@pytest.fixture(scope="session", autouse=True)
def _installed_program_is_not_the_checkout() -> None:
    """With NOTIFY_CHANGES_PROGRAM set, the program must run the installed package, never
    this checkout's files (the editable install once hid a wheel without its subpackages)."""
    if not _INSTALLED:
        return
    python = Path(_INSTALLED).parent / "python"
    assert python.is_file(), f"NOTIFY_CHANGES_PROGRAM={_INSTALLED}: no python beside it"
    where = subprocess.run(
        [str(python), "-I", "-c", "import notifier; print(notifier.__file__)"], capture_output=True, text=True, check=True, cwd="/"
    ).stdout.strip()
    assert not Path(where).resolve().is_relative_to(ROOT / "notifier"), (
        f"{_INSTALLED} runs the checkout ({where}), not an installed package"
    )


# -- isolation -----------------------------------------------------------------------
def _loopback(address: Any) -> bool:
    if not isinstance(address, tuple):
        return True  # AF_UNIX
    host = address[0]
    try:
        return bool(ipaddress.ip_address(host).is_loopback)
    except ValueError:
        return bool(host == "localhost")


_real_connect = socket.socket.connect
_real_connect_ex = socket.socket.connect_ex


def _guarded_connect(self: socket.socket, address: Any) -> None:
    if not _loopback(address):
        raise ConnectionRefusedError(f"tests never leave the machine: connection to {address!r} refused")
    _real_connect(self, address)


def _guarded_connect_ex(self: socket.socket, address: Any) -> int:
    if not _loopback(address):
        raise ConnectionRefusedError(f"tests never leave the machine: connection to {address!r} refused")
    return _real_connect_ex(self, address)


_real_getaddrinfo = socket.getaddrinfo


def _is_address(name: str) -> bool:
    try:
        ipaddress.ip_address(name.strip("[]"))
    except ValueError:
        return False
    return True


def _guarded_getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
    name = host.decode() if isinstance(host, bytes) else host
    if name is not None and not _loopback((name, 0)) and not _is_address(name):  # addresses need no lookup
        raise socket.gaierror(socket.EAI_NONAME, f"tests never leave the machine: no name lookup for {name!r}")
    return _real_getaddrinfo(host, *args, **kwargs)


@pytest.fixture
def forking(monkeypatch: pytest.MonkeyPatch) -> None:
    """Workers(2) forks its pool in this test whatever threads earlier tests left running
    (notifier.workers starts none in a process that runs other threads)."""
    monkeypatch.setattr(threading, "active_count", lambda: 1)


@pytest.fixture(autouse=True)
def _isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Every test works in its own folder, with no inherited key or CI variables, offline.

    Its temporary folder is its own too (TMPDIR, for the programs it runs as well): a crash
    log that falls back to the temporary folder stays with the test, never in the machine's /tmp.
    Afterwards every state file the test left behind is validated against state/schema.json.
    """
    monkeypatch.chdir(tmp_path)
    temporary = tmp_path.parent / f"{tmp_path.name}-tmp"
    temporary.mkdir(exist_ok=True)
    monkeypatch.setenv("TMPDIR", str(temporary))
    monkeypatch.setattr(tempfile, "tempdir", str(temporary))
    for name in ("INDEXNOW_KEY", "INDEXNOW_KEY_PREVIOUS", "GITHUB_ACTIONS", "CI", "GITHUB_OUTPUT", "GITHUB_STEP_SUMMARY", "NO_COLOR"):
        monkeypatch.delenv(name, raising=False)
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy", "NO_PROXY", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(socket.socket, "connect", _guarded_connect)
    monkeypatch.setattr(socket.socket, "connect_ex", _guarded_connect_ex)
    monkeypatch.setattr(socket, "getaddrinfo", _guarded_getaddrinfo)
    yield
    _validate_state_files(tmp_path)


def _validate_state_files(root: Path) -> None:
    """Every state file notify-changes wrote (its exact encoding) must match the schema."""
    from notifier.errors import StateError
    from notifier.store import decode_state, encode_state
    from tests.schema import assert_valid_state

    for path in root.rglob("*.json"):
        data = path.read_bytes()
        try:
            state = decode_state(data, str(path))
            state.all_urls()  # every part's records checked, not only the header
            ours = encode_state(state) == data
        except StateError:
            continue  # a corrupt file a test wrote on purpose
        if ours:
            assert_valid_state(path)


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeIndexNow]:
    """The fake endpoint, also serving the site's key file through HTTP_PROXY."""
    server = FakeIndexNow()
    server.serve_key(HOST, KEY)
    monkeypatch.setenv("HTTP_PROXY", server.url)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    yield server
    server.close()


# -- building sites --------------------------------------------------------------------
def urlset(pages: Mapping[str, str | None], namespace: str = NS) -> str:
    """A urlset of ``loc -> lastmod`` (None: no lastmod). Paths are put on HOST."""
    rows = []
    for loc, lastmod in pages.items():
        url = loc if "://" in loc else BASE + loc
        row = f"  <url>\n    <loc>{escape(url)}</loc>\n"
        if lastmod is not None:
            row += f"    <lastmod>{lastmod}</lastmod>\n"
        rows.append(row + "  </url>\n")
    return f'<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="{namespace}">\n{"".join(rows)}</urlset>\n'


def index(parts: Mapping[str, str | None], namespace: str = NS) -> str:
    rows = []
    for loc, lastmod in parts.items():
        url = loc if "://" in loc or not loc.startswith("/") else BASE + loc
        row = f"  <sitemap><loc>{escape(url)}</loc>"
        if lastmod is not None:
            row += f"<lastmod>{lastmod}</lastmod>"
        rows.append(row + "</sitemap>\n")
    return f'<?xml version="1.0" encoding="UTF-8"?>\n<sitemapindex xmlns="{namespace}">\n{"".join(rows)}</sitemapindex>\n'


def pages(count: int, lastmod: str = "2024-05-{day:02d}T10:{minute:02d}:00Z", prefix: str = "/p/") -> dict[str, str | None]:
    """``count`` pages with distinct, honest lastmods."""
    return {f"{prefix}{n}/": lastmod.format(day=1 + n % 28, minute=n % 60, n=n) for n in range(count)}


@dataclass
class Result:
    code: int
    out: str
    err: str


class Site:
    """A built site in ``tmp_path/public`` and the command line run against it."""

    def __init__(self, root: Path, capsys: pytest.CaptureFixture[str], fake: FakeIndexNow | None) -> None:
        self.root = root
        self.public = root / "public"
        self.public.mkdir(exist_ok=True)
        self.sitemap = self.public / "sitemap.xml"
        self.state = root / "state" / "notify-changes.json"
        self.capsys = capsys
        self.fake = fake
        (self.public / f"{KEY}.txt").write_text(KEY)

    def write(self, content: str | bytes | Mapping[str, str | None], name: str = "sitemap.xml") -> Path:
        path = self.public / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, Mapping):
            content = urlset(content)
        if isinstance(content, str):
            content = content.encode("utf-8")
        path.write_bytes(content)
        return path

    def build_pages(self, locs: Iterable[str], head: str = "") -> None:
        """An honest page file for each loc (paths on HOST): ``{path}/index.html`` with a
        canonical naming itself; ``head`` adds to every page's head."""
        for loc in locs:
            url = loc if "://" in loc else BASE + loc
            path = urllib.parse.urlsplit(url).path.strip("/")
            page = self.public / (f"{path}/index.html" if path else "index.html")
            page.parent.mkdir(parents=True, exist_ok=True)
            page.write_text(
                f'<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>{escape(path)}</title>'
                f'<link rel="canonical" href="{escape(url, {chr(34): "&quot;"})}">{head}</head><body><p>{escape(path)}</p></body></html>\n'
            )

    def run(self, *args: str, command: str = "run", sitemap: str | None = None, key: bool = True) -> Result:
        argv = [command, sitemap or str(self.sitemap), *self.state_args]
        if self.fake is not None and "--endpoint" not in args:
            argv += ["--endpoint", self.fake.endpoint]
        if key and "--key" not in args:
            argv += ["--key", KEY]
        argv += ["--retry-timeout", "0.2", "--request-timeout", "2", *args]
        self.capsys.readouterr()
        code = main(argv)
        captured = self.capsys.readouterr()
        return Result(code, captured.out, captured.err)

    def check(self, *args: str) -> Result:
        return self.run(*args, command="check")

    @property
    def state_args(self) -> list[str]:
        """--state (and for a PostgreSQL state, --site-name) as the program takes them."""
        from notifier.database import DatabaseURL

        state: object = self.state
        if isinstance(state, DatabaseURL):
            return ["--state", state.dsn, "--site-name", state.site or ""]
        return ["--state", str(self.state)]

    def state_bytes(self) -> bytes | None:
        """The state as stored: a file's bytes, or a PostgreSQL site's rows (None: nothing recorded)."""
        from notifier.database import DatabaseURL

        state: object = self.state
        if isinstance(state, DatabaseURL):
            from tests.postgres import site_rows

            return site_rows(state)
        return self.state.read_bytes() if self.state.exists() else None


@pytest.fixture
def site(tmp_path: Path, capsys: pytest.CaptureFixture[str], fake: FakeIndexNow) -> Site:
    return Site(tmp_path, capsys, fake)


@pytest.fixture
def offline_site(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Site:
    """A site for tests that never submit (check, dry runs, input errors)."""
    return Site(tmp_path, capsys, None)


def recorded_urls(path: Any) -> dict[str, dict[str, object]]:
    """Every URL a state file (JSON or SQLite) records, as field -> value (fields that are set),
    with ``part``: the index of the sitemap file it was recorded under."""
    from notifier.store import FIELDS, read_state

    state = read_state(path)
    assert state is not None, f"no state at {path}"
    found: dict[str, dict[str, object]] = {}
    for number, part in enumerate(state.parts):
        for loc, record in part.urls().items():
            fields: dict[str, object] = {name: value for name, value in zip(FIELDS, record, strict=False) if value is not None}
            found.setdefault(loc, fields | {"part": number})
    return found


def run_records(count: int) -> list[RunRecord]:
    """``count`` entries of the state's log of runs, the n-th having added n pages."""
    return [
        RunRecord(at=f"2024-01-01T00:{n:02d}:00Z", command="run", added=n, changed=0, removed=0, submitted=0, pending=0, exit_code=0)
        for n in range(count)
    ]


def recorded_pending(path: Any) -> dict[str, dict[str, dict[str, str]]]:
    """endpoint -> URL -> {"reason", "since"}: what a state file (JSON or SQLite) says is pending."""
    from notifier.store import read_state

    state = read_state(path)
    assert state is not None, f"no state at {path}"
    return {
        endpoint: {url: {"reason": item["reason"], "since": item["since"]} for url, item in items.items()}
        for endpoint, items in state.pending.items()
        if items
    }


@pytest.fixture
def file_size_limit() -> Iterator[Callable[[int], None]]:
    """Set RLIMIT_FSIZE for this process (the run and the fake endpoint share it) as a full
    disk would refuse writes: EFBIG instead of SIGXFSZ. Restored afterwards."""
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    previous = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    try:
        yield lambda size: resource.setrlimit(resource.RLIMIT_FSIZE, (size, hard))
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
        signal.signal(signal.SIGXFSZ, previous)


@pytest.fixture
def second() -> Iterator[FakeIndexNow]:
    """Another endpoint, which checks the same key file (``--endpoint-mode``, policies per endpoint)."""
    server = FakeIndexNow()
    server.serve_key(HOST, KEY)
    yield server
    server.close()


@pytest.fixture(params=["notify-changes.json", "notify-changes.sqlite", "postgresql"])
def site_in_every_store(site: Site, request: pytest.FixtureRequest) -> Site:
    """The site with its state in each store in turn: a JSON file, SQLite, a PostgreSQL database."""
    from notifier.database import DatabaseURL

    if request.param == "postgresql":
        site.state = DatabaseURL(request.getfixturevalue("pg_url"), site="shop")  # type: ignore[assignment]
    else:
        site.state = site.root / "state" / request.param
    return site


def run_at(site: Site, when: dt.datetime, **options: Any) -> Report:
    """A run of the site's sitemap through the API's settings at ``when`` (an injected clock:
    its waits pass no time) against the site's fake endpoint: the site's state (a database's
    site name with it), a 30 s retry budget, ``initial = submit``; ``options`` by their config
    names, ``_`` for ``-`` (``per_day="2"``), override them. Returns the run's Report."""
    from notifier.database import DatabaseURL
    from notifier.pipeline.loop import Environment, execute
    from notifier.settings.settings import build_settings
    from tests.faketime import FakeTime

    assert site.fake is not None
    state: object = site.state
    where = {"state": state.dsn, "site-name": state.site} if isinstance(state, DatabaseURL) else {"state": str(state)}
    cli: dict[str, Any] = {
        "sitemap": str(site.sitemap),
        **where,
        "endpoint": [site.fake.endpoint],
        "key": KEY,
        "retry-timeout": "30",
        "initial": "submit",
        **{name.replace("_", "-"): value for name, value in options.items()},
    }
    clock = FakeTime(when)
    return execute(build_settings("run", cli, cwd=site.root), Environment(now=clock.now, sleep=clock.sleep, clock=clock.clock))


def eight_deploys_keeping_three_batches(site: Site) -> None:
    """A first deploy of one page, then seven, each adding one page (seven batches), under
    ``--keep-batches 3``: the ledger's bound, for every store."""
    assert site.fake is not None
    site.write(urlset(pages(1)))
    assert site.run().code == 0
    for count in range(2, 9):
        site.write(urlset(pages(count)))
        assert site.run("--keep-batches", "3").code == 0
