"""The error boundary: a bug is exit 70 with its traceback in a log, never 1 ("the sitemap
lies"); a closed pipe ends a command quietly; a closed stderr never stops a run."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

import notifier.cli
import notifier.pipeline.loop
from notifier.crash import LOG_NAME
from tests.conftest import BASE, KEY, ROOT, Site, pages, program, urlset


def _bug(*args: object, **kwargs: object) -> None:
    raise ZeroDivisionError("division by zero")


def test_a_bug_is_exit_70_with_one_line_and_the_traceback_beside_the_state(site: Site, monkeypatch: pytest.MonkeyPatch) -> None:
    site.write(urlset(pages(3)))
    assert site.run().code == 0
    before = site.state_bytes()
    monkeypatch.setattr(notifier.pipeline.loop, "execute", _bug)
    result = site.run()
    assert result.code == 70
    log = site.state.parent / LOG_NAME
    assert result.err.count("\n") == 1 and "Traceback" not in result.err
    assert "internal error (ZeroDivisionError), a bug in notify-changes, not in your sitemap" in result.err
    assert f"the traceback is in {log}" in result.err
    text = log.read_text()
    assert "Traceback (most recent call last)" in text and "ZeroDivisionError: division by zero" in text
    assert f"notify-changes {notifier.__version__}" in text and "--state" in text  # what ran, to reproduce it
    assert site.state_bytes() == before  # nothing lost or half-written


def test_a_bug_under_github_is_an_annotation_too(site: Site, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    site.write(urlset(pages(1)))
    monkeypatch.setattr(notifier.pipeline.loop, "execute", _bug)
    result = site.run()
    assert result.code == 70
    assert "\n::error title=notify-changes::internal error (ZeroDivisionError), a bug in notify-changes" in result.out
    assert f"the traceback is in {Path(tempfile.gettempdir()) / LOG_NAME}" in result.out  # no state folder yet
    assert "**Stopped with exit 70:**" in summary.read_text()


def test_a_bug_with_nowhere_to_write_a_log_prints_the_traceback(site: Site, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import tempfile

    missing = tmp_path / "gone"
    monkeypatch.setattr(tempfile, "tempdir", str(missing))  # no state folder yet, and no temporary folder
    site.write(urlset(pages(1)))
    monkeypatch.setattr(notifier.pipeline.loop, "execute", _bug)
    result = site.run("--state", str(tmp_path / "nowhere" / "st.json"))
    assert result.code == 70
    assert "ZeroDivisionError: division by zero" in result.err and "the traceback is above" in result.err


def test_a_bug_in_a_tool_command_is_exit_70(site: Site, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    site.write(urlset(pages(2)))
    assert site.run().code == 0
    monkeypatch.setattr(notifier.cli, "run_state_sites", _bug)
    assert notifier.cli.main(["state", "show", "--state", str(site.state)]) == 70
    assert "internal error (ZeroDivisionError)" in capsys.readouterr().err
    assert (site.state.parent / LOG_NAME).is_file()


@pytest.mark.program
def test_an_incomplete_installation_is_exit_70_not_1(tmp_path: Path) -> None:
    """The wheel once lacked notifier/store/: the program died with a traceback and exit 1,
    which a deploy reads as "the sitemap lies"."""
    broken = tmp_path / "lib" / "notifier"
    shutil.copytree(ROOT / "notifier", broken, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.rmtree(broken / "store")
    libraries = dict.fromkeys([sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]])
    env = {
        "PYTHONPATH": os.pathsep.join([str(broken.parent), *libraries]),
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path),
        "TMPDIR": os.environ["TMPDIR"],
    }
    done = subprocess.run(
        [sys.executable, "-S", "-m", "notifier", "check", "sitemap.xml"], env=env, cwd=tmp_path, capture_output=True, text=True
    )
    assert done.returncode == 70
    assert done.stderr.count("\n") == 1 and "internal error (ModuleNotFoundError)" in done.stderr, done.stderr


# -- closed pipes -------------------------------------------------------------------------------
def _recorded(site: Site, count: int) -> None:
    site.write(urlset(pages(count)))
    assert site.run().code == 0


@pytest.mark.program
@pytest.mark.parametrize("words", [["state", "export"], ["state", "export", "--format", "csv"], ["state", "pending"], ["state", "show"]])
def test_a_reader_that_stops_early_ends_the_command_quietly(site: Site, words: list[str]) -> None:
    _recorded(site, 3000)
    site.write(urlset(pages(3000, lastmod="2024-08-{day:02d}T10:{minute:02d}:00Z")))
    assert site.run("--endpoint", "http://127.0.0.1:9/indexnow", "--retry-timeout", "0").code == 3  # something pending
    reader = subprocess.Popen(["head", "-c", "10"], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL)
    done = subprocess.run([*program(), *words, "--state", str(site.state)], stdout=reader.stdin, stderr=subprocess.PIPE, text=True)
    assert reader.stdin is not None
    reader.stdin.close()
    reader.wait()
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""  # no BrokenPipeError, no "Exception ignored"


@pytest.mark.program
def test_a_run_whose_report_has_no_reader_is_still_done_and_recorded(site: Site) -> None:
    _recorded(site, 2)
    site.write(urlset(pages(4)))
    assert site.fake is not None
    read, write = os.pipe()
    os.close(read)  # the report's reader is gone before the run starts
    env = dict(os.environ, INDEXNOW_KEY=KEY)
    argv = [*program(), str(site.sitemap), "--state", str(site.state), "--endpoint", site.fake.endpoint]
    done = subprocess.run(argv, stdout=write, stderr=subprocess.PIPE, env=env, text=True)
    os.close(write)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr and "BrokenPipe" not in done.stderr
    assert site.fake.delivered() == [f"{BASE}/p/2/", f"{BASE}/p/3/"]


@pytest.mark.program
def test_a_closed_stderr_does_not_stop_a_run(site: Site) -> None:
    """``notify-changes run 2>&1 | head -1``: the retry notices go nowhere, the run goes on."""
    from tests.fakeindexnow import status

    _recorded(site, 2)
    site.write(urlset(pages(4)))
    assert site.fake is not None
    site.fake.plan = [status(503), status(503)]  # two retry notices, written to a closed stderr
    read, write = os.pipe()
    os.close(read)
    env = dict(os.environ, INDEXNOW_KEY=KEY)
    argv = [*program(), str(site.sitemap), "--state", str(site.state), "--endpoint", site.fake.endpoint, "--format", "json"]
    done = subprocess.run(argv, stdout=subprocess.PIPE, stderr=write, env=env, text=True)
    os.close(write)
    assert done.returncode == 0
    assert '"submitted": 2' in done.stdout
    assert site.fake.delivered() == [f"{BASE}/p/2/", f"{BASE}/p/3/"]


def test_reading_the_settings_and_the_command_line_loads_no_reader_and_no_http_client() -> None:
    """#18: the option table, the rule list and argument parsing stay light; lxml, requests,
    PyYAML and psycopg are loaded when a run, a stamp or a database state needs them. Every
    module of notifier/settings/ is imported (#43: the configuration is one folder)."""
    code = (
        "import sys, pkgutil, importlib, notifier.settings, notifier.cli\n"
        "for each in pkgutil.iter_modules(notifier.settings.__path__):\n"
        "    importlib.import_module('notifier.settings.' + each.name)\n"
        "print(sorted({'lxml', 'requests', 'yaml', 'psycopg'} & set(sys.modules)))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]", done.stdout + done.stderr


def test_the_store_sits_below_the_configuration() -> None:
    """#43: no arrow runs back up between folders: ``settings/`` reads ``store/`` (which store a
    location is), so nothing in ``store/`` imports ``settings/``; the database URL both use is
    ``notifier/database.py``, a leaf."""
    import ast

    upward = []
    for path in sorted((Path(notifier.__file__).parent / "store").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("notifier.settings"):
                upward.append(f"{path.name}:{node.lineno} {node.module}")
    assert upward == []


def test_a_cancel_python_wrapped_on_its_way_out_is_exit_130_not_a_bug(site: Site, monkeypatch: pytest.MonkeyPatch) -> None:
    """A SIGINT that lands while a class is being made (an import in the first moments of a
    check) reaches the boundary as RuntimeError("Error calling __set_name__ ...") caused by
    the KeyboardInterrupt: seen in CI as exit 70 with a crash log. It is the cancel: 130."""

    def wrapped(*args: object, **kwargs: object) -> None:
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt as cancel:
            raise RuntimeError("Error calling __set_name__ on 'Field' instance '_found' in 'SiteFolder'") from cancel

    site.write(urlset(pages(1)))
    monkeypatch.setattr(notifier.pipeline.loop, "execute", wrapped)
    result = site.run()
    assert result.code == 130 and result.err.startswith("notify-changes: interrupted;"), result.err
    assert not (site.state.parent / LOG_NAME).exists()
    monkeypatch.setattr(notifier.pipeline.loop, "execute", _bug)
    assert site.run().code == 70  # a bug with no cancel behind it is still a bug
