"""[history] read as the generators' git-date plugins read it (#17, points 13-15): renames
followed, ignored revisions, front matter parsed as YAML. Real repositories, fixed commit dates."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from notifier.history.git import read_history
from notifier.history.source_files import front_matter
from tests.conftest import Site, urlset
from tests.test_history import Repo

CONFIG = '[history]\nsources = ["docs/{path}.md"]\n'


def _moved(repo: Repo) -> None:
    """A page written in January, edited in March, then moved (`git mv`) in June."""
    repo.commit({"docs/old.md": "first"}, "2025-01-10T10:00:00Z")
    repo.commit({"docs/old.md": "edited"}, "2025-03-05T12:00:00Z")
    (repo.root / "docs" / "guide").mkdir(parents=True, exist_ok=True)
    repo.git("mv", "docs/old.md", "docs/guide/new.md", when="2025-06-01T09:00:00Z")
    repo.git("commit", "-q", "-m", "move", when="2025-06-01T09:00:00Z")


def test_a_moved_file_keeps_the_history_it_had_under_its_old_name(tmp_path: Path) -> None:
    """The move itself (the content as it was) is no change of the page: its last change is the March edit."""
    repo = Repo(tmp_path / "r")
    _moved(repo)
    span = read_history(repo.root)["docs/guide/new.md"]
    assert (span.first.isoformat(), span.last.isoformat()) == ("2025-01-10T10:00:00+00:00", "2025-03-05T12:00:00+00:00")
    assert span.newest[0].isoformat() == "2025-03-05T12:00:00+00:00"
    assert "docs/old.md" not in read_history(repo.root)


def test_a_move_with_an_edit_is_a_change_and_a_pure_move_never_is(tmp_path: Path) -> None:
    """`git mv docs content` moves every page and changes none; a file moved and edited in one
    commit (git still sees the rename, R0xx) changed then."""
    repo = Repo(tmp_path / "r")
    text = "".join(f"line {n} of a page long enough for git to see a rename\n" for n in range(20))
    repo.commit({"docs/a.md": text, "docs/b.md": text + "b\n"}, "2025-01-01T00:00:00Z")
    repo.git("mv", "docs", "content", when="2025-05-01T00:00:00Z")
    (repo.root / "content" / "b.md").write_text(text + "b, edited\n")
    repo.git("add", "content/b.md", when="2025-05-01T00:00:00Z")
    repo.git("commit", "-q", "-m", "move", when="2025-05-01T00:00:00Z")
    statuses = repo.git("log", "-1", "-M", "--name-status", "--format=").split()
    assert "R100" in statuses and any(status.startswith("R0") or status.startswith("R09") for status in statuses), statuses
    spans = read_history(repo.root)
    assert spans["content/a.md"].last.month == 1 and spans["content/a.md"].first.month == 1
    assert spans["content/b.md"].last.month == 5 and spans["content/b.md"].first.month == 1


def test_an_honest_lastmod_from_before_a_move_is_backed(offline_site: Site) -> None:
    repo = Repo(offline_site.root)
    _moved(repo)
    (offline_site.root / "notify-changes.toml").write_text(CONFIG)
    offline_site.write(urlset({"/guide/new/": "2025-03-05T12:00:00Z"}))  # the last edit, before the move
    result = offline_site.check()
    assert result.code == 0 and "lastmod-vs-history" not in result.out, result.out
    offline_site.write(urlset({"/guide/new/": "2024-12-01T12:00:00Z"}))  # before the file existed under any name
    assert offline_site.check().code == 1


def test_renames_chain_and_a_reused_path_is_a_new_file(tmp_path: Path) -> None:
    repo = Repo(tmp_path / "r")
    repo.commit({"a.md": "one"}, "2025-01-01T00:00:00Z")
    repo.git("mv", "a.md", "b.md", when="2025-02-01T00:00:00Z")
    repo.git("commit", "-q", "-m", "a to b", when="2025-02-01T00:00:00Z")
    repo.git("mv", "b.md", "c.md", when="2025-03-01T00:00:00Z")
    repo.git("commit", "-q", "-m", "b to c", when="2025-03-01T00:00:00Z")
    repo.commit({"a.md": "a new page where the old one was"}, "2025-04-01T00:00:00Z")
    spans = read_history(repo.root)
    assert spans["c.md"].first.month == 1 and spans["c.md"].last.month == 1  # two moves, no edit
    assert spans["a.md"].first.month == 4 and "b.md" not in spans


def test_in_a_repo_that_detects_copies_a_copy_does_not_take_its_originals_history(tmp_path: Path) -> None:
    """``git config diff.renames copies`` makes git log report a copy as C, old and new path:
    the copy is a new file from that commit, and the original keeps its own history."""
    repo = Repo(tmp_path / "r")
    text = "".join(f"line {n} of a page long enough for git to see a copy\n" for n in range(20))
    repo.commit({"a.md": text}, "2025-01-01T00:00:00Z")
    repo.git("config", "diff.renames", "copies")
    repo.commit({"a.md": text + "an edit\n", "b.md": text}, "2025-03-01T00:00:00Z")
    assert "\nC" in repo.git("log", "--name-status", "--format=")  # git saw the copy
    spans = read_history(repo.root)
    assert (spans["a.md"].first.month, spans["a.md"].last.month) == (1, 3)
    assert (spans["b.md"].first.month, spans["b.md"].last.month) == (3, 3)


def test_a_mass_reformat_listed_in_git_blame_ignore_revs_does_not_count(offline_site: Site) -> None:
    repo = Repo(offline_site.root)
    repo.commit({"docs/a.md": "a", "docs/b.md": "b"}, "2025-01-10T10:00:00Z")
    repo.commit({"docs/a.md": "a reformatted", "docs/b.md": "b reformatted"}, "2025-09-01T10:00:00Z")
    reformat = repo.git("rev-parse", "HEAD").strip()
    (offline_site.root / "notify-changes.toml").write_text(CONFIG)
    offline_site.write(urlset({"/a/": "2025-09-01T10:00:00Z", "/b/": "2025-01-10T10:00:00Z"}))
    assert offline_site.check().code == 0  # without the file the reformat counts: both dates are commits
    (offline_site.root / ".git-blame-ignore-revs").write_text(f"# prettier, every page\n{reformat}\n")
    result = offline_site.check()
    assert result.code == 1 and "/a/" in result.out and "lastmod-vs-history" in result.out, result.out  # it is no change
    (offline_site.root / "notify-changes.toml").write_text(CONFIG + "ignore-revs = false\n")
    assert offline_site.check().code == 0


def test_ignore_revs_names_its_own_file(offline_site: Site) -> None:
    repo = Repo(offline_site.root)
    repo.commit({"docs/a.md": "a"}, "2025-01-10T10:00:00Z")
    repo.commit({"docs/a.md": "a reformatted"}, "2025-09-01T10:00:00Z")
    (offline_site.root / "revs.txt").write_text(repo.git("rev-parse", "HEAD").upper())  # hashes in any case
    (offline_site.root / "notify-changes.toml").write_text(CONFIG + 'ignore-revs = "revs.txt"\n')
    offline_site.write(urlset({"/a/": "2025-01-10T10:00:00Z"}))
    assert offline_site.check().code == 0
    offline_site.write(urlset({"/a/": "2025-09-01T10:00:00Z"}))
    assert offline_site.check().code == 1
    (offline_site.root / "notify-changes.toml").write_text(CONFIG + 'ignore-revs = "missing.txt"\n')
    result = offline_site.check()
    assert result.code == 2 and "ignore-revs = 'missing.txt': no such file" in result.err


@pytest.mark.parametrize(
    ("text", "dates"),
    [
        ("---\ndate: 2025-03-03 # published\n---\n", {"date": "2025-03-03"}),  # a comment after the value
        (
            "---\ndate: '2025-03-03'\nlastmod: \"2025-03-04T10:00:00+01:00\"\n---\n",
            {"date": "2025-03-03", "lastmod": "2025-03-04T10:00:00+01:00"},
        ),
        ("---\nlast_update:\n  date: 2025-02-03\n  author: x\n---\n", {"last_update": "2025-02-03"}),  # Docusaurus
        ("---\nlast_update: {date: 2025-02-04, author: x}\n---\n", {"last_update": "2025-02-04"}),
        ("---\ndate: 2025-03-14 10:20:00 +0100\n---\n", {"date": "2025-03-14T10:20:00+01:00"}),  # Jekyll's own form
        ("---\ndate: >\n  2025-03-15\n---\n", {"date": "2025-03-15"}),  # a folded scalar
        ("---\ntitle: a: b\ndate: 2025-03-03\n---\n", {}),  # not YAML: no dates (Jekyll builds it without its front matter)
        ("---\ndate: 2025-02-30\n---\n", {}),  # a day that does not exist
        ("---\nx: " + "[" * 5000 + "\ndate: 2025-03-03\n---\n", {}),  # nested past any sense
        ("---\n- a list\n---\n", {}),
    ],
)
def test_yaml_front_matter_is_parsed_as_yaml(tmp_path: Path, text: str, dates: dict[str, str]) -> None:
    (tmp_path / "page.md").write_text(text)
    assert front_matter(tmp_path / "page.md") == dates


# -- git's rename limit and git's warnings (#40 item 13) --------------------------------------------
BUNDLES = 1_100  # more than git's default diff.renameLimit (1,000)


@pytest.mark.slow  # 2,200 files in two commits
def test_a_bundle_move_of_more_pages_than_gits_rename_limit_keeps_every_pages_history(offline_site: Site) -> None:
    """A Hugo page-bundle migration: 1,100 pages ``content/p{n}.md`` moved to ``content/p{n}/index.md``
    and edited in one commit. git's default rename limit skips finding those renames (and says so
    on stderr), and every page's history restarted at the move; ``git log --follow`` (the
    reference) follows each to its first commit, and so does the history now."""
    repo = Repo(offline_site.root)
    content = offline_site.root / "content"
    content.mkdir()
    for n in range(BUNDLES):
        (content / f"p{n}.md").write_text(f"---\ntitle: page {n}\n---\nThe text of page {n}.\n")
    repo.git("add", "-A", when="2025-01-10T10:00:00Z")
    repo.git("commit", "-q", "-m", "pages", when="2025-01-10T10:00:00Z")
    for n in range(BUNDLES):
        (content / f"p{n}").mkdir()
        (content / f"p{n}" / "index.md").write_text(f"---\ntitle: page {n}\n---\nThe text of page {n}.\nA bundle now.\n")
        (content / f"p{n}.md").unlink()
    repo.git("add", "-A", when="2025-06-01T09:00:00Z")
    repo.git("commit", "-q", "-m", "page bundles", when="2025-06-01T09:00:00Z")
    past_the_limit = repo.git("log", "-M", "--name-status", "--format=", stderr=True)
    assert "diff.renameLimit" in past_the_limit  # git's own warning: it skipped finding these renames
    followed = repo.git("log", "--follow", "--format=%aI", "--", "content/p7/index.md").split()
    assert followed == ["2025-06-01T09:00:00+00:00", "2025-01-10T10:00:00+00:00"]  # the move, then the page's first commit

    spans = read_history(repo.root)
    first = {spans[f"content/p{n}/index.md"].first.isoformat() for n in range(BUNDLES)}
    last = {spans[f"content/p{n}/index.md"].last.isoformat() for n in range(BUNDLES)}
    assert (first, last) == ({"2025-01-10T10:00:00+00:00"}, {"2025-06-01T09:00:00+00:00"})
    assert not any(f"content/p{n}.md" in spans for n in range(BUNDLES))  # each old name is the page it became

    (offline_site.root / "notify-changes.toml").write_text('[history]\nsources = ["content/{path}/index.md"]\n')
    offline_site.write(urlset({f"/p{n}/": "2025-01-10T10:00:00Z" for n in range(BUNDLES)}))  # each page's first commit
    result = offline_site.check()
    assert result.code == 0 and "lastmod-vs-history" not in result.out and "git warned" not in result.out, result.out[-2000:]


def test_a_warning_git_prints_while_reading_the_history_is_a_note(offline_site: Site) -> None:
    """git reads on after a warning (here a branch named HEAD: which HEAD is the history?), and
    what it says went nowhere; it is one note of the report."""
    repo = Repo(offline_site.root)
    repo.commit({"docs/a.md": "a"}, "2025-01-10T10:00:00Z")
    (offline_site.root / "notify-changes.toml").write_text(CONFIG)
    offline_site.write(urlset({"/a/": "2025-01-10T10:00:00Z"}))
    (repo.root / ".git" / "info" / "grafts").write_text(repo.git("rev-parse", "HEAD"))  # a root graft: the history as it is
    assert "hint:" in repo.git("log", "--format=%H", stderr=True)  # git's advice: grafts are deprecated
    result = offline_site.check("--format", "json")
    assert result.code == 0 and "git warned" not in result.out, result.out  # advice is no warning
    (repo.root / ".git" / "info" / "grafts").unlink()
    repo.git("update-ref", "refs/heads/HEAD", "HEAD")
    assert "warning: refname 'HEAD' is ambiguous." in repo.git("log", "--format=%H", stderr=True)  # git's own words
    result = offline_site.check("--format", "json")
    assert result.code == 0, result.out + result.err
    notes = [note for note in json.loads(result.out)["notes"] if "git warned" in note]
    assert notes == [
        "lastmod-vs-history: git warned while reading the history (warning: refname 'HEAD' is ambiguous.); "
        "the dates it backs may be wrong until what git names is fixed"
    ], result.out
