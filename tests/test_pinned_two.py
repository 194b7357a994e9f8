"""Decisions users rely on that no test stated, round two (#44's audit): each test states the
behaviour, and its docstring names the faulty edit it fails with."""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

import notifier
from notifier.cli import main
from notifier.database import DatabaseURL
from notifier.history.git import read_history
from notifier.pipeline.loop import Environment, execute
from notifier.protocol import derive_key
from notifier.report import Report
from notifier.settings.settings import build_settings
from notifier.store import read_ledger, read_state
from tests.conftest import BASE, HOST, KEY, Site, eight_deploys_keeping_three_batches, index, pages, recorded_pending, run_records, urlset
from tests.fakeindexnow import FakeIndexNow, status
from tests.faketime import FakeTime
from tests.test_history import Repo
from tests.test_plugins import (
    CONF_PY,
    EDIT,
    FIRST,
    MKDOCS_YML,
    _deploy,
    _mkdocs_build,
    _mkdocs_dates,
    _mkdocs_site,
    _run,
    _sphinx_site,
    needs_mkdocs,
    needs_sphinx,
)


# -- PostgreSQL and the store (#44 items 1-4) -------------------------------------------------------
def _at(site: Site, when: dt.datetime, command: str = "run", **options: object) -> Report:
    """``command`` through the library at the wall-clock time ``when``, on the site's state (a
    file, or a PostgreSQL site)."""
    state: object = site.state
    where: dict[str, object] = (
        {"state": state.dsn, "site-name": state.site} if isinstance(state, DatabaseURL) else {"state": str(site.state)}
    )
    given: dict[str, object] = {"sitemap": str(site.sitemap), "key": KEY, "retry-timeout": 0.2, **where} | options
    if site.fake is not None and command == "run":
        given.setdefault("endpoint", [site.fake.endpoint])
    clock = FakeTime(when)
    return execute(build_settings(command, given), Environment(now=clock.now, sleep=clock.sleep, clock=clock.clock))


@pytest.fixture
def pg_site(site: Site, pg_url: str) -> Site:
    site.state = DatabaseURL(pg_url, site="shop")  # type: ignore[assignment]
    return site


def test_a_postgresql_state_reads_after_the_index_drops_its_first_part(pg_site: Site) -> None:
    """The kept parts' rows are renumbered (1 -> 0, 2 -> 1) in the save that drops part 0. Fails
    with ``_save_parts`` renumbering a kept row only when its number moves by more than one, or
    with the rows not first moved out of the new numbers' way (``n = -1 - n`` made ``n = n``)."""
    site = pg_site
    site.write(index({f"/part-{n}.xml": None for n in range(3)}))
    for n in range(3):
        site.write(urlset(pages(2, prefix=f"/s{n}/")), f"part-{n}.xml")
    assert site.run().code == 0
    site.write(index({f"/part-{n}.xml": None for n in (1, 2)}))  # the first part is gone
    result = site.run("--rule", "mass-removal=off")
    assert result.code == 0 and result.out.startswith("0 added, 0 changed, 2 removed"), result.out
    site.write(urlset(pages(3, prefix="/s2/")), "part-2.xml")
    result = site.run()  # the next load reads the renumbered rows
    assert result.code == 0 and result.out.startswith("1 added, 0 changed, 0 removed"), (result.out, result.err)
    state = read_state(site.state)
    assert state is not None and sorted(state.all_urls()) == sorted(
        [f"{BASE}/s1/{n}/" for n in range(2)] + [f"{BASE}/s2/{n}/" for n in range(3)]
    )


def test_one_sites_shorter_wait_never_shortens_anothers_longer_one(pg_url: str) -> None:
    """The endpoint's wait is shared by the sites of a database. Fails with the upsert's
    ``greatest(notify_changes_backoff.not_before, excluded.not_before)`` replaced by the new value."""
    from notifier.store import State
    from notifier.store.postgres import PostgresStore

    endpoint = "https://api.indexnow.org/indexnow"
    with PostgresStore(DatabaseURL(pg_url, site="shop")) as store:
        store.save(State(backoff={endpoint: "2030-06-01T15:00:00Z"}, updated="2030-06-01T12:00:00Z"))
    with PostgresStore(DatabaseURL(pg_url, site="blog")) as store:
        store.save(State(backoff={endpoint: "2030-06-01T13:00:00Z"}, updated="2030-06-01T12:00:00Z"))
    for name in ("shop", "blog"):
        state = read_state(DatabaseURL(pg_url, site=name))
        assert state is not None and state.backoff == {endpoint: "2030-06-01T15:00:00Z"}
    with PostgresStore(DatabaseURL(pg_url, site="blog")) as store:  # honest: a longer wait lengthens it
        store.save(State(backoff={endpoint: "2030-06-01T16:00:00Z"}, updated="2030-06-01T12:00:00Z"))
    state = read_state(DatabaseURL(pg_url, site="shop"))
    assert state is not None and state.backoff == {endpoint: "2030-06-01T16:00:00Z"}


