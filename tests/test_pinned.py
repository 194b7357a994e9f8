"""Decisions users rely on that no test stated (#22's audit): each test states the behaviour."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from notifier.cli import main
from notifier.history import read_history
from notifier.sources import SourceFinder
from tests.conftest import BASE, NS, Site, urlset
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
    from notifier.robots import Robots

    robots = Robots.parse("User-agent: msnbot\nDisallow: /old/\n\nUser-agent: *\nDisallow:\n")
    assert robots.blocking(f"{BASE}/old/x") == ["bingbot"]


@pytest.mark.parametrize("rules", ["Allow: /p\nDisallow: /p\n", "Disallow: /p\nAllow: /p\n"])
def test_on_a_tie_in_length_allow_wins_whatever_the_order(rules: str) -> None:
    from notifier.robots import Robots

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
    from notifier.sitemap import read_sitemap

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
    from notifier.pending import hand_over_orphans
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
        ("f.md", "---\ntags:\n  - date: 2024-05-08\n---\n", {}),  # a list item is no field of the page
        ("g.md", "---\nmeta: {date: 2020-01-01}\nseries:\n  date: 2020-01-02\n---\n", {}),  # only last_update's date is the page's
    ],
)
def test_front_matter_dates_as_the_generators_write_them(tmp_path: Path, name: str, text: str, dates: dict[str, str]) -> None:
    from notifier.sources import front_matter

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
