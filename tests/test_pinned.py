"""Decisions users rely on that no test stated (#22's audit): each test states the behaviour."""

from __future__ import annotations

import datetime as dt
import gzip
import os
import re
import subprocess
from pathlib import Path

import pytest

from notifier.cli import main
from notifier.history.git import read_history
from notifier.history.source_files import SourceFinder
from notifier.report import Report
from tests.conftest import BASE, HOST, KEY, NS, Site, index, pages, recorded_pending, urlset
from tests.fakeindexnow import status
from tests.test_history import Repo


def _commit_with(repo: Repo, files: dict[str, str], *, author: str, committer: str) -> None:
    """A commit whose author and committer times differ, as a rebase or cherry-pick leaves them."""
    for name, text in files.items():
        (repo.root / name).parent.mkdir(parents=True, exist_ok=True)
        (repo.root / name).write_text(text)
        repo.git("add", name)
    env = {key: value for key, value in os.environ.items() if not key.startswith("GIT_")}
    env.update(GIT_AUTHOR_DATE=author, GIT_COMMITTER_DATE=committer, GIT_AUTHOR_NAME="A", GIT_AUTHOR_EMAIL="a@b.c")
    env.update(GIT_COMMITTER_NAME="C", GIT_COMMITTER_EMAIL="c@b.c", HOME=str(repo.root))
    subprocess.run(["git", "commit", "-q", "-m", "rebased"], cwd=repo.root, env=env, check=True, capture_output=True)


def test_stamp_writes_the_author_time_of_the_last_commit_not_the_rebase_time(offline_site: Site) -> None:
    repo = Repo(offline_site.root)
    _commit_with(repo, {"content/posts/tea.md": "---\ntitle: Tea\n---\n"}, author="2025-04-01T10:00:00Z", committer="2025-06-30T18:00:00Z")
    (offline_site.root / "notify-changes.toml").write_text('[history]\npreset = "hugo"\n')
    offline_site.write(f'<urlset xmlns="{NS}"><url><loc>{BASE}/posts/tea/</loc><lastmod>2026-01-01</lastmod></url></urlset>')
    before = Path.cwd()
    os.chdir(offline_site.root)
    try:
        assert main(["stamp", str(offline_site.sitemap)]) == 0
    finally:
        os.chdir(before)
    assert "<lastmod>2025-04-01T10:00:00Z</lastmod>" in offline_site.sitemap.read_text()  # when the author wrote it


def test_a_span_runs_from_the_earliest_to_the_latest_of_author_and_committer_times(tmp_path: Path) -> None:
    repo = Repo(tmp_path / "r")
    _commit_with(repo, {"a.md": "x"}, author="2025-04-01T10:00:00Z", committer="2025-06-30T18:00:00Z")
    span = read_history(repo.root)["a.md"]
    assert (span.first.month, span.last.month) == (4, 6)


@pytest.mark.parametrize("lastmod", ["2025-04-01T10:00:00Z", "2025-06-30T18:00:00Z"])
def test_either_time_of_a_rebased_commit_backs_a_lastmod(offline_site: Site, lastmod: str) -> None:
    repo = Repo(offline_site.root)
    _commit_with(repo, {"content/posts/tea.md": "---\ntitle: Tea\n---\n"}, author="2025-04-01T10:00:00Z", committer="2025-06-30T18:00:00Z")
    (offline_site.root / "notify-changes.toml").write_text('[history]\npreset = "hugo"\n')
    offline_site.write(urlset({"/posts/tea/": lastmod}))
    assert offline_site.check().code == 0


def test_the_callers_git_variables_never_reach_the_tools_git(offline_site: Site, monkeypatch: pytest.MonkeyPatch) -> None:
    """A deploy run from a git hook has GIT_DIR set (to the hook's repository, or a bare one)."""
    repo = Repo(offline_site.root)
    repo.commit({"content/about.md": "about"}, "2025-03-05T12:00:00Z")
    (offline_site.root / "notify-changes.toml").write_text('[history]\nsources = ["content/{path}.md"]\n')
    monkeypatch.setenv("GIT_DIR", str(offline_site.root / "nowhere.git"))
    monkeypatch.setenv("GIT_WORK_TREE", "/")
    offline_site.write(urlset({"/about/": "2025-03-05T12:00:00Z"}))
    result = offline_site.check()
    assert result.code == 0, result.err


def test_a_template_leading_out_of_the_repository_maps_to_nothing(tmp_path: Path) -> None:
    (tmp_path / "repo").mkdir()
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "tea.md").write_text("x")
    (tmp_path / "repo" / "linked").symlink_to(tmp_path / "outside")  # a link out, in a plain template
    finder = SourceFinder(["linked/{slug}.md"], tmp_path / "repo", tmp_path / "repo")
    assert finder.find("https://a.org/tea/") is None


def test_rest_of_a_one_segment_path_is_index(tmp_path: Path) -> None:
    """A language's home page (/fr/) is content/_index.fr.md under the hugo preset's {rest}.{first}."""
    (tmp_path / "content").mkdir()
    (tmp_path / "content" / "index.fr.md").write_text("x")
    finder = SourceFinder(["content/{rest}.{first}.md"], tmp_path, tmp_path)
    assert finder.find("https://a.org/fr/") == ("content/index.fr.md", None)


# -- robots.txt ---------------------------------------------------------------------------------
def test_bing_obeys_an_msnbot_group() -> None:
    from notifier.site.robots import Robots

    robots = Robots.parse("User-agent: msnbot\nDisallow: /old/\n\nUser-agent: *\nDisallow:\n")
    assert robots.blocking(f"{BASE}/old/x") == ["bingbot"]


@pytest.mark.parametrize("rules", ["Allow: /p\nDisallow: /p\n", "Disallow: /p\nAllow: /p\n"])
def test_on_a_tie_in_length_allow_wins_whatever_the_order(rules: str) -> None:
    from notifier.site.robots import Robots

    assert Robots.parse(f"User-agent: *\n{rules}").blocking(f"{BASE}/p/x") == []