def test_the_postgresql_ledger_keeps_exactly_keep_batches(pg_site: Site) -> None:
    """Unlike a ledger file (trimmed past twice the bound), the rows are cut at once. Fails with
    the DELETE's ``LIMIT %s`` given ``keep + 1`` or ``2 * keep``, or ``ORDER BY id DESC`` made
    ``ORDER BY id`` (the oldest kept)."""
    site = pg_site
    eight_deploys_keeping_three_batches(site)
    assert [entry["urls"] for entry in read_ledger(site.state)] == [[f"{BASE}/p/{n}/"] for n in (5, 6, 7)]


@pytest.mark.parametrize("store", ["json", "postgresql"])
def test_a_urls_recorded_on_moves_on_with_each_later_submission(site: Site, store: str, request: pytest.FixtureRequest) -> None:
    """The "recorded on" a lastmod-regressed message names is the last announcement, not the
    first. Fails with ``stamp_submitted``'s ``or record[LAST_SUBMITTED] < at`` dropped (only the
    first submission stamped)."""
    if store == "postgresql":
        site.state = DatabaseURL(request.getfixturevalue("pg_url"), site="shop")  # type: ignore[assignment]
    site.write(urlset({"/a/": "2030-01-01T10:00:00Z"}))
    assert _at(site, dt.datetime(2030, 1, 1, 12, tzinfo=dt.UTC)).exit_code == 0
    for day in (2, 3):  # the page changes and is announced on each day
        site.write(urlset({"/a/": f"2030-01-0{day}T10:00:00Z"}))
        assert _at(site, dt.datetime(2030, 1, day, 12, tzinfo=dt.UTC)).submitted == [f"{BASE}/a/"]
    site.write(urlset({"/a/": "2030-01-02T10:00:00Z"}))  # back to an older date
    report = _at(site, dt.datetime(2030, 1, 4, 12, tzinfo=dt.UTC), command="check")
    said = [violation.message for violation in report.violations if violation.rule == "lastmod-regressed"]
    assert said == ["lastmod 2030-01-02T10:00:00Z is earlier than 2030-01-03T10:00:00Z recorded on 2030-01-03"], said


# -- dates, history, page truth (#44 items 12-16) --------------------------------------------------
@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("tea.md", "Title: Tea\nModified: 2025-02-30\n"),  # Pelican
        ("tea.md", "Title: Tea\nModified: 2025-02-28T25:00:00Z\n"),
        ("tea.md", "Title: Tea\nModified: 2025-02-28T10:00:00+25:00\n"),
        ("tea.rst", "Tea\n===\n\n:modified: 2025-02-30\n"),
        ("tea.md", '{"lastmod": "2025-02-30"}\n'),  # Hugo's JSON front matter
        ("tea.md", '{"lastmod": "2025-02-28T24:30:00Z"}\n'),
    ],
)
def test_an_impossible_date_in_a_source_is_no_date(offline_site: Site, name: str, text: str) -> None:
    """Fails with ``as_w3c``'s ``parse_w3c`` check of the whole value dropped (a day or a time
    that does not exist reached the rules: exit 70)."""
    repo = Repo(offline_site.root)
    repo.commit({f"content/{name}": text}, "2025-03-01T10:00:00Z")
    extension = name.split(".")[1]
    fields = '["modified", "Modified", "lastmod"]'
    (offline_site.root / "notify-changes.toml").write_text(f'[history]\nsources = ["content/{{path}}.{extension}"]\nfields = {fields}\n')
    offline_site.write(urlset({"/tea/": "2025-03-01T10:00:00Z"}))
    result = offline_site.check()
    assert result.code == 0, (result.out, result.err)


