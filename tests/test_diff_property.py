"""The cross-file diff against a reference that reads every file every time.

Deploys of up to three sitemap files under one index, URLs moving between files, files
left unchanged (so not re-read), files dropped, URLs listed by two files, and submissions
that fail (so URLs stay pending, some of them in files that are then not re-read). After
each deploy, what the run announced, what it counted unchanged and what stays pending must
equal what a plain reading of every file says.
"""

from __future__ import annotations

import datetime as dt
import os
import tempfile
from pathlib import Path
from typing import Any
from unittest import mock

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from notifier.pipeline.loop import Environment, execute
from notifier.settings.settings import build_settings
from notifier.store import read_state
from tests.conftest import BASE, KEY, index, urlset
from tests.fakeindexnow import FakeIndexNow, status
from tests.faketime import FakeTime

LOCS = [f"/u{n}/" for n in range(7)]
DATES = ["2024-01-01T00:00:00Z", "2024-02-01T00:00:00Z", "2024-03-01T00:00:00Z"]

# one deploy: a lastmod for each URL, and up to three files, each absent (None), the same
# bytes as at the previous deploy ("same"), or a list of URLs
FILE = st.one_of(st.none(), st.just("same"), st.lists(st.sampled_from(LOCS), min_size=1, max_size=5, unique=True))
DEPLOY = st.tuples(
    st.fixed_dictionaries({loc: st.sampled_from(DATES) for loc in LOCS}),
    st.tuples(FILE, FILE, FILE),
    st.booleans(),  # whether the endpoint fails this deploy
)


def listing(files: list[list[str] | None]) -> dict[str, None]:
    """Every URL the sitemap lists, in document order."""
    listed: dict[str, None] = {}
    for locs in files:
        listed.update(dict.fromkeys(locs or []))
    return listed


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(DEPLOY, min_size=2, max_size=4))
def test_the_cross_file_diff_equals_a_reading_of_every_file(deploys: list[tuple[dict[str, str], tuple[Any, ...], bool]]) -> None:
    fake = FakeIndexNow()
    fake.serve_key("www.shop-site.org", KEY)
    try:
        proxy = {"HTTP_PROXY": fake.url, "NO_PROXY": "127.0.0.1,localhost"}  # the key file comes from the fake
        with tempfile.TemporaryDirectory() as folder, mock.patch.dict(os.environ, proxy):
            _story(Path(folder), fake, deploys)
    finally:
        fake.close()


def _story(root: Path, fake: FakeIndexNow, deploys: list[tuple[dict[str, str], tuple[Any, ...], bool]]) -> None:
    public = root / "public"
    (public / "sitemaps").mkdir(parents=True)
    clock = FakeTime(dt.datetime(2031, 1, 1, tzinfo=dt.UTC))
    current: list[list[str] | None] = [None, None, None]
    lastmods: dict[str, str] = {}
    previous: dict[str, str] | None = None  # loc -> lastmod recorded at the last deploy
    pending: set[str] = set()
    for number, (dates, files, fails) in enumerate(deploys):
        for slot, spec in enumerate(files):
            if spec != "same" or current[slot] is None:
                current[slot] = None if spec == "same" else spec
            listed_here = current[slot]
            if listed_here is not None and spec != "same":
                # a rewritten file carries this deploy's dates; an unchanged one keeps its bytes
                for loc in listed_here:
                    lastmods[loc] = dates[loc]
        listed = listing(current)
        if not listed:
            current[0] = [LOCS[0]]
            lastmods.setdefault(LOCS[0], dates[LOCS[0]])
            listed = listing(current)
        # a URL listed by a file that was not rewritten keeps its old date; one in two files
        # takes the date of the rewritten one (both files then say the same)
        for slot, locs in enumerate(current):
            path = public / "sitemaps" / f"f{slot}.xml"
            if locs is None:
                path.unlink(missing_ok=True)
            elif files[slot] != "same" or not path.exists():
                path.write_text(urlset({loc: lastmods[loc] for loc in locs}))
        unchanged_files = [slot for slot, locs in enumerate(current) if locs is not None and files[slot] == "same"]
        for slot in unchanged_files:  # an unread file's dates must agree with the rewritten ones
            written = (public / "sitemaps" / f"f{slot}.xml").read_text()
            for loc in current[slot] or []:
                if f"<loc>{BASE}{loc}</loc>\n    <lastmod>{lastmods[loc]}</lastmod>" not in written:
                    path = public / "sitemaps" / f"f{slot}.xml"
                    path.write_text(urlset({each: lastmods[each] for each in current[slot] or []}))
                    break
        present = [slot for slot, locs in enumerate(current) if locs is not None]
        (public / "sitemap.xml").write_text(index({f"/sitemaps/f{slot}.xml": None for slot in present}))
        now = {loc: lastmods[loc] for loc in listed}

        fake.plan = [status(503)] * 50 if fails else []
        cli = {
            "sitemap": str(public / "sitemap.xml"),
            "state": str(root / "state.json"),
            "endpoint": [fake.endpoint],
            "key": KEY,
            "retry-timeout": 0,
            "max-removed": "100%",
            "rule": ["lastmod-regressed=off", "url-duplicate=off", "lastmod-bulk=off", "mass-removal=off"],
        }
        environment = Environment(now=clock.now, sleep=clock.sleep, clock=clock.clock)
        report = execute(build_settings("run", cli), environment)
        clock.offset = 3600.0 * (number + 1)
        assert report.exit_code in (0, 3), report.violations

        full = {f"{BASE}{loc}" for loc in now}
        if previous is None:  # the baseline: nothing announced
            assert {change.loc for change in report.added} == full and not report.changed and not report.removed
        else:
            added = {f"{BASE}{loc}" for loc in now if loc not in previous}
            removed = {f"{BASE}{loc}" for loc in previous if loc not in now}
            changed = {f"{BASE}{loc}" for loc in now if loc in previous and previous[loc] != now[loc]}
            assert {change.loc for change in report.added} == added, (number, deploys)
            assert {change.loc for change in report.removed} == removed, (number, deploys)
            assert {change.loc for change in report.changed} == changed, (number, deploys)
            waiting = pending - added - changed - removed
            unchanged = len(now) - len(added) - len(changed) - len({loc for loc in waiting if loc in full})
            assert report.unchanged == unchanged, (number, report.unchanged, unchanged, deploys)
            announced = added | changed | removed
            pending = (pending | announced) if fails else set()
        state = read_state(root / "state.json")
        assert state is not None
        assert set(state.pending.get(fake.endpoint, {})) == pending, (number, deploys)
        recorded = state.all_urls()
        assert {loc: record[0] for loc, record in recorded.items()} == {f"{BASE}{loc}": date for loc, date in now.items()}
        previous = now
