"""What notifier/site/folder.py does that the mutation run found no test stating (#44): a URL
at a page file's own name, no path normalised into another when the build is looked at path by
path, the remembered kinds' bound, one look for the URLs under a folder the build lacks, the folder a
build is guessed to be served under, and unreadable folders, links and files passed over. Each
test names the edit it catches; the edits that cannot change what a user sees are in
scripts/mutants-equivalent.txt with their reasons."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

import notifier.site.folder as folder_module
from notifier.site.folder import SiteFolder, served_under
from tests.conftest import BASE


def _build(root: Path, names: list[str]) -> None:
    for name in names:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(name)


def _every_kind(root: Path, names: list[str]) -> list[SiteFolder]:
    """The same build three ways: named, scanned, looked at path by path."""
    return [SiteFolder.of(root, names), SiteFolder.scan(root), SiteFolder.unscanned(root)]


# -- SiteFolder.of --------------------------------------------------------------------------------
def test_a_build_named_by_a_generator_holds_its_pages(tmp_path: Path) -> None:
    """``of`` takes any iterable, a generator too (read twice: the files, the paths they serve):
    fails if ``names = set(names)`` is removed in site/folder.py::SiteFolder.of (the second pass
    would find the generator empty, and every page missing)."""
    build = SiteFolder.of(tmp_path, (name for name in ["a/index.html", "b.html"]))
    assert build.page_file(f"{BASE}/a/") == "a/index.html" and build.page_file(f"{BASE}/b") == "b.html"


# -- SiteFolder.page_file --------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("loc", "file"),
    [
        (f"{BASE}/b.html", "b.html"),
        (f"{BASE}/a/index.html", "a/index.html"),
        (f"{BASE}/index.html", "index.html"),
        (f"{BASE}/c.pdf", "c.pdf"),
        (f"{BASE}/x.html", None),
    ],
)
def test_a_url_at_a_page_files_own_name_is_served_by_it(tmp_path: Path, loc: str, file: str | None) -> None:
    """``/b.html`` is b.html, though the path b.html serves besides its own name is ``/b``:
    fails if ``not _holds(self.served, wanted) and not _holds(self.hashes or self.served, wanted)``
    drops its second side or the second ``not``, or ``self.hashes or self.served`` becomes
    ``and`` or drops its first side, in site/folder.py::SiteFolder.page_file."""
    names = ["index.html", "a/index.html", "b.html", "c.pdf"]
    _build(tmp_path, names)
    for build in _every_kind(tmp_path, names):
        assert build.page_file(loc) == file, build


# -- SiteFolder._kind -------------------------------------------------------------------------------
@pytest.mark.parametrize("loc", [f"{BASE}/a//b/", f"{BASE}/a/./b/", f"{BASE}/a/%2e/b/", f"{BASE}/a%2F%2Fb/", f"{BASE}/./a/b/"])
def test_a_path_looked_at_one_by_one_is_never_normalised_into_another(tmp_path: Path, loc: str) -> None:
    """``/a//b/`` and ``/a/./b/`` name no file of a build holding a/b/index.html, however the
    build is read (the file system would take either for a/b): fails if ``"" in names`` or
    ``"." in names`` is dropped from site/folder.py::SiteFolder._kind, or ``""`` becomes
    ``"XXXX"`` or ``"."`` becomes ``"XX.XX"`` there."""
    names = ["a/b/index.html"]
    _build(tmp_path, names)
    for build in _every_kind(tmp_path, names):
        assert build.page_file(loc) is None, build
        assert build.page_file(f"{BASE}/a/b/") == "a/b/index.html", build


def test_a_build_looked_at_path_by_path_remembers_at_most_remembered_paths(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Memory stays flat: at REMEMBERED remembered paths all are forgotten before the next, and
    the answers stay right after. Fails if ``len(kinds) >= REMEMBERED`` becomes ``>``, or
    ``kinds.clear()`` is left out or made a raise, in site/folder.py::SiteFolder._kind."""
    monkeypatch.setattr(folder_module, "REMEMBERED", 5)
    names = [f"p/{n}/index.html" for n in range(12)]
    _build(tmp_path, names)
    build = SiteFolder.unscanned(tmp_path)
    for _ in range(2):
        for n in range(14):
            assert build.page_file(f"{BASE}/p/{n}/") == (f"p/{n}/index.html" if n < 12 else None)
            assert len(build._kinds) <= 5, build._kinds


