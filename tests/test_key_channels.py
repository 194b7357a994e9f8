"""The key file's URL is the key (``http://host/KEY.txt``): every channel that may name it
shows four characters at most (issue #39 item 5) — the lines said before each retry wait,
the progress and step lines, the report's notes and batches (text, JSON, github), the
ledger, the state, a dry run and the crash log."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from notifier.environment import Environment
from notifier.pipeline.loop import execute
from notifier.report import Report
from notifier.settings.settings import build_settings
from tests.conftest import HOST, KEY, Site, pages, urlset
from tests.fakeindexnow import FakeIndexNow
from tests.faketime import FakeTime
from tests.test_faults import NOW

DERIVE_SECRET = "a-derive-secret-of-32-characters"


@pytest.fixture
def closed_port() -> Iterator[int]:
    """A loopback port nothing listens on: a proxy (or key file host) that refuses every connection."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        yield listener.getsockname()[1]


class Said:
    """Every line a run says as it goes: notices (stderr), progress, steps."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def environment(self, fake_time: FakeTime) -> Environment:
        return Environment(
            now=fake_time.now,
            sleep=fake_time.sleep,
            clock=fake_time.clock,
            notice=self.lines.append,
            progress=self.lines.append,
            step=self.lines.append,
        )


def _run(site: Site, fake: FakeIndexNow, said: Said, **options: Any) -> Report:
    cli: dict[str, Any] = {
        "sitemap": str(site.sitemap),
        "state": str(site.state),
        "endpoint": [fake.endpoint],
        "key": KEY,
        "retry-timeout": 30,
        "request-timeout": 2,
        **options,
    }
    return execute(build_settings("run", cli, cwd=site.root), said.environment(FakeTime(NOW)))


def _shown(report: Report) -> str:
    texts = [*report.notes, *(batch.message for batch in report.batches), *(violation.message for violation in report.violations)]
    return "\n".join(texts)


def _changed(site: Site) -> None:
    site.write(urlset(pages(2)))
    assert site.run().code == 0
    site.write(urlset(pages(3)))


def _everything_written(site: Site) -> str:
    return "".join(path.read_bytes().decode("utf-8", "replace") for path in site.state.parent.iterdir() if path.is_file())


@pytest.mark.parametrize("failure", ["HTTP 503", "connection failed"])
def test_the_key_file_retry_lines_show_four_characters_of_the_key(
    site: Site, fake: FakeIndexNow, failure: str, closed_port: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The site does not answer its key file yet (a deploy still propagating): each retry
    line names the key file with the key cut, and so does the problem the run ends with."""
    _changed(site)
    if failure == "HTTP 503":
        fake.get_status = 503
    else:
        monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{closed_port}")  # the site's address refuses
    said = Said()
    report = _run(site, fake, said)
    assert report.exit_code == 3
    retries = [line for line in said.lines if "retrying in" in line]
    assert retries and all(line.startswith(f"key file http://{HOST}/{KEY[:4]}….txt: {failure}, retrying in") for line in retries), (
        said.lines
    )
    assert f"key file http://{HOST}/{KEY[:4]}….txt could not be fetched" in _shown(report)
    for text in (*said.lines, _shown(report), _everything_written(site)):
        assert KEY not in text


def test_a_derived_key_and_a_key_location_are_cut_in_the_retry_lines(
    site: Site, fake: FakeIndexNow, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A key derived from a secret ([keys] derive), served at a --key-location of its own: the
    retry lines name neither the key nor the secret."""
    from notifier.protocol import derive_key

    monkeypatch.setenv("INDEXNOW_SECRET", DERIVE_SECRET)
    derived = derive_key(DERIVE_SECRET, HOST)
    (site.root / "notify-changes.toml").write_text('[keys]\nderive = "INDEXNOW_SECRET"\n')
    _changed(site)
    fake.get_status = 503
    fake.serve_key(HOST, derived, f"/site-key-{derived}.txt")
    said = Said()
    report = _run(
        site,
        fake,
        said,
        key=None,
        config=str(site.root / "notify-changes.toml"),
        **{"key-location": f"http://{HOST}/site-key-{derived}.txt"},
    )
    assert report.exit_code == 3
    retries = [line for line in said.lines if "retrying in" in line]
    assert retries and all(f"/site-key-{derived[:4]}….txt" in line for line in retries), (said.lines, report)
    for text in (*said.lines, _shown(report), _everything_written(site)):
        assert derived not in text and DERIVE_SECRET not in text


@pytest.mark.parametrize("style", ["text", "json", "github"])
def test_a_key_file_that_fails_is_named_without_the_key_in_every_format(
    site: Site, fake: FakeIndexNow, style: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The command line: stdout (the report), stderr, the job summary and outputs, a dry run."""
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(tmp_path / "summary.md"))
    monkeypatch.setenv("GITHUB_OUTPUT", str(tmp_path / "outputs.txt"))
    _changed(site)
    fake.get_status = 503
    dry = site.run("--dry-run", "--format", style)
    result = site.run("--format", style)
    assert dry.code == 0 and result.code == 3, result
    assert f"{KEY[:4]}….txt" in result.out
    written = "".join(path.read_text() for path in tmp_path.glob("*.txt")) + "".join(path.read_text() for path in tmp_path.glob("*.md"))
    shown = [
        line for line in (result.out + dry.out).splitlines() if not line.startswith("::add-mask::")
    ]  # GitHub needs it whole to mask it
    assert KEY not in "\n".join(shown) + result.err + dry.err + written + _everything_written(site)


def test_a_crash_while_the_key_file_is_fetched_logs_it_cut(site: Site, monkeypatch: pytest.MonkeyPatch) -> None:
    """An internal error whose text holds the key file's URL: the stderr line and the crash log cut the key."""
    import notifier.indexnow

    def bug(self: object, url: str, key: str, **_: object) -> None:
        raise RuntimeError(f"could not fetch {url}")

    _changed(site)
    monkeypatch.setattr(notifier.indexnow.Client, "_check_key_file", bug)
    result = site.run()
    assert result.code == 70, result
    log = next(site.state.parent.glob("notify-changes-crash*.log"))
    assert f"could not fetch http://{HOST}/{KEY[:4]}….txt" in log.read_text()
    assert KEY not in log.read_text() + result.err + result.out
