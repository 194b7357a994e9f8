"""The state commands' less travelled answers: ``state pending`` in JSON and when empty,
``state url`` of a pending URL and of a typo difflib finds, ``state forget`` at one endpoint
of two. Each test names the mutants of scripts/mutate.py it kills (#44)."""

from __future__ import annotations

import json

from notifier.cli import main
from tests.conftest import BASE, Result, Site, pages, urlset
from tests.fakeindexnow import FakeIndexNow, status


def state(site: Site, *args: str) -> Result:
    site.capsys.readouterr()
    code = main(["state", *args, *site.state_args])
    captured = site.capsys.readouterr()
    return Result(code, captured.out, captured.err)


def pending_at_two(site: Site, second: FakeIndexNow) -> None:
    """Two pages recorded; both endpoints refuse with a 503: both pages pending at both."""
    assert site.fake is not None
    site.write(urlset(pages(2)))
    site.fake.plan = [status(503, "down")] * 10
    second.plan = [status(503, "down")] * 10
    result = site.run("--endpoint", site.fake.endpoint, "--endpoint", second.endpoint, "--initial", "submit", "--retry-timeout", "0")
    assert result.code == 3, result.err


def test_state_pending_in_json_and_when_nothing_is(site: Site, second: FakeIndexNow) -> None:
    """Kills _pending's JSON (uncovered before), its ``"json"`` widened, and "nothing is pending" left out."""
    site.write(urlset(pages(1)))
    assert site.run().code == 0
    assert state(site, "pending").out == "nothing is pending\n"
    assert json.loads(state(site, "pending", "--format", "json").out) == []
    pending_at_two(site, second)
    listed = json.loads(state(site, "pending", "--format", "json").out)
    assert site.fake is not None
    assert sorted((each["endpoint"], each["url"], each["reason"]) for each in listed) == sorted(
        (endpoint, f"{BASE}/p/1/", "added")
        for endpoint in (site.fake.endpoint, second.endpoint)  # p/0 went in the first run
    )
    assert all(set(each) == {"endpoint", "url", "reason", "since"} and each["since"].startswith("20") for each in listed)


def test_state_url_of_a_pending_page_names_each_endpoint(site: Site, second: FakeIndexNow) -> None:
    """Kills _url's "pending at" line left out."""
    pending_at_two(site, second)
    text = state(site, "url", f"{BASE}/p/1/").out
    assert site.fake is not None
    for endpoint in (site.fake.endpoint, second.endpoint):
        assert f"  pending at {endpoint}: " in text and ", since 20" in text


def test_state_url_of_a_typo_suggests_the_nearest_recorded_url(site: Site) -> None:
    """A letter swapped (no trailing slash, scheme or www. slip): difflib's suggestion on a small
    state (kills ``seen.append`` left out, the cutoff doubled, ``<= FUZZY_LIMIT`` made ``<``
    irrelevant: uncovered before); far from every URL: no guess."""
    site.write(urlset(pages(3, prefix="/blog/")))
    assert site.run().code == 0
    typo = state(site, "url", f"{BASE}/bolg/1/")
    assert typo.code == 2 and typo.err.strip().endswith(f"did you mean {BASE}/blog/1/?"), typo.err
    far = state(site, "url", "https://elsewhere.example.net/completely/different/page.html")
    assert far.code == 2 and far.err.strip().endswith("URLs are recorded exactly as the sitemap writes them"), far.err


def test_forget_at_one_endpoint_keeps_the_other_and_an_emptied_endpoint_goes(site: Site, second: FakeIndexNow) -> None:
    """Kills _drop's ``not named or endpoint_key(each) in named`` losing its second side (it
    forgot at every endpoint), ``in`` flipped, and ``del state.pending[endpoint]`` raised."""
    assert site.fake is not None
    pending_at_two(site, second)
    urls = [f"{BASE}/p/0/", f"{BASE}/p/1/"]
    done = state(site, "forget", *urls, "--endpoint", second.endpoint, "--yes")
    assert done.code == 0, done.err
    assert done.out.splitlines() == [f"forgot {url} at {second.endpoint}" for url in urls] + [f"2 pending URLs dropped from {site.state}"]
    shown = json.loads(state(site, "show", "--format", "json").out)
    assert list(shown["pending"]) == [site.fake.endpoint] and shown["pending"][site.fake.endpoint]["urls"] == 2
