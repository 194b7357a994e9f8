"""Dates from the build, not the content: pages proven unchanged are held back, and the
build clock is caught without a shared instant (issue #13, items 1 and 2). Each lying
story stands beside its honest twin."""

from __future__ import annotations

import array
import datetime as dt
import json
import re
from collections.abc import Iterable, Mapping
from pathlib import Path

import pytest

from tests.conftest import BASE, Result, Site, pages, recorded_urls, urlset


def now() -> dt.datetime:
    """The wall clock when a test builds its dates, just before the run it checks reads its own: a
    value taken when the module was imported is minutes or hours old by then in a warm process
    (the mutation harness imports every test module once), and "minutes before the run" is not."""
    return dt.datetime.now(dt.UTC)


def iso(moment: dt.datetime, millis: bool = False) -> str:
    if millis:
        return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def fired(result: Result) -> set[str]:
    return set(re.findall(r"^(?:error|warn)\[([a-z-]+)\]", result.out, re.MULTILINE))


def deploy(site: Site, listed: Mapping[str, str | None], *args: str) -> Result:
    site.write(urlset(listed))
    return site.run("--site-dir", str(site.public), *args)


# -- 1. proven unchanged is never announced ------------------------------------------------
def test_a_page_whose_lastmod_moved_while_its_bytes_did_not_is_held_back_and_recorded(site: Site) -> None:
    """jekyll-sitemap after a fresh clone: static files restamped with their mtime."""
    listed = pages(30)
    site.build_pages(listed)
    assert deploy(site, listed).code == 0  # fingerprints recorded
    restamped = dict(listed)
    for n in range(3):  # three PDFs' mtimes moved; their bytes did not
        restamped[f"/p/{n}/"] = "2024-09-01T10:00:00Z"
    restamped["/p/10/"] = "2024-09-02T10:00:00Z"  # and one page really was edited
    (site.public / "p" / "10" / "index.html").write_text("<html><head></head><body>edited</body></html>")
    assert site.fake is not None
    site.fake.posts.clear()
    result = deploy(site, restamped, "--format", "json")
    assert result.code == 0, result.out
    report = json.loads(result.out)
    assert site.fake.delivered() == [f"{BASE}/p/10/"]  # never a page that did not change
    assert report["changed"] == 1 and report["held_back"] == 3
    assert sorted(report["urls"]["held_back"]) == [f"{BASE}/p/{n}/" for n in range(3)]
    assert any("3 URLs held back, not announced" in note and "recorded" in note for note in report["notes"])
    assert [v["rule"] for v in report["violations"]].count("lastmod-without-change") == 3
    assert recorded_urls(site.state)[f"{BASE}/p/0/"]["lastmod"] == "2024-09-01T10:00:00Z"
    again = deploy(site, restamped)  # the next deploy: nothing to hold back, nothing said
    assert again.code == 0 and fired(again) == set() and "held back" not in again.out
    assert site.fake.delivered() == [f"{BASE}/p/10/"]


def test_pages_held_back_in_bulk_are_named_by_the_first_of_them(site: Site) -> None:
    """Twelve pages restamped with unchanged bytes: one finding, at the first of them, quoting
    its own move."""
    listed = pages(30)
    site.build_pages(listed)
    assert deploy(site, listed).code == 0
    restamped = listed | {f"/p/{n}/": f"2024-09-01T10:{n:02d}:00Z" for n in range(12)}
    result = deploy(site, restamped, "--rule", "lastmod-without-change=off")
    found = re.findall(r"^error\[lastmod-bulk\] (\S+): (.*)$", result.out, re.MULTILINE)
    assert result.code == 1 and len(found) == 1, result.out
    assert found[0][0] == f"{BASE}/p/0/" and f"(e.g. {listed['/p/0/']} -> 2024-09-01T10:00:00Z)" in found[0][1]
    assert found[0][1].startswith("12 of 12 changed URLs moved their lastmod")


