"""A file the program cannot read, write or lock says what to do about it (paths.cannot): the
system's words alone ("Permission denied", "Not a directory") leave a site owner guessing. Found
by a new user's tryout: the state file and SQLite state unreadable by the user the deploy runs as."""

from __future__ import annotations

import errno
import sqlite3
from pathlib import Path

import pytest

from notifier.paths import cannot
from notifier.store.sqlite import operational
from tests.conftest import Site, pages, urlset


@pytest.mark.parametrize(
    ("code", "step"),
    [
        (errno.EACCES, "give the user this runs as access to it, then run again"),
        (errno.EPERM, "give the user this runs as access to it, then run again"),
        (errno.EROFS, "read-only file system"),
        (errno.ENOSPC, "free space"),
        (errno.EIO, "check it (or restore the file from a backup)"),
        (errno.ENOTDIR, "a part of its path is a file, not a folder"),
        (errno.EISDIR, "pass the path of a file"),
        (errno.EBUSY, "fix that, then run again"),
    ],
)
def test_each_failure_says_its_next_step(code: int, step: str) -> None:
    error = OSError(code, f"the words for {errno.errorcode[code]}")
    line = cannot("read the state file", error)
    assert line.startswith(f"cannot read the state file (the words for {errno.errorcode[code]}); ")
    assert step in line.partition("); ")[2]


def test_an_error_without_a_number_keeps_its_words() -> None:
    assert cannot("read it", OSError("odd")) == "cannot read it (odd); fix that, then run again"


def test_a_state_path_under_a_file_is_one_line_that_says_to_check_the_path(offline_site: Site, tmp_path: Path) -> None:
    offline_site.write(urlset(pages(2)))
    (tmp_path / "plain").write_text("")
    result = offline_site.run("--state", str(tmp_path / "plain" / "state.json"), "--dry-run")
    assert result.code == 2, result
    assert "(Not a directory); a part of its path is a file, not a folder; check the path" in result.err
    assert result.err.count("\n") == 1 and "Traceback" not in result.err


def test_a_sitemap_under_a_file_is_one_line_that_says_to_check_the_path(offline_site: Site, tmp_path: Path) -> None:
    (tmp_path / "plain").write_text("")
    result = offline_site.run("--dry-run", sitemap=str(tmp_path / "plain" / "sitemap.xml"))
    assert result.code == 2, result
    assert "(Not a directory); a part of its path is a file, not a folder; check the path" in result.err
    assert result.err.count("\n") == 1


def test_sqlite_unable_to_open_says_whose_access_is_missing() -> None:
    line = operational(sqlite3.OperationalError("unable to open database file"))
    assert line == (
        "unable to open database file: the file or its folder cannot be opened by the user this runs as; "
        "give it access to both and run again"
    )


def test_a_lock_file_that_is_a_folder_is_named_as_the_lock_not_the_state_folder(offline_site: Site) -> None:
    """The state folder exists and is writable; its lock cannot be made: the line names the lock
    file (a new user read "cannot create the state folder" for a folder that was there)."""
    from notifier.store import JsonStore

    offline_site.write(urlset(pages(2)))
    lock = JsonStore(offline_site.state).lock_path
    lock.mkdir(parents=True)
    result = offline_site.run()
    assert result.code == 2, result
    assert f"{lock}: cannot create the state's lock file (Is a directory); it is a folder" in result.err, result.err
    assert result.err.count("\n") == 1


def test_a_state_folder_that_cannot_be_made_says_so(tmp_path: Path) -> None:
    from notifier.errors import StateError
    from notifier.store import JsonStore

    (tmp_path / "plain").write_text("")
    with pytest.raises(StateError, match=r"plain/sub: cannot create the state folder \(Not a directory\); a part of its path is a file"):
        JsonStore(tmp_path / "plain" / "sub" / "state.json").acquire()