# -- SiteFolder.open_page ------------------------------------------------------------------------------
def test_urls_under_a_folder_the_build_lacks_cost_one_look_in_all(tmp_path: Path) -> None:
    """A hundred URLs under /b/, a folder the build does not have: each is missing after one
    look at ``b`` for all of them (a build with none of the listed pages costs a lookup a URL,
    not three looks), and a page under a folder it has is opened. Fails if the first-folder
    check in site/folder.py::SiteFolder.open_page is dropped (every URL's own folder would be
    looked at and remembered) or its ``!=`` becomes ``==`` (every page would be missing)."""
    _build(tmp_path, ["a/x/index.html"])
    build = SiteFolder.unscanned(tmp_path)
    assert all(build.open_page(f"{BASE}/b/{n}/") is None for n in range(100))
    assert build._kinds == {"b": None}, build._kinds
    opened = build.open_page(f"{BASE}/a/x/")
    assert opened is not None and opened[1] == len("a/x/index.html")
    os.close(opened[0])


# -- SiteFolder.served_under_guess ---------------------------------------------------------------------
def test_a_build_with_none_of_the_pages_is_not_walked_url_by_url_for_a_guess(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A wrong --site-dir: 2,000 URLs under /p/, the build holds none of them, with or without
    a folder: no guess, from the 50 URLs of the sample alone (at 200,000 URLs, the path of each
    cost 0.7 s). Fails if site/folder.py::SiteFolder.served_under_guess works out every URL's
    path before a folder has fitted the sample."""
    _build(tmp_path, ["other/index.html"])
    locs = [f"{BASE}/p/item-{n}/" for n in range(2000)]
    calls: list[str] = []
    real = folder_module.url_path

    def counted(loc: str, base: str = "") -> str:
        calls.append(loc)
        return real(loc, base)

    monkeypatch.setattr(folder_module, "url_path", counted)
    assert SiteFolder.unscanned(tmp_path).served_under_guess(locs) is None
    assert len(calls) < len(locs) and set(calls) <= set(locs[: folder_module.GUESS_SAMPLE])


def test_a_folder_some_url_does_not_begin_with_is_no_guess(tmp_path: Path) -> None:
    """Fifty URLs under /project/ whose pages the build has without it, and one more under
    /other/: the URLs share no folder, so nothing is guessed (though the 50 looked up would
    fit). Fails if ``len(set(names)) != 1 or names[0] == ""`` becomes ``and`` or drops its
    first side in site/folder.py::SiteFolder.served_under_guess."""
    names = [f"p/{n}/index.html" for n in range(50)]
    build = SiteFolder.of(tmp_path, names)
    locs = [f"{BASE}/project/p/{n}/" for n in range(50)]
    assert build.served_under_guess(locs) == "project"
    assert build.served_under_guess([*locs, f"{BASE}/other/p/1/"]) is None


def test_only_the_first_fifty_urls_are_looked_up_for_a_guess(tmp_path: Path) -> None:
    """At most GUESS_SAMPLE (50) URLs are looked up for each folder tried: a 51st without its
    page does not undo the guess. Fails if ``locs[:GUESS_SAMPLE]`` loses its upper bound in
    site/folder.py::SiteFolder.served_under_guess."""
    build = SiteFolder.of(tmp_path, [f"p/{n}/index.html" for n in range(50)])
    assert build.served_under_guess([f"{BASE}/project/p/{n}/" for n in range(51)]) == "project"
    assert build.served_under_guess([f"{BASE}/project/p/{n}/" for n in range(50, 51)]) is None


def test_a_folder_right_above_the_pages_is_guessed(tmp_path: Path) -> None:
    """/project/a and /project/b, the build holding a.html and b/index.html: project is the
    folder (a path of two names may lose its first). Fails if ``longest - 1`` becomes
    ``longest - 2`` in site/folder.py::SiteFolder.served_under_guess."""
    build = SiteFolder.of(tmp_path, ["a.html", "b/index.html"])
    assert build.served_under_guess([f"{BASE}/project/a", f"{BASE}/project/b/"]) == "project"
    assert build.served_under_guess([f"{BASE}/project/"]) is None  # the folder would be the whole path


def test_a_guess_needs_every_url_looked_up_to_have_its_page(tmp_path: Path) -> None:
    """One of two URLs has its page without /project/, the other has none: no guess. Fails if
    ``all(...)`` becomes ``any(...)`` in site/folder.py::SiteFolder.served_under_guess."""
    build = SiteFolder.of(tmp_path, ["a/index.html"])
    assert build.served_under_guess([f"{BASE}/project/a/", f"{BASE}/project/b/"]) is None
    assert build.served_under_guess([f"{BASE}/project/a/"]) == "project"


@pytest.mark.parametrize("folder", ["project", "XXXX", "v1.2"])
def test_any_folder_name_can_be_the_guess(tmp_path: Path, folder: str) -> None:
    """Whatever the folder is called, it is guessed: fails if ``""`` becomes ``"XXXX"`` in
    ``names[0] == ""`` of site/folder.py::SiteFolder.served_under_guess (a folder of that name
    would end the common path)."""
    build = SiteFolder.of(tmp_path, ["a/index.html", "b/index.html"])
    assert build.served_under_guess([f"{BASE}/{folder}/a/", f"{BASE}/{folder}/b/"]) == folder


# -- SiteFolder._walk and _follow -----------------------------------------------------------------------
def test_an_unreadable_folder_leaves_its_pages_missing_and_the_rest_found(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A folder the scan cannot list: its pages are missing, the rest of the build is read.
    Fails if the ``return`` after ``except OSError`` in site/folder.py::SiteFolder._walk is made
    a raise."""
    _build(tmp_path, ["a/index.html", "locked/index.html", "z/index.html"])
    real = os.scandir

    def scandir(path: str) -> Iterator[os.DirEntry[str]]:
        if Path(path).name == "locked":
            raise PermissionError(13, "Permission denied", path)
        return real(path)

    monkeypatch.setattr(os, "scandir", scandir)
    build = SiteFolder.scan(tmp_path)
    assert build.page_file(f"{BASE}/a/") == "a/index.html" and build.page_file(f"{BASE}/z/") == "z/index.html"
    assert build.page_file(f"{BASE}/locked/") is None


def test_a_link_the_file_system_cannot_look_at_is_passed_over(tmp_path: Path) -> None:
    """A symbolic link to a name too long to stat (ENAMETOOLONG) is no file; the scan goes on.
    Fails if the ``return`` after ``except OSError`` in site/folder.py::SiteFolder._follow is
    made a raise."""
    _build(tmp_path, ["b/index.html"])
    (tmp_path / "b" / "long").symlink_to("x" * 300)
    build = SiteFolder.scan(tmp_path)
    assert build.page_file(f"{BASE}/b/") == "b/index.html" and build.page_file(f"{BASE}/b/long") is None


# -- SiteFolder.read_text and served_under -------------------------------------------------------------
def test_a_small_file_the_build_lists_but_cannot_open_is_no_text(tmp_path: Path) -> None:
    """robots.txt scanned, then gone before it is read: None, not an error. Fails if the
    ``return None`` after ``except OSError`` in site/folder.py::SiteFolder.read_text is made a
    raise."""
    build = SiteFolder.of(tmp_path, ["robots.txt"])
    assert build.read_text("robots.txt") is None
    (tmp_path / "robots.txt").write_text("User-agent: *\n")
    assert build.read_text("robots.txt") == "User-agent: *\n"


def test_a_sitemap_outside_the_build_is_served_at_the_root(tmp_path: Path) -> None:
    """A local sitemap that does not lie in --site-dir says nothing of the path the build is
    served under: "". Fails if the ``return ""`` after ``except (ValueError, OSError)`` in
    site/folder.py::served_under is made a raise."""
    build = tmp_path / "site"
    build.mkdir()
    elsewhere = str(tmp_path / "src" / "sitemap.xml")
    assert served_under(elsewhere, build, "https://h.org/project/sitemap.xml") == ""
    assert served_under(str(build / "sitemap.xml"), build, "https://h.org/project/sitemap.xml") == "project"


@pytest.mark.parametrize(
    "loc", [f"{BASE}/a//b/", f"{BASE}/a/./b/", f"{BASE}/a/%2e/b/", f"{BASE}/a/x/../b/", f"{BASE}/a/b/%2e%2e/b/", f"{BASE}/./a/b/"]
)
def test_a_page_is_never_opened_by_a_path_the_file_system_would_normalise(tmp_path: Path, loc: str) -> None:
    """``/a//b/``, ``/a/./b/`` and ``/a/x/../b/`` name no page of a build holding a/b/index.html
    when the page reader opens it (the file system would take each for a/b), and /a/b/ is
    opened. Fails if ``"" in names`` or ``"." in names`` or ``".." in names`` is dropped from
    site/folder.py::SiteFolder._kind (which looks at every folder on the way of the file
    SiteFolder._open_file opens), or ``_regular`` takes a folder for a page."""
    _build(tmp_path, ["a/b/index.html", "a/x/keep.txt", "a/b/b/keep.txt"])
    build = SiteFolder.unscanned(tmp_path)
    assert build.open_page(loc) is None
    opened = build.open_page(f"{BASE}/a/b/")
    assert opened is not None
    os.close(opened[0])


def test_a_page_deeper_than_the_deepest_path_anyone_links_to_is_not_opened(tmp_path: Path) -> None:
    """A page file MAX_DEPTH names deep (63 folders and index.html) is opened; one a folder
    deeper is not. Fails if ``relative.count("/") >= MAX_DEPTH`` becomes ``>`` or is dropped in
    site/folder.py::SiteFolder._open_file."""
    depth = folder_module.MAX_DEPTH
    deepest = "/".join(str(n % 10) for n in range(depth - 1))
    _build(tmp_path, [f"{deepest}/index.html", f"{deepest}/9/index.html"])
    build = SiteFolder.unscanned(tmp_path)
    opened = build.open_page(f"{BASE}/{deepest}/")
    assert opened is not None
    os.close(opened[0])
    assert build.open_page(f"{BASE}/{deepest}/9/") is None