def test_a_month_lastmod_names_a_front_matter_date_within_that_month(offline_site: Site) -> None:
    """``lastmod: 2025-04`` for a post dated 2025-04-15, committed in June: the month holds the day.
    Fails with ``agrees``' ``day_span(lastmod, instant)`` made ``(instant, instant)`` (the month
    taken as its first instant)."""
    repo = Repo(offline_site.root)
    repo.commit({"content/tea.md": "---\ndate: 2025-04-15\n---\n"}, "2025-06-01T10:00:00Z")
    (offline_site.root / "notify-changes.toml").write_text('[history]\nsources = ["content/{path}.md"]\nfields = ["date"]\n')
    offline_site.write(urlset({"/tea/": "2025-04"}))
    result = offline_site.check()
    assert result.code == 0, result.out
    offline_site.write(urlset({"/tea/": "2025-03"}))  # the month before: not the post's date
    result = offline_site.check()
    assert result.code == 1 and "lastmod-vs-history" in result.out, result.out


def test_with_commit_dates_out_of_order_the_first_commit_is_the_earliest_time(offline_site: Site) -> None:
    """A rebase or a skewed clock: the oldest commit is dated April, a later one March. A
    lastmod in March is not "earlier than the first commit". Fails with ``_count``'s
    ``min(early, span.first)`` made ``early`` (the oldest commit's time overwriting the earliest),
    or ``max(late, span.last)`` made ``late``."""
    repo = Repo(offline_site.root)
    for when in ("2025-04-01T10:00:00Z", "2025-03-01T10:00:00Z", "2025-05-01T10:00:00Z"):  # in commit order
        repo.commit({"content/tea.md": when}, when)
    assert (read_history(repo.root)["content/tea.md"].first.month, read_history(repo.root)["content/tea.md"].last.month) == (3, 5)
    (offline_site.root / "notify-changes.toml").write_text('[history]\nsources = ["content/{path}.md"]\n')
    offline_site.write(urlset({"/tea/": "2025-03-15"}))
    result = offline_site.check()
    assert result.code == 0, result.out
    offline_site.write(urlset({"/tea/": "2025-02-15"}))
    result = offline_site.check()
    assert result.code == 1 and "earlier than the first commit" in result.out and "2025-03-01T10:00:00Z" in result.out, result.out


@pytest.mark.parametrize(("first", "second", "elsewhere"), [("/tea/", "/cake/", False), ("/cake/", "/tea/", True)])
def test_the_first_canonical_of_a_page_is_its_canonical(offline_site: Site, first: str, second: str, elsewhere: bool) -> None:
    """Fails with ``read_head``'s ``canonical is None`` test dropped (the last canonical winning)."""
    offline_site.write(urlset({"/tea/": "2024-05-01", "/cake/": "2024-05-02"}))
    offline_site.build_pages(["/cake/"])
    page = offline_site.public / "tea" / "index.html"
    page.parent.mkdir(parents=True)
    page.write_text(
        f'<!DOCTYPE html><html><head><title>Tea</title><link rel="canonical" href="{BASE}{first}">'
        f'<link rel="canonical" href="{BASE}{second}"></head><body><p>tea</p></body></html>\n'
    )
    result = offline_site.check("--site-dir", str(offline_site.public))
    assert ("page-canonical-elsewhere" in result.out) == elsewhere, result.out
    assert result.code == (1 if elsewhere else 0), result.out


@pytest.mark.parametrize(
    ("links", "page"), [("<link>{base}/a/</link><link>{base}/b/</link>", "/a/"), ("<link>{base}/b/</link><link>{base}/a/</link>", "/b/")]
)
def test_an_rss_item_with_two_links_is_read_by_the_first(offline_site: Site, links: str, page: str) -> None:
    """Fails with ``feed_link`` keeping the last link it meets instead of returning the first."""
    from notifier.sitemap.reader import read_sitemap

    feed = (
        f'<?xml version="1.0"?><rss version="2.0"><channel><title>t</title><link>{BASE}/</link>'
        f"<item>{links.format(base=BASE)}<pubDate>Wed, 01 May 2024 10:00:00 +0000</pubDate></item></channel></rss>"
    )
    (entry,) = read_sitemap(str(offline_site.write(feed, "feed.xml"))).entries
    assert entry.loc == f"{BASE}{page}"


