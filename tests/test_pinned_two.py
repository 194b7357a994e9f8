"""Decisions users rely on that no test stated, round two (#44's audit): each test states the
behaviour, and its docstring names the faulty edit it fails with."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from notifier.cli import main
from notifier.history.git import read_history
from notifier.protocol import derive_key
from tests.conftest import BASE, HOST, KEY, Site, pages, recorded_pending, urlset
from tests.fakeindexnow import FakeIndexNow, status
from tests.test_history import Repo


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
