"""Every option and config key fed its extremes: one clear line and exit 2, or a run; never a traceback.

The values people (and scripts) really produce: 0, negative, huge, inf, nan, empty, the
wrong type. Whatever the value, ``main`` returns an exit code; a refusal is one line on
stderr that names the option or the config file and key at fault.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from notifier.cli import main
from notifier.settings.options import OPTIONS
from notifier.settings.settings import CONVERTERS
from tests.conftest import Site, pages, urlset

CLI_VALUES = ["0", "-1", "-0.5", "99999999999999999999999", "1e400", "inf", "-inf", "nan", "", "abc", "since:9999999999d", "999999999d"]
TOML_VALUES = ["0", "-1", "99999999999999999", "1e300", "inf", "-inf", "nan", '""', '"abc"', '"999999999d"', "[1, 2]", "{ a = 1 }", "true"]
FLAGS = {option.name for option in OPTIONS if option.kind == "flag"}  # options without a value on the command line


def dry_run(site: Site, *args: str) -> tuple[int, str, str]:
    site.capsys.readouterr()
    code = main(["run", str(site.sitemap), "--state", str(site.state), "--dry-run", *args])
    captured = site.capsys.readouterr()
    return code, captured.out, captured.err


def assert_one_clear_line(code: int, err: str, blame: str) -> None:
    assert code in (0, 1, 2), code
    if code == 2:
        lines = err.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("notify-changes: error: "), err
        assert blame in lines[0] or "not a git repository" in lines[0], (blame, lines[0])  # a valid [history], no repo
    assert "Traceback" not in err


@pytest.mark.parametrize("name", sorted(set(CONVERTERS) - FLAGS - {"sitemap"}))
@pytest.mark.parametrize("value", CLI_VALUES)
def test_every_option_takes_any_value_without_a_traceback(offline_site: Site, name: str, value: str) -> None:
    offline_site.write(urlset(pages(3)))
    code, _, err = dry_run(offline_site, f"--{name}", value)
    assert_one_clear_line(code, err, f"--{name}")


@pytest.mark.parametrize(
    "key", [*sorted(set(CONVERTERS) - {"sitemap"}), "bulk.min-urls", "bulk.ratio", "bulk.site-ratio", "history.tolerance", "history.repo"]
)
@pytest.mark.parametrize("value", TOML_VALUES)
def test_every_config_key_takes_any_value_without_a_traceback(offline_site: Site, key: str, value: str, tmp_path: Path) -> None:
    offline_site.write(urlset(pages(3)))
    table, _, name = key.rpartition(".")
    extra = 'sources = ["content/{path}.md"]\n' if table == "history" else ""
    body = f"[{table}]\n{extra}{name} = {value}\n" if table else f"{name} = {value}\n"
    (tmp_path / "notify-changes.toml").write_text(body)
    code, _, err = dry_run(offline_site)
    assert_one_clear_line(code, err, "notify-changes.toml")


def test_an_honest_config_of_every_kind_is_taken(offline_site: Site, tmp_path: Path) -> None:
    offline_site.write(urlset(pages(3)))
    (tmp_path / "notify-changes.toml").write_text(
        'batch-size = 500\nretry-timeout = 60\nrequest-timeout = 10.5\nclock-skew = "2h"\nmax-removed = "30%"\n'
        'initial = "since:14d"\nendpoint = "https://api.indexnow.org/indexnow"\n[bulk]\nmin-urls = 20\nratio = 0.6\n'
    )
    code, out, err = dry_run(offline_site)
    assert code == 0 and err == "", err
    assert "would record 3 URLs, announcing the 0 whose lastmod is within 14d" in out


def test_a_wrong_type_in_the_config_file_names_the_file_and_key(offline_site: Site, tmp_path: Path) -> None:
    offline_site.write(urlset(pages(3)))
    config = tmp_path / "notify-changes.toml"
    config.write_text('batch-size = "lots"\n')
    code, _, err = dry_run(offline_site)
    assert code == 2 and f"{config}: batch-size: 'lots' is not a whole number" in err and "--batch-size" not in err


# -- bounded work on any build (#16) -----------------------------------------------------------
@pytest.mark.parametrize("kind", ["fifo", "device", "folder"])
def test_a_sitemap_path_that_is_not_a_regular_file_is_named(offline_site: Site, tmp_path: Path, kind: str) -> None:
    """A FIFO would block the run for ever; /dev/zero would be read as UTF-16."""
    if kind == "fifo":
        path = tmp_path / "sitemap.xml"
        os.mkfifo(path)
        said = "is a named pipe (FIFO), not a sitemap file"
    elif kind == "device":
        path = tmp_path / "zero.xml"
        path.symlink_to("/dev/zero")  # after symlinks
        said = "is a character device, not a sitemap file"
    else:
        path = tmp_path / "folder.xml"
        path.mkdir()
        said = "is a folder (pass the sitemap file inside it)"
    result = offline_site.run(command="check", sitemap=str(path))
    assert result.code == 2 and said in result.err and result.err.count("\n") == 1, result.err


@pytest.mark.slow
@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="reads the peak memory from Linux's /proc")
def test_a_huge_file_listed_in_the_sitemap_is_hashed_in_pieces(tmp_path: Path) -> None:
    """A 2 GB video listed in the sitemap once took 2.1 GB to fingerprint: memory stays flat."""
    video = tmp_path / "film.mp4"
    with video.open("wb") as handle:
        handle.truncate(384 * 1024 * 1024)  # sparse: no disk space taken
    probe = textwrap.dedent(
        f"""
        import hashlib
        from notifier.site.pages import _read_page
        page = _read_page({str(video)!r}, True, None)
        expected = hashlib.blake2b(digest_size=16)
        with open({str(video)!r}, "rb") as handle:
            while chunk := handle.read(1 << 20):
                expected.update(chunk)
        assert page.fingerprint == expected.hexdigest()  # the same digest the state already holds
        # VmHWM, this process's own peak: ru_maxrss would carry the forking test run's peak over exec
        print(next(line.split()[1] for line in open("/proc/self/status") if line.startswith("VmHWM:")))
        """
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    peak_kib = int(done.stdout)
    assert peak_kib < 150 * 1024, f"peak {peak_kib // 1024} MiB for a 384 MiB file"
