"""``--since`` of ``state stats``, ``state report`` and ``crawled``: a window that holds no
time (``0d``, a date after now) is a usage error that says so, not a report of zeros."""

from __future__ import annotations

import datetime as dt

import pytest

from notifier.cli import main
from notifier.errors import UsageError
from notifier.stats import since_of
from tests.conftest import Site, pages, urlset

NOW = dt.datetime(2030, 6, 1, 12, 0, tzinfo=dt.UTC)


@pytest.mark.parametrize(("text", "said"), [("0d", "an empty window"), ("0h", "an empty window"), ("2030-06-02", "after now")])
def test_an_empty_window_is_refused(text: str, said: str) -> None:
    with pytest.raises(UsageError, match=f"--since '{text}': .*{said}"):
        since_of(text, NOW)


@pytest.mark.parametrize(
    ("text", "since"),
    [
        ("1d", NOW - dt.timedelta(days=1)),
        ("2030-05-01", dt.datetime(2030, 5, 1, tzinfo=dt.UTC)),
        ("all", None),
        ("1s", NOW - dt.timedelta(seconds=1)),
    ],
)
def test_a_window_that_holds_time_is_taken(text: str, since: dt.datetime | None) -> None:
    assert since_of(text, NOW) == since


def test_the_commands_say_it_in_one_line_with_exit_2(site: Site, capsys: pytest.CaptureFixture[str]) -> None:
    site.write(urlset(pages(1)))
    assert site.run().code == 0
    for command in (["state", "stats"], ["crawled", str(site.root / "access.log")]):
        (site.root / "access.log").write_text("")
        capsys.readouterr()
        assert main([*command, "--since", "0d", "--state", str(site.state)]) == 2
        err = capsys.readouterr().err
        assert "--since '0d': an empty window" in err and len(err.strip().splitlines()) == 1, err
