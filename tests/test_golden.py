"""The state a deploy story writes, byte for byte: a restructuring must not change one byte.

A fixed story (an index of two parts and a text part, a baseline, changes, a removal, an
endpoint that fails, a retry that delivers, with --site-dir fingerprints) runs under a
fixed clock; after each step the state, JSON, SQLite and PostgreSQL, is compared with the files in
tests/golden/. Regenerate them only for an intended format change:
``NOTIFY_CHANGES_GOLDEN=write pytest tests/test_golden.py``.
"""

from __future__ import annotations

import datetime as dt
import os
import sqlite3
from pathlib import Path

import pytest

from notifier.database import DatabaseURL
from notifier.pipeline.loop import Environment, execute
from notifier.settings.settings import build_settings
from tests.conftest import KEY, Site, index, pages, urlset
from tests.fakeindexnow import status
from tests.faketime import FakeTime
from tests.postgres import site_rows

GOLDEN = Path(__file__).resolve().parent / "golden"
START = dt.datetime(2031, 3, 1, 8, 0, 0, tzinfo=dt.UTC)


def sqlite_dump(path: Path) -> bytes:
    """The SQLite state as SQL text, rows in order: what it holds, not how pages fell. The
    ledger table is left out, as the JSON store's ledger is a file of its own: a log of what
    the endpoints said, whose attempts and times follow the retries' jitter."""
    connection = sqlite3.connect(path)
    try:
        lines = [line for line in connection.iterdump() if not line.startswith(("CREATE TABLE ledger", 'INSERT INTO "ledger"'))]
        return "\n".join(lines).encode() + b"\n"
    finally:
        connection.close()


def build(site: Site, step: int) -> None:
    """The site at each step of the story."""
    first = pages(6, prefix="/a/")
    second = pages(4, prefix="/b/")
    if step >= 1:
        first["/a/1/"] = "2024-07-01T10:00:00Z"  # changed
        del second["/b/3/"]  # removed
        second["/b/new/"] = "2024-07-02"  # added
    if step >= 3:
        first["/a/5/"] = "2024-08-01T00:00:00+02:00"
    site.write(urlset(first), "sitemaps/a.xml")
    site.write(urlset(second), "sitemaps/b.xml")
    site.write("".join(f"http://www.shop-site.org/t/{n}/\n" for n in range(3 + (step >= 2))), "sitemaps/c.txt")
    site.write(index({"/sitemaps/a.xml": None, "/sitemaps/b.xml": None, "/sitemaps/c.txt": None}))
    for n in range(4):
        page = site.public / "t" / str(n) / "index.html"
        page.parent.mkdir(parents=True, exist_ok=True)
        page.write_text(f"<html>page {n}{' edited' if step >= 3 and n == 0 else ''}</html>")


@pytest.mark.parametrize("store", ["notify-changes.json", "notify-changes.sqlite", "notify-changes.postgresql"])
def test_the_state_bytes_of_a_deploy_story_are_unchanged(site: Site, store: str, request: pytest.FixtureRequest) -> None:
    assert site.fake is not None
    location = DatabaseURL(request.getfixturevalue("pg_url"), site="shop") if store.endswith(".postgresql") else None
    state = site.root / "state" / store
    clock = FakeTime(START)
    plans = [[], [], [status(503)] * 50, []]
    for step, plan in enumerate(plans):
        build(site, step)
        site.fake.plan = list(plan)
        cli = {
            "sitemap": str(site.sitemap),
            "state": str(state) if location is None else location.dsn,
            "site-name": "shop" if location is not None else None,
            "endpoint": [site.fake.endpoint],
            "key": KEY,
            "site-dir": str(site.public),
            "retry-timeout": 5,
            "rule": ["lastmod-missing=off", "change-without-lastmod=off"],
        }
        environment = Environment(now=clock.now, sleep=clock.sleep, clock=clock.clock)
        report = execute(build_settings("run", cli), environment)
        assert report.exit_code in (0, 3), report.violations
        clock.offset = 3600.0 * (step + 1)  # each deploy an hour after the last, whatever the retries waited
        if location is not None:  # the site's rows, in order (tests/postgres.py): the same story, the same values
            written = site_rows(location) or b""
        else:
            written = state.read_bytes() if store.endswith(".json") else sqlite_dump(state)
        written = written.replace(site.fake.endpoint.encode(), b"http://endpoint.test/indexnow")  # its port varies
        golden = GOLDEN / f"{store}.step{step}"
        if os.environ.get("NOTIFY_CHANGES_GOLDEN") == "write":
            golden.write_bytes(written)
        assert written == golden.read_bytes(), f"step {step}: the state differs from {golden.name}"