@pytest.mark.parametrize("share", [0.5, 0.001])  # Misra-Gries with two counters; an exact count
def test_the_most_shared_instant_is_found_wherever_it_first_appears(share: float) -> None:
    """Distinct dates first, some of them twice, and the shared one only after: still found,
    with its exact count."""
    from notifier.rules.bulk import _most_shared

    stamps = array.array("d", [1.0, 1.0, 2.0, 2.0, 3.0, 4.0] + [9.0] * 20 + [5.0])
    assert _most_shared(stamps, share) == (9.0, 20)
    assert _most_shared(array.array("d", [7.0, 8.0, 8.0]), share) == (8.0, 2)
    assert _most_shared(array.array("d", [1.0, 2.0, 9.0, 9.0]), share) == (9.0, 2)  # half, after two that fill the counters
    assert _most_shared(array.array("d", [1.0, 2.0, 3.0]), share) == (1.0, 1)  # none shared: the first, once


def test_a_page_changed_past_its_first_mebibyte_is_changed(site: Site) -> None:
    """A page's fingerprint is of all its bytes: an edit two MiB in, with its date moved, is
    announced, not held back as byte-identical."""
    listed = pages(3)
    site.build_pages(listed)
    big = site.public / "p" / "0" / "index.html"
    body = b"<html><head></head><body>" + b"x" * (2 << 20)
    big.write_bytes(body + b"old</body></html>")
    assert deploy(site, listed).code == 0
    big.write_bytes(body + b"new</body></html>")
    assert site.fake is not None
    site.fake.posts.clear()
    result = deploy(site, listed | {"/p/0/": "2024-09-01T10:00:00Z"})
    assert result.code == 0 and "held back" not in result.out, result.out
    assert site.fake.delivered() == [f"{BASE}/p/0/"]


@pytest.mark.parametrize(
    ("stamp", "next_stamp"),
    [
        (  # MkDocs' own themes, on the home page, every build
            "<!--\nMkDocs version : 1.6.1\nBuild Date UTC : 2025-06-01 12:00:00+00:00\n-->",
            "<!--\nMkDocs version : 1.6.1\nBuild Date UTC : 2025-06-02 08:30:12.123456+00:00\n-->",
        ),
        ("<!-- Begin Jekyll SEO tag v2.8.0 -->", "<!-- Begin Jekyll SEO tag v2.8.1 -->"),  # a new release of the plugin
    ],
)
def test_a_generators_own_stamp_in_a_page_is_no_change_of_it(site: Site, stamp: str, next_stamp: str) -> None:
    """A rebuild that changed nothing but the generator's build-date (or version) comment
    leaves the page as it was: no change-without-lastmod; an edit beside it is still one."""
    listed = pages(3) | {"/": "2024-05-01T10:00:00Z"}
    site.build_pages(listed)
    home = site.public / "index.html"
    page = home.read_text()
    home.write_text(page + stamp + "\n")
    assert deploy(site, listed).code == 0
    home.write_text(page + next_stamp + "\n")
    result = site.check("--site-dir", str(site.public), "--rule", "change-without-lastmod=error")
    assert result.code == 0 and "change-without-lastmod" not in result.out, result.out
    home.write_text(page.replace("<body>", "<body>an edit") + next_stamp + "\n")
    edited = site.check("--site-dir", str(site.public), "--rule", "change-without-lastmod=error")
    assert edited.code == 1 and f"error[change-without-lastmod] {BASE}/:" in edited.out, edited.out


def test_an_honest_edit_with_its_lastmod_is_announced(site: Site) -> None:
    listed = pages(30)
    site.build_pages(listed)
    assert deploy(site, listed).code == 0
    edited = dict(listed)
    for n in range(3):
        edited[f"/p/{n}/"] = "2024-09-01T10:00:00Z"
        (site.public / "p" / str(n) / "index.html").write_text(f"<html><body>edit {n}</body></html>")
    result = deploy(site, edited)
    assert result.code == 0 and "held back" not in result.out
    assert site.fake is not None and sorted(site.fake.delivered()) == [f"{BASE}/p/{n}/" for n in range(3)]