def test_a_robots_txt_naming_no_sitemap_says_nothing_of_one(offline_site: Site) -> None:
    offline_site.write(urlset({"/": "2024-05-01"}))
    offline_site.build_pages(["/"])
    (offline_site.public / "robots.txt").write_text("User-agent: *\nAllow: /\n")
    result = offline_site.check()
    assert result.code == 0 and "robots.txt names" not in result.out


# -- feeds and dates ------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("dates", "lastmod"),
    [
        ("<atom:updated>2024-06-01T10:00:00Z</atom:updated><pubDate>Wed, 01 May 2024 10:00:00 +0000</pubDate>", "2024-06-01T10:00:00Z"),
        ("<pubDate>Wed, 01 May 2024 10:00:00 +0000</pubDate><dc:date>2024-06-02T10:00:00Z</dc:date>", "2024-06-02T10:00:00Z"),
        ("<dc:date>2024-06-02T10:00:00Z</dc:date><atom:updated>2024-06-03T10:00:00Z</atom:updated>", "2024-06-03T10:00:00Z"),
    ],
)
def test_an_rss_item_is_dated_by_its_modification_date_first(offline_site: Site, dates: str, lastmod: str) -> None:
    """atom:updated, then dc:date, then pubDate (the publication)."""
    from notifier.sitemap.reader import read_sitemap

    feed = (
        '<?xml version="1.0"?><rss version="2.0" xmlns:atom="http://www.w3.org/2005/Atom" '
        'xmlns:dc="http://purl.org/dc/elements/1.1/"><channel><title>t</title>'
        f"<item><link>{BASE}/a/</link>{dates}</item></channel></rss>"
    )
    path = offline_site.write(feed, "feed.xml")
    (entry,) = read_sitemap(str(path)).entries
    assert entry.lastmod == lastmod


@pytest.mark.parametrize(("lastmod", "end"), [("2024-05", "2024-06-01T00:00:00+00:00"), ("2024", "2025-01-01T00:00:00+00:00")])
def test_a_month_or_a_year_spans_its_whole_month_or_year(lastmod: str, end: str) -> None:
    from notifier.dates import parse_w3c, period_of

    instant = parse_w3c(lastmod)
    assert instant is not None
    start, stop = period_of(lastmod, instant)
    assert (start.isoformat(), stop.isoformat()) == (instant.isoformat(), end)


# -- pending ----------------------------------------------------------------------------------------
def test_an_orphaned_endpoints_pending_url_never_overwrites_a_configured_ones() -> None:
    from notifier.pipeline.pending import hand_over_orphans
    from notifier.store import PendingItem, State

    loc = f"{BASE}/a/"
    kept: PendingItem = {"reason": "changed", "since": "2024-05-01T00:00:00Z"}
    state = State(
        pending={
            "https://old.example.org/indexnow": {loc: {"reason": "added", "since": "2024-06-01T00:00:00Z"}, f"{BASE}/b/": kept},
            "https://api.indexnow.org/indexnow": {loc: kept},
        }
    )
    notes = hand_over_orphans(state, ["https://api.indexnow.org/indexnow"])
    assert state.pending == {"https://api.indexnow.org/indexnow": {loc: kept, f"{BASE}/b/": kept}}
    assert notes and "2 URLs pending for https://old.example.org/indexnow" in notes[0]


# -- sources: how a page's date is found ----------------------------------------------------------
@pytest.mark.parametrize(
    ("name", "text", "dates"),
    [
        ("a.md", "\ufeff---\nlastmod: 2024-05-01\n---\n", {"lastmod": "2024-05-01"}),  # a BOM before the front matter
        ("b.md", "---\nlast_update:\n  date: 2024-05-02\n  author: x\ntitle: t\n---\n", {"last_update": "2024-05-02"}),  # Docusaurus
        ("c.md", "---\nlast_update: {date: 2024-05-05, author: x}\n---\n", {"last_update": "2024-05-05"}),
        (
            "d.rst",
            "Tea\n###\n\n:date: 2024-05-03\n:modified: 2024-05-04\n",
            {"date": "2024-05-03", "modified": "2024-05-04"},
        ),  # Pelican .rst
        ("e.rst", ":date: 2024-05-07\n\nTea\n===\n", {"date": "2024-05-07"}),
        ("h.rst", "date: 2024-05-09\n\nTea\n===\n", {"date": "2024-05-09"}),  # Pelican's plain "date:" first, no colon before it
        (  # a field list deep in the body (a sample in the text) is not the document's
            "i.rst",
            "Tea\n===\n\n" + "".join(f"Line {n} of the text.\n" for n in range(17)) + ":date: 2020-01-01\n",  # line 21: past the head
            {},
        ),
        ("f.md", "---\ntags:\n  - date: 2024-05-08\n---\n", {}),  # a list item is no field of the page
        ("g.md", "---\nmeta: {date: 2020-01-01}\nseries:\n  date: 2020-01-02\n---\n", {}),  # only last_update's date is the page's
    ],
)
def test_front_matter_dates_as_the_generators_write_them(tmp_path: Path, name: str, text: str, dates: dict[str, str]) -> None:
    from notifier.history.source_files import front_matter

    (tmp_path / name).write_text(text, encoding="utf-8")
    assert front_matter(tmp_path / name) == dates


def test_a_percent_encoded_path_maps_to_its_utf8_named_source(tmp_path: Path) -> None:
    (tmp_path / "posts").mkdir()
    (tmp_path / "posts" / "café.md").write_text("x")
    finder = SourceFinder(["posts/{slug}.md"], tmp_path, tmp_path)
    assert finder.find("https://a.org/posts/caf%C3%A9/") == ("posts/café.md", None)


def test_the_first_configured_date_field_wins(offline_site: Site) -> None:
    """A post with lastmod and date: the order of [history] fields decides (hugo: lastmod first)."""
    repo = Repo(offline_site.root)
    repo.commit({"content/posts/tea.md": "---\ndate: 2024-01-01\nlastmod: 2024-03-01\n---\n"}, "2024-03-01T10:00:00Z")
    (offline_site.root / "notify-changes.toml").write_text('[history]\npreset = "hugo"\n')
    offline_site.write(urlset({"/posts/tea/": "2024-03-01"}))
    assert offline_site.check().code == 0
    offline_site.write(urlset({"/posts/tea/": "2024-01-01"}))  # the publication date: earlier than the first commit
    result = offline_site.check()
    assert result.code == 1 and "its lastmod says 2024-03-01" in result.out, result.out


