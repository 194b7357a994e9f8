"""Durable state on disk: the lock, atomic replacement, fsync, and the store's interface.

Written atomically (a temporary file in the same folder, fsync, rename, fsync of the
folder) under an exclusive ``flock`` that the kernel releases if the process dies, so a
crash or a second concurrent run never leaves a torn or mixed file.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import queue
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING

from notifier.errors import LOCK_TIMEOUT, ExitCode, LockTimeout, StateError
from notifier.paths import cannot
from notifier.store.model import State

if TYPE_CHECKING:
    from notifier.database import DatabaseURL
    from notifier.store.ledger import LedgerEntry

_TMP_SUFFIX = ".tmp"


def follow_link(path: Path) -> Path:
    """The real file behind a state path that is a symlink (state kept on a mounted volume,
    say): the new file replaces the target, not the link, and the lock and journal sit beside
    the target, where every run that reaches it through any link finds them."""
    return Path(os.path.realpath(path)) if path.is_symlink() else path


def waiting_for_lock(what: str, timeout: float) -> str:
    """The one line a run says when it starts to wait for another run's lock."""
    return f"waiting for {what}: another notify-changes run holds it; waiting up to {timeout:g} s (--lock-timeout)"


class StateStore:
    """A state on disk with its lock: the part every store shares. Use around a run.

    A store loads the State, saves it whole, and records each acknowledged batch
    durably before the next is sent (``record_delivered``).
    """

    def __init__(
        self,
        path: Path,
        *,
        lock_timeout: float = LOCK_TIMEOUT,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
        notice: Callable[[str], None] | None = None,
    ) -> None:
        self.path = path
        self.lock_timeout = lock_timeout
        self._clock = clock
        self._sleep = sleep
        self._notice = notice  # says once that the run waits for another's lock, and how long it may
        self._lock_fd: int | None = None

    # -- locking -------------------------------------------------------------------
    @property
    def lock_path(self) -> Path:
        return self.path.with_name(self.path.name + ".lock")

    def __enter__(self) -> StateStore:
        self.acquire()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.release()

    def acquire(self) -> None:
        """Take the exclusive lock, waiting up to ``lock_timeout``; then clean our leftovers."""
        folder = self.path.parent
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise StateError(f"{folder}: {cannot('create the state folder', error)}") from None
        try:
            fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        except OSError as error:
            what = "create the state's lock file"
            raise StateError(f"{self.lock_path}: {cannot(what, error)}") from None
        deadline, waiting = self._clock() + self.lock_timeout, False
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError as error:
                if error.errno not in (errno.EAGAIN, errno.EACCES):
                    os.close(fd)
                    raise StateError(f"{self.lock_path}: {cannot('lock', error)}") from None
                if self._clock() >= deadline:
                    os.close(fd)
                    raise LockTimeout(
                        f"{self.path}: another notify-changes run holds the state lock after waiting "
                        f"{self.lock_timeout:g} s; let it finish (or raise --lock-timeout) and run again"
                    ) from None
                if self._notice is not None and not waiting:  # once, as the wait starts
                    self._notice(waiting_for_lock(f"the state lock of {self.path}", self.lock_timeout))
                waiting = True
                self._sleep(0.05)
        self._lock_fd = fd
        self._remove_leftovers()

    def release(self) -> None:
        if self._lock_fd is not None:
            os.close(self._lock_fd)  # closing the descriptor drops the flock
            self._lock_fd = None

    def _tmp_prefix(self) -> str:
        return f".{self.path.name}."

    def _remove_leftovers(self) -> None:
        """Temporary files a killed run left behind: only ours, only under the lock."""
        prefix = self._tmp_prefix()
        with contextlib.suppress(OSError):
            for entry in os.scandir(self.path.parent):
                if entry.name.startswith(prefix) and entry.name.endswith(_TMP_SUFFIX) and entry.is_file():
                    with contextlib.suppress(OSError):
                        os.unlink(entry.path)

    # -- the interface -------------------------------------------------------------
    def record_ledger(self, entries: list[LedgerEntry], keep: int) -> None:
        """Add the batches this run sent to the ledger, keeping the newest ``keep``."""
        raise NotImplementedError

    def shared_waits(self) -> dict[str, str]:
        """Endpoint -> not-before times other sites' runs were told (a shared database); a file has none."""
        return {}

    def clear_waits(self, state: State, endpoints: Iterable[str]) -> None:
        """Forget the waits of ``endpoints`` (as the state spells them): ``state forget --backoff``."""
        for endpoint in endpoints:
            state.backoff.pop(endpoint, None)
        self.save(state)

    def load(self) -> State | None:
        raise NotImplementedError

    def save(self, state: State) -> None:
        raise NotImplementedError

    def record_delivered(
        self, state: State, endpoint: str, urls: Iterable[str], at: str, ledger: Sequence[LedgerEntry] = (), keep: int = 0
    ) -> bool:
        raise NotImplementedError

    @property
    def delivery_log(self) -> str:
        """Where acknowledged batches are kept until a save folds them in (said in messages)."""
        raise NotImplementedError