@pytest.mark.parametrize(
    ("rule", "path", "blocked"),
    [("/a*a$", "/a", False), ("/a*a$", "/aba", True), ("/a*a$", "/aa", True), ("/a*bc*c", "/abc", False), ("/a*bc*c", "/abcc", True)],
)
def test_a_wildcard_pattern_never_reuses_the_characters_of_the_piece_before(rule: str, path: str, blocked: bool) -> None:
    """``/a*a$`` needs two a's, ``/a*bc*c`` two c's. Fails with ``Rule.matches``' anchored
    ``len(path) - len(last) >= position`` test dropped (``/a`` blocked) or a piece's end taken as
    ``position = found`` (``/abc`` blocked)."""
    from notifier.site.robots import Robots

    robots = Robots.parse(f"User-agent: *\nDisallow: {rule}\n")
    assert bool(robots.blocking(f"{BASE}{path}")) == blocked


# -- commands and delivery (#44 items 17-22) -------------------------------------------------------
def _live_pages(site: Site, count: int) -> None:
    assert site.fake is not None
    for n in range(count):
        site.fake.sites[HOST][f"/p/{n}/"] = b"<html>live</html>"


def test_verify_live_n_fetches_n_pages_however_many_endpoints(site: Site, second: FakeIndexNow) -> None:
    """Fails with the sampling walk stopping only the inner loop (each further endpoint added one
    more page: 3 fetched for ``--verify-live 2`` with two endpoints) — the bug #44 item 22 found."""
    assert site.fake is not None
    both = ["--endpoint", site.fake.endpoint, "--endpoint", second.endpoint, "--on-submit-error", "warn"]
    _live_pages(site, 6)
    site.write(urlset(pages(6)))
    assert site.run(*both).code == 0
    second.plan = [status(503)] * 40  # the second endpoint is down: /p/0/ to /p/2/ stay pending there
    site.write(urlset(pages(6) | {f"/p/{n}/": "2026-06-01T10:00:00Z" for n in range(3)}))
    assert site.run(*both).code == 0
    assert set(recorded_pending(site.state)[second.endpoint]) == {f"{BASE}/p/{n}/" for n in range(3)}
    second.plan = []
    site.write(urlset(pages(6) | {f"/p/{n}/": "2026-06-01T10:00:00Z" for n in range(6)}))  # /p/3/ to /p/5/ at both
    site.fake.gets.clear()
    result = site.run(*both, "--verify-live", "2")
    assert result.code == 0, result.out
    assert len([path for path in site.fake.gets if "/p/" in path]) == 2, site.fake.gets
    assert recorded_pending(site.state) == {}


# -- [[sites]] and settings (#44 items 5-9) --------------------------------------------------------
def _key_file(site: Site, monkeypatch: pytest.MonkeyPatch, secret: str) -> tuple[int, list[str]]:
    """``key file`` for HOST with ``[keys] derive`` naming a variable set to ``secret``: its exit
    code and the key files it wrote."""
    monkeypatch.setenv("INDEXNOW_SECRET", secret)
    config = site.root / "notify-changes.toml"
    config.write_text('[keys]\nderive = "INDEXNOW_SECRET"\n')
    folder = site.root / "static"
    folder.mkdir(exist_ok=True)
    for old in folder.iterdir():
        old.unlink()
    code = main(["key", "file", "--host", HOST, "--write", str(folder), "--config", str(config)])
    return code, sorted(path.read_text() for path in folder.iterdir())


def test_a_derive_secret_of_exactly_sixteen_characters_is_accepted(offline_site: Site, monkeypatch: pytest.MonkeyPatch) -> None:
    """Fails with ``len(secret) < MIN_SECRET`` made ``<=`` (the documented minimum refused) or the
    minimum's test dropped (15 taken)."""
    assert _key_file(offline_site, monkeypatch, "s" * 16) == (0, [derive_key("s" * 16, HOST)])
    code, written = _key_file(offline_site, monkeypatch, "s" * 15)
    assert code == 2 and written == []
    assert "at least 16 characters" in offline_site.capsys.readouterr().err


@pytest.mark.parametrize("ending", ["\n", "\r\n", "  \n"])
def test_a_secret_read_from_a_file_with_its_newline_derives_the_same_keys(
    offline_site: Site, monkeypatch: pytest.MonkeyPatch, ending: str
) -> None:
    """``INDEXNOW_SECRET=$(cat secret)`` keeps no newline, ``--env-file`` and many CI stores do:
    the same keys either way. Fails with the secret's ``.strip()`` dropped."""
    secret = "s" * 16
    assert _key_file(offline_site, monkeypatch, secret + ending) == (0, [derive_key(secret, HOST)])


def _state(site: Site, *args: str) -> tuple[int, str, str]:
    site.capsys.readouterr()
    code = main(["state", *args, "--state", str(site.state)])
    captured = site.capsys.readouterr()
    return code, captured.out, captured.err