def test_a_lastmod_naming_the_first_commit_is_backed(offline_site: Site) -> None:
    """Twelve pages created in one commit and edited since, each dated by its creation: the one
    shared instant is their first commit's, so it is backed and lastmod-bulk stays silent."""
    repo = Repo(offline_site.root)
    repo.commit({f"content/p{n}.md": "new" for n in range(12)}, "2024-01-10T10:00:00Z")
    for n in range(12):
        repo.commit({f"content/p{n}.md": f"edited {n}"}, f"2024-02-{n + 1:02d}T10:00:00Z")
    (offline_site.root / "notify-changes.toml").write_text('[history]\nsources = ["content/{path}.md"]\n')
    offline_site.write(urlset({f"/p{n}/": None for n in range(12)}))
    assert offline_site.run("--rule", "lastmod-missing=off").code == 0
    offline_site.write(urlset({f"/p{n}/": "2024-01-10T10:00:00Z" for n in range(12)}))
    result = offline_site.check()
    assert result.code == 0 and "lastmod-bulk" not in result.out, result.out


# -- stamp ------------------------------------------------------------------------------------------
def _stamp(site: Site) -> tuple[int, str]:
    site.capsys.readouterr()
    before = Path.cwd()
    os.chdir(site.root)
    try:
        code = main(["stamp", str(site.sitemap)])
    finally:
        os.chdir(before)
    return code, site.capsys.readouterr().out


def _stamp_counts(out: str) -> tuple[int, int]:
    found = re.search(r"stamp: \w+ (\d+) date\(s\) in \d+ file\(s\); (\d+) already named their content's date", out)
    assert found is not None, out
    return int(found.group(1)), int(found.group(2))


@pytest.fixture
def dated(offline_site: Site) -> Site:
    """Three pages in git, a sitemap whose every date is the build clock."""
    repo = Repo(offline_site.root)
    repo.commit({f"content/p{n}.md": f"page {n}" for n in range(3)}, "2025-01-10T10:00:00Z")
    (offline_site.root / "notify-changes.toml").write_text('[history]\nsources = ["content/{path}.md"]\n')
    offline_site.write(urlset({f"/p{n}/": "2026-11-30T09:41:07Z" for n in range(3)} | {"/orphan/": "2026-11-30T09:41:07Z"}))
    return offline_site


def test_stamp_counts_the_dates_already_right(dated: Site) -> None:
    code, out = _stamp(dated)
    assert code == 0 and _stamp_counts(out) == (3, 0)  # /orphan/ has no source: left, not counted
    code, out = _stamp(dated)
    assert code == 0 and _stamp_counts(out) == (0, 3)


def _with_an_atom_feed(site: Site, link: str) -> None:
    """An index of a urlset listing /p0/ and an Atom feed whose entry ``link`` names it, both stamped."""
    feed = (
        '<?xml version="1.0" encoding="utf-8"?><feed xmlns="http://www.w3.org/2005/Atom"><title>t</title>'
        f"<entry><title>p0</title>{link}<id>x</id><updated>2026-11-30T09:41:07Z</updated></entry></feed>"
    )
    site.write(index_of(["sitemap-pages.xml", "atom.xml"]))
    site.write(urlset({"/p0/": "2026-11-30T09:41:07Z"}), "sitemap-pages.xml")
    site.write(feed, "atom.xml")
    assert _stamp(site)[0] == 0


def test_an_atom_link_without_rel_is_the_entrys_page(dated: Site) -> None:
    _with_an_atom_feed(dated, f'<link href="{BASE}/p0/"/>')
    assert "<updated>2025-01-10T10:00:00Z</updated>" in (dated.public / "atom.xml").read_text()  # RFC 4287: no rel is alternate


def test_a_day_only_date_is_written_into_atom_as_an_rfc3339_date_time(dated: Site) -> None:
    Repo(dated.root).commit({"content/p0.md": "---\nlastmod: 2025-04-01\n---\n"}, "2025-04-03T10:00:00Z")
    (dated.root / "notify-changes.toml").write_text('[history]\nsources = ["content/{path}.md"]\nfields = ["lastmod"]\n')
    _with_an_atom_feed(dated, f'<link rel="alternate" href="{BASE}/p0/"/>')
    assert "<lastmod>2025-04-01</lastmod>" in (dated.public / "sitemap-pages.xml").read_text()  # a sitemap takes a day
    assert "<updated>2025-04-01T00:00:00Z</updated>" in (dated.public / "atom.xml").read_text()  # Atom needs a date-time


def test_a_regzipped_part_is_byte_reproducible(dated: Site) -> None:
    """gzip's header carries a time: 0, or the part's digest in the state would change on every deploy."""
    dated.write(index_of(["pages.xml.gz"]))
    original = urlset({f"/p{n}/": "2026-11-30T09:41:07Z" for n in range(3)}).encode()
    (dated.public / "pages.xml.gz").write_bytes(gzip.compress(original, mtime=1_700_000_000))
    assert _stamp(dated)[0] == 0
    first = (dated.public / "pages.xml.gz").read_bytes()
    assert first[4:8] == b"\0\0\0\0" and b"2025-01-10T10:00:00Z" in gzip.decompress(first)
    (dated.public / "pages.xml.gz").write_bytes(gzip.compress(original, mtime=1_800_000_000))  # the next build, later
    assert _stamp(dated)[0] == 0
    assert (dated.public / "pages.xml.gz").read_bytes() == first


def index_of(names: list[str]) -> str:
    return f'<sitemapindex xmlns="{NS}">' + "".join(f"<sitemap><loc>{BASE}/{name}</loc></sitemap>" for name in names) + "</sitemapindex>"