def test_a_check_says_what_a_run_would_hold_back_and_records_nothing(site: Site) -> None:
    listed = pages(12)
    site.build_pages(listed)
    assert deploy(site, listed).code == 0
    before = site.state_bytes()
    site.write(urlset(listed | {"/p/0/": "2024-09-01T10:00:00Z"}))
    result = site.check("--site-dir", str(site.public))
    assert result.code == 0 and "1 URL held back, not announced" in result.out and "a run records" in result.out
    assert "0 changed" in result.out.splitlines()[0]
    assert site.state_bytes() == before


def test_a_run_that_fails_says_the_held_back_lastmods_are_not_recorded(site: Site) -> None:
    """A held-back page beside a lie elsewhere: the run fails and writes nothing, so its note
    must not say the new lastmods are recorded (issue 38, item 9)."""
    listed = pages(12)
    site.build_pages(listed)
    assert deploy(site, listed).code == 0
    before = site.state_bytes()
    (site.public / "p" / "1" / "index.html").write_text("<html><head></head><body>edited</body></html>")
    result = deploy(site, listed | {"/p/0/": "2024-09-01T10:00:00Z", "/p/1/": "2031-01-01"})
    assert result.code == 1 and "error[lastmod-future]" in result.out, result.out
    assert "1 URL held back, not announced" in result.out and "are recorded" not in result.out
    assert "nothing is recorded while an error stands: the first run that passes records their new lastmods" in result.out
    assert site.state_bytes() == before


def test_many_proven_unchanged_pages_are_a_lying_generator(site: Site) -> None:
    """Eleventy after a fresh clone: every non-post page stamped with its file's creation time."""
    listed = pages(40)
    site.build_pages(listed)
    assert deploy(site, listed).code == 0
    assert site.fake is not None
    site.fake.posts.clear()
    before = site.state_bytes()
    restamped = dict(listed)
    for n in range(17):
        restamped[f"/p/{n}/"] = iso(dt.datetime(2024, 9, 1, 10, tzinfo=dt.UTC) + dt.timedelta(milliseconds=3 * n), millis=True)
    restamped["/p/30/"] = "2024-09-02T10:00:00Z"
    (site.public / "p" / "30" / "index.html").write_text("<html><body>edited</body></html>")
    result = deploy(site, restamped)
    assert result.code == 1 and "error[lastmod-bulk]" in result.out
    assert "17 of 18 changed URLs moved their lastmod while the built page is byte-identical" in result.out
    assert "notify-changes stamp" in result.out
    assert site.fake.posts == [] and site.state_bytes() == before


def test_without_a_fingerprint_from_the_last_deploy_nothing_is_proven(site: Site) -> None:
    listed = pages(12)
    site.build_pages(listed)
    site.write(urlset(listed))
    assert site.run().code == 0  # no --site-dir: nothing fingerprinted
    result = deploy(site, listed | {"/p/0/": "2024-09-01T10:00:00Z"})
    assert result.code == 0 and "held back" not in result.out
    assert site.fake is not None and site.fake.delivered() == [f"{BASE}/p/0/"]


# -- 2. the build clock without a shared instant ---------------------------------------------
def _recorded(site: Site, count: int = 40) -> dict[str, str | None]:
    listed = pages(count)
    site.write(urlset(listed))
    assert site.run("--rule", "lastmod-bulk=off").code == 0
    return listed


def test_changed_lastmods_crowded_into_milliseconds_before_the_run_are_the_build_clock(site: Site) -> None:
    listed = _recorded(site)
    start = now() - dt.timedelta(minutes=2)
    stamped = dict(listed)
    for n in range(17):
        stamped[f"/p/{n}/"] = iso(start + dt.timedelta(milliseconds=n * 7 + 1), millis=True)
    site.write(urlset(stamped))
    result = site.check()
    assert result.code == 1 and fired(result) == {"lastmod-bulk"}
    assert re.search(r"17 of 17 changed URLs have lastmods within \d+ ms of each other", result.out), result.out