def test_state_show_lists_the_newest_ten_runs(offline_site: Site) -> None:
    """Fails with ``state.runs[-10:]`` made ``state.runs[:10]`` (the oldest) or ``[-11:]``."""
    from notifier.store import JsonStore, State

    with JsonStore(offline_site.state) as store:
        store.save(State(runs=run_records(15), updated="2024-05-01T00:00:00Z"))
    code, out, _ = _state(offline_site, "show")
    shown = re.findall(r"^  \S+ run: (\d+) added", out, re.MULTILINE)
    assert code == 0 and shown == [str(n) for n in range(5, 15)], out
    # a run with nothing to do writes no state, so it is not among them: the heading says so (a new
    # user's tryout read its absence as a lost run)
    assert "last runs (newest last; those that changed the state: a run with nothing to do writes nothing):" in out


def test_state_history_lists_the_newest_twenty_batches(offline_site: Site) -> None:
    """Fails with ``HISTORY_SHOWN`` other than 20, or the walk keeping the first batches."""
    from notifier.store import JsonStore, State
    from notifier.store.ledger import entry

    with JsonStore(offline_site.state) as store:
        store.save(State(updated="2024-05-01T00:00:00Z"))
        sent = [
            entry(f"2024-05-01T00:{n:02d}:00Z", "http://e.org/indexnow", HOST, "delivered", 200, 1, "", [f"{BASE}/{n}/"]) for n in range(25)
        ]
        store.record_ledger(sent, keep=100)
    code, out, _ = _state(offline_site, "history")
    assert code == 0 and re.findall(r"^2024-05-01T00:(\d\d):00Z ", out, re.MULTILINE) == [f"{n:02d}" for n in range(5, 25)], out


def test_forget_at_an_endpoint_nothing_is_pending_at_names_the_pending_ones(site: Site) -> None:
    """A typo in --endpoint: the line lists where URLs do wait. Fails with the message's
    ``', '.join(state.pending)`` dropped (``none`` said while two endpoints wait)."""
    assert site.fake is not None
    pending = {f"{BASE}/p/0/": {"reason": "added", "since": "2024-05-01T00:00:00Z"}}
    from notifier.store import JsonStore, PendingItem, State

    item: dict[str, PendingItem] = pending  # type: ignore[assignment]
    with JsonStore(site.state) as store:
        store.save(
            State(
                pending={"https://api.indexnow.org/indexnow": item, "https://www.bing.com/indexnow": item}, updated="2024-05-01T00:00:00Z"
            )
        )
    code, _, err = _state(site, "forget", f"{BASE}/p/0/", "--endpoint", "https://api.indexnow.org/indexnwo", "--yes")
    assert code == 2 and err.count("\n") == 1, err
    assert (
        "nothing is pending at https://api.indexnow.org/indexnwo; pending endpoints: https://api.indexnow.org/indexnow, https://www.bing.com/indexnow"
        in err
    )


def test_a_url_pending_at_two_endpoints_is_waiting_since_the_older_time(site: Site, second: FakeIndexNow) -> None:
    """Fails with the diff's ``since is None or item["since"] < since`` cut to ``since is None``
    (the first endpoint's time, here the later one) or the comparison turned round."""
    from notifier.store import JsonStore

    assert site.fake is not None
    site.write(urlset({"/a/": "2030-01-01T10:00:00Z"}))
    endpoints = [site.fake.endpoint, second.endpoint]
    assert _at(site, dt.datetime(2030, 1, 1, 12, tzinfo=dt.UTC), endpoint=endpoints).exit_code == 0
    with JsonStore(site.state) as store:  # as two deploys leave it: the second endpoint down since the 2nd, the first since the 3rd
        state = store.load()
        assert state is not None
        state.pending = {
            site.fake.endpoint: {f"{BASE}/a/": {"reason": "changed", "since": "2030-01-03T12:00:00Z"}},
            second.endpoint: {f"{BASE}/a/": {"reason": "changed", "since": "2030-01-02T12:00:00Z"}},
        }
        store.save(state)
    result = site.run("--dry-run", "--endpoint", site.fake.endpoint, "--endpoint", second.endpoint, "--format", "json")
    assert result.code == 0, result.err
    assert json.loads(result.out)["why"][f"{BASE}/a/"]["pending_since"] == "2030-01-02T12:00:00Z", result.out