# -- the build clock ---------------------------------------------------------------------------------
def _iso(moment: dt.datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


@pytest.mark.parametrize(("now", "own_day"), [("2024-05-01T10:00:00Z", True), ("2024-05-01T09:59:59Z", False)])
def test_a_day_is_the_runs_own_day_from_fourteen_hours_before_it_begins(now: str, own_day: bool) -> None:
    """UTC+14 (Kiribati) begins 2 May at 10:00 UTC on 1 May: a build there stamps its own day."""
    from notifier.dates import parse_w3c
    from notifier.rules.bulk import _shared_mark

    instant = parse_w3c(now)
    assert instant is not None
    assert (_shared_mark("2024-05-02", instant, first_run=False) is not None) is own_day


def test_a_crowd_of_dates_just_after_now_is_a_crowd(offline_site: Site) -> None:
    """A build machine whose clock runs ahead (within --clock-skew) stamps its pages after now."""
    now = dt.datetime.now(dt.UTC)
    offline_site.write(urlset({f"/p/{n}/": _iso(now + dt.timedelta(minutes=20, seconds=n)) for n in range(15)}))
    result = offline_site.check()
    assert result.code == 1 and "15 of 15 added URLs have lastmods within 14 s of each other" in result.out, result.out
    assert "lastmod-future" not in result.out


def _execute_at(site: Site, command: str, when: dt.datetime, options: dict[str, object]) -> Report:
    """``command`` through the library at the wall-clock time ``when`` (the state's stamps are that time)."""
    from notifier.pipeline.loop import Environment, execute
    from notifier.settings.settings import build_settings
    from tests.faketime import FakeTime

    clock = FakeTime(when)
    given: dict[str, object] = {"sitemap": str(site.sitemap), "state": str(site.state), "key": KEY} | options
    return execute(build_settings(command, given), Environment(now=clock.now, sleep=clock.sleep, clock=clock.clock))


def _check_at(site: Site, when: dt.datetime, **options: object) -> tuple[int, list[str]]:
    """``check`` at ``when``: the exit code and the findings."""
    report = _execute_at(site, "check", when, options)
    return int(report.exit_code), [f"{found.rule} {found.message}" for found in report.violations]


NOON = dt.datetime(2030, 6, 1, 12, 0, tzinfo=dt.UTC)


@pytest.mark.parametrize("skew", [30, 60])  # the limit a few seconds past a minute, and on a whole minute
def test_a_crowd_counts_a_date_at_the_clock_skew_limit_itself(offline_site: Site, skew: int) -> None:
    """Ten of twenty added pages crowd the run, the last exactly --clock-skew after it: ten,
    enough for the mark (half the pages). A date at the limit is no lastmod-future either."""
    listed: dict[str, str | None] = {f"/c/{n}/": _iso(NOON - dt.timedelta(minutes=3, seconds=n + 1)) for n in range(9)}
    listed["/c/last/"] = _iso(NOON + dt.timedelta(seconds=skew))
    listed |= {f"/old/{n}/": f"2025-02-{n + 1:02d}T10:00:00Z" for n in range(10)}
    offline_site.write(urlset(listed))
    code, found = _check_at(offline_site, NOON, **{"clock-skew": f"{skew}s"})
    assert code == 1 and [line for line in found if "10 of 20 added URLs have lastmods within" in line], found
    assert not [line for line in found if line.startswith("lastmod-future")], found


def test_a_date_only_lastmod_of_the_run_s_day_is_no_part_of_a_crowd(offline_site: Site) -> None:
    """Half an hour after midnight, four pages say today's date (days, honest: too few for the
    day mark) beside eight precise dates five minutes after midnight: eight crowd, fewer than
    the ten the mark needs (half of twenty), not twelve."""
    listed: dict[str, str | None] = {f"/today/{n}/": "2030-06-01" for n in range(4)}
    listed |= {f"/c/{n}/": f"2030-06-01T00:05:0{n + 2}Z" for n in range(8)}
    listed |= {f"/old/{n}/": f"2025-02-{n + 1:02d}T10:00:00Z" for n in range(8)}
    offline_site.write(urlset(listed))
    assert _check_at(offline_site, dt.datetime(2030, 6, 1, 0, 30, tzinfo=dt.UTC)) == (0, [])
    del listed["/old/6/"], listed["/old/7/"]
    listed |= {"/c/8/": "2030-06-01T00:05:10Z", "/c/9/": "2030-06-01T00:05:11Z"}  # ten precise of twenty: a crowd
    offline_site.write(urlset(listed))
    code, found = _check_at(offline_site, dt.datetime(2030, 6, 1, 0, 30, tzinfo=dt.UTC))
    assert code == 1 and [line for line in found if "10 of 20 added URLs have lastmods within 9 s" in line], found


@pytest.mark.parametrize(("last_after", "crowd"), [(600, True), (601, False)])
def test_the_window_counts_dates_exactly_ten_minutes_apart(offline_site: Site, last_after: int, crowd: bool) -> None:
    """Eleven dates from a build spread over exactly ten minutes, among 22 added pages (enough: 11)."""
    start = dt.datetime.now(dt.UTC).replace(microsecond=0) - dt.timedelta(minutes=25)
    listed: dict[str, str | None] = {f"/c/{n}/": _iso(start + dt.timedelta(seconds=60 * n + 7)) for n in range(10)}
    listed["/c/last/"] = _iso(start + dt.timedelta(seconds=7 + last_after))
    listed["/early/"] = _iso(start - dt.timedelta(minutes=30))  # near the run too, so the window slides
    listed |= {f"/old/{n}/": f"2025-02-{n + 1:02d}T10:00:00Z" for n in range(10)}
    offline_site.write(urlset(listed))
    result = offline_site.check()
    if crowd:
        assert result.code == 1 and "11 of 22 added URLs have lastmods within 10 minutes of each other" in result.out, result.out
    else:
        assert result.code == 0 and "lastmod-bulk" not in result.out, result.out


# -- hosting: _redirects ---------------------------------------------------------------------------
def _page_check(site: Site, redirects: str, listed: list[str], built: list[str]) -> tuple[int, str]:
    site.write(urlset(dict.fromkeys(listed, "2024-05-01")))
    site.build_pages(["/", *built])
    (site.public / "_redirects").write_text(redirects)
    result = site.check("--site-dir", str(site.public))
    return result.code, result.out


def test_a_redirect_to_the_same_page_with_a_trailing_slash_is_not_a_redirect(offline_site: Site) -> None:
    """Netlify's own advice: `/about /about/ 301` normalises the slash. The pattern `/about` matches
    `/about/` too, and the target is that same page."""
    code, out = _page_check(offline_site, "/about  /about/  301!\n/docs/  /docs  301!\n", ["/about/", "/docs"], ["/about/"])
    assert code == 0 and "page-redirect" not in out, out


def test_a_pattern_matches_its_path_with_a_trailing_slash(offline_site: Site) -> None:
    code, out = _page_check(offline_site, "/old  /new/  301\n", ["/old/"], [])
    assert code == 1 and f"error[page-redirect] {BASE}/old/: _redirects sends this path to /new/" in out, out


@pytest.mark.parametrize("rule", ["/*  /index.html  200", "/app/*  /404.html  404"])
def test_a_rewrite_or_a_404_rule_is_not_a_redirect(offline_site: Site, rule: str) -> None:
    """Netlify's SPA fallback serves index.html for a missing page: page-missing (a warning), not page-redirect."""
    code, out = _page_check(offline_site, rule + "\n", ["/app/x/"], [])
    assert code == 0 and "page-redirect" not in out and f"warn[page-missing] {BASE}/app/x/" in out, out


# -- diff, planning, submission -----------------------------------------------------------------------
T1 = dt.datetime(2030, 1, 1, 12, 0, 0, tzinfo=dt.UTC)
T2 = dt.datetime(2030, 1, 2, 12, 0, 0, tzinfo=dt.UTC)


def _run_at(site: Site, when: dt.datetime, **options: object) -> int:
    """A run at ``when`` against the site's fake endpoint: its exit code."""
    assert site.fake is not None
    given: dict[str, object] = {"endpoint": [site.fake.endpoint], "retry-timeout": 0.2, "on-submit-error": "warn"} | options
    return int(_execute_at(site, "run", when, given).exit_code)


def _two_deploys_while_the_endpoint_is_down(site: Site, first: dict[str, str | None], second: dict[str, str | None]) -> None:
    """A recorded site, then a deploy at T1 and one at T2, each answered 503 (their URLs stay pending)."""

    assert site.fake is not None
    site.write(urlset(pages(2)))
    assert _run_at(site, T1 - dt.timedelta(days=1)) == 0
    site.fake.plan = [status(503)] * 40
    for when, listed in ((T1, first), (T2, second)):
        site.write(urlset(pages(2) | listed))
        assert _run_at(site, when) == 0


def test_a_url_that_changes_again_while_pending_keeps_its_first_since(site: Site) -> None:
    assert site.fake is not None
    _two_deploys_while_the_endpoint_is_down(site, {"/p/0/": "2029-06-01T10:00:00Z"}, {"/p/0/": "2029-07-01T10:00:00Z"})
    assert recorded_pending(site.state)[site.fake.endpoint] == {f"{BASE}/p/0/": {"reason": "changed", "since": "2030-01-01T12:00:00Z"}}


def test_state_show_says_waiting_since_the_oldest_pending_time(site: Site) -> None:
    assert site.fake is not None
    _two_deploys_while_the_endpoint_is_down(site, {"/a/": "2029-06-01"}, {"/a/": "2029-06-01", "/b/": "2029-06-02"})
    site.capsys.readouterr()
    assert main(["state", "show", "--state", str(site.state)]) == 0
    assert f"{site.fake.endpoint}: 2 URLs, waiting since 2030-01-01T12:00:00Z" in site.capsys.readouterr().out


def test_state_url_of_a_url_pending_as_removed_describes_it(site: Site) -> None:

    assert site.fake is not None
    site.write(urlset(pages(3)))
    assert _run_at(site, T1) == 0
    site.fake.plan = [status(503)] * 20
    site.write(urlset(pages(2)))  # /p/2/ removed; the endpoint is down
    assert _run_at(site, T2) == 0
    site.capsys.readouterr()
    assert main(["state", "url", f"{BASE}/p/2/", "--state", str(site.state)]) == 0
    out = site.capsys.readouterr().out
    assert "no longer listed by the sitemap; pending as removed" in out and "removed" in out, out


def test_a_first_check_says_a_real_run_would_record_a_baseline(offline_site: Site) -> None:
    offline_site.write(urlset(pages(3)))
    result = offline_site.check()
    assert result.code == 0 and "a real run would record a baseline of 3 URLs" in result.out, result.out
    assert "recorded a baseline" not in result.out and offline_site.state_bytes() is None


def test_a_first_check_that_fails_verification_promises_no_baseline(offline_site: Site) -> None:
    """A real run of this deploy would fail too and record nothing: no "would record" beside the errors."""
    offline_site.write(urlset(pages(2) | {"/soon/": "2099-01-01"}))
    result = offline_site.check()
    assert result.code == 1 and "lastmod-future" in result.out, result.out
    assert "would record" not in result.out and "baseline" not in result.out, result.out
    assert offline_site.state_bytes() is None


def test_a_run_refuses_before_writing_when_an_older_pending_urls_host_has_no_key(site: Site) -> None:
    """A URL of another host waits from a deploy whose key is gone: the run says so before it writes."""

    assert site.fake is not None
    other = "http://blog.shop-site.org"
    site.write(urlset(pages(1) | {f"{other}/a/": "2024-05-01"}))
    assert site.run("--rule", "url-out-of-scope=off").code == 0
    site.fake.plan = [status(503)] * 20
    site.write(urlset(pages(1) | {f"{other}/a/": "2024-06-01"}))
    assert site.run("--rule", "url-out-of-scope=off", "--on-submit-error", "warn").code == 0  # pending at the blog
    before = site.state_bytes()
    site.write(urlset(pages(1) | {"/p/0/": "2024-07-01T10:00:00Z", f"{other}/a/": "2024-06-01"}))
    config = site.root / "keys.toml"
    config.write_text(f'[keys]\n"{HOST}" = "{KEY}"\n')  # a key for the shop only
    result = site.run("--rule", "url-out-of-scope=off", "--config", str(config), key=False)
    assert result.code == 2 and "no IndexNow key for blog.shop-site.org" in result.err, result.err
    assert site.state_bytes() == before


def test_with_verify_live_a_key_file_problem_still_blocks_the_hosts_batches(site: Site) -> None:
    assert site.fake is not None
    site.write(urlset(pages(2)))
    assert site.run().code == 0
    site.write(urlset(pages(2) | {"/p/0/": "2026-06-01T10:00:00Z"}))
    site.fake.sites[HOST]["/p/0/"] = b"<html>live</html>"  # the page is served...
    site.fake.sites[HOST][f"/{KEY}.txt"] = b"not the key"  # ...but the key file is wrong
    result = site.run("--verify-live", "5")
    assert result.code == 3 and site.fake.posts == [] and "key file" in result.out, result.out


@pytest.mark.parametrize(("answer", "served"), [(299, True), (300, False), (199, False)])
def test_verify_live_takes_a_2xx_and_nothing_else_as_served(site: Site, answer: int, served: bool) -> None:
    """A 300 Multiple Choices (no Location to follow) or a 1xx is not the page being served."""
    assert site.fake is not None
    site.write(urlset(pages(2)))
    assert site.run().code == 0
    site.write(urlset(pages(2) | {"/p/0/": "2026-06-01T10:00:00Z"}))
    site.fake.get_faults["/p/0/"] = status(answer, Content_Length="0")
    result = site.run("--verify-live", "5")
    if served:
        assert result.code == 0 and site.fake.delivered() == [f"{BASE}/p/0/"], result.out
    else:
        assert result.code == 3 and f"answers HTTP {answer}" in result.out and site.fake.posts == [], result.out


def test_verify_live_n_looks_at_n_pages_of_a_host_and_no_more(site: Site) -> None:
    assert site.fake is not None
    site.write(urlset(pages(5)))
    assert site.run().code == 0
    site.write(urlset(pages(5) | {f"/p/{n}/": "2026-06-01T10:00:00Z" for n in range(3)}))
    site.fake.sites[HOST]["/p/0/"] = site.fake.sites[HOST]["/p/1/"] = b"<html>live</html>"  # /p/2/ not yet
    result = site.run("--verify-live", "2")
    assert result.code == 0 and sorted(site.fake.delivered()) == [f"{BASE}/p/{n}/" for n in range(3)], result.out
    assert [path for path in site.fake.gets if "/p/" in path] == [f"{BASE}/p/0/", f"{BASE}/p/1/"]


def test_verify_live_samples_changed_pages_too(site: Site) -> None:
    assert site.fake is not None
    site.write(urlset(pages(2)))
    assert site.run().code == 0
    site.write(urlset(pages(2) | {"/p/0/": "2026-06-01T10:00:00Z"}))  # changed, and the CDN still serves a 404
    result = site.run("--verify-live", "5")
    assert result.code == 3 and "not serving the new pages yet" in result.out and site.fake.posts == [], result.out


def test_a_star_in_a_url_is_a_literal_star_not_a_wildcard(tmp_path: Path) -> None:
    (tmp_path / "posts").mkdir()
    (tmp_path / "posts" / "abc.md").write_text("x")
    finder = SourceFinder(["posts/{slug}.md", "*/{slug}.md"], tmp_path, tmp_path)
    assert finder.find("https://a.org/posts/a*/") is None  # abc.md is not a*'s source
    (tmp_path / "posts" / "a*.md").write_text("x")
    assert SourceFinder(["posts/{slug}.md"], tmp_path, tmp_path).find("https://a.org/posts/a%2A/") == ("posts/a*.md", None)


@pytest.mark.parametrize("story", ["added", "changed"])
def test_a_url_that_can_never_be_sent_is_refused_and_the_others_beside_it_go(site: Site, story: str) -> None:
    assert site.fake is not None
    bad = "javascript:alert(1)"
    site.write(urlset(pages(2) | ({bad: "2024-05-01T00:00:00Z"} if story == "changed" else {})))
    assert site.run("--rule", "url-invalid=warn").code == 0
    good = "/p/0/" if story == "changed" else "/new/"
    site.write(urlset(pages(2) | {good: "2026-06-01T10:00:00Z", bad: "2026-06-01T10:00:00Z"}))
    result = site.run("--rule", "url-invalid=warn")
    assert result.code == 0 and "1 URL can never be sent to IndexNow and were not queued" in result.out, result.out
    assert site.fake.delivered() == [BASE + good] and recorded_pending(site.state) == {}


# -- what the mutation run found no test stating (scripts/mutate.py) --------------------------------
def _nested(depth: int) -> str:
    """A page path of ``depth`` names: depth - 1 folders and its file."""
    return "/".join(f"d{n}" for n in range(depth - 1)) + "/index.html"


@pytest.mark.parametrize("scanned", [True, False])
def test_a_page_64_names_deep_is_found_and_65_is_not(tmp_path: Path, scanned: bool) -> None:
    """The same bound whether the build is scanned (--site-dir) or looked up page by page."""
    from notifier.site.folder import SiteFolder

    for depth in (64, 65):
        (tmp_path / _nested(depth)).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / _nested(depth)).write_text("x")
    build = SiteFolder.scan(tmp_path) if scanned else SiteFolder.unscanned(tmp_path)
    assert build.has(_nested(64)) and not build.has(_nested(65))


