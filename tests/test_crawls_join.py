"""The join of ``crawled`` (``notifier/crawled.py::Crawls``) on its edges: logs read out of
order, a fetch at the announcement's own second, a page announced again, a bare host, and
delays as people read them. Each test names the mutants of scripts/mutate.py it kills (#44)."""

from __future__ import annotations

import datetime as dt
import json

import pytest

from notifier.accesslog import Visit
from notifier.crawled import Crawls, delay_text
from tests.conftest import Site
from tests.test_crawled_text import crawled, log
from tests.test_stats import T0, deploy

H = dt.timedelta(hours=1)
URL = "https://www.example.com/a/"


def visit(at: dt.datetime, target: str = "/a/", host: str | None = None) -> Visit:
    return Visit("157.55.39.1", host, target, "bingbot", at, 200)


def first_fetch(crawls: Crawls, url: str = URL) -> dt.datetime | None:
    return crawls.first.get(("bingbot", url))


def test_the_first_fetch_is_the_earliest_whatever_order_the_logs_are_read_in() -> None:
    """access.log before access.log.1.gz: the older visit comes second and still wins (kills
    ``visit.at < self.first[key]`` dropped or made ``<=``)."""
    crawls = Crawls()
    crawls.announce(URL, T0, "bing")
    for at in (T0 + 5 * H, T0 + 2 * H, T0 + 2 * H, T0 + 9 * H):
        crawls.see("bingbot", visit(at))
    assert first_fetch(crawls) == T0 + 2 * H


def test_a_fetch_at_the_announcements_own_second_counts_and_one_before_does_not() -> None:
    """Kills ``visit.at >= self.announced[url]`` made ``>``."""
    crawls = Crawls()
    crawls.announce(URL, T0, "bing")
    crawls.see("bingbot", visit(T0 - dt.timedelta(seconds=1)))
    assert first_fetch(crawls) is None
    crawls.see("bingbot", visit(T0))
    assert first_fetch(crawls) == T0


def test_an_endpoint_taking_the_page_again_later_is_a_new_announcement() -> None:
    """Kills ``takers.add`` and ``takers.clear`` left out and the gap's ``>`` made ``>=``: B took
    it at 0:30, so B at 3:00 announces it again; A at exactly 1:00 is the same announcement;
    after A's new one at 2:00, B's taking it at 2:30 and 4:00 is that one's, not another."""
    crawls = Crawls()
    crawls.announce(URL, T0, "A")
    crawls.announce(URL, T0 + H / 2, "B")
    crawls.announce(URL, T0 + H, "A")  # exactly the gap: one deploy's retry
    assert crawls.announced[URL] == T0
    crawls.announce(URL, T0 + 3 * H, "B")
    assert crawls.announced[URL] == T0 + 3 * H
    again = Crawls()
    again.announce(URL, T0, "A")
    again.announce(URL, T0 + H / 2, "B")
    again.announce(URL, T0 + 2 * H, "A")  # a new announcement: its takers start again
    again.announce(URL, T0 + 4 * H, "B")  # B has not taken this one: the same announcement
    assert again.announced[URL] == T0 + 2 * H


def test_a_url_with_no_path_is_fetched_as_slash() -> None:
    """Kills ``parts.path or "/"`` losing its ``"/"``."""
    crawls = Crawls()
    crawls.announce("https://www.example.com", T0, "bing")
    crawls.see("bingbot", visit(T0 + H, "/", "www.example.com:443"))
    assert first_fetch(crawls, "https://www.example.com") == T0 + H


@pytest.mark.parametrize(
    ("seconds", "text"),
    [(None, "-"), (0, "0 min"), (59 * 60, "59 min"), (3600, "1.0 h"), (172_799, "48.0 h"), (172_800, "2.0 days"), (3 * 86_400, "3.0 days")],
)
def test_a_delay_as_people_read_it(seconds: float | None, text: str) -> None:
    """Kills delay_text's minutes raised (uncovered) and its two-day bound moved."""
    assert delay_text(seconds) == text


def test_since_at_a_batchs_own_second_counts_it(site: Site) -> None:
    """Kills announced_urls' ``at >= since`` made ``>``."""
    assert deploy(site, T0, 2).exit_code == 0
    found = json.loads(crawled(site, log(site, "/p/0/"), "--since", T0.strftime("%Y-%m-%dT%H:%M:%SZ"), "--format", "json"))
    assert found["engines"]["bingbot"]["announced"] == 2
