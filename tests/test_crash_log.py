"""The crash log (``notifier/crash.py``) as a function, on the paths the CLI's crash tests do
not take: a crash before the settings were read (no secrets handed over), a state that is no
file, a stderr that buffers or is gone. Each test names the mutants of scripts/mutate.py it
kills (#44)."""

from __future__ import annotations

import io
import tempfile
from pathlib import Path

import pytest

from notifier.crash import caused_by_a_cancel, crash_log_folder, report_crash
from notifier.database import DatabaseURL

KEY = "0123456789abcdef0123456789abcdef"
ENV_KEY = "fedcba9876543210fedcba9876543210"


def log_of(line: str) -> str:
    path = line.split("the traceback is in ", 1)[1].split(" (keys", 1)[0]
    return Path(path).read_text()


def test_a_crash_before_the_settings_redacts_what_its_words_and_environment_hold(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No Secrets handed over (the crash came before settings were read): the log still holds
    neither --key's value nor INDEXNOW_KEY's nor a database password (kills ``secrets =
    gathered(...) | secrets`` removed); a password a URL or a connection text spells out in an
    exception's text is cut too, whoever wrote it (a config file the crash came before)."""
    monkeypatch.setenv("INDEXNOW_KEY", ENV_KEY)
    state = tmp_path / "state.json"
    argv = ["notify-changes", "run", "s.xml", "--key", KEY, "--state", str(state)]
    error = RuntimeError(f"boom with {KEY} and {ENV_KEY} and postgresql://deploy:hunter2-secret@db/x host=db password=libpq-secret")
    line = report_crash(error, argv, state, io.StringIO())
    text = log_of(line)
    assert "RuntimeError: boom with" in text and str(tmp_path) in line  # beside the state
    for secret in (KEY, ENV_KEY, "hunter2-secret", "libpq-secret"):  # the last two no setting named: spelled out, cut
        assert secret not in text, secret


@pytest.mark.parametrize("state", [None, 7, DatabaseURL("postgresql://ci@db.example.org/deploys", site="www")])
def test_a_state_that_is_no_file_puts_the_log_in_the_temporary_folder(state: object) -> None:
    """None (a crash before a state was known), a database: the temporary folder, never a
    TypeError inside the crash handler (kills ``isinstance(...) and`` dropped or made ``or``)."""
    assert crash_log_folder(state) == Path(tempfile.gettempdir())


def test_a_state_file_puts_the_log_beside_it_when_its_folder_is_there(tmp_path: Path) -> None:
    assert crash_log_folder(tmp_path / "state.json") == tmp_path
    assert crash_log_folder(str(tmp_path / "state.sqlite")) == tmp_path
    assert crash_log_folder(tmp_path / "not-made-yet" / "state.json") == Path(tempfile.gettempdir())


def test_the_line_reaches_a_buffered_stderr_before_the_process_ends(tmp_path: Path) -> None:
    """The program ends with os._exit, which flushes nothing: the line must be out already
    (kills ``stderr.flush()`` left out)."""
    raw = io.BytesIO()
    stderr = io.TextIOWrapper(raw, encoding="utf-8", line_buffering=False, write_through=False)
    report_crash(RuntimeError("boom"), ["notify-changes"], tmp_path / "state.json", stderr)
    assert b"internal error (RuntimeError), a bug in notify-changes" in raw.getvalue()


class _Gone(io.StringIO):
    def write(self, text: str) -> int:
        raise BrokenPipeError


def test_a_stderr_that_is_gone_still_leaves_the_log(tmp_path: Path) -> None:
    """A deploy script that closed its pipe: no second error; the log and the line returned
    still say it (kills the ``pass`` of ``except (BrokenPipeError, ValueError)`` raised)."""
    line = report_crash(RuntimeError("boom"), ["notify-changes"], tmp_path / "state.json", _Gone())
    assert "RuntimeError: boom" in log_of(line)


def test_a_cancel_is_found_through_a_chain_of_causes() -> None:
    inner: BaseException = KeyboardInterrupt()
    for _ in range(3):
        outer = RuntimeError("while making a class")
        outer.__cause__ = inner
        inner = outer
    assert caused_by_a_cancel(inner) and not caused_by_a_cancel(RuntimeError("a bug")) and not caused_by_a_cancel(None)
