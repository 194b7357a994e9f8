"""Decisions users rely on that no test stated, round two (#44's audit): each test states the
behaviour, and its docstring names the faulty edit it fails with."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator

import pytest

from notifier.cli import main
from notifier.database import DatabaseURL
from notifier.history.git import read_history
from notifier.pipeline.loop import Environment, execute
from notifier.protocol import derive_key
from notifier.report import Report
from notifier.settings import build_settings
from notifier.store import read_ledger, read_state
from tests.conftest import BASE, HOST, KEY, Site, index, pages, recorded_pending, urlset
from tests.fakeindexnow import FakeIndexNow, status
from tests.faketime import FakeTime
from tests.test_history import Repo


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
    assert site.fake is not None
    site.write(urlset(pages(1)))
    assert site.run().code == 0
    for count in range(2, 9):  # seven deploys, one new page each: seven batches
        site.write(urlset(pages(count)))
        assert site.run("--keep-batches", "3").code == 0
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
@pytest.fixture
def second() -> Iterator[FakeIndexNow]:
    """Another endpoint, which checks the same key file."""
    server = FakeIndexNow()
    server.serve_key(HOST, KEY)
    yield server
    server.close()


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
