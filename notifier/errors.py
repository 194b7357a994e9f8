"""The exit codes and the one exception root.

Every expected failure is a :class:`NotifierError` whose message says what happened and
what to do next; the command line turns it into one line on stderr and its exit code.
"""

from __future__ import annotations

import enum


class ExitCode(enum.IntEnum):
    """The process exit codes of notify-changes (SPEC: "Exit codes")."""

    OK = 0
    VERIFICATION_FAILED = 1
    INPUT_ERROR = 2
    SUBMISSION_INCOMPLETE = 3
    LOCKED = 4
    NOT_RECORDED = 5  # delivered, and the state could not record all of it: the next run sends that again
    INTERNAL_ERROR = 70  # EX_SOFTWARE (sysexits.h): a bug, never "the sitemap lies"
    OUTPUT_FAILED = 74  # EX_IOERR (sysexits.h): only the output could not be written; what the command did stands
    INTERRUPTED = 130


EXIT_CODE_MEANINGS: dict[ExitCode, str] = {
    ExitCode.OK: "done (or nothing to do)",
    ExitCode.VERIFICATION_FAILED: "verification failed: nothing submitted, state unchanged",
    ExitCode.INPUT_ERROR: "usage or input error: nothing submitted, state unchanged",
    ExitCode.SUBMISSION_INCOMPLETE: "submission incomplete after retries; the rest stays pending",
    ExitCode.LOCKED: "another run holds the state lock",
    ExitCode.NOT_RECORDED: "delivered, but the state could not record all of it; the next run sends that part again",
    ExitCode.INTERNAL_ERROR: "internal error (a bug): the traceback is in notify-changes-crash.log",
    ExitCode.OUTPUT_FAILED: "the output could not be written (a closed stdout, a full disk); what the command did stands",
    ExitCode.INTERRUPTED: "interrupted; the batch in flight stays pending",
}


class NotifierError(Exception):
    """Root of every failure notify-changes expects. ``str(error)`` is one line for a user."""

    exit_code: ExitCode = ExitCode.INPUT_ERROR

    def __reduce__(self) -> tuple[object, ...]:
        """Made again from its message and fields, never through ``__init__``: an error a worker
        raises is pickled to the main process, and Exception's own way calls ``__init__`` with the
        message alone, which a subclass that takes other arguments (SaveFailed) refuses."""
        return _made_again, (type(self), self.args, vars(self))


def _made_again(kind: type[NotifierError], args: tuple[object, ...], fields: dict[str, object]) -> NotifierError:
    error = kind.__new__(kind, *args)  # BaseException.__new__ keeps args
    vars(error).update(fields)
    return error


class UsageError(NotifierError):
    """A bad option, config value or key."""


class InputError(NotifierError):
    """An unreadable or malformed sitemap, a missing index part."""


class StateError(NotifierError):
    """A state file that cannot be read, is corrupt, or is of a newer format."""


class HistoryError(NotifierError):
    """The git history configured in ``[history]`` cannot be read."""


#: Seconds another run's state lock is waited for, when --lock-timeout does not say: the one
#: default of the option, every store and ``state forget``.
LOCK_TIMEOUT = 60.0


class LockTimeout(NotifierError):
    """Another run holds the state lock (after ``LOCK_TIMEOUT`` or ``--lock-timeout``)."""

    exit_code = ExitCode.LOCKED


class Interrupted(NotifierError):
    """SIGINT or SIGTERM arrived; the run stopped with its state consistent."""

    exit_code = ExitCode.INTERRUPTED
