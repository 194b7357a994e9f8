"""The program's first instructions: an interrupt is handled before anything heavy is imported.

CI cancels a job with SIGINT, then SIGTERM, at any moment, the first few hundred
milliseconds included, while lxml, requests and the rest are still being imported. From
the first line of this module on, either signal means exit 130 with one line, never a
traceback. During the imports a signal is only noted: an exception raised inside a C
extension's initialisation can crash the interpreter at exit; the program stops as soon as
the imports are done (a fraction of a second). Once the program is done, a late signal
can no longer cut its last output.
"""

import signal
import sys
from typing import NoReturn

_noted: list[int] = []


def _note(signum: int, frame: object) -> None:
    _noted.append(signum)


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt  # SIGTERM is handled like SIGINT: CI sends both


signal.signal(signal.SIGTERM, _note)
signal.signal(signal.SIGINT, _note)


def _stopped() -> int:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    sys.stderr.write("notify-changes: interrupted before the run began; nothing was read, sent or written\n")
    return 130


def main() -> int:
    """The ``notify-changes`` command and ``python -m notifier``: the process ends here."""
    try:
        from notifier.cli import main as run
    except Exception as error:  # an incomplete installation (a module missing from the wheel): a bug, exit 70
        return _broken(error)
    if _noted:
        return _stopped()
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, _interrupt)
    try:
        code = run()
    except KeyboardInterrupt:  # between two of the CLI's own handlers: nothing had started yet
        return _stopped()
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # done: the exit code stands
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if code == 130:
        _end_interrupted()
    _leave(code)


def _leave(code: int) -> NoReturn:
    """The end of a finished program, without freeing what it made: a million-URL run's state
    and report are millions of objects, and freeing them one by one (a fifth of a second)
    only delays the exit code. All else an exit does is done first: the exit hooks (the
    stores' connections close, the worker pool's last threads end, coverage is saved) and
    the last flush of the output."""
    import atexit
    import os

    try:
        atexit._run_exitfuncs()
        sys.stdout.flush()
        sys.stderr.flush()
    finally:
        os._exit(code)


def _end_interrupted() -> None:
    """An interrupted run has said its one line and left its state consistent. Python 3.11's
    exit hooks may still wake the abandoned worker pool's thread through a pipe that thread
    is closing, and print "Exception ignored ... Bad file descriptor" with a traceback
    after that line: leave without running them."""
    import os

    try:
        sys.stdout.flush()
        sys.stderr.flush()
    finally:
        os._exit(130)


def _broken(error: Exception) -> int:
    """The program cannot even load: say so in one line, never as exit 1 ("the sitemap lies")."""
    try:
        from notifier.crash import report_crash

        report_crash(error, sys.argv[1:], None, sys.stderr)
    except Exception:  # crash.py itself is missing: the installation is broken beyond that
        sys.stderr.write(f"notify-changes: internal error: the installed program is incomplete ({error}); reinstall it\n")
    return 70
