"""Paths as the reader and the build take them: resolved without raising, kept inside a root,
told apart from URLs. A leaf: no reader, no HTTP client."""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from pathlib import Path


def resolved(path: Path | str) -> Path:
    """``Path.resolve()`` that never raises: a symlink loop (which ``resolve`` turns into a
    RuntimeError) stays as written, absolute, and reading it then says what is wrong."""
    try:
        return Path(path).resolve()
    except (OSError, RuntimeError):
        return Path(os.path.abspath(path))


def is_inside(path: Path, root: Path) -> bool:
    """Whether a resolved ``path`` is ``root`` or below it (no ``..`` escapes the site)."""
    return path == root or root in path.parents


def is_url(location: str) -> bool:
    return location.startswith(("http://", "https://"))


_NEXT_STEPS = {
    errno.EACCES: "give the user this runs as access to it, then run again",
    errno.EPERM: "give the user this runs as access to it, then run again",
    errno.EROFS: "it is on a read-only file system; pass a path on a writable one",
    errno.ENOSPC: "free space on that disk, then run again",
    errno.EDQUOT: "free space within the user's disk quota, then run again",
    errno.EIO: "the disk failed; check it (or restore the file from a backup), then run again",
    errno.ENOENT: "check the path",
    errno.ENOTDIR: "a part of its path is a file, not a folder; check the path",
    errno.ELOOP: "its path is a loop of symbolic links; check the path",
    errno.ENAMETOOLONG: "its path is too long; check the path",
    errno.EISDIR: "it is a folder; pass the path of a file",
}


def cannot(what: str, error: OSError) -> str:
    """``cannot <what> (<the system's words>); <what to do next>``: the one wording of a file the
    program could not read, write or lock, so every such line says what to do about it."""
    return f"cannot {what} ({error.strerror or error}); {_NEXT_STEPS.get(error.errno or 0, 'fix that, then run again')}"


def file_kind(mode: int) -> str:
    """What a path that is not a regular file is, in words (reading a FIFO blocks for ever)."""
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO)"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


class NotRegularFile(OSError):
    """A path the program reads or appends to is a FIFO, a device, a folder: refused before
    anything blocks on it. ``strerror`` says what it is."""

    def __init__(self, path: Path | str, mode: int) -> None:
        super().__init__(f"is {file_kind(mode)}, not a regular file")
        self.filename = str(path)
        self.strerror = f"is {file_kind(mode)}, not a regular file"
        self.mode = mode

    def __str__(self) -> str:
        return f"{self.filename}: {self.strerror}"

    def __reduce__(self) -> tuple[type[NotRegularFile], tuple[str, int]]:
        """Made again from its path and mode: an exception a worker raises is pickled to the
        main process, and OSError's own way would call this __init__ with the message alone."""
        return type(self), (self.filename, self.mode)


def refuse_irregular(path: Path | str) -> None:
    """``NotRegularFile`` unless ``path`` is a regular file or absent: for a library that opens
    the path itself (SQLite), the check before it does."""
    with contextlib.suppress(FileNotFoundError):
        status = os.stat(path)
        if not stat.S_ISREG(status.st_mode):
            raise NotRegularFile(path, status.st_mode)


def open_regular(path: Path | str, flags: int, mode: int = 0o644) -> int:
    """``os.open`` of a regular file only, that never waits: a FIFO opened for reading waits for
    a writer, and for writing, for a reader, for ever. A path that is something else is
    ``NotRegularFile`` (an OSError); the check is made on the descriptor, opened with
    ``O_NONBLOCK`` (which a regular file ignores), so a FIFO swapped in after a ``stat`` is
    refused as well. ``O_CREAT`` in ``flags`` creates a missing file, as ``os.open`` does."""
    refuse_irregular(path)  # a FIFO with no reader: refused here, not as ENXIO from the open
    fd = os.open(path, flags | os.O_NONBLOCK | os.O_CLOEXEC, mode)
    try:
        status = os.fstat(fd)
        if not stat.S_ISREG(status.st_mode):
            raise NotRegularFile(path, status.st_mode)
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


__all__ = ["NotRegularFile", "file_kind", "is_inside", "is_url", "open_regular", "refuse_irregular", "resolved"]
