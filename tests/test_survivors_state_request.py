"""The state command's option checks no test stated (commands/state_request.py, #44): each
test runs the command line a user types and names the edit it fails with."""

from __future__ import annotations

import contextlib
import io
import json

from notifier.cli import main
from tests.conftest import Site, pages, urlset


def _state(site: Site, *argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["state", *argv, *site.state_args])
    return int(code), out.getvalue(), err.getvalue()


def _recorded(site: Site) -> Site:
    site.write(urlset(pages(2)))
    assert site.run().code == 0
    return site


def test_export_writes_json_by_default_and_refuses_text(site: Site) -> None:
    """(edit: the ``"export"`` of the text check renamed, which lets ``--format text`` through)"""
    _recorded(site)
    code, out, _ = _state(site, "export")
    assert code == 0 and json.loads(out)
    code, out, err = _state(site, "export", "--format", "text")
    assert code == 2 and out == "" and "state export: --format json or csv" in err, err


def test_bot_ranges_without_a_report_is_refused_for_that(site: Site) -> None:
    """``state show --bot-ranges``: the option belongs to ``state report`` (edit: the
    ``--bot-ranges`` side of the first check dropped, which says the wrong thing: that --log is missing)."""
    _recorded(site)
    ranges = site.root / "ranges.json"
    ranges.write_text('{"prefixes": []}')
    code, _, err = _state(site, "show", "--bot-ranges", str(ranges))
    assert code == 2 and "only `state report --html FILE --log LOG` takes them" in err, err


def test_a_report_with_its_logs_and_bot_ranges_reads_the_ranges(site: Site) -> None:
    """``--bot-ranges`` with ``--log`` is taken (edit: the ``not --log`` side dropped refuses it),
    and the ranges are read (edit: the ranges dropped, so that a file that cannot be read goes unsaid)."""
    _recorded(site)
    log = site.root / "access.log"
    log.write_text("")
    page = site.root / "report.html"
    code, _, err = _state(site, "report", "--html", str(page), "--log", str(log), "--bot-ranges", str(site.root / "missing.json"))
    assert code == 2 and "missing.json: cannot read it" in err, err
    ranges = site.root / "ranges.json"
    ranges.write_text('{"prefixes": [{"ipv4Prefix": "157.55.39.0/24"}]}')
    code, _, err = _state(site, "report", "--html", str(page), "--log", str(log), "--bot-ranges", str(ranges))
    assert code == 0, err
    assert page.exists()
