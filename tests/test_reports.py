"""What people read: the text report's order, colour only on a terminal, progress never in logs."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from notifier.report import Report, render_text
from notifier.rules import Violation
from notifier.terminal import progress_printer, use_colour
from tests.conftest import BASE, HOST, Site, pages, recorded_pending, urlset
from tests.fakeindexnow import status


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_summary_first_then_findings_then_batches(site: Site) -> None:
    site.write(urlset(pages(2)))
    site.run()
    site.write(urlset(pages(3) | {"/undated/": None}))
    assert site.fake is not None
    site.fake.plan = [status(200)]
    lines = site.run().out.splitlines()
    assert lines[0] == "2 added, 0 changed, 0 removed, 2 submitted, 0 pending"
    assert lines[1].startswith("warn[lastmod-missing]")
    assert lines[2].startswith(f"batch {site.fake.endpoint} {HOST}: 2 URLs delivered (HTTP 200)")


def test_colour_only_on_a_terminal_and_never_with_no_color() -> None:
    assert use_colour(Terminal(), {}) is True
    assert use_colour(Terminal(), {"NO_COLOR": "1"}) is False
    assert use_colour(io.StringIO(), {}) is False
    assert use_colour(Terminal(), {"TERM": "dumb"}) is False
    report = Report(command="check", violations=[Violation("lastmod-missing", "warn", f"{BASE}/a/", "no lastmod")])
    assert "\x1b[33mwarn[lastmod-missing]\x1b[0m" in render_text(report, colour=True)
    assert "\x1b[" not in render_text(report, colour=False)


def test_progress_counts_on_a_terminal_and_is_a_line_a_step_in_logs() -> None:
    terminal = Terminal()
    show, step = progress_printer(terminal, {})
    assert show is not None
    show("reading sitemap.xml")
    step("sending batch 1/3 to api.indexnow.org: 10000 URLs of www.shop-site.org")
    assert terminal.getvalue() == (
        "\r\x1b[Kreading sitemap.xml\r\x1b[Ksending batch 1/3 to api.indexnow.org: 10000 URLs of www.shop-site.org"
    )  # one line, rewritten in place
    for stream, env in ((Terminal(), {"CI": "true"}), (Terminal(), {"GITHUB_ACTIONS": "true"}), (io.StringIO(), {})):
        show, step = progress_printer(stream, env)
        assert show is None  # no status line in a log
        step("read part 2/20: sitemaps/part-2.xml.gz, 50,000 URLs")
        step("sending batch 1/5 to api.indexnow.org: 10000 URLs of www.shop-site.org")
        assert stream.getvalue().splitlines() == [
            "notify-changes: read part 2/20: sitemaps/part-2.xml.gz, 50,000 URLs",
            "notify-changes: sending batch 1/5 to api.indexnow.org: 10000 URLs of www.shop-site.org",
        ]


def test_a_long_run_in_a_log_says_each_part_and_each_batch_as_it_goes(site: Site, capsys: pytest.CaptureFixture[str]) -> None:
    """Not a terminal (CI): a line per part of the index read and per batch sent, in order."""
    from tests.conftest import index

    assert site.fake is not None
    for number in range(3):
        site.write(urlset(pages(4, prefix=f"/s{number}/")), f"sitemaps/part-{number}.xml")
    site.write(index({f"/sitemaps/part-{number}.xml": None for number in range(3)}))
    result = site.run("--initial", "submit", "--batch-size", "5")
    assert result.code == 0, result.err
    lines = result.err.splitlines()
    parts = [line for line in lines if " part " in line]
    assert len(parts) == 3 and all(f"part {n + 1}/3: " in parts[n] for n in range(3))
    assert all(line.endswith("4 URLs") for line in parts if line.startswith("notify-changes: read part"))
    batches = [line for line in lines if "sending batch" in line]
    assert [line.split("sending batch ", 1)[1].split(" ", 1)[0] for line in batches] == ["1/3", "2/3", "3/3"]
    assert lines.index(parts[-1]) < lines.index(batches[0])


def test_verify_live_leaves_batches_pending_until_the_pages_are_served(site: Site) -> None:
    assert site.fake is not None
    site.write(urlset(pages(2)))
    site.run()
    site.write(urlset(pages(4)))
    result = site.run("--verify-live", "5")
    assert result.code == 3 and "not serving the new pages yet" in result.out and "HTTP 404" in result.out
    assert site.fake.posts == []
    assert len(recorded_pending(site.state)[site.fake.endpoint]) == 2
    site.fake.sites[HOST].update({"/p/2/": b"<html>2</html>", "/p/3/": b"<html>3</html>"})
    result = site.run("--verify-live", "5")
    assert result.code == 0, result.out
    assert sorted(site.fake.delivered()) == [f"{BASE}/p/2/", f"{BASE}/p/3/"]


def test_no_byte_of_the_sitemap_can_begin_a_line_in_github_mode(site: Site, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A loc carrying newlines (``&#10;`` in XML) must not start a workflow command: not on
    stdout, not on stderr, not in the job summary."""
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    site.write(urlset(pages(2)))
    assert site.run().code == 0
    injected = "/a&#10;::notice::pwned&#13;::set-output name=x::y&#x2028;::warning::z/"
    site.write(
        '<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
        + "".join(f"<url><loc>{BASE}{loc}</loc><lastmod>2024-06-01T00:00:00Z</lastmod></url>" for loc in ["/p/0/", "/p/1/", injected])
        + "</urlset>"
    )
    outputs = [site.check(), site.run("--dry-run", "--rule", "url-invalid=warn"), site.run("--rule", "url-invalid=warn")]
    assert [result.code for result in outputs] == [1, 0, 0]
    text = "\n".join(result.out + "\n" + result.err for result in outputs) + "\n" + summary.read_text()
    assert "pwned" in text  # it is shown, escaped
    for line in text.splitlines():
        assert not line.lstrip().startswith(("::notice", "::set-output", "::warning::z")), line