def test_the_key_file_is_fetched_once_per_host_and_run(site: Site, second: FakeIndexNow) -> None:
    """Four batches to each of two endpoints: one GET of the key file. Fails with ``_preflight``'s
    ``if batch.host not in self.host_problems`` made ``if True`` (a GET before every batch)."""
    assert site.fake is not None
    both = ["--endpoint", site.fake.endpoint, "--endpoint", second.endpoint]
    site.write(urlset(pages(1)))
    assert site.run(*both).code == 0
    site.write(urlset(pages(5)))
    site.fake.gets.clear()
    result = site.run(*both, "--batch-size", "1")
    assert result.code == 0 and len(site.fake.delivered()) == 4 and len(second.delivered()) == 4, result.out
    assert site.fake.gets == [f"{BASE}/{KEY}.txt"]


def test_lastmod_missing_names_each_url_once(offline_site: Site) -> None:
    """/x/ has no lastmod, listed by two parts; the first part is not read again (its bytes did
    not change). Fails with ``_missing_in_unread``'s ``and loc not in listed`` dropped."""
    site = offline_site
    site.write(index({"/part-0.xml": None, "/part-1.xml": None}))
    site.write(urlset(pages(3) | {"/x/": None}), "part-0.xml")
    site.write(urlset(pages(3, prefix="/q/") | {"/x/": None}), "part-1.xml")
    rules = ("--rule", "lastmod-missing=warn", "--rule", "url-duplicate=warn")
    assert site.run(*rules).code == 0
    site.write(urlset(pages(4, prefix="/q/") | {"/x/": None}), "part-1.xml")
    result = site.check(*rules)
    said = [line for line in result.out.splitlines() if "lastmod-missing" in line]
    assert said and all(f"{BASE}/x/" in line for line in said) and len(said) == 1, result.out


def test_with_a_read_only_state_folder_the_crash_log_goes_to_the_temporary_folder(
    site: Site, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Fails with ``crash_log_folder``'s ``and os.access(folder, os.W_OK)`` dropped (the log
    written beside the state fails, and the traceback lands on stderr instead)."""
    import tempfile

    import notifier.pipeline.loop
    from notifier.crash import LOG_NAME

    temporary = tmp_path / "tmp"
    temporary.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temporary))
    site.write(urlset(pages(1)))
    assert site.run().code == 0

    def bug(*args: object, **kwargs: object) -> None:
        raise ZeroDivisionError("division by zero")

    monkeypatch.setattr(notifier.pipeline.loop, "execute", bug)
    folder = site.state.parent
    with _read_only(folder):
        result = site.run()
    assert result.code == 70 and f"the traceback is in {temporary / LOG_NAME}" in result.err, result.err
    assert "ZeroDivisionError: division by zero" in (temporary / LOG_NAME).read_text()
    assert not (folder / LOG_NAME).exists()


@contextlib.contextmanager
def _read_only(folder: Path) -> Iterator[None]:
    """``folder`` unwritable: its mode for a user; for root (whom a mode does not stop) the
    immutable flag, or the test is skipped where the file system has none."""
    if os.geteuid() != 0:
        folder.chmod(0o555)
        try:
            yield
        finally:
            folder.chmod(0o755)
        return
    if shutil.which("chattr") is None or subprocess.run(["chattr", "+i", str(folder)], capture_output=True).returncode != 0:
        pytest.skip("root writes through any mode, and this file system has no immutable flag")
    try:
        yield
    finally:
        subprocess.run(["chattr", "-i", str(folder)], check=True)


# -- [[sites]] (#44 items 5-8) ---------------------------------------------------------------------
def _two_sites(tmp_path: Path, fake: FakeIndexNow, docs: str = "", blog: str = "") -> Path:
    """tests/test_sites' docs and blog sites, with ``docs`` and ``blog`` added to their tables; both recorded."""
    from tests.test_sites import _monorepo

    config = _monorepo(tmp_path, fake)
    text = config.read_text().replace('state = "state/docs.json"\n', f'state = "state/docs.json"\n{docs}')
    config.write_text(text.replace('state = "state/blog.json"\n', f'state = "state/blog.json"\n{blog}'))
    assert notifier.run(config=config, cwd=tmp_path, environ={"INDEXNOW_KEY": KEY, "DOCS_KEY": KEY, "BLOG_KEY": KEY}).exit_code == 0
    return config


