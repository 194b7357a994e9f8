"""What notifier/history/source_files.py decides that a mutation run found no test stating
(#44): a URL that holds a template's wildcard byte, an absolute template, a folder that is not
there, each folder listed once, and an unreadable source. Each test names the edit it catches."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from notifier.history.source_files import SourceFinder, check_template, front_matter, placeholders


def _tree(root: Path, *files: str) -> Path:
    for name in files:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("---\ndate: 2025-01-02\n---\n")
    return root


def test_a_url_holding_the_wildcards_byte_names_no_file(tmp_path: Path) -> None:
    """fails if ``_ANY in value`` is dropped from SourceFinder.find: a URL with %01 would be a
    wildcard in the template and match content/ab.md"""
    top = _tree(tmp_path, "content/ab.md")
    finder = SourceFinder(["content/{slug}.md"], top, top)
    assert finder.find("https://shop.org/a%01/") is None
    assert finder.find("https://shop.org/ab/") == ("content/ab.md", None)


def test_a_template_that_begins_at_the_root_is_refused() -> None:
    """fails if ``template.startswith("/")`` is dropped from check_template"""
    assert check_template("/etc/{path}.md") == "must be a path inside the repository"
    assert check_template("content/../{path}.md") == "must be a path inside the repository"
    assert check_template("content/{path}.md") is None


def test_a_page_named_only_by_its_ending_is_the_index() -> None:
    """fails if ``re.sub(r"\\.html?$", "", path) or "index"`` loses its "index" in placeholders"""
    assert placeholders("https://shop.org/.html")["stem"] == "index"
    assert placeholders("https://shop.org/tea/index.html") == {
        "path": "tea/index.html", "stem": "tea/index", "slug": "index", "first": "tea", "rest": "index",
    }  # fmt: skip


def test_a_wildcard_under_a_folder_that_is_not_there_finds_nothing(tmp_path: Path) -> None:
    """fails if ``listing = []`` is removed or raises in SourceFinder._listing (a missing folder
    would crash the run)"""
    top = _tree(tmp_path, "content/tea.md")
    assert SourceFinder(["drafts/*/{slug}.md", "content/{slug}.md"], top, top).find("https://shop.org/tea/") == ("content/tea.md", None)


def test_each_folder_is_listed_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """fails if ``self._listings[folder] = listing`` is removed (every URL would list the folder
    again: at 10,000 pages, 10,000 listings of one folder)"""
    top = _tree(tmp_path, "content/2025-01-02-tea.md", "content/2025-02-03-cake.md")
    listed: list[str] = []
    real = os.listdir

    def counting(path: Path) -> list[str]:
        listed.append(str(path))
        return real(path)

    monkeypatch.setattr(os, "listdir", counting)
    finder = SourceFinder(["content/{date}-{slug}.md"], top, top)
    assert finder.find("https://shop.org/tea/") == ("content/2025-01-02-tea.md", "2025-01-02")
    assert finder.find("https://shop.org/cake/") == ("content/2025-02-03-cake.md", "2025-02-03")
    assert listed == [str(top / "content")]


def test_a_source_that_cannot_be_read_has_no_dates(tmp_path: Path) -> None:
    """fails if ``return {}`` raises in front_matter (a folder named like a page, or a file gone)"""
    (tmp_path / "tea.md").mkdir()
    assert front_matter(tmp_path / "tea.md") == {} and front_matter(tmp_path / "gone.md") == {}