def test_control_characters_never_reach_a_terminal() -> None:
    report = Report(command="check", violations=[Violation("url-invalid", "error", f"{BASE}/a\x1b[2J\rb", "bad\nthing")])
    text = render_text(report, colour=True)
    assert "\x1b[2J" not in text and "\r" not in text and "\\x1b[2J" in text and "bad\\nthing" in text


def test_the_job_summary_says_first_10_only_when_it_leaves_some_out(site: Site, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """One changed page is "Changed (1)", not "first 1 of 1"; twelve added are the first 10 of 12."""
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    site.write(urlset(pages(12)))
    assert site.run("--initial", "submit").code == 0
    assert "**Added** (first 10 of 12):" in summary.read_text()
    site.write(urlset(pages(12) | {"/p/3/": "2024-07-01T00:00:00Z"}))
    assert site.run().code == 0
    last = summary.read_text().rpartition("### notify-changes")[2]
    assert "**Changed** (1):" in last and "first 1 of 1" not in last, last


def test_the_job_summary_says_what_announce_did(site: Site, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Pages the config's [announce] kept out or back are in the job summary (a count each), so a
    deploy that sent fewer URLs than it changed says why; a run it did nothing to has no such line.
    Faulty edit: ``_details`` without the policy line."""
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    site.write(urlset(pages(3) | {"/drafts/a/": "2024-05-01T00:00:00Z"}))
    assert site.run("--initial", "submit").code == 0
    assert "[announce]" not in summary.read_text()
    site.write(urlset(pages(3) | {"/drafts/a/": "2024-07-01T00:00:00Z", "/drafts/b/": "2024-07-01T00:00:00Z"}))
    assert site.run("--exclude", "/drafts/**").code == 0
    last = summary.read_text().rpartition("### notify-changes")[2]
    assert "**[announce]:** 2 excluded (recorded, never announced)." in last, last