def test_a_site_with_a_broken_input_stops_no_other_site(tmp_path: Path, fake: FakeIndexNow) -> None:
    """The docs' sitemap is torn; the blog after it is read, verified and submitted, and each note
    names its site. Fails with ``execute_sites``' ``reports[name] = _failed(settings, error)`` in
    ``begin_site``'s handler made ``raise`` (the first broken site ending the run), or with the
    combined notes' ``f"{report.site}: {note}"`` made ``note``."""
    from tests.test_sites import _grow

    config = _two_sites(tmp_path, fake)
    _grow(tmp_path, lie=False)
    (tmp_path / "docs" / "public" / "sitemap.xml").write_text("<urlset><url><loc>torn")
    report = notifier.run(config=config, cwd=tmp_path, environ={"INDEXNOW_KEY": KEY})
    assert report.exit_code == 2 and report.sites["docs"].exit_code == 2 and report.sites["docs"].submitted == []
    assert report.sites["blog"].exit_code == 0 and report.submitted == [f"{BASE}/p/3/"] == fake.delivered()
    (docs_note,) = [note for note in report.notes if "sitemap.xml" in note and "docs/public" in note]
    assert docs_note.startswith("docs: "), report.notes
    assert all(note.startswith(("docs: ", "blog: ")) for note in report.notes), report.notes


def test_a_site_with_no_key_stops_no_site_after_it(tmp_path: Path, fake: FakeIndexNow) -> None:
    """The docs' key variable is gone on this runner; the blog after it still goes, and the API
    returns both reports. Fails with ``finish``'s handler in ``execute_sites`` made ``raise``."""
    from tests.test_sites import DOCS, _grow

    config = _two_sites(tmp_path, fake, docs='key-env = "DOCS_KEY"\n', blog='key-env = "BLOG_KEY"\n')
    _grow(tmp_path, lie=False)
    report = notifier.run(config=config, cwd=tmp_path, environ={"BLOG_KEY": KEY})
    assert list(report.sites) == ["docs", "blog"] and report.exit_code == 2
    assert report.sites["docs"].exit_code == 2 and report.sites["docs"].submitted == []
    assert any(note.startswith("docs: no IndexNow key for docs.shop-site.org") for note in report.notes), report.notes
    assert report.sites["blog"].exit_code == 0 and fake.delivered() == [f"{BASE}/p/3/"]
    assert f"{DOCS}/p/3/" not in fake.delivered()


def test_in_a_merged_keys_table_the_sites_own_key_wins(tmp_path: Path, fake: FakeIndexNow) -> None:
    """Fails with ``_site_layers``' ``{**inherited[key], **value}`` turned round (the top level's
    entry for the host winning over the site's)."""
    from tests.test_sites import _grow

    own = "blog0123456789ab"
    fake.serve_key(HOST, own)  # the blog's host publishes its own key
    config = _two_sites(tmp_path, fake, blog=f'[sites.keys]\n"{HOST}" = "{own}"\n')
    config.write_text(config.read_text().replace("[[sites]]", f'[keys]\n"{HOST}" = "top0123456789abc"\n\n[[sites]]', 1))
    _grow(tmp_path, lie=False)
    report = notifier.run(config=config, cwd=tmp_path, environ={"INDEXNOW_KEY": KEY})
    assert report.exit_code == 0, report.notes
    assert {post.json["host"]: post.json["key"] for post in fake.posts if post.answer == 200} == {"docs.shop-site.org": KEY, HOST: own}


# -- plugins, built for real (#44 items 10-11) -----------------------------------------------------
@pytest.mark.program
@needs_mkdocs
def test_the_mkdocs_plugins_state_setting_is_the_state_checked(tmp_path: Path) -> None:
    """``state:`` names a state away from the default: after a deploy there, the build's check
    reads it (no "baseline" note). Fails with the plugin's ``{"state": self.config.state}`` dropped."""
    root = tmp_path / "tea"
    _mkdocs_site(root, MKDOCS_YML.replace("../state/notify-changes.json", "../elsewhere/tea.json"))
    first = _mkdocs_build(root)
    assert first.returncode == 0 and "a real run would record a baseline of 3 URLs" in first.stderr, first.stderr
    _deploy(root, "site", state="../elsewhere/tea.json")
    again = _mkdocs_build(root)
    assert again.returncode == 0, again.stderr
    assert "no state file" not in again.stderr and "baseline" not in again.stderr, again.stderr


