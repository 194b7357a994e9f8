"""What the program says while it works, and how: progress, notices and colour, on a
terminal or in a CI log. The error boundary and the report are the CLI's (``cli.py``)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TextIO

from notifier.report import printable


def progress_printer(stream: TextIO, environ: Mapping[str, str]) -> tuple[Callable[[str], None] | None, Callable[[str], None]]:
    """Progress on stderr: (what it is doing now, each counted step). On a terminal, one line
    rewritten in place says both. In a log (not a terminal, or under CI) there is no status
    line, and each step (a part of an index read, a batch sent) is a line of its own, flushed
    as it happens, so a long submission is never silent; a short one (one file, or an index of
    one part, and one batch an endpoint) writes none."""
    if on_a_terminal(stream, environ):

        def show(message: str) -> None:
            write_quietly(stream, f"\r\x1b[K{printable(message)[:100]}")

        return show, show

    def log(message: str) -> None:
        write_quietly(stream, f"notify-changes: {printable(message)}\n")

    return None, log


def on_a_terminal(stream: TextIO, environ: Mapping[str, str]) -> bool:
    """A person watching: a terminal, and not a CI job's log."""
    return stream.isatty() and not environ.get("CI") and not environ.get("GITHUB_ACTIONS")


def notice_printer(stream: TextIO) -> Callable[[str], None]:
    """Lines said as they happen (each retry wait), in logs too; on a terminal, over the progress line."""
    clear = "\r\x1b[K" if stream.isatty() else ""

    def say(message: str) -> None:
        write_quietly(stream, f"{clear}notify-changes: {printable(message)}\n")

    return say


def write_quietly(stream: TextIO, text: str) -> None:
    """Progress and notices are for a reader: a closed stderr (``2>&1 | head``) must not stop a run."""
    try:
        stream.write(text)
        stream.flush()
    except (OSError, ValueError):  # a closed pipe, a full disk (2>/dev/full); ValueError: the stream was closed
        pass


def use_colour(stream: TextIO, environ: Mapping[str, str]) -> bool:
    """Colour only on a terminal, and never when NO_COLOR is set (https://no-color.org)."""
    return stream.isatty() and not environ.get("NO_COLOR") and environ.get("TERM") != "dumb"