def test_a_link_to_a_file_counts_only_when_it_stays_inside_the_build(tmp_path: Path) -> None:
    from notifier.site.folder import SiteFolder

    (tmp_path / "outside.html").write_text("secret")
    (tmp_path / "public").mkdir()
    (tmp_path / "public" / "real.html").write_text("x")
    (tmp_path / "public" / "alias.html").symlink_to(tmp_path / "public" / "real.html")
    (tmp_path / "public" / "leak.html").symlink_to(tmp_path / "outside.html")
    for build in (SiteFolder.scan(tmp_path / "public"), SiteFolder.unscanned(tmp_path / "public")):
        assert build.page_file(f"{BASE}/alias") == "alias.html" and build.page_file(f"{BASE}/leak") is None


def test_only_the_first_mib_of_robots_txt_is_read(offline_site: Site) -> None:
    """RFC 9309 asks crawlers to read at least 500 KiB; a rule after the first MiB is not read."""
    offline_site.write(urlset({"/a/": "2024-05-01"}))
    offline_site.build_pages(["/", "/a/"])
    (offline_site.public / "robots.txt").write_text("#" * (1 << 20) + "\nUser-agent: *\nDisallow: /\n")
    assert offline_site.check().code == 0
    (offline_site.public / "robots.txt").write_text("#" * ((1 << 20) - 40) + "\nUser-agent: *\nDisallow: /\n")
    assert offline_site.check().code == 1


