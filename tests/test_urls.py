"""The cheap URL helpers agree with the careful ones on every string."""

from __future__ import annotations

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from notifier.urls import by_origin, locate, origin, origins_in, where_host

PIECES = st.sampled_from(
    ["http", "https", "HTTP", "ftp", "://", ":", "/", "?", "#", "@", "[", "]", "::1", "a.org", "A.Org", ":80", "x", "%", " ", "é"]
)


@given(st.lists(PIECES, max_size=12).map("".join))
@example("http://a.org?x=1")
@example("http://[::1")
@example("https://u@H.org#f/x")
@example("http://a.org:99999999/")
def test_scheme_and_host_from_the_origin_equal_those_of_the_whole_url(url: str) -> None:
    fast, careful = where_host(url), locate(url)
    assert (fast.scheme, fast.host) == (careful.scheme, careful.host)


@given(st.lists(st.lists(PIECES, max_size=8).map("".join), max_size=12))
@example(["http://a.org/x", "http://a.org:80/y", "http://a.org", "http://a.orgx/", "a", "ab"])
@example(["http://a.org/x", "http://a.org/y", "http://a.org/"])  # one origin: the C-speed path
@example(["http://a.org:80/x", "http://a.org:80/y"])  # one origin, written with its default port
@example(["HTTP://a.org/x", "http://a.org/y"])
@example(["http://u@a.org/x", "http://u@a.org/y"])
@example(["http://a.org/x", "http://a.org/y", "http://a.orgx/"])
def test_grouping_by_origin_puts_each_url_under_its_own_origin(urls: list[str]) -> None:
    groups = by_origin(urls)
    assert sorted(url for group in groups.values() for url in group) == sorted(urls)
    for each, group in groups.items():
        assert all(origin(url) == each for url in group)
    assert origins_in(urls) == set(groups) == {origin(url) for url in urls}


@pytest.mark.parametrize(
    ("url", "plain"),
    [
        ("http://127.0.0.1:8765/p/1/", True),
        ("https://www.shop.org:65535/", True),
        ("https://www.shop.org:65536/", False),  # no such port: urlsplit's slow path calls it invalid
        ("https://www.shop.org:0/", False),
        ("https://www.shop.org:08443/", False),
        ("https://www.shop.org:/", False),
    ],
)
def test_a_url_with_a_port_takes_the_fast_path(url: str, plain: bool) -> None:
    """A port once sent every URL down urlsplit's path: a check of 50,000 of them took twice as long."""
    from notifier.urls import irregular, locate, split_url

    assert (irregular([url]) == []) is plain
    if plain:
        split = split_url(url)
        assert locate(url) == (split.scheme, split.netloc.lower(), split.path or "/")  # the same answer, faster
