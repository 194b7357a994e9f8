"""What notifier/pipeline/pending.py does that the mutation run found no test stating (#44): an
endpoint no longer configured with nothing pending is dropped quietly, the note about URLs no
endpoint accepts names the first of them (why, and at most 200 characters of it), and a URL
announced again while pending takes the new reason and keeps its first date. Each test names
the edit it catches."""

from __future__ import annotations

from notifier.pipeline.diff import compute_diff
from notifier.pipeline.pending import apply_to_state, drop_unsendable, hand_over_orphans
from notifier.sitemap.reader import Entry
from notifier.store import PendingItem, State, new_record

ONE = "https://one.example/indexnow"
OLD = "https://old.example/indexnow"
BEFORE = "2024-05-01T00:00:00Z"
NOW = "2024-06-01T00:00:00Z"


def _pending(*locs: str, reason: str = "changed") -> dict[str, PendingItem]:
    return {loc: PendingItem(reason=reason, since=BEFORE) for loc in locs}


def test_an_old_endpoint_with_nothing_pending_is_dropped_without_a_note() -> None:
    """fails if the ``continue`` after ``if not items`` raises in pipeline/pending.py::hand_over_orphans"""
    state = State(pending={OLD: {}, ONE: _pending("https://a.org/1/")})
    assert hand_over_orphans(state, [ONE]) == []
    assert state.pending == {ONE: _pending("https://a.org/1/")}


def test_the_dropped_note_names_the_first_url_no_endpoint_accepts_and_why() -> None:
    """The good URL after it stays, and is not the example. fails if
    ``loc, why = next(iter(dropped.items()))`` is removed in pipeline/pending.py::drop_unsendable"""
    state = State(pending={ONE: _pending("https://a.org/a b/", "ftp://a.org/x", "https://a.org/good/")})
    notes = drop_unsendable(state)
    assert notes == [
        "dropped 2 pending URLs that no endpoint can accept (e.g. 'https://a.org/a b/': it holds a space or a "
        "control character); they are never sent"
    ]
    assert list(state.pending[ONE]) == ["https://a.org/good/"]


def test_the_dropped_note_shows_at_most_200_characters_of_its_example() -> None:
    """fails if ``[:200]`` loses its bound or becomes ``[:201]`` in pipeline/pending.py::drop_unsendable"""
    long = "https://a.org/" + "x" * 3000
    notes = drop_unsendable(State(pending={ONE: _pending(long)}))
    assert notes == [
        f"dropped 1 pending URL that no endpoint can accept (e.g. {long[:200]!r}: it is 3014 characters long, over 2048); "
        "they are never sent"
    ]


def test_a_pending_url_announced_again_takes_the_new_reason_and_keeps_its_first_date() -> None:
    """Pending as changed since May, removed from the sitemap in June: pending as removed, since
    May. fails if ``items[change.loc] = PendingItem(reason=..., since=waiting["since"])`` is
    removed in pipeline/pending.py::apply_to_state"""
    gone, kept = "https://a.org/gone/", "https://a.org/kept/"
    state = State.from_urls({gone: new_record(lastmod="2024-01-01"), kept: new_record(lastmod="2024-01-01")}, pending={ONE: _pending(gone)})
    diff = compute_diff([Entry(kept, "2024-01-01", 0, 1)], state, endpoints=[ONE])
    assert [change.loc for change in diff.removed] == [gone]
    apply_to_state(diff, state, endpoints=[ONE], to_submit=[diff.removed], now=NOW)
    assert state.pending[ONE] == {gone: PendingItem(reason="removed", since=BEFORE)}