def test_honest_edits_spread_over_the_afternoon_are_not_a_crowd(site: Site) -> None:
    listed = _recorded(site)
    edited = dict(listed)
    for n in range(17):  # one edit every 12 minutes, the last just before the deploy
        edited[f"/p/{n}/"] = iso(now() - dt.timedelta(minutes=12 * n + 1))
    site.write(urlset(edited))
    result = site.check()
    assert result.code == 0 and "lastmod-bulk" not in fired(result), result.out


def test_a_first_run_whose_dates_are_all_minutes_before_the_run_is_the_build_clock(offline_site: Site) -> None:
    offline_site.write(urlset({f"/p/{n}/": iso(now() - dt.timedelta(minutes=3, seconds=n)) for n in range(25)}))
    result = offline_site.check()
    assert result.code == 1 and fired(result) == {"lastmod-bulk"}
    assert "25 of 25 added URLs have lastmods within 24 s of each other" in result.out


@pytest.mark.parametrize("story", ["a site imported in one commit", "a first commit of fifteen pages and a few later ones"])
def test_a_first_run_sharing_an_instant_long_before_the_build_is_honest(offline_site: Site, story: str) -> None:
    if story == "a site imported in one commit":
        listed: dict[str, str | None] = {f"/p/{n}/": "2025-02-03T09:14:27+01:00" for n in range(200)}
    else:
        listed = {**{f"/p/{n}/": "2025-02-03T09:14:27Z" for n in range(15)}, **pages(5)}
    offline_site.write(urlset(listed))
    result = offline_site.check()
    assert result.code == 0 and fired(result) == set(), result.out


def test_a_first_run_sharing_an_instant_close_to_the_run_or_finer_than_a_second_is_the_build(offline_site: Site) -> None:
    offline_site.write(urlset({f"/p/{n}/": iso(now() - dt.timedelta(minutes=20)) for n in range(15)}))
    close = offline_site.check()
    assert close.code == 1 and "15 of 15 added URLs share one lastmod" in close.out
    offline_site.write(urlset({f"/p/{n}/": "2023-12-20T21:52:17.375Z" for n in range(15)}))
    machine = offline_site.check()
    assert machine.code == 1 and "finer than a second" in machine.out


def test_date_only_lastmods_are_days_not_instants(site: Site) -> None:
    listed = _recorded(site)
    two_days_ago = (now() - dt.timedelta(days=2)).strftime("%Y-%m-%d")
    site.write(urlset(listed | {f"/p/{n}/": two_days_ago for n in range(15)}))
    honest = site.check()  # fifteen pages edited on one day, deployed two days later
    assert honest.code == 0 and "lastmod-bulk" not in fired(honest), honest.out
    today = now().strftime("%Y-%m-%d")
    site.write(urlset(listed | {f"/p/{n}/": today for n in range(15)}))
    stamped = site.check()  # every changed page carries the run's own date: the build's
    assert stamped.code == 1 and "carry the run's own day" in stamped.out


def test_a_first_run_of_date_only_lastmods_sharing_an_old_day_is_honest(offline_site: Site) -> None:
    offline_site.write(urlset({f"/p/{n}/": "2020-08-01" for n in range(10)} | {"/old/": "2019-05-28"}))
    assert offline_site.check().code == 0
    offline_site.write(urlset({f"/p/{n}/": "2020-08-01T00:00:00+00:00" for n in range(10)} | {"/old/": "2019-05-28"}))
    assert offline_site.check().code == 0  # midnight written as a datetime is a day too


