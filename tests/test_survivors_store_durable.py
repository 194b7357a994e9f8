"""store/durable.py where its mutants once went unnoticed (issue #44): the lock released once
and only once, the leftovers a killed run left (only ours), the reason a failed write gives,
the mode of a new state file and the process's umask, and what is synced and closed."""

from __future__ import annotations

import os
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from notifier.errors import StateError
from notifier.store.durable import StateStore, write_atomic


@pytest.fixture
def umask() -> Iterator[None]:
    before = os.umask(0o022)
    yield
    os.umask(before)


def open_fds() -> set[str]:
    return set(os.listdir("/proc/self/fd"))


def test_a_store_never_locked_releases_nothing(tmp_path: Path) -> None:
    """Fails if ``self._lock_fd: int | None = None`` is removed from
    store/durable.py::StateStore.__init__ (release is an AttributeError then)."""
    store = StateStore(tmp_path / "state.json")
    store.release()
    assert not store.lock_path.exists()


def test_the_lock_is_released_once_and_a_second_release_closes_nothing(tmp_path: Path) -> None:
    """A second release must not close the descriptor the first one freed, which the next
    open gets. Fails if ``self._lock_fd = None`` is removed from
    store/durable.py::StateStore.release."""
    store = StateStore(tmp_path / "state.json")
    store.acquire()
    store.release()
    fd = os.open(tmp_path / "other", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        store.release()
        os.fstat(fd)  # still open
    finally:
        os.close(fd)
    with store:  # and the lock can be taken again
        pass


def test_only_our_temporary_files_are_removed_as_leftovers(tmp_path: Path) -> None:
    """A file that starts like ours but is no ``.tmp`` stays, and so does a link named like
    a leftover that leads to a folder. Fails if ``entry.name.endswith(_TMP_SUFFIX)`` or
    ``entry.is_file()`` is dropped from the test in
    store/durable.py::StateStore._remove_leftovers."""
    (tmp_path / ".state.json.abc123.tmp").write_text("a killed run's")
    (tmp_path / ".state.json.backup").write_text("someone's own")
    (tmp_path / "folder").mkdir()
    (tmp_path / ".state.json.linked.tmp").symlink_to(tmp_path / "folder")
    (tmp_path / ".other.json.abc.tmp").write_text("another state's")
    with StateStore(tmp_path / "state.json"):
        pass
    assert sorted(path.name for path in tmp_path.iterdir()) == [
        ".other.json.abc.tmp",
        ".state.json.backup",
        ".state.json.linked.tmp",
        "folder",
        "state.json.lock",
    ]


def test_a_folder_that_takes_no_file_says_why_even_without_an_errno(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An OSError with no strerror still gives its text. Fails if ``error.strerror or
    str(error)`` loses its second side in store/durable.py::write_atomic."""

    def refuse(**_: object) -> tuple[int, str]:
        raise OSError("the volume went read-only")

    monkeypatch.setattr(tempfile, "mkstemp", refuse)
    with pytest.raises(StateError, match=r"cannot write the state file there \(the volume went read-only\)"):
        write_atomic(tmp_path / "state.json", [b"{}"], ".state.json.")


def test_a_failed_write_says_why_even_without_an_errno(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Fails if the second ``error.strerror or str(error)`` loses its second side in
    store/durable.py::write_atomic."""

    def refuse(source: str, target: Path) -> None:
        raise OSError("the rename was refused")

    monkeypatch.setattr(os, "replace", refuse)
    with pytest.raises(StateError, match=r"cannot write the state file \(the rename was refused\)"):
        write_atomic(tmp_path / "state.json", [b"{}"], ".state.json.")
    assert list(tmp_path.iterdir()) == []


def test_the_bytes_are_in_the_file_when_it_is_synced(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """fsync makes durable what the file holds: every byte is written to it (not left in
    the buffer) before. And the folder is synced after the rename, its descriptor closed.
    Fails if ``handle.flush()`` is left out of store/durable.py::write_atomic, or ``os.fsync(fd)``
    or ``os.close(fd)`` out of ::fsync_folder."""
    synced: list[tuple[bool, int]] = []
    real_fsync = os.fsync

    def fsync(fd: int) -> None:
        status = os.fstat(fd)
        synced.append((stat.S_ISDIR(status.st_mode), status.st_size))
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    data = b'{"version":2}\n' * 10
    before = open_fds()
    write_atomic(tmp_path / "state.json", [data[:70], data[70:]], ".state.json.")
    assert open_fds() == before
    assert (synced[0], synced[1][0]) == ((False, len(data)), True)
    assert (tmp_path / "state.json").read_bytes() == data


@pytest.mark.usefixtures("umask")
@pytest.mark.parametrize(("mask", "mode"), [(0o022, 0o644), (0o002, 0o664), (0o077, 0o600)])
def test_a_new_file_is_0666_less_the_umask_and_the_umask_stays(tmp_path: Path, mask: int, mode: int) -> None:
    """Fails if ``0o666`` is moved by one, or ``os.umask(umask)`` (the umask put back) is
    left out, in store/durable.py::_mode_for."""
    os.umask(mask)
    write_atomic(tmp_path / "state.json", [b"{}"], ".state.json.")
    assert stat.S_IMODE((tmp_path / "state.json").stat().st_mode) == mode
    assert os.umask(mask) == mask


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="counts descriptors in /proc")
def test_a_lock_the_file_system_cannot_take_is_one_line_and_no_descriptor_left(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A folder where flock fails for another reason than a holder (ENOLCK on some network file
    systems): the one line names the lock, and the lock file's descriptor is closed (edit: that
    ``os.close(fd)`` made a raise)."""
    import errno
    import fcntl

    from notifier.store import JsonStore

    def no_locks(fd: int, operation: int) -> None:
        raise OSError(errno.ENOLCK, "No locks available")

    monkeypatch.setattr(fcntl, "flock", no_locks)
    before = len(list(Path("/proc/self/fd").iterdir()))
    with pytest.raises(StateError, match=r"notify-changes\.json\.lock: cannot lock \(No locks available\)"):
        JsonStore(tmp_path / "notify-changes.json").acquire()
    assert len(list(Path("/proc/self/fd").iterdir())) == before
