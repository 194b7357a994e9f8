"""The state model's decisions the whole suite let a mutant past (store/model.py, #44): the
acknowledged time written into a part this run did not make, a part with nothing stored, which
parts another process may read, and the state's "updated" moving with a delivery replayed
from a killed run's journal. Each test names the edit it fails with."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from notifier.store import JsonStore, RecordedPart, State, read_state
from notifier.store.jsonfile import load_state
from tests.conftest import BASE, Site, urlset
from tests.fakeindexnow import status
from tests.test_pinned_two import _at

DAY = dt.timedelta(days=1)
T0 = dt.datetime(2030, 1, 1, 12, tzinfo=dt.UTC)


def _record(path: Path, loc: str) -> list[object]:
    state = read_state(path)
    assert state is not None
    for part in state.parts:
        if loc in part.urls():
            return list(part.urls()[loc])
    raise AssertionError(f"{loc} is in no part")


def test_a_url_pending_since_an_earlier_run_gets_its_time_in_the_part_that_holds_it(site: Site) -> None:
    """The URL went out a day after it changed, from a part this run left as recorded: its
    record says when the endpoint took it (edits: ``settle_submitted()`` left out, or its
    ``self.submitted = {}``)."""
    assert site.fake is not None
    site.write(urlset({"/a/": "2030-01-01T10:00:00Z", "/b/": "2030-01-01T10:00:00Z"}))
    assert _at(site, T0).exit_code == 0
    site.write(urlset({"/a/": "2030-01-02T10:00:00Z", "/b/": "2030-01-01T10:00:00Z"}))
    site.fake.plan = [status(503)] * 20
    assert _at(site, T0 + DAY, **{"on-submit-error": "warn"}).pending == [f"{BASE}/a/"]
    assert _record(site.state, f"{BASE}/a/")[2] is None
    site.fake.plan = []
    report = _at(site, T0 + 2 * DAY)  # the same sitemap: its one part is kept as recorded
    assert report.submitted == [f"{BASE}/a/"] and report.pending == []
    assert _record(site.state, f"{BASE}/a/")[2] == "2030-01-03T12:00:00Z"
    assert _record(site.state, f"{BASE}/b/")[2] is None
    again = _at(site, T0 + 3 * DAY)
    assert again.submitted == [] and _record(site.state, f"{BASE}/a/")[2] == "2030-01-03T12:00:00Z"


def test_a_part_with_nothing_stored_has_no_records_and_no_origins() -> None:
    """(edits: ``self._bytes() or b"{}"``'s default dropped; ``origins or []``'s default dropped)"""
    part = RecordedPart("part.xml", "0" * 32)
    assert part.urls() == {}
    assert RecordedPart("part.xml", "0" * 32, raw=b"{}", count=0).meta()["origins"] == []


def test_only_a_part_still_as_stored_is_read_by_another_process(tmp_path: Path) -> None:
    """A part with no way to be read elsewhere has no reader (edit: the ``_elsewhere is None``
    side dropped: a worker handed a reader of nothing); a part decoded here has none either,
    its records may have changed (edit: the ``_urls is not None`` side dropped)."""
    assert RecordedPart("part.xml", "0" * 32, raw=b"{}", count=0).reader() is None
    path = tmp_path / "state.json"
    state = State(updated="2024-05-01T00:00:00Z")
    state.parts.append(RecordedPart("part.xml", "0" * 32, {f"{BASE}/{n}/": ["2024-05-01", None, None] for n in range(3)}))
    JsonStore(path).save(state)
    loaded = load_state(path)
    assert loaded is not None
    part = loaded.parts[0]
    assert isinstance(part, RecordedPart) and part.reader() is not None
    part.urls()[f"{BASE}/0/"][0] = "2024-06-01"
    assert part.reader() is None


def test_a_delivery_replayed_from_the_journal_moves_updated_on(tmp_path: Path) -> None:
    """A killed run's acknowledged batch, read back from the journal: the state was last
    changed then (edit: ``state.updated = at`` removed in ``apply_delivery``)."""
    path = tmp_path / "state.json"
    endpoint = "https://api.indexnow.org/indexnow"
    state = State(updated="2030-01-01T12:00:00Z", pending={endpoint: {}})
    records = {f"{BASE}/a/": ["2030-01-01", "2030-01-01T12:00:00Z", None]}
    state.parts.append(RecordedPart("part.xml", "0" * 32, records))
    JsonStore(path).save(state)
    JsonStore(path).record_delivered(state, endpoint, [f"{BASE}/a/"], "2030-01-01T12:05:00Z")
    loaded = load_state(path)  # the journal is read back, as after a kill
    assert loaded is not None and loaded.updated == "2030-01-01T12:05:00Z"