def test_added_compares_as_a_sequence_and_only_as_one() -> None:
    from notifier.changes import Added, Change

    added = Added()
    added.add(f"{BASE}/a/", "2024-05-01")
    assert added == [Change(f"{BASE}/a/", "added", None, "2024-05-01")] and added != 5 and added != "x"


@pytest.mark.parametrize(("removed", "fails"), [(10, False), (11, True)])
def test_mass_removal_fires_over_a_fifth_not_at_it(offline_site: Site, removed: int, fails: bool) -> None:
    offline_site.write(urlset(pages(50)))
    assert offline_site.run().code == 0  # a baseline: nothing is sent
    offline_site.write(urlset(pages(50 - removed)))
    result = offline_site.check()
    assert ("error[mass-removal]" in result.out) is fails, result.out


def test_a_part_records_how_many_of_its_urls_have_no_lastmod(site: Site) -> None:
    """state/README.md: parts[].missing, so that an unread file still counts for lastmod-missing."""
    import json

    site.write(urlset(pages(3) | {"/x/": None}))
    assert site.run().code == 0
    site.write(urlset(pages(3) | {"/x/": None, "/y/": None, "/p/0/": "2026-06-01T10:00:00Z"}))  # read again: a change
    assert site.run().code == 0
    (part,) = json.loads(site.state.read_text())["parts"]
    assert part["missing"] == 2 and part["count"] == 5


