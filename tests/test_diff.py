"""The diff: every URL in exactly one group; a recorded run diffs empty."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from notifier.pipeline.diff import Diff, compute_diff, same_instant
from notifier.pipeline.pending import apply_to_state
from notifier.sitemap.reader import Entry
from notifier.store import PendingItem, State, new_record

ENDPOINT = "https://api.indexnow.org/indexnow"
NOW = "2024-06-01T00:00:00Z"

locs = st.sampled_from([f"https://a.org/{n}/" for n in range(12)])
lastmods = st.one_of(st.none(), st.sampled_from(["2024-01-01", "2024-01-01T00:00:00Z", "2024-02-01", "2024-03-01T10:00:00+02:00"]))
sitemaps = st.lists(st.tuples(locs, lastmods), max_size=12)
states = st.builds(
    lambda urls, pending: State.from_urls(
        {loc: new_record(lastmod=lastmod) for loc, lastmod in urls},
        pending={ENDPOINT: {loc: PendingItem(reason="changed", since=NOW) for loc in pending}} if pending else {},
    ),
    st.lists(st.tuples(locs, lastmods), max_size=12),
    st.lists(locs, max_size=5),
)


def entries(pairs: list[tuple[str, str | None]]) -> list[Entry]:
    return [Entry(loc, lastmod, 0, n) for n, (loc, lastmod) in enumerate(pairs)]


@given(sitemaps, states)
def test_every_url_lands_in_exactly_one_group(pairs: list[tuple[str, str | None]], state: State) -> None:
    recorded = {loc: record[0] for loc, record in state.all_urls().items()}
    waiting = set(state.pending.get(ENDPOINT, {}))
    diff = compute_diff(entries(pairs), state, endpoints=[ENDPOINT])
    groups = [c.loc for c in diff.added + diff.changed + diff.removed + diff.pending]
    assert len(groups) == len(set(groups))
    current: dict[str, str | None] = {}
    for loc, lastmod in pairs:
        current.setdefault(loc, lastmod)  # the first listing wins
    # the groups by a plain reading: which group each URL belongs to, not only how many
    added = {loc for loc in current if loc not in recorded}
    removed = {loc for loc in recorded if loc not in current} if current else set()
    changed = {loc for loc, new in current.items() if loc in recorded and new is not None and not same_instant(recorded[loc], new)}
    pending = waiting - added - changed - removed
    assert {c.loc for c in diff.added} == added
    assert {c.loc for c in diff.removed} == removed
    assert {c.loc for c in diff.changed} == changed
    assert {c.loc for c in diff.pending} == pending
    everything = set(current) | (set(recorded) if current else set()) | waiting
    assert diff.unchanged == len(everything) - len(groups)


@given(sitemaps)
def test_a_state_diffed_with_itself_is_empty(pairs: list[tuple[str, str | None]]) -> None:
    current = dict(pairs[::-1])  # the first entry of each loc wins, as in the sitemap
    state = State.from_urls({loc: new_record(lastmod=lastmod) for loc, lastmod in current.items()})
    diff = compute_diff(entries(pairs), state, endpoints=[ENDPOINT])
    assert not any(diff.announced) and diff.pending == []


@given(sitemaps, states)
def test_recording_a_run_then_diffing_again_is_empty(pairs: list[tuple[str, str | None]], state: State) -> None:
    diff = compute_diff(entries(pairs), state, endpoints=[ENDPOINT])
    apply_to_state(diff, state, endpoints=[ENDPOINT], to_submit=diff.announced, now=NOW)
    state.pending.clear()  # every endpoint acknowledged everything
    again = compute_diff(entries(pairs), state, endpoints=[ENDPOINT])
    assert again.added == [] and again.changed == [] and again.pending == []
    assert again.removed == [] or not pairs


def test_an_empty_sitemap_removes_nothing() -> None:
    state = State.from_urls({"https://a.org/": new_record(lastmod="2024-01-01")})
    assert compute_diff([], state, endpoints=[ENDPOINT]).removed == []


def test_the_same_instant_written_differently_is_not_a_change() -> None:
    state = State.from_urls({"https://a.org/": new_record(lastmod="2024-01-01T02:00:00+02:00")})
    diff = compute_diff(entries([("https://a.org/", "2024-01-01T00:00:00Z")]), state, endpoints=[ENDPOINT])
    assert diff.changed == [] and diff.unchanged == 1


# (recorded lastmod, recorded fingerprint, listed lastmod, built fingerprint) -> changed?, page finding
FINGERPRINTED = [
    ("2024-01-01", "aaaa", "2024-02-01", "aaaa", False, "lastmod-without-change"),  # proven unchanged: held back
    ("2024-01-01", "aaaa", "2024-01-01", "bbbb", False, "change-without-lastmod"),
    ("2024-01-01", "aaaa", "2024-02-01", "bbbb", True, None),  # both moved: an honest edit
    ("2024-01-01", "aaaa", "2024-01-01", "aaaa", False, None),
    ("2024-01-01", "aaaa", "2024-01-01T00:00:00Z", "bbbb", False, "change-without-lastmod"),  # the same instant rewritten
    (None, "aaaa", None, "bbbb", True, None),  # no date: the page file decides, and nothing is said of a date
    (None, "aaaa", None, "aaaa", False, None),
    ("2024-01-01", None, "2024-02-01", "bbbb", True, None),  # not fingerprinted last deploy: nothing to compare
    ("2024-01-01", None, "2024-01-01", "bbbb", False, None),
    ("2024-01-01", "aaaa", "2024-02-01", None, True, None),  # no page file now: nothing to compare
    ("2024-01-01", "aaaa", "2024-01-01", None, False, None),
    (None, None, None, "bbbb", False, None),
    (None, "aaaa", None, None, False, None),
]


def test_a_fingerprint_decides_only_what_a_date_cannot_and_disagreements_are_said() -> None:
    loc = "https://a.org/x/"
    for old_lastmod, old_print, lastmod, fingerprint, changed, finding in FINGERPRINTED:
        state = State.from_urls({loc: new_record(old_lastmod, NOW, None, old_print)})
        prints = {loc: fingerprint} if fingerprint is not None else {}
        diff = compute_diff([Entry(loc, lastmod, 0, 1)], state, endpoints=[ENDPOINT], fingerprints=prints)
        case = (old_lastmod, old_print, lastmod, fingerprint)
        assert [change.loc for change in diff.changed] == ([loc] if changed else []), case
        assert [found.rule for found in diff.page_findings] == ([finding] if finding else []), case
        assert diff.unchanged == (0 if changed else 1), case
        held = finding == "lastmod-without-change"
        assert [(change.loc, change.old, change.new) for change in diff.held_back] == ([(loc, old_lastmod, lastmod)] if held else []), case


def test_a_file_listed_twice_by_an_index_is_compared_once() -> None:
    from notifier.pipeline.diff import DiffBuilder
    from notifier.sitemap.files import SitemapFile, facts_of

    loc = "https://a.org/x/"
    state = State.from_urls({loc: new_record("2024-01-01")})
    builder = DiffBuilder(state, endpoints=[ENDPOINT], makes_parts=True, now=NOW)
    key = state.parts[0].name
    rows = [Entry(loc, "2024-02-01", 0, 1)]
    builder.add_file(SitemapFile("a", "urlset", key=key, facts=facts_of(rows)), rows)
    builder.add_file(SitemapFile("a", "urlset", key=key, facts=facts_of(rows)), rows)
    diff = builder.finish()
    assert [change.loc for change in diff.changed] == [loc] and len(diff.duplicates) == 1


def test_a_changed_url_says_when_its_old_lastmod_was_recorded() -> None:
    """lastmod-regressed names this date ("... recorded on 2024-03-01"): the record's own, else the state's."""
    loc, bare = "https://a.org/x/", "https://a.org/y/"
    state = State.from_urls({loc: new_record("2024-01-01", "2024-03-01T00:00:00Z"), bare: new_record("2024-01-01")})
    state.updated = "2024-05-01T00:00:00Z"
    diff = compute_diff([Entry(loc, "2023-01-01", 0, 1), Entry(bare, "2023-01-01", 0, 2)], state, endpoints=[ENDPOINT])
    assert {change.loc: change.recorded for change in diff.changed} == {loc: "2024-03-01T00:00:00Z", bare: "2024-05-01T00:00:00Z"}


def _two_files(pending: list[str]) -> State:
    """Two recorded files: a.xml lists x, b.xml lists y and z; ``pending`` waits at ENDPOINT."""
    from notifier.store import Part, RecordedPart

    parts: list[Part] = [
        RecordedPart("a.xml", "da", {"https://a.org/x/": new_record("2024-01-01", NOW)}),
        RecordedPart("b.xml", "db", {"https://a.org/y/": new_record("2024-01-01", NOW), "https://a.org/z/": new_record("2024-01-01", NOW)}),
    ]
    waiting = {ENDPOINT: {loc: PendingItem(reason="changed", since=NOW) for loc in pending}} if pending else {}
    return State(parts=parts, pending=waiting)


def _deploy(state: State, files: list[tuple[str, list[Entry] | None]], build: bool) -> Diff:
    from notifier.pipeline.diff import DiffBuilder
    from notifier.sitemap.files import SitemapFile, facts_of

    builder = DiffBuilder(state, endpoints=[ENDPOINT], makes_parts=build, now=NOW)
    for name, rows in files:
        info = SitemapFile(name, "urlset", key=name)
        if rows is None:
            info.skipped = True
            builder.add_file(info, None)
        else:
            info.facts = facts_of(rows)
            builder.add_file(info, rows)
    return builder.finish()


def test_a_url_still_pending_in_a_file_not_read_again_stays_pending() -> None:
    for build in (False, True):
        files: list[tuple[str, list[Entry] | None]] = [("a.xml", [Entry("https://a.org/x/", "2024-01-01", 0, 1)]), ("b.xml", None)]
        diff = _deploy(_two_files(["https://a.org/y/"]), files, build)
        assert [change.loc for change in diff.pending] == ["https://a.org/y/"], build
        assert not diff.removed and not diff.changed and diff.unchanged == 2


def test_a_new_file_listing_a_url_of_a_file_not_read_again_leaves_the_record_there() -> None:
    rows = [Entry("https://a.org/y/", "2024-01-01", 0, 1), Entry("https://a.org/n/", "2024-01-01", 0, 2)]
    diff = _deploy(_two_files([]), [("new.xml", rows), ("a.xml", [Entry("https://a.org/x/", "2024-01-01", 1, 1)]), ("b.xml", None)], True)
    assert [change.loc for change in diff.added] == ["https://a.org/n/"] and len(diff.duplicates) == 1
    recorded_in = {part.name: sorted(part.urls()) for part in diff.parts}
    assert recorded_in["new.xml"] == ["https://a.org/n/"]  # the first file read, yet not the one keeping y
    assert recorded_in["b.xml"] == ["https://a.org/y/", "https://a.org/z/"]


def test_the_urls_without_a_lastmod_are_the_missing_ones() -> None:
    state = State.from_urls({"https://a.org/x/": new_record("2024-01-01"), "https://a.org/y/": new_record(None)})
    rows = [Entry("https://a.org/x/", "2024-01-01", 0, 1), Entry("https://a.org/y/", None, 0, 2), Entry("https://a.org/z/", None, 0, 3)]
    sweeps: tuple[dict[str, str] | None, ...] = (None, {})
    for prints in sweeps:  # one sweep for a file with no record of its own, and URL by URL
        diff = compute_diff(rows, State.from_urls(state.all_urls()), endpoints=[ENDPOINT], fingerprints=prints)
        assert diff.missing == ["https://a.org/y/", "https://a.org/z/"]
        assert [part.missing for part in diff.parts] == [2]