class SaveFailed(StateError):
    """The state could not be rewritten; the file on disk is the one from before the save."""

    def __init__(self, path: Path | DatabaseURL, reason: str) -> None:
        what = "the state file" if isinstance(path, Path) else "the state"
        super().__init__(
            f"{path}: cannot write {what} ({reason}); {'the file on disk' if isinstance(path, Path) else 'the database'} was left as it was"
        )
        self.path, self.reason = path, reason


class DeliveryNotRecorded(StateError):
    """An endpoint acknowledged a batch, and the store could not record it (a full disk, a
    database another program holds). Exit 5, never 2: something was sent. The batch stays
    pending, so the next run sends it again (at least once, never lost), and this run sends
    no more batches it could not record either; a run says so in its report (loop.py)."""

    exit_code = ExitCode.NOT_RECORDED

    def __init__(self, where: Path | DatabaseURL, endpoint: str, count: int, reason: str) -> None:
        super().__init__(
            f"{where}: {endpoint} acknowledged a batch of {count} URL{'s' * (count != 1)}, but it could not be recorded "
            f"({reason}); it stays pending and the next run sends it again, with the batches this run did not send"
        )


def _state_not_written(path: Path, reason: str, *, begun: bool) -> Exception:
    if begun:
        return SaveFailed(path, reason)
    return StateError(f"{path.parent}: cannot write the state file there ({reason}); make it writable")


def write_atomic(
    path: Path, chunks: Iterable[bytes | memoryview], tmp_prefix: str, failed: Callable[..., Exception] = _state_not_written
) -> None:
    """Temporary file in the same folder, fsync, rename, fsync of the folder: the file is the
    old one or the new one, whole, even after a crash. ``failed(path, reason, begun=)`` makes
    the error of a folder that takes no new file (begun False) or of a write that failed (the
    old file left as it was); by default a state file's."""
    folder = path.parent
    try:
        fd, tmp_name = tempfile.mkstemp(prefix=tmp_prefix, suffix=_TMP_SUFFIX, dir=folder)
    except OSError as error:
        raise failed(path, error.strerror or str(error), begun=False) from None
    try:
        os.fchmod(fd, _mode_for(path))  # mkstemp makes it 0600: a state shared by a deploy user and a CI account keeps its mode
        with os.fdopen(fd, "wb") as handle:
            write_chunks(handle, chunks)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp_name, path)
    except BaseException as error:
        with contextlib.suppress(OSError):
            os.unlink(tmp_name)
        if isinstance(error, OSError):
            raise failed(path, error.strerror or str(error), begun=True) from None
        raise
    fsync_folder(folder)


_AHEAD = 8  # chunks encoded ahead of the write: a few megabytes each at most


def write_chunks(handle: IO[bytes], chunks: Iterable[bytes | memoryview]) -> None:
    """Write ``chunks`` in order, the writing done by a thread of its own: the kernel copies
    one chunk while this thread encodes the next (a write lets go of the GIL), so a large
    state's save takes about as long as its encoding, not the sum of both. An error on
    either side stops both and is raised here, after every write begun has ended."""
    handoff: queue.Queue[bytes | memoryview | None] = queue.Queue(maxsize=_AHEAD)
    failed: list[BaseException] = []

    def drain() -> None:
        while (chunk := handoff.get()) is not None:
            if not failed:
                try:
                    handle.write(chunk)
                except BaseException as error:  # reported by the thread that called
                    failed.append(error)

    writer = threading.Thread(target=drain, name="notify-changes-writer", daemon=True)
    writer.start()
    try:
        for chunk in chunks:
            if failed:
                break
            handoff.put(chunk)
    finally:
        handoff.put(None)
        writer.join()
    if failed:
        raise failed[0]


def _mode_for(path: Path) -> int:
    """The mode the replaced file had; for a new file, what creating it would give (0666
    less the umask), as any tool's plain write does."""
    try:
        return path.stat().st_mode & 0o7777
    except OSError:
        umask = os.umask(0o022)
        os.umask(umask)
        return 0o666 & ~umask


def fsync_folder(folder: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