@pytest.mark.program
@needs_sphinx
def test_the_sphinx_extensions_notify_changes_state_is_the_state_checked(tmp_path: Path) -> None:
    """Fails with the extension's ``{"state": config.notify_changes_state}`` dropped."""
    root = tmp_path / "tea"
    _sphinx_site(root, CONF_PY.replace("../state/notify-changes.json", "../elsewhere/tea.json"))  # beside conf.py's folder
    build = ("-m", "sphinx", "-b", "html", "docs", "docs/_build/html")
    first = _run(root, *build)
    assert first.returncode == 0 and "a real run would record a baseline of 3 URLs" in first.stdout, first.stdout + first.stderr
    _deploy(root, "docs/_build/html", state="elsewhere/tea.json")
    again = _run(root, *build)
    assert again.returncode == 0, again.stdout + again.stderr
    assert "notify-changes: no state file" not in again.stdout and "baseline" not in again.stdout, again.stdout


@pytest.mark.program
@needs_mkdocs
def test_a_mkdocs_page_built_from_a_folders_index_md_is_stamped_and_checked(tmp_path: Path) -> None:
    """docs/oolong/index.md is the page /oolong/: dated by its commit, moved by its edit, and a
    lie about it fails the build. Fails with the ``{path}/index.md`` template dropped from the
    plugin's ``_history``."""
    root = tmp_path / "tea"
    repo = _mkdocs_site(root)
    repo.commit({"docs/oolong/index.md": "# Oolong\n"}, FIRST)
    first = _mkdocs_build(root)
    assert first.returncode == 0, first.stderr
    assert _mkdocs_dates(root)[f"{BASE}/oolong/"] == FIRST
    repo.commit({"docs/oolong/index.md": "# Oolong\n\nRoasted.\n"}, EDIT)
    edited = _mkdocs_build(root)
    assert edited.returncode == 0, edited.stderr
    assert _mkdocs_dates(root) == {f"{BASE}/": FIRST, f"{BASE}/black/": FIRST, f"{BASE}/green/": FIRST, f"{BASE}/oolong/": EDIT}
    (root / "mkdocs.yml").write_text(MKDOCS_YML.replace("      state:", "      stamp: false\n      state:"))  # the build day's dates
    lying = _mkdocs_build(root)
    assert lying.returncode == 1 and f"error[lastmod-vs-history] {BASE}/oolong/: lastmod 2025-06-01 is later than" in lying.stderr, (
        lying.stderr
    )


def test_a_sites_key_env_unset_is_no_key_never_the_default_key(tmp_path: Path, fake: FakeIndexNow) -> None:
    """The docs name their key's variable and the runner lacks it, while INDEXNOW_KEY (another
    host's key) is set: the docs send nothing and say which variable to set, rather than signing
    with a key their host does not publish (a 403 that blames the key file); the blog goes on.
    Faulty edit: ``_site_layers`` leaving the top level's key in place when key-env is unset."""
    from tests.test_sites import DOCS, _grow

    config = _two_sites(tmp_path, fake, docs='key-env = "DOCS_KEY"\n')
    _grow(tmp_path, lie=False)
    report = notifier.run(config=config, cwd=tmp_path, environ={"INDEXNOW_KEY": KEY})
    assert report.sites["docs"].exit_code == 2 and report.sites["docs"].submitted == []
    said = [note for note in report.notes if note.startswith("docs: no IndexNow key for docs.shop-site.org")]
    assert said and all("set DOCS_KEY" in note for note in said), report.notes
    assert not any("INDEXNOW_KEY" in note for note in report.notes if note.startswith("docs: ")), report.notes
    assert report.sites["blog"].exit_code == 0 and fake.delivered() == [f"{BASE}/p/3/"]
    assert f"{DOCS}/p/3/" not in fake.delivered()


def test_a_sites_key_env_takes_no_previous_key_of_the_top_level(tmp_path: Path, fake: FakeIndexNow) -> None:
    """INDEXNOW_KEY_PREVIOUS is the top level's rotation: a site with its own key-env is not
    signed with it, while a site without key-env still is (honest beside). Faulty edit: the
    ``del merged["key-previous"]`` in ``_site_layers`` dropped."""
    from notifier.settings.config_sites import build_runs

    config = _two_sites(tmp_path, fake, docs='key-env = "DOCS_KEY"\n')
    old = "old0123456789abcd"
    runs = build_runs("run", {"config": str(config)}, {"INDEXNOW_KEY": KEY, "DOCS_KEY": KEY, "INDEXNOW_KEY_PREVIOUS": old}, tmp_path)
    previous = {settings.site: settings.keys.previous for settings in runs}
    assert previous == {"docs": None, "blog": old}
