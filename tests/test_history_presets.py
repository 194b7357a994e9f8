"""[history] for any layout: presets, wildcard templates, front-matter dates (issue #13, item 3).
Real git repositories with fixed commit dates; each lie beside its honest twin."""

from __future__ import annotations

from pathlib import Path

import pytest

from notifier.history.source_files import PRESETS, SourceFinder, as_w3c, front_matter
from tests.conftest import Result, Site, urlset
from tests.test_history import Repo


def configure(site: Site, body: str) -> None:
    (site.root / "notify-changes.toml").write_text(f"[history]\n{body}\n")


def check(site: Site, listed: dict[str, str | None]) -> Result:
    site.write(urlset(listed))
    return site.check("--rule", "lastmod-missing=off")


# -- Jekyll: dated post names, the date fallback chain -------------------------------------
@pytest.fixture
def jekyll(offline_site: Site) -> Repo:
    repo = Repo(offline_site.root)
    repo.commit(
        {
            "_posts/2025-03-14-first-flush.md": "---\ntitle: First flush\n---\nTea.\n",
            "_posts/2025-04-02-second-flush.md": "---\ntitle: Second\nlast_modified_at: 2025-05-01 09:30:00 +0200\n---\n",
            "about.md": "---\ntitle: About\n---\n",
        },
        "2025-04-20T10:00:00Z",  # the posts were written before they were committed
    )
    repo.commit({"about.md": "---\ntitle: About us\n---\n"}, "2025-06-01T08:00:00Z")
    configure(offline_site, 'preset = "jekyll"')
    return repo


def test_jekyll_posts_are_mapped_by_their_dated_names_and_honest_dates_pass(offline_site: Site, jekyll: Repo) -> None:
    result = check(
        offline_site,
        {
            "/blog/first-flush/": "2025-03-14",  # the date in its file name, before its first commit: honest
            "/blog/second-flush/": "2025-05-01T09:30:00+02:00",  # last_modified_at
            "/about/": "2025-06-01T08:00:00Z",  # no date in the front matter: its last commit
        },
    )
    assert result.code == 0, result.out
    assert "no source file" not in result.out


def test_a_back_dated_jekyll_post_is_caught(offline_site: Site, jekyll: Repo) -> None:
    result = check(offline_site, {"/blog/first-flush/": "2024-01-01", "/about/": "2025-06-01T08:00:00Z"})
    assert result.code == 1 and "error[lastmod-vs-history]" in result.out
    assert "_posts/2025-03-14-first-flush.md" in result.out and "file name says 2025-03-14" in result.out


def test_a_build_clock_date_on_a_jekyll_page_is_caught(offline_site: Site, jekyll: Repo) -> None:
    result = check(offline_site, {"/about/": "2026-11-29T10:00:00Z"})
    assert result.code == 1 and "later than the last commit of about.md" in result.out


# -- front-matter fields: honoured first, configurable, an unknown one said ignored -------------
@pytest.fixture
def dated(offline_site: Site) -> Repo:
    """Sources whose front matter dates them (YAML, TOML), committed long after those dates."""
    repo = Repo(offline_site.root)
    repo.commit(
        {
            "content/post.md": "---\nlastmod: 2025-01-05\n---\n",
            "content/exact.md": "---\nlastmod: 2025-01-05T10:00:00Z\n---\n",
            "content/other.md": "+++\nlastmod = 2025-02-01T10:00:00Z\n+++\n",
        },
        "2025-03-01T00:00:00Z",
    )
    configure(offline_site, 'sources = ["content/{path}.md"]')
    return repo


def test_a_front_matter_field_backs_a_date_git_cannot(offline_site: Site, dated: Repo) -> None:
    honest = check(offline_site, {"/post/": "2025-01-05", "/other/": "2025-02-01T10:00:00Z"})
    assert honest.code == 0, honest.out  # before the first commit, but the front matter says so
    lying = check(offline_site, {"/post/": "2025-01-09", "/other/": "2025-02-01T10:00:00Z"})
    assert lying.code == 1 and "its lastmod says 2025-01-05" in lying.out
    early = check(offline_site, {"/post/": "2025-01-04T05:00:00Z", "/other/": "2025-02-01T10:00:00Z"})
    assert early.code == 1  # an instant is not a day: 05:00 UTC on the 4th is the 5th in no zone