def test_mass_removal_counts_the_urls_of_an_unread_part_too(offline_site: Site) -> None:
    """Two parts: one unchanged (not read again), one losing 10 of the site's 50 URLs: a fifth, not more."""
    keep, lose = pages(25, prefix="/keep/"), pages(25, prefix="/lose/")
    offline_site.write(index({"/keep.xml": None, "/lose.xml": None}))
    offline_site.write(urlset(keep), "keep.xml")
    offline_site.write(urlset(lose), "lose.xml")
    assert offline_site.run().code == 0
    offline_site.write(urlset(dict(list(lose.items())[:15])), "lose.xml")
    result = offline_site.check()
    assert result.code == 0 and "mass-removal" not in result.out, result.out
    offline_site.write(urlset(dict(list(lose.items())[:14])), "lose.xml")
    assert "error[mass-removal]" in offline_site.check().out


def _two_parts(site: Site, first: dict[str, str | None], second: dict[str, str | None] | None) -> None:
    names = {"/a.xml": None} | ({"/b.xml": None} if second is not None else {})
    site.write(index(names))
    site.write(urlset(first), "a.xml")
    if second is not None:
        site.write(urlset(second), "b.xml")


def test_an_unread_parts_urls_without_a_lastmod_are_still_said(offline_site: Site) -> None:
    _two_parts(offline_site, pages(3) | {"/bare/": None}, pages(2, prefix="/b/"))
    assert offline_site.run().code == 0
    _two_parts(offline_site, pages(3) | {"/bare/": None}, pages(3, prefix="/b/"))  # a.xml unchanged: not read again
    result = offline_site.check()
    missing = re.findall(r"^warn\[lastmod-missing\] (\S+):", result.out, re.MULTILINE)
    assert result.code == 0 and missing == [f"{BASE}/bare/"], result.out  # that one, and only that one


def test_a_duplicate_in_a_new_part_names_that_part_and_line(offline_site: Site) -> None:
    _two_parts(offline_site, pages(3), None)
    assert offline_site.run().code == 0
    _two_parts(offline_site, pages(3), {"/q/": "2024-05-01", "/p/0/": "2024-05-01T10:00:00Z"})  # b.xml is new
    result = offline_site.check()
    assert f"listed twice ({offline_site.public / 'b.xml'} line " in result.out, result.out
    import json

    report = json.loads(offline_site.check("--format", "json").out)
    assert (report["added"], report["unchanged"]) == (1, 3)  # /p/0/ counted once, in the unread a.xml


def test_a_part_not_read_again_still_says_which_host_the_sitemap_is_on(offline_site: Site) -> None:
    """url-out-of-scope's host is the one most URLs are on: the unread part's 20 count, not only the 2 read again."""
    other = "http://cdn.example-shop.org"
    _two_parts(offline_site, pages(20), {f"{other}/a/": "2024-05-01", f"{other}/b/": "2024-05-01"})
    assert offline_site.run("--rule", "url-out-of-scope=off").code == 0
    _two_parts(offline_site, pages(20), {f"{other}/a/": "2024-06-01", f"{other}/b/": "2024-05-01"})  # a.xml unread
    result = offline_site.check()
    assert result.code == 1 and f"error[url-out-of-scope] {other}/a/" in result.out, result.out


def test_a_build_with_link_cycles_is_scanned_once_through_each_link(tmp_path: Path) -> None:
    """Two links back to their own folder would make 2**64 paths; each target is walked once."""
    from notifier.site.folder import SiteFolder

    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "index.html").write_text("x")
    (tmp_path / "a" / "x").symlink_to(tmp_path / "a")
    (tmp_path / "a" / "y").symlink_to(tmp_path / "a")
    build = SiteFolder.scan(tmp_path)
    assert build.has("a/index.html") and build.has("a/x/index.html") and not build.has("a/x/x/index.html")


def test_the_depth_bound_counts_a_linked_folders_names_alike(tmp_path: Path) -> None:
    from notifier.site.folder import SiteFolder

    deep = tmp_path / "real" / "/".join(f"d{n}" for n in range(62))
    deep.mkdir(parents=True)
    (deep / "index.html").write_text("x")  # real/d0/…/d61/index.html: 64 names
    (tmp_path / "l").symlink_to(tmp_path / "real")
    linked = "l/" + "/".join(f"d{n}" for n in range(62)) + "/index.html"
    assert SiteFolder.scan(tmp_path).has(linked)


