"""What notifier/commands/state.py decides that a mutation run found no test stating (#44):
where a typo's guess stops looking alike (FUZZY_LIMIT, exactly), the usual slips of a URL that
holds another, and what ``state forget --backoff`` says with no wait stored. Each test names
the edit it catches."""

from __future__ import annotations

from tests.conftest import BASE, Site, pages, urlset
from tests.test_state_commands_edges import state


def _recorded(site: Site, count: int, *more: str) -> None:
    site.write(urlset({**pages(count, prefix="/blog/"), **dict.fromkeys(more, "2024-01-01")}))
    assert site.run("--initial", "baseline").code == 0


def test_a_state_of_exactly_the_limit_is_still_searched_for_a_look_alike(site: Site) -> None:
    """fails if ``<= FUZZY_LIMIT`` becomes ``<`` in _nearest (a state of 5,000 URLs would get no guess)"""
    _recorded(site, 5_000)  # FUZZY_LIMIT, written out: a test that reads it follows its edit
    typo = state(site, "url", f"{BASE}/bolg/1/")
    assert typo.code == 2 and typo.err.strip().endswith(f"did you mean {BASE}/blog/1/?"), typo.err


def test_past_the_limit_only_the_usual_slips_are_tried(site: Site) -> None:
    """fails if FUZZY_LIMIT becomes 5,001 (difflib would compare a typo with 5,001 URLs), or if
    the scheme's slip replaces more than the first ``https://`` (a URL that holds another in its
    query would not be found)"""
    _recorded(site, 5_000, f"{BASE}/go?to=https://partner.example/")
    typo = state(site, "url", f"{BASE}/bolg/1/")
    assert typo.code == 2 and "did you mean" not in typo.err, typo.err
    slip = state(site, "url", f"{BASE.replace('http://', 'https://')}/go?to=https://partner.example/")
    assert slip.code == 2 and slip.err.strip().endswith(f"did you mean {BASE}/go?to=https://partner.example/?"), slip.err


def test_forget_backoff_of_an_endpoint_with_no_wait_stored_says_none_are(site: Site) -> None:
    """fails if ``", ".join(state.backoff) or "none"`` loses its "none" in _chosen_waits"""
    _recorded(site, 2)
    said = state(site, "forget", "--backoff", "--endpoint", "https://api.indexnow.org/indexnow", "--yes")
    assert said.code == 2 and said.err.strip().endswith("the endpoints waited for: none"), said.err
