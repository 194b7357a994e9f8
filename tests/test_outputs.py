"""Every command with its stdout closed (``cmd >&-``) and on a full disk (``> /dev/full``),
as a real process (issue #39, item 9): the output that cannot be written is one line on
stderr and exit 74 (``ExitCode.OUTPUT_FAILED``), or the command's own code when that is not
0; never exit 70, and what the command did (a run's deliveries, its state) stands."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable

import pytest

from notifier.cli import main
from notifier.commands.state_request import ACTIONS
from notifier.errors import ExitCode
from tests.conftest import BASE, HOST, KEY, Site, pages, program, recorded_pending, urlset
from tests.fakeindexnow import status
from tests.test_history import Repo

pytestmark = pytest.mark.program

MODES = {"closed": "stdout is closed", "full": "No space left on device"}
Check = Callable[[Site], None]


def _nothing(site: Site) -> None:
    pass


def _delivered(site: Site) -> None:
    assert site.fake is not None and site.fake.delivered() == [f"{BASE}/p/3/", f"{BASE}/p/4/"]
    assert recorded_pending(site.state) == {}  # delivered and saved: the report's failure undoes nothing


def _forgotten(site: Site) -> None:
    assert recorded_pending(site.state) == {}


def _key_written(site: Site) -> None:
    assert (site.root / "keys" / f"{KEY}.txt").read_text() == KEY


def _key_folder(site: Site) -> None:
    (site.root / "keys").mkdir()


def _current_key(site: Site) -> None:
    (site.root / "keys").mkdir()
    (site.root / "keys" / f"{KEY}.txt").write_text(KEY)


def _rotated(site: Site) -> None:
    written = sorted(path.name for path in (site.root / "keys").iterdir())
    assert len(written) == 2 and f"{KEY}.txt" in written  # the new key's file beside the current one


def _access_log(site: Site) -> None:
    _pending(site)
    (site.root / "access.log").write_text(
        '40.77.167.1 - - [03/Dec/2026:10:00:00 +0000] "GET /p/3/ HTTP/1.1" 200 512 "-" "Mozilla/5.0 (compatible; bingbot/2.0)"\n'
    )


def _stamped(site: Site) -> None:
    assert "2025-01-10" in site.sitemap.read_text()


def _baseline(site: Site) -> None:
    site.write(urlset(pages(3)))
    assert main([str(site.sitemap), *site.state_args, "--key", KEY]) == 0


def _pending(site: Site) -> None:
    """Two URLs pending at the fake endpoint: announced, and the endpoint said 500 until the budget was spent."""
    assert site.fake is not None
    _baseline(site)
    site.write(urlset(pages(5)))
    site.fake.plan = [status(500)] * 3
    args = ["--endpoint", site.fake.endpoint, "--retry-timeout", "0", "--key", KEY]
    assert main([str(site.sitemap), *site.state_args, *args]) == 3


def _new_pages(site: Site) -> None:
    _baseline(site)
    site.write(urlset(pages(5)))


def _stampable(site: Site) -> None:
    Repo(site.root).commit({"content/a.md": "---\ntitle: A\n---\n"}, "2025-01-10T10:00:00Z")
    (site.root / "notify-changes.toml").write_text('[history]\npreset = "hugo"\n')
    site.write(urlset({"/a/": "2026-11-30T09:41:07Z"}))


def _failing(site: Site) -> None:
    assert site.fake is not None
    _new_pages(site)
    site.fake.success_status = 422  # the run's own code is 3: it stands


# command words (SITE, STATE, ENDPOINT, URL filled in), what is set up first, the code, what must hold after
CASES: dict[str, tuple[list[str], Callable[[Site], None], int, Check]] = {
    "run": (["run", "SITE", "--endpoint", "ENDPOINT"], _new_pages, ExitCode.OUTPUT_FAILED, _delivered),
    "run json": (["SITE", "--endpoint", "ENDPOINT", "--format", "json"], _new_pages, ExitCode.OUTPUT_FAILED, _delivered),
    "run github": (["SITE", "--endpoint", "ENDPOINT", "--format", "github"], _new_pages, ExitCode.OUTPUT_FAILED, _delivered),
    "run exit 3": (["SITE", "--endpoint", "ENDPOINT"], _failing, ExitCode.SUBMISSION_INCOMPLETE, _nothing),
    "check": (["check", "SITE"], _new_pages, ExitCode.OUTPUT_FAILED, _nothing),
    "dry run": (["SITE", "--dry-run"], _new_pages, ExitCode.OUTPUT_FAILED, _nothing),
    "stamp": (["stamp", "SITE"], _stampable, ExitCode.OUTPUT_FAILED, _stamped),
    "key new": (["key", "new"], _nothing, ExitCode.OUTPUT_FAILED, _nothing),
    "key file": (["key", "file", "--host", HOST, "--write", "keys"], _key_folder, ExitCode.OUTPUT_FAILED, _key_written),
    "key rotate": (["key", "rotate", "--write", "keys"], _current_key, ExitCode.OUTPUT_FAILED, _rotated),
    "deploy-hook": (["deploy-hook"], _nothing, ExitCode.OUTPUT_FAILED, _nothing),
    "crawled": (["crawled", "access.log", "STATE"], _access_log, ExitCode.OUTPUT_FAILED, _nothing),
    "state show": (["state", "show", "STATE"], _pending, ExitCode.OUTPUT_FAILED, _nothing),
    "state url": (["state", "url", "URL", "STATE"], _pending, ExitCode.OUTPUT_FAILED, _nothing),
    "state pending": (["state", "pending", "STATE"], _pending, ExitCode.OUTPUT_FAILED, _nothing),
    "state forget": (["state", "forget", f"{BASE}/p/3/", f"{BASE}/p/4/", "--yes", "STATE"], _pending, ExitCode.OUTPUT_FAILED, _forgotten),
    "state forget without --yes": (["state", "forget", f"{BASE}/p/3/", "STATE"], _pending, ExitCode.INPUT_ERROR, _nothing),
    "state export": (["state", "export", "STATE"], _pending, ExitCode.OUTPUT_FAILED, _nothing),
    "state export csv": (["state", "export", "--format", "csv", "STATE"], _pending, ExitCode.OUTPUT_FAILED, _nothing),
    "state history": (["state", "history", "STATE"], _pending, ExitCode.OUTPUT_FAILED, _nothing),
    "state stats": (["state", "stats", "STATE"], _pending, ExitCode.OUTPUT_FAILED, _nothing),
    "state report": (["state", "report", "--html", "report.html", "STATE"], _pending, ExitCode.OUTPUT_FAILED, _nothing),
}


def test_every_state_command_is_among_the_cases() -> None:
    assert {words[1] for words in (case[0] for case in CASES.values()) if words[0] == "state"} == set(ACTIONS)


def test_every_command_and_key_action_is_among_the_cases() -> None:
    from notifier.cli import COMMANDS, TOOLS
    from notifier.commands.key import KEY_ACTIONS

    words = [case[0] for case in CASES.values()]
    assert {*COMMANDS, *TOOLS} <= {each[0] for each in words} | {"run"}  # a run is SITE alone too
    assert {each[1] for each in words if each[0] == "key"} == set(KEY_ACTIONS)


def _argv(site: Site, words: list[str]) -> list[str]:
    assert site.fake is not None
    filled = {"SITE": [str(site.sitemap)], "STATE": site.state_args, "ENDPOINT": [site.fake.endpoint], "URL": [f"{BASE}/p/3/"]}
    return [*program(), *(part for word in words for part in filled.get(word, [word]))]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("case", CASES)
def test_an_output_that_cannot_be_written_is_one_line_and_its_own_code(site: Site, case: str, mode: str) -> None:
    words, prepare, code, holds = CASES[case]
    prepare(site)
    argv = _argv(site, words)
    env = {**os.environ, "INDEXNOW_KEY": KEY, "NOTIFY_CHANGES_JOBS": "1"}
    if mode == "closed":
        done = subprocess.run(["sh", "-c", 'exec "$@" >&-', "sh", *argv], env=env, stderr=subprocess.PIPE, text=True, check=False)
    else:
        with open("/dev/full", "w") as full:
            done = subprocess.run(argv, env=env, stdout=full, stderr=subprocess.PIPE, text=True, check=False)
    errors = [line for line in done.stderr.splitlines() if line.startswith("notify-changes: error:")]
    assert done.returncode == code, done.stderr
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr, done.stderr
    lost = (
        f"notify-changes: error: the output could not be written ({'stdout: ' if mode == 'full' else ''}{MODES[mode]}); "
        "nothing the command did is undone (a run's deliveries and its state stay recorded): give it a writable stdout to see its output"
    )
    assert errors.count(lost) == 1, done.stderr
    assert len(errors) == 1 if code == ExitCode.OUTPUT_FAILED else len(errors) <= 2, done.stderr  # and the command's own line
    holds(site)


@pytest.mark.parametrize("redirect", ["2>&-", "2>/dev/full"])
def test_a_closed_or_full_stderr_never_stops_a_run(site: Site, redirect: str) -> None:
    """Progress lines (one a batch, in a log) and notices go to stderr as the run goes."""
    _new_pages(site)
    argv = _argv(site, ["SITE", "--endpoint", "ENDPOINT"])
    env = {**os.environ, "INDEXNOW_KEY": KEY}
    done = subprocess.run(["sh", "-c", f'exec "$@" {redirect}', "sh", *argv], env=env, stdout=subprocess.PIPE, text=True, check=False)
    assert done.returncode == 0 and "2 submitted" in done.stdout
    _delivered(site)


def test_the_exit_code_for_an_output_alone_is_documented() -> None:
    from tests.docs import page

    assert "| 74 | the output could not be written" in page("reference/exit-codes.md")


def test_a_job_summary_that_cannot_be_written_is_the_same_io_error(site: Site, monkeypatch: pytest.MonkeyPatch) -> None:
    _new_pages(site)
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", "/dev/full")
    result = site.run("--format", "github")
    assert result.code == ExitCode.OUTPUT_FAILED and "::add-mask::" in result.out, result
    said = "notify-changes: error: the output could not be written (/dev/full: No space left on device)"
    assert result.err.splitlines()[-1].startswith(said)
    _delivered(site)