def test_a_url_whose_record_left_with_its_file_but_an_unread_file_lists_is_not_removed(offline_site: Site) -> None:
    import json

    _two_parts(offline_site, {"/u/": "2024-05-01", "/a1/": "2024-05-01"}, {"/u/": "2024-05-01", "/b1/": "2024-05-01"})
    assert offline_site.run("--rule", "url-duplicate=off").code == 0  # /u/'s record is a.xml's
    _two_parts(offline_site, {"/a1/": "2024-05-01"}, {"/u/": "2024-05-01", "/b1/": "2024-05-01"})  # b.xml unread
    report = json.loads(offline_site.check("--format", "json").out)
    assert (report["removed"], report["unchanged"]) == (0, 3), report


@pytest.mark.parametrize(
    ("zone", "offset"),
    [
        ("UT", "Z"), ("GMT", "Z"), ("Z", "Z"), ("EST", "-05:00"), ("EDT", "-04:00"), ("CST", "-06:00"),
        ("CDT", "-05:00"), ("MST", "-07:00"), ("MDT", "-06:00"), ("PST", "-08:00"), ("PDT", "-07:00"),
    ],
)  # fmt: skip
def test_rfc_822_named_zones_are_their_offsets(zone: str, offset: str) -> None:
    from notifier.dates import rfc822_to_w3c

    assert rfc822_to_w3c(f"Fri, 14 Mar 2025 10:20:00 {zone}") == f"2025-03-14T10:20:00{offset}"


@pytest.mark.parametrize(
    ("page", "noindex", "refresh", "base"),
    [
        (b"<html><head>" + b"<meta name=x content=y>" * 200 + b'<meta name="robots" content="noindex"></head>', True, None, None),
        (b"<html><head></div><meta name=robots content=noindex><p></head>", True, None, None),  # a stray tag: still read
        (
            b'<head><meta http-equiv="refresh" content="0; url=/a/"><meta http-equiv="refresh" content="0; url=/b/"></head>',
            False,
            "0; url=/a/",
            None,
        ),  # the first refresh
        (b'<head><base href="/one/"><base href="/two/"></head>', False, None, "/one/"),  # the first base
    ],
)
def test_a_head_is_read_past_its_first_kilobyte_and_its_first_facts_count(
    page: bytes, noindex: bool, refresh: str | None, base: str | None
) -> None:
    from notifier.site.head import noindex_meta, read_head

    head = read_head(page)
    assert (noindex_meta(head) is not None, head.refresh, head.base) == (noindex, refresh, base)


def test_a_long_head_is_fed_to_the_parser_once() -> None:
    from notifier.site.head import read_head

    head = read_head(b"<html><head>" + b"<meta name=x content=y>" * 200 + b"</head><body></body></html>")
    assert len(head.robots) == 200  # each meta once, though the head came in several pieces


def test_a_date_field_not_in_fields_is_said_to_be_ignored(offline_site: Site) -> None:
    repo = Repo(offline_site.root)
    repo.commit({"content/a.md": "---\nrevised: 2024-03-01\n---\n"}, "2024-03-01T10:00:00Z")
    (offline_site.root / "notify-changes.toml").write_text('[history]\nsources = ["content/{path}.md"]\nfields = ["lastmod"]\n')
    offline_site.write(urlset({"/a/": "2024-03-01T10:00:00Z"}))
    result = offline_site.check()
    assert result.code == 0 and "front-matter date field(s) 'revised'" in result.out and "so they were ignored" in result.out, result.out


def test_pages_sharing_the_date_their_front_matter_gives_are_no_build_clock(offline_site: Site) -> None:
    """Twelve posts re-dated together in their front matter (a batch republished), committed at other times."""
    repo = Repo(offline_site.root)
    for n in range(12):
        repo.commit({f"content/p{n}.md": f"---\nlastmod: 2024-01-{n + 1:02d}\n---\n"}, f"2024-01-{n + 1:02d}T10:00:00Z")
    (offline_site.root / "notify-changes.toml").write_text('[history]\nsources = ["content/{path}.md"]\nfields = ["lastmod"]\n')
    offline_site.write(urlset({f"/p{n}/": f"2024-01-{n + 1:02d}" for n in range(12)}))
    assert offline_site.run().code == 0
    for n in range(12):
        repo.commit({f"content/p{n}.md": f"---\nlastmod: 2024-03-10T10:00:00Z\n---\n{n}"}, f"2024-03-{n + 11:02d}T10:00:00Z")
    offline_site.write(urlset({f"/p{n}/": "2024-03-10T10:00:00Z" for n in range(12)}))
    result = offline_site.check()
    assert result.code == 0 and "lastmod-bulk" not in result.out, result.out


def test_a_batch_holds_at_most_ten_thousand_urls() -> None:
    from notifier.protocol import Keys, make_batches

    batches, unsendable = make_batches([f"{BASE}/p/{n}/" for n in range(10_001)], Keys(default=KEY), 10_000)
    assert [len(batch.urls) for batch in batches] == [10_000, 1] and unsendable == []


def test_a_batch_size_over_indexnows_limit_is_refused_and_the_default_is_the_limit() -> None:
    from notifier.errors import UsageError
    from notifier.settings.settings import build_settings

    assert build_settings("run", {"sitemap": "s.xml"}).batch_size == 10_000
    with pytest.raises(UsageError, match=re.escape("--batch-size: '10001' is out of range; use 1..10000")):
        build_settings("run", {"sitemap": "s.xml", "batch-size": "10001"})


def test_a_long_head_read_after_a_page_cut_short_is_read_whole() -> None:
    """The head parser is reused page after page: what closing one page left must not end the next one's head."""
    from notifier.site.head import noindex_meta, read_head

    read_head(b"<html><head><title>no end")  # closing it ends its head: an event nobody read
    head = read_head(b"<html><head>" + b"<meta name=x content=y>" * 200 + b'<meta name="robots" content="noindex"></head>')
    assert noindex_meta(head) is not None and len(head.robots) == 201
