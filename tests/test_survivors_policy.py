"""What notifier/pipeline/policy.py does that the mutation run found no test stating (#44): the
caps' arithmetic and their order, min-interval's boundary, ``state show``'s held line, the day's
count, and the hreflang alternates a changed page declares. Each test names the edit it catches."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

from notifier.announce import Announce
from notifier.changes import Change, Diff
from notifier.environment import Environment
from notifier.pipeline.context import Holds, Run
from notifier.pipeline.policy import add_alternates, count_sent, declared_alternates, held_now, hold_back, holds_note
from notifier.settings.settings import build_settings
from notifier.site.head import Head
from notifier.sitemap.files import SitemapFile
from notifier.store import PendingItem, State
from notifier.store.checks import SentToday
from notifier.store.records import new_record
from notifier.workers import Workers
from tests.conftest import BASE, KEY, Site, index, run_at, urlset

T0 = dt.datetime(2030, 6, 1, 12, 0, tzinfo=dt.UTC)
STAMP = "2030-06-01T12:00:00Z"
ONE = "https://one.example/indexnow"
TWO = "https://two.example/indexnow"


def _run(tmp_path: Path, endpoints: list[str], now: dt.datetime = T0, **options: Any) -> Run:
    """A run at ``now`` with ``options`` by their config names (``_`` for ``-``)."""
    cli: dict[str, Any] = {
        "sitemap": str(tmp_path / "sitemap.xml"),
        "state": str(tmp_path / "state.json"),
        "key": KEY,
        "endpoint": endpoints,
        **{name.replace("_", "-"): value for name, value in options.items()},
    }
    return Run(build_settings("run", cli, cwd=tmp_path), Environment(now=lambda: now), now, False, Workers(1))


def _url(n: int) -> str:
    return f"{BASE}/p/{n}/"


def _item(reason: str, since: str = STAMP) -> PendingItem:
    return PendingItem(reason=reason, since=since)


def _announced(state: State, at: dict[str, str]) -> None:
    """Each URL of ``at`` recorded as last acknowledged at its time."""
    state.records = {loc: new_record("2030-01-01", None, when) for loc, when in at.items()}


# -- hold_back: the caps -----------------------------------------------------------------------
def test_first_mode_caps_by_the_smallest_allowance_left_among_the_endpoints(tmp_path: Path) -> None:
    """fails if ``min(open_to, default=0)`` becomes ``max`` in pipeline/policy.py::hold_back"""
    run = _run(tmp_path, [ONE, TWO], endpoint_mode="first", per_day="3")
    state = State(pending={ONE: {_url(n): _item("added") for n in range(3)}, TWO: {_url(n): _item("added") for n in range(3)}})
    state.sent_today = {ONE: SentToday(day="2030-06-01", urls=1)}  # ONE may take 2 more today, TWO 3
    holds = hold_back(run, state)
    assert holds.at(ONE) == holds.at(TWO) == {_url(2): "over the [announce] per-day cap of 3: a later run sends it"}


def test_the_smaller_of_per_run_and_what_is_left_of_per_day_caps_a_run(tmp_path: Path) -> None:
    """fails if ``min(caps)`` becomes ``max`` in pipeline/policy.py::_allowance"""
    run = _run(tmp_path, [ONE], per_run="2", per_day="5")
    state = State(pending={ONE: {_url(n): _item("added") for n in range(4)}})
    assert list(hold_back(run, state).at(ONE)) == [_url(2), _url(3)]


def test_a_cap_counts_only_the_urls_min_interval_does_not_hold_already(tmp_path: Path) -> None:
    """fails if ``loc not in held`` becomes ``loc in held`` in pipeline/policy.py::_capped"""
    run = _run(tmp_path, [ONE], per_run="1", min_interval="1h")
    state = State(pending={ONE: {_url(n): _item("changed") for n in range(3)}})
    _announced(state, {_url(0): "2030-06-01T11:30:00Z"})  # half an hour ago: deferred
    held = hold_back(run, state).at(ONE)
    assert list(held) == [_url(0), _url(2)]  # p/1 goes: one URL, the cap
    assert held[_url(2)] == "over the [announce] per-run cap of 1: a later run sends it"


def test_a_cap_sends_added_then_changed_then_removed_oldest_first_whatever_the_pending_order(tmp_path: Path) -> None:
    """fails if ``free.sort(...)`` is left out in pipeline/policy.py::_capped"""
    run = _run(tmp_path, [ONE], per_run="2")
    pending = {
        _url(0): _item("removed", "2030-05-01T00:00:00Z"),
        _url(1): _item("changed", "2030-05-03T00:00:00Z"),
        _url(2): _item("changed", "2030-05-02T00:00:00Z"),
        _url(3): _item("added", "2030-05-04T00:00:00Z"),
    }
    held = hold_back(run, State(pending={ONE: pending})).at(ONE)
    assert sorted(held) == [_url(0), _url(1)]  # sent: the added p/3, then the older change p/2


def test_a_cap_sends_a_url_pending_as_pending_with_the_added_ones_before_a_change(tmp_path: Path) -> None:
    """A state may keep a URL pending for the reason ``pending`` (the state's format takes it):
    it ranks with the added ones. fails if the ``0`` of ``_ORDER.get(..., 0)`` becomes ``1`` in
    pipeline/policy.py::_capped"""
    run = _run(tmp_path, [ONE], per_run="1")
    pending = {_url(0): _item("changed", "2030-05-01T00:00:00Z"), _url(1): _item("pending", "2030-05-02T00:00:00Z")}
    assert list(hold_back(run, State(pending={ONE: pending})).at(ONE)) == [_url(0)]


def test_the_reason_names_per_day_when_the_days_allowance_is_the_smaller(tmp_path: Path) -> None:
    """fails if ``announce.per_run is not None and allowance == announce.per_run`` becomes ``or``,
    or loses ``allowance == announce.per_run``, in pipeline/policy.py::_capped"""
    run = _run(tmp_path, [ONE], per_run="5", per_day="2")
    held = hold_back(run, State(pending={ONE: {_url(n): _item("added") for n in range(3)}})).at(ONE)
    assert held == {_url(2): "over the [announce] per-day cap of 2: a later run sends it"}


# -- min-interval: its boundary -----------------------------------------------------------------
def test_a_run_exactly_min_interval_after_the_announcement_sends_it(tmp_path: Path) -> None:
    """fails if ``instant + announce.min_interval > now`` becomes ``>=`` in pipeline/policy.py::_deferred"""
    state = State(pending={ONE: {_url(0): _item("changed")}})
    _announced(state, {_url(0): "2030-06-01T11:00:00Z"})
    assert hold_back(_run(tmp_path, [ONE], now=T0, min_interval="1h"), state).at(ONE) == {}
    early = hold_back(_run(tmp_path, [ONE], now=T0 - dt.timedelta(seconds=1), min_interval="1h"), state).at(ONE)
    said = "announced at 2030-06-01T11:00:00Z, less than [announce] min-interval ago: sent by the first run after 2030-06-01T12:00:00Z"
    assert early == {_url(0): said}


def test_a_recorded_announcement_time_that_names_no_instant_defers_nothing(tmp_path: Path) -> None:
    """A state's timestamps are checked for their form only: February 30 reads, and names no
    instant to measure min-interval from. fails if ``instant is not None and ...`` loses
    ``instant is not None`` in pipeline/policy.py::_deferred (None + timedelta: a crash)"""
    state = State(pending={ONE: {_url(0): _item("changed"), _url(1): _item("changed")}})
    _announced(state, {_url(0): "2030-02-30T11:30:00Z", _url(1): "2030-06-01T11:30:00Z"})
    assert list(hold_back(_run(tmp_path, [ONE], min_interval="1h"), state).at(ONE)) == [_url(1)]


def test_state_show_holds_nothing_exactly_min_interval_after_the_announcement(tmp_path: Path) -> None:
    """fails if ``instant + announce.min_interval > now`` becomes ``>=`` in pipeline/policy.py::held_now"""
    announce = Announce(min_interval=dt.timedelta(hours=1))
    state = State(pending={ONE: {_url(0): _item("changed")}})
    _announced(state, {_url(0): "2030-06-01T11:00:00Z"})
    assert held_now(announce, state, ONE, T0) is None
    said = "[announce] min-interval: sent by the first run after 2030-06-01T12:00:00Z"
    assert held_now(announce, state, ONE, T0 - dt.timedelta(seconds=1)) == (1, said)


def test_state_show_holds_nothing_at_an_endpoint_with_nothing_pending(tmp_path: Path) -> None:
    """Its day used up, but nothing waits there: no held line.
    fails if ``not items or not announce.holds`` becomes ``and``, or loses ``not items``, in
    pipeline/policy.py::held_now"""
    announce = Announce(per_day=1)
    state = State(pending={ONE: {}, TWO: {_url(0): _item("added")}}, sent_today={ONE: SentToday(day="2030-06-01", urls=1)})
    assert held_now(announce, state, ONE, T0) is None
    state.sent_today[TWO] = SentToday(day="2030-06-01", urls=1)
    assert held_now(announce, state, TWO, T0) == (
        1,
        "its [announce] per-day cap of 1 is used up today: sent by a run from 2030-06-02T00:00:00Z",
    )


# -- the day's count ----------------------------------------------------------------------------
def test_the_days_count_adds_up_within_a_utc_day_and_starts_again_the_next(tmp_path: Path) -> None:
    """fails if ``at[:10]`` loses its upper bound or becomes ``at[:11]`` in pipeline/policy.py::count_sent"""
    state = State()
    count_sent(state, ONE, 2, "2030-06-01T10:00:00Z")
    count_sent(state, ONE, 3, "2030-06-01T23:59:59Z")
    assert state.sent_today == {"https://one.example/indexnow": SentToday(day="2030-06-01", urls=5)}
    count_sent(state, ONE, 1, "2030-06-02T00:00:00Z")
    assert state.sent_today["https://one.example/indexnow"] == SentToday(day="2030-06-02", urls=1)


def test_the_holds_line_counts_a_per_run_hold_as_per_run(tmp_path: Path) -> None:
    """fails if ``"per-run"`` becomes ``"XXper-runXX"`` in pipeline/policy.py::holds_note"""
    why = "over the [announce] per-run cap of 1: a later run sends it"
    assert holds_note(Holds({ONE: {_url(1): why}}, {})) == [
        f"1 URL waits for [announce] (1 by per-run): pending, not a failure (e.g. {_url(1)}: {why})"
    ]


# -- hreflang alternates ------------------------------------------------------------------------
def _file(name: str, alternates: dict[str, list[tuple[str, str]]]) -> SitemapFile:
    return SitemapFile(name, "urlset", alternates=alternates)


def test_only_the_changed_pages_alternates_are_kept_the_first_file_declaring_them_wins() -> None:
    """fails if ``loc in wanted and loc not in found`` becomes ``or``, or loses either side, in
    pipeline/policy.py::declared_alternates"""
    files = [
        _file("a.xml", {_url(0): [("de", f"{BASE}/de/0/")], _url(1): [("de", f"{BASE}/de/1/")]}),
        _file("b.xml", {_url(0): [("fr", f"{BASE}/fr/0/")]}),
    ]
    found = declared_alternates(files, [Change(_url(0), "changed", None, None)], None)
    assert found == {_url(0): [("de", f"{BASE}/de/0/", "the sitemap's xhtml:link")]}


def test_a_changed_page_whose_head_was_not_read_or_declares_none_adds_nothing() -> None:
    """fails if ``head is not None and head.alternates`` becomes ``or``, or loses either side, in
    pipeline/policy.py::declared_alternates"""
    heads = {
        _url(0): Head((), None, None, None, (("fr", "/fr/0/"),)),
        _url(1): Head((), None, None, None),
    }
    changed = [Change(_url(n), "changed", None, None) for n in range(3)]  # p/2: no head read
    assert declared_alternates([], changed, heads) == {_url(0): [("fr", f"{BASE}/fr/0/", "its page's head")]}


def test_an_alternate_two_changed_pages_declare_is_named_as_the_first_ones() -> None:
    """fails if ``href not in announced and href not in candidates`` loses ``href not in
    candidates`` in pipeline/policy.py::add_alternates"""
    shared = f"{BASE}/de/"
    declared = {_url(0): [("de", shared, "the sitemap's xhtml:link")], _url(1): [("de-AT", shared, "its page's head")]}
    diff = Diff(origins=[BASE], listed={shared}, alternates=declared)
    groups, why, _ = add_alternates(Announce(alternates=True), diff, [[Change(_url(n), "changed", None, None) for n in range(2)]])
    assert why == {shared: f"the de alternate of {_url(0)} (the sitemap's xhtml:link)"}
    assert groups[-1] == [Change(shared, "alternate", _url(0), "de")]


def test_an_alternate_listed_only_by_a_part_not_read_this_deploy_is_announced(site: Site) -> None:
    """The part that lists the alternate has the bytes it had: not read again, its URLs come
    from the state. fails if ``loc not in listed`` becomes ``loc in listed`` in
    pipeline/policy.py::_listed"""
    assert site.fake is not None
    english, german = f"{BASE}/en/tea/", f"{BASE}/de/tee/"

    def english_part(lastmod: str) -> str:
        return (
            '<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" '
            f'xmlns:xhtml="http://www.w3.org/1999/xhtml">\n<url><loc>{english}</loc><lastmod>{lastmod}</lastmod>'
            f'<xhtml:link rel="alternate" hreflang="de" href="{german}"/></url>\n</urlset>\n'
        )

    site.write(english_part("2024-05-01T10:00:00Z"), "sitemaps/en.xml")
    site.write(urlset({"/de/tee/": "2024-05-01T10:00:00Z"}), "sitemaps/de.xml")
    site.write(index({"/sitemaps/en.xml": None, "/sitemaps/de.xml": None}))
    assert site.run().code == 0
    site.write(english_part("2024-06-01T10:00:00Z"), "sitemaps/en.xml")
    report = run_at(site, T0, alternates=True)
    assert report.exit_code == 0 and sorted(report.submitted) == [german, english]
    assert report.alternates == {german: f"the de alternate of {english} (the sitemap's xhtml:link)"}
