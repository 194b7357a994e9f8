"""What notifier/pipeline/planning.py does that the mutation run found no test stating (#44): why
a URL still pending from an earlier run is sent, which endpoint a dry run's batches go to when
an endpoint's day is used up or it was asked to wait (``--endpoint-mode first``), and what the
missing-key error suggests. Each test names the edit it catches; the edits that cannot change
what a user sees are in scripts/mutants-equivalent.txt with their reasons."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from notifier.changes import Change
from notifier.pipeline.planning import _plan
from notifier.pipeline.policy import hold_back
from notifier.store import PendingItem, State
from notifier.store.checks import SentToday
from tests.conftest import Site, pages, urlset
from tests.fakeindexnow import status
from tests.test_survivors_policy import ONE, TWO, _run, _url

STAMP = "2030-06-01T12:00:00Z"


def _state(count: int, endpoints: list[str]) -> State:
    """``count`` URLs added and pending at each of ``endpoints``."""
    return State(pending={endpoint: {_url(n): PendingItem(reason="added", since=STAMP) for n in range(count)} for endpoint in endpoints})


def _reasons(count: int) -> dict[str, Change]:
    return {_url(n): Change(_url(n), "added") for n in range(count)}


# -- _explainer --------------------------------------------------------------------------------------
def test_a_pending_url_this_run_neither_lists_nor_announces_is_explained_as_pending(site: Site) -> None:
    """A URL whose announcement failed, then removed with --no-removed: it still waits at the
    endpoint, and a dry run shows it sent as pending since the failed run. Fails if
    ``reasons[loc] = Change(loc, "pending", since=item["since"])`` is removed or made a raise in
    pipeline/planning.py::_explainer.explain."""
    assert site.fake is not None
    site.write(urlset(pages(2)))
    assert site.run().code == 0
    site.fake.plan = [status(400, "no")]
    site.write(urlset(pages(2) | {"/p/1/": "2024-09-01T10:00:00Z"}))
    assert site.run().code == 3  # /p/1/ pending
    site.write(urlset(pages(1)))
    result = site.run("--no-removed", "--dry-run", "--format", "json")
    assert result.code == 0, result.err
    report = json.loads(result.out)
    why = report["why"][_url(1)]
    assert why["reason"] == "pending" and why["pending_since"].endswith("Z"), why
    assert [(batch["count"], batch["status"]) for batch in report["batches"]] == [(1, "dry-run")], report["batches"]


# -- _plan ----------------------------------------------------------------------------------------------
def test_in_first_mode_a_dry_run_plans_for_the_endpoint_whose_day_is_not_used_up(tmp_path: Path) -> None:
    """per-day used up at ONE: the batches go to TWO. Fails if ``[each for each in endpoints if
    each not in holds.full] or endpoints`` becomes ``and`` or drops its first side, or ``not in``
    becomes ``in``, in pipeline/planning.py::_plan."""
    run = _run(tmp_path, [ONE, TWO], endpoint_mode="first", per_day="3")
    state = _state(2, [ONE, TWO])
    state.sent_today = {ONE: SentToday(day="2030-06-01", urls=3)}
    planned = _plan(run.settings, state, [ONE, TWO], _reasons(2), hold_back(run, state))
    assert [(batch.endpoint, [change.loc for change in batch.urls]) for batch in planned] == [(TWO, [_url(0), _url(1)])]


def test_in_first_mode_a_dry_run_with_every_endpoints_day_used_up_plans_nothing(tmp_path: Path) -> None:
    """Every endpoint's day used up: nothing planned, and no crash. Fails if ``[...] or
    endpoints`` drops its second side in pipeline/planning.py::_plan (no endpoint would be
    left to pick the first of)."""
    run = _run(tmp_path, [ONE, TWO], endpoint_mode="first", per_day="3")
    state = _state(2, [ONE, TWO])
    state.sent_today = {ONE: SentToday(day="2030-06-01", urls=3), TWO: SentToday(day="2030-06-01", urls=3)}
    assert _plan(run.settings, state, [ONE, TWO], _reasons(2), hold_back(run, state)) == []


# -- _sends ---------------------------------------------------------------------------------------------
LATER = "2030-06-01T13:00:00Z"


@pytest.mark.parametrize(("waiting", "chosen"), [({ONE: LATER}, TWO), ({TWO: LATER}, ONE), ({ONE: LATER, TWO: LATER}, ONE)])
def test_in_first_mode_a_dry_run_plans_for_the_first_endpoint_not_waiting(tmp_path: Path, waiting: dict[str, str], chosen: str) -> None:
    """The first endpoint with no Retry-After wait ahead gets the batches; when every one waits,
    the first. Fails if ``wait_for(state.backoff, endpoint) is None`` becomes ``is not None``, or
    ``free or endpoints`` becomes ``and`` or drops either side, in pipeline/planning.py::_sends."""
    run = _run(tmp_path, [ONE, TWO], endpoint_mode="first")
    state = _state(2, [ONE, TWO])
    state.backoff = dict(waiting)
    planned = _plan(run.settings, state, [ONE, TWO], _reasons(2), hold_back(run, state))
    assert [batch.endpoint for batch in planned] == [chosen]
    assert planned[0].held_until == waiting.get(chosen)


# -- _require_keys -----------------------------------------------------------------------------------------
def test_a_run_without_a_key_suggests_making_one(site: Site) -> None:
    """No key at all: the error says what to set and that `notify-changes key new` makes one.
    Fails if ``settings.keys.derive_variable is None`` becomes ``is not None`` in
    pipeline/planning.py::_require_keys."""
    site.write(urlset(pages(1)))
    result = site.run("--initial", "submit", key=False)
    said = "no IndexNow key for www.shop-site.org: set INDEXNOW_KEY (or --key, or [keys] in the config); `notify-changes key new` makes one"
    assert result.code == 2 and said in result.err, result.err