def test_a_date_field_not_in_the_list_is_said_to_be_ignored(offline_site: Site) -> None:
    repo = Repo(offline_site.root)
    repo.commit({"content/post.md": "---\nmodified_on: 2025-01-05\n---\n"}, "2025-03-01T00:00:00Z")
    configure(offline_site, 'sources = ["content/{path}.md"]')
    result = check(offline_site, {"/post/": "2025-01-05"})
    assert result.code == 1 and "'modified_on' is not in [history] fields, so it was ignored" in result.out
    configure(offline_site, 'sources = ["content/{path}.md"]\nfields = ["modified_on"]')
    honoured = check(offline_site, {"/post/": "2025-01-05"})
    assert honoured.code == 0 and "ignored" not in honoured.out


# -- the other presets, each on its generator's layout --------------------------------------
LAYOUTS = {
    "hugo": (
        {
            "content/_index.md": "",
            "content/posts/tea/index.md": "",
            "content/about.md": "",
            "content/docs/_index.md": "",
            "content/posts/milk.fr.md": "",  # translations by file name
            "content/_index.fr.md": "",
            "content/posts/_index.fr.md": "",
        },
        ["/", "/posts/tea/", "/about/", "/docs/", "/fr/posts/milk/", "/fr/", "/fr/posts/"],
    ),
    "jekyll": (
        {"_posts/2025-03-14-tea.md": "", "about.md": "", "index.html": "", "_posts/news/2025-01-02-milk.md": "", "assets/menu.pdf": ""},
        ["/2025/03/14/tea.html", "/about/", "/", "/news/milk/", "/assets/menu.pdf"],
    ),
    "mkdocs": (
        {"docs/index.md": "", "docs/guide/install.md": "", "docs/guide/index.md": "", "docs/img/tea.png": ""},
        ["/", "/guide/install/", "/guide/", "/img/tea.png"],
    ),
    "eleventy": ({"index.md": "", "posts/tea.md": "", "src/about.njk": ""}, ["/", "/posts/tea/", "/about/"]),
    "astro": ({"src/pages/index.astro": "", "src/pages/about.md": "", "src/content/blog/tea.mdx": ""}, ["/", "/about/", "/blog/tea/"]),
    "docusaurus": ({"docs/intro.md": "", "blog/2025-03-14-tea.md": "", "src/pages/index.tsx": ""}, ["/docs/intro/", "/blog/tea/", "/"]),
    "sphinx": ({"docs/index.rst": "", "docs/install.rst": "", "docs/api/index.md": ""}, ["/", "/install.html", "/api/"]),
    "pelican": (
        {"content/tea.md": "Title: Tea\nDate: 2025-03-14 10:20\n\nText.\n", "content/pages/about.md": ""},
        ["/tea.html", "/pages/about.html"],
    ),
}


@pytest.mark.parametrize("preset", sorted(LAYOUTS))
def test_each_preset_maps_its_generators_layout(tmp_path: Path, preset: str) -> None:
    files, urls = LAYOUTS[preset]
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    finder = SourceFinder(PRESETS[preset].sources, tmp_path, tmp_path)
    found = [finder.find(f"https://tea.example.org{url}") for url in urls]
    assert [each[0] if each else None for each in found] == list(files)


def test_every_preset_is_tested() -> None:
    assert set(LAYOUTS) == set(PRESETS) == {"hugo", "jekyll", "mkdocs", "eleventy", "astro", "docusaurus", "sphinx", "pelican"}