# -- held back decides what is announced, never which dates are judged (#16) -----------------
@pytest.mark.parametrize(
    ("lastmod", "rule"),
    [("2031-06-01T00:00:00+00:00", "lastmod-future"), ("10/02/2025", "lastmod-invalid"), ("2023-01-01", "lastmod-regressed")],
)
def test_a_held_back_page_with_a_false_date_fails_as_without_site_dir(site: Site, lastmod: str, rule: str) -> None:
    listed = pages(3)
    site.build_pages(listed)
    assert deploy(site, listed).code == 0
    before = site.state_bytes()
    lying = dict(listed) | {"/p/1/": lastmod}  # its page file did not change
    site.write(urlset(lying))
    without = site.check()
    assert without.code == 1 and rule in fired(without)
    result = deploy(site, lying)
    assert result.code == 1 and rule in fired(result), result.out
    assert f"{BASE}/p/1/" in result.out
    assert site.state_bytes() == before  # not recorded
    assert site.fake is not None and site.fake.posts == []


def test_a_held_back_page_with_an_honest_new_date_passes(site: Site) -> None:
    listed = pages(3)
    site.build_pages(listed)
    assert deploy(site, listed).code == 0
    honest = dict(listed) | {"/p/1/": "2024-06-01T10:00:00Z"}  # later, in the past, a W3C Datetime
    result = deploy(site, honest)
    assert result.code == 0, result.out
    assert fired(result) == {"lastmod-without-change"}  # held back, said once, nothing failed


def test_a_shallow_clone_is_named_as_the_cause_of_one_shared_date(site: Site, tmp_path: Path) -> None:
    """Hugo's enableGitInfo on a shallow clone: every page carries the one commit's time."""
    import subprocess

    from tests.test_history import Repo

    repo = Repo(tmp_path / "repo")
    for n in range(12):
        repo.commit({f"content/p{n}.md": f"page {n}"}, f"2024-05-{n + 1:02d}T10:00:00Z")
    listed = {f"/p/{n}/": f"2024-05-{n + 1:02d}T10:00:00Z" for n in range(12)}
    site.write(urlset(listed))
    assert site.run().code == 0  # the last deploy, from a full clone: honest dates
    clone = tmp_path / "shallow"
    subprocess.run(["git", "clone", "-q", "--depth", "1", f"file://{repo.root}", str(clone)], check=True, capture_output=True)
    (clone / "public").mkdir()
    sitemap = clone / "public" / "sitemap.xml"
    sitemap.write_text(urlset(dict.fromkeys(listed, "2024-05-12T10:00:00Z")))  # the one commit this clone has
    result = site.run(command="check", sitemap=str(sitemap))
    assert result.code == 1 and "lastmod-bulk" in fired(result)
    assert "This checkout is a shallow clone" in result.out and "fetch-depth: 0" in result.out
    honest = site.run(command="check")  # the same dates outside a shallow clone: no word of one
    assert "shallow clone" not in honest.out


def test_a_shared_date_outside_git_blames_no_shallow_clone(site: Site) -> None:
    """The build's folder is in no git repository (git says so and exits 128): the finding
    stands on its own, with no word of a clone."""
    listed = {f"/p/{n}/": f"2024-05-{n + 1:02d}T10:00:00Z" for n in range(12)}
    site.write(urlset(listed))
    assert site.run().code == 0
    site.write(urlset(dict.fromkeys(listed, "2024-05-12T10:00:00Z")))
    result = site.run(command="check")
    assert result.code == 1 and "lastmod-bulk" in fired(result)
    assert "shallow clone" not in result.out, result.out


def test_a_listing_page_that_changes_with_what_it_lists_is_not_a_missed_date(site: Site) -> None:
    """Hugo's / and /posts/ change whenever a post is added: not the author's missed date."""
    listed = {"/": "2024-05-01", "/posts/": "2024-05-01", "/posts/tea/": "2024-05-01", "/about/": "2024-05-01"}
    site.build_pages(listed)
    assert deploy(site, listed).code == 0
    added = listed | {"/posts/milk/": "2024-06-01"}
    site.build_pages(added, head='<meta name="description" content="now listing milk">')  # every page rebuilt, listings changed
    (site.public / "about" / "index.html").write_text("<html><head></head><body>about</body></html>")  # the one real miss
    result = deploy(site, added)
    assert result.code == 0, result.out
    warned = re.findall(r"^warn\[change-without-lastmod\] (\S+):", result.out, re.MULTILINE)
    assert sorted(warned) == [f"{BASE}/about/", f"{BASE}/posts/tea/"]  # not / and /posts/, which list the new post
    assert "if it is said of this page on every deploy, the build writes something into it" in result.out


