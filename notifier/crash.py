"""What the program does with an error nobody expected: a bug is exit 70 (ExitCode.INTERNAL_ERROR), never 1.

Exit 1 tells a deploy "the sitemap lies"; a bug must not say that. As pre-commit writes
``pre-commit.log``, the full traceback goes to a file beside the state
(``notify-changes-crash.log``), and stderr gets one line: that it is a bug, what was
left as it was, and where the traceback is. The state needs no repair: every save is
atomic, and a batch the endpoint acknowledged was recorded before the next was sent.

The user is asked to attach the log to a public issue, so it holds no secret: the command
line and every exception's text (the traceback's) pass the redactor the report uses
(``redaction.py``: keys cut to four characters, passwords gone), then lose every password a
URL or a connection text still spells out (one from a config file the crash came before). It is a new file readable
by its owner only (0600), never a link followed: a log already there, or a link planted in
a shared temporary folder, makes it take a fresh name beside it.
"""

from __future__ import annotations

import datetime as dt
import os
import sys
import tempfile
import traceback
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from notifier import __version__
from notifier.redaction import Secrets, gathered, redacted_words, without_written_passwords

LOG_NAME = "notify-changes-crash.log"


def crash_log_folder(state: object) -> Path:
    """Beside the state when its folder exists (a file store), else the temporary folder."""
    if isinstance(state, (Path, str)) and "://" not in str(state):
        folder = Path(state).parent
        if folder.is_dir() and os.access(folder, os.W_OK):
            return folder
    return Path(tempfile.gettempdir())


def report_crash(error: BaseException, argv: Sequence[str], state: object, stderr: TextIO, secrets: Secrets = Secrets()) -> str:
    """Write the traceback to the crash log and say one line on ``stderr``, which it returns
    (exit 70). ``secrets``: the keys the run knew, beside those its words and environment hold."""
    secrets = gathered(secrets.keys, argv, os.environ, state) | secrets
    text = without_written_passwords(secrets.redact("".join(traceback.format_exception(error))))
    stamp = dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    words = redacted_words(argv, secrets)
    entry = (
        f"{stamp} notify-changes {__version__}, Python {sys.version.split()[0]}\nargs: {without_written_passwords(repr(words))}\n{text}\n"
    )
    where: str
    try:
        path = _write_log(crash_log_folder(state), entry)
        where = f"the traceback is in {path} (keys and passwords redacted)"
    except OSError:  # nowhere to write it: the traceback itself is the report
        stderr.write(entry)
        where = "the traceback is above (keys and passwords redacted)"
    line = (
        f"internal error ({type(error).__name__}), a bug in notify-changes, not in your sitemap: {where}. "
        "The state was left as the last completed step wrote it; please report it with that file "
        "(https://github.com/notify-changes/notify-changes/issues)"
    )
    try:
        stderr.write(f"notify-changes: {line}\n")
        stderr.flush()
    except (BrokenPipeError, ValueError):  # stderr is gone too: the exit code and the log still say it
        pass
    return line


def _write_log(folder: Path, entry: str) -> Path:
    """A new file, 0600, never through a link: ``LOG_NAME`` when it is free, else a fresh name beside it."""
    path = folder / LOG_NAME
    try:
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0), 0o600)
    except FileExistsError:  # an earlier crash's log, or something planted there: never written through
        descriptor, name = tempfile.mkstemp(prefix="notify-changes-crash-", suffix=".log", dir=folder)  # O_EXCL, 0600
        path = Path(name)
    with os.fdopen(descriptor, "w", encoding="utf-8") as log:
        log.write(entry)
    return path


def caused_by_a_cancel(error: BaseException | None) -> bool:
    """Whether a cancel caused ``error``: no bug then. Python makes a KeyboardInterrupt raised
    while a class is being made (``__set_name__``) into a RuntimeError whose cause it is."""
    for _ in range(8):  # a chain of causes, never a cycle followed for ever
        if error is None or isinstance(error, KeyboardInterrupt):
            break
        error = error.__cause__
    return isinstance(error, KeyboardInterrupt)