def test_a_wildcard_segment_and_a_date_placeholder_in_written_templates(tmp_path: Path) -> None:
    for name in ("notes/v1-tea.md", "notes/v2-coffee.md", "log/2024-12-01-tea.md"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("")
    finder = SourceFinder(["notes/*-{slug}.md", "log/{date}-{slug}.md"], tmp_path, tmp_path)
    assert finder.find("https://a.org/n/coffee/") == ("notes/v2-coffee.md", None)
    finder = SourceFinder(["log/{date}-{slug}.md"], tmp_path, tmp_path)
    assert finder.find("https://a.org/2024/tea/") == ("log/2024-12-01-tea.md", "2024-12-01")
    assert finder.find("https://a.org/2024/milk/") is None


def test_a_preset_reads_history_through_the_command_line(offline_site: Site) -> None:
    repo = Repo(offline_site.root)
    repo.commit({"docs/index.md": "# Home", "docs/guide.md": "# Guide"}, "2025-02-01T12:00:00Z")
    configure(offline_site, 'preset = "mkdocs"')
    assert check(offline_site, {"/": "2025-02-01", "/guide/": "2025-02-01"}).code == 0
    stamped = check(offline_site, {"/": "2026-11-29", "/guide/": "2026-11-29"})
    assert stamped.code == 1 and stamped.out.count("error[lastmod-vs-history]") == 2


@pytest.mark.parametrize(
    ("body", "said"),
    [
        ('preset = "gatsby"', "is not one of hugo, jekyll"),
        ("sources = []", 'needs preset = "NAME"'),
        ('sources = ["content/{name}.md"]', "{name} is not a placeholder"),
        ('sources = ["../other/{path}.md"]', "inside the repository"),
        ('preset = "hugo"\nfields = "date"', "fields must be a list"),
        ('preset = "hugo"\nsource = ["x"]', "unknown setting 'source'"),
    ],
)
def test_bad_history_settings_say_what_to_write(offline_site: Site, body: str, said: str) -> None:
    configure(offline_site, body)
    offline_site.write(urlset({"/": "2025-01-01"}))
    result = offline_site.check()
    assert result.code == 2 and said in result.err and result.err.count("\n") == 1, result.err


@pytest.mark.parametrize(
    ("text", "dates"),
    [
        ("---\ndate: 2025-03-14\ntitle: x\n---\n", {"date": "2025-03-14"}),
        ("---\ndate: '2025-03-14 10:20:00 +0100'\n---\n", {"date": "2025-03-14T10:20:00+01:00"}),
        ("---\nupdated: 2025-03-14 10:20\n---\n", {"updated": "2025-03-14"}),  # no zone: its day
        ("+++\nlastmod = 2025-03-14T10:20:00Z\ndate = 2025-01-01\n+++\n", {"lastmod": "2025-03-14T10:20:00+00:00", "date": "2025-01-01"}),
        ('{"date": "2025-03-14T10:20:00Z", "title": "x"}\n', {"date": "2025-03-14T10:20:00Z"}),
        (
            "Title: Tea\nDate: 2025-03-14 10:20\nModified: 2025-04-01\n\nBody: 2020-01-01\n",
            {"Date": "2025-03-14", "Modified": "2025-04-01"},
        ),
        ("# A page\n\ndate: 2025-01-01\n", {}),
        ("---\ntitle: no dates\nlayout: post\n---\n", {}),
        ("---\ndate: Last Modified\n---\n", {}),  # Eleventy's special values are not dates
        ("---\ndate: 2025-02-30\n---\n", {}),  # no such day
        ("---\nupdated: 2025-03-14 10:20 +0100\n---\n", {"updated": "2025-03-14T10:20:00+01:00"}),
        ("---\n_updated: 2025-03-14\nmeta:\n  date: 2020-01-01\n---\n", {"_updated": "2025-03-14"}),  # top level only
    ],
)
def test_front_matter_dates(tmp_path: Path, text: str, dates: dict[str, str]) -> None:
    page = tmp_path / "page.md"
    page.write_text(text)
    assert front_matter(page) == dates


def test_front_matter_date_forms() -> None:
    assert as_w3c("2025-03-14T10:20:00.5-05:00") == "2025-03-14T10:20:00.5-05:00"
    assert as_w3c("14 March 2025") is None and as_w3c(20250314) is None


def test_front_matter_is_read_from_the_first_16_kb(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    head = "---\ntitle: " + "x" * 100 + "\n"
    line = "date: 2025-01-01"
    for cut, dates in ((0, {"date": "2025-01-01"}), (1, {})):  # the line's last byte at 16,384, then at 16,385
        filler = "#" * (16_384 - len(head) - len(line) - 1 + cut)
        page.write_text(head + filler + "\n" + line + "\n---\n")
        assert front_matter(page) == dates


def test_a_wildcard_never_leads_out_of_the_repository(tmp_path: Path) -> None:
    outside = tmp_path / "outside.md"
    outside.write_text("")
    repo = tmp_path / "repo"
    (repo / "notes").mkdir(parents=True)
    (repo / "notes" / "v1-tea.md").symlink_to(outside)
    assert SourceFinder(["notes/*-{slug}.md"], repo, repo).find("https://a.org/tea/") is None


@pytest.mark.parametrize(
    ("url", "lastmod", "honest"),
    [
        ("/post/", "2025-01-06T14:00:00Z", True),  # the day 2025-01-05 ends at 14:00 the next day in the westernmost zone
        ("/post/", "2025-01-06T14:00:01Z", False),
        ("/post/", "2025-01-04T10:00:00Z", True),  # and begins at 10:00 the day before in the easternmost
        ("/post/", "2025-01-04T09:59:59Z", False),
        ("/exact/", "2025-01-05T10:00:00Z", True),  # an instant is that second
        ("/exact/", "2025-01-05T10:00:01Z", False),
        ("/exact/", "2025-01-05", True),  # and a day names it
        ("/exact/", "2025-01-03", False),  # (the 4th holds 10:00 UTC on the 5th, in UTC-12)
    ],
)
def test_a_lastmod_agrees_with_the_front_matter_to_the_day_or_the_second(
    offline_site: Site, dated: Repo, url: str, lastmod: str, honest: bool
) -> None:
    result = check(offline_site, {url: lastmod})
    assert (result.code == 0) is honest, result.out


def test_an_uncommitted_source_is_judged_by_its_front_matter(offline_site: Site, dated: Repo) -> None:
    (offline_site.root / "content" / "draft.md").write_text("---\nlastmod: 2025-02-01\n---\n")  # not committed yet
    assert check(offline_site, {"/draft/": "2025-02-01"}).code == 0
    lying = check(offline_site, {"/draft/": "2026-11-29"})
    assert lying.code == 1 and "is not the date content/draft.md gives" in lying.out


def test_the_unmapped_pages_note_names_one(offline_site: Site, dated: Repo) -> None:
    result = check(offline_site, {"/post/": "2025-01-05", "/contact/": "2025-01-01", "/shop/": "2025-01-01"})
    assert "2 page(s) have no source file matching [history] sources (e.g. http://www.shop-site.org/contact/)" in result.out


@pytest.mark.parametrize(
    ("lastmod", "honest"),
    [
        ("2025-03-02T00:00:00Z", True),  # the last commit plus the tolerance (1d)
        ("2025-03-02T00:00:01Z", False),
        ("2025-02-28T00:00:00Z", True),  # the first commit minus the tolerance
        ("2025-02-27T23:59:59Z", False),
    ],
)
def test_the_commit_history_holds_within_its_tolerance_each_side(offline_site: Site, lastmod: str, honest: bool) -> None:
    Repo(offline_site.root).commit({"content/plain.md": "# A page with no date of its own\n"}, "2025-03-01T00:00:00Z")
    configure(offline_site, 'sources = ["content/{path}.md"]')
    result = check(offline_site, {"/plain/": lastmod})
    assert (result.code == 0) is honest, result.out