def test_a_page_file_beside_a_new_page_is_no_listing(site: Site) -> None:
    """With file URLs, ``/posts/index.html`` lists the folder and ``/posts/tea.html`` is a post:
    a new post beside it does not excuse its changed bytes."""

    def build(locs: Iterable[str], body: str) -> None:
        for loc in locs:
            page = site.public / loc.strip("/")
            page.parent.mkdir(parents=True, exist_ok=True)
            page.write_text(f'<html><head><link rel="canonical" href="{BASE}{loc}"></head><body>{body}</body></html>')

    listed = {"/posts/index.html": "2024-05-01", "/posts/tea.html": "2024-05-01"}
    build(listed, "first")
    assert deploy(site, listed).code == 0
    added = listed | {"/posts/milk.html": "2024-06-01"}
    build(added, "second")
    result = deploy(site, added)
    warned = re.findall(r"^warn\[change-without-lastmod\] (\S+):", result.out, re.MULTILINE)
    assert result.code == 0 and warned == [f"{BASE}/posts/tea.html"], result.out


def test_pages_are_fingerprinted_only_with_site_dir(site: Site) -> None:
    """Without --site-dir a check reads the pages it announces, not every page: a page whose
    bytes changed under an unchanged lastmod is judged only where every page is fingerprinted."""
    listed = {"/": "2024-05-01", "/posts/tea/": "2024-05-01", "/about/": "2024-05-01"}
    site.build_pages(listed)
    assert deploy(site, listed).code == 0
    (site.public / "about" / "index.html").write_text("<html><head></head><body>about, now longer</body></html>")
    site.write(urlset(listed))
    without = site.check("--rule", "page-noindex=warn")  # a page rule on: the announced pages are read
    assert without.code == 0 and "change-without-lastmod" not in without.out, without.out
    with_dir = site.check("--site-dir", str(site.public))
    assert re.findall(r"^warn\[change-without-lastmod\] (\S+):", with_dir.out, re.MULTILINE) == [f"{BASE}/about/"], with_dir.out


def test_a_page_whose_source_has_no_commit_after_its_lastmod_changed_with_the_build(site: Site, tmp_path: Path) -> None:
    """MkDocs' nav lists every page on every page: a page added rebuilds them all. With
    [history], a page whose source has no commit after its lastmod did not change; its built
    page changed with the build (a nav, a theme), and --strict builds pass. A page whose
    source was edited after its lastmod is still said."""
    from tests.test_history import Repo

    repo = Repo(tmp_path / "repo")
    for n in range(3):
        repo.commit({f"content/p{n}.md": f"page {n}"}, f"2024-05-0{n + 1}T10:00:00Z")
    config = tmp_path / "notify-changes.toml"
    config.write_text(f'[history]\npreset = "hugo"\nrepo = "{repo.root}"\n')
    listed = {f"/p{n}/": f"2024-05-0{n + 1}T10:00:00Z" for n in range(3)}
    site.build_pages(listed)
    assert deploy(site, listed, "--config", str(config)).code == 0
    repo.commit({"content/p3.md": "page 3"}, "2024-06-01T10:00:00Z")
    repo.commit({"content/p1.md": "page 1, edited"}, "2024-06-02T10:00:00Z")  # its lastmod below is not moved: a real miss
    added = listed | {"/p3/": "2024-06-01T10:00:00Z"}
    site.build_pages(added, head='<meta name="nav" content="p0 p1 p2 p3">')  # the nav of every page lists the new one
    result = deploy(site, added, "--config", str(config))
    warned = re.findall(r"^warn\[change-without-lastmod\] (\S+):", result.out, re.MULTILINE)
    assert result.code == 0 and warned == [f"{BASE}/p1/"], result.out
