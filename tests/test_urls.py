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
@example(["http://a.org/x", "http://a.orgX/y", "http://a.org.uk/", "http://a.org-b/", "http://a.org?q", "http://a.org#f"])
def test_grouping_by_origin_puts_each_url_under_its_own_origin(urls: list[str]) -> None:
    groups = by_origin(urls)
    assert sorted(url for group in groups.values() for url in group) == sorted(urls)
    for each, group in groups.items():
        assert all(origin(url) == each for url in group)
    assert origins_in(urls) == set(groups) == {origin(url) for url in urls}


PATHS = st.lists(
    st.sampled_from(["/", "a", "Z9", "-._~", ":@!$&'()*+,;=", "?q=1", "#f", "[x]", "%20", " ", "\n", "é", '"', "<", "^"]), max_size=6
)


@given(
    st.sampled_from(["http://a.org", "https://A.b-c.org:8443", "http://a.org:99999", "http://a_b.org", "ftp://a.org"]),
    st.lists(PATHS.map("".join), max_size=8),
    st.booleans(),
)
@example("http://a.org", ["/x", "/y?z#w"], False)  # all plain: the C-speed path
@example("http://a.org", ["/x", "/y z"], False)  # one character outside a path's
@example("http://a.org", ["/x", "/y\nhttp://a.org/z"], False)  # a newline inside a URL
@example("http://a.org", ["/x", "/" + "y" * 2048], False)  # one over the length a URL may have
@example("http://a.org", ["/x", "/é"], False)
@example("http://a.org", ["/x"], True)  # a second origin
@example("http://a.org", ["/x y", "/" + "y" * 2035], False)  # one just at the length a URL may have, looked at one by one
def test_the_irregular_urls_and_the_origins_of_a_list_are_found_as_one_by_one(start: str, paths: list[str], other: bool) -> None:
    """One origin begins a sitemap's URLs: they are then told plain or not, and their origins
    found, at C speed, with the answer the careful look at each URL gives."""
    from notifier.urls import MAX_URL_LENGTH, PLAIN_URL, irregular, origins_of

    urls = [start + path for path in paths] + ["http://other.org/" if other else start + "/"]
    assert irregular(urls) == [url for url in urls if len(url) > MAX_URL_LENGTH or PLAIN_URL.fullmatch(url) is None]
    assert origins_of(urls) == [each for each in dict.fromkeys(map(origin, urls)) if "://" in each]


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


def test_a_url_that_is_not_plain_is_split_with_its_path() -> None:
    """A host or path that needs escaping is split the careful way: its path as written, "/" when it has none."""
    assert locate("https://bücher.example") == ("https", "bücher.example", "/")
    assert locate("https://bücher.example/straße?x=1") == ("https", "bücher.example", "/straße")
    assert locate("http://a.org/a b#top") == ("http", "a.org", "/a b")


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("https://example.com?q=1", "https://example.com"),  # a query right after the host
        ("https://example.com#top", "https://example.com"),
        ("https://example.com?q=/x#f", "https://example.com"),
        ("https://example.com", "https://example.com"),
        ("http://?q=1", "http://"),  # no host at all: nothing before the query
        ("/relative/path", "/relative/path"),
    ],
)
def test_the_origin_ends_where_the_path_query_or_fragment_begins(url: str, expected: str) -> None:
    assert origin(url) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("/plain/~path", "/plain/~path"),  # nothing to respell
        ("/~a b", "/~a%20b"),  # a tilde is unreserved, a space is escaped
        ("/a b!", "/a%20b!"),  # "!" is a path character
        ("/a\x7fb", "/a%7Fb"),  # DEL is a control character
        ("/caf%c3%a9 %7e", "/caf%C3%A9%20~"),  # escapes upper-cased, an unreserved one decoded
        ("/%G1", "/%25G1"),  # a "%" without two hex digits is a literal percent sign
        ("/a%4", "/a%254"),  # ... also at the end of the text
        ("/a%", "/a%25"),
        ("/*$", "/%2A%24"),  # never a pattern's wildcard or anchor
    ],
)
def test_octets_spells_a_path_one_way(text: str, expected: str) -> None:
    from notifier.urls import octets

    assert octets(text) == expected


def test_a_url_no_endpoint_accepts_is_named_with_the_reason() -> None:
    from notifier.urls import MAX_URL_LENGTH, unsendable

    assert unsendable("https://example.com/ok") is None
    assert unsendable("https://example.com/" + "é" + "a" * (MAX_URL_LENGTH - 21)) is None  # just at the limit, not plain
    too_long = "https://example.com/" + "é" + "a" * (MAX_URL_LENGTH - 20)
    assert unsendable(too_long) == f"it is {MAX_URL_LENGTH + 1} characters long, over 2048"
    assert unsendable("ftp://example.com/file") == "it is not an absolute http(s) URL"
    assert unsendable("https:///no-host") == "it is not an absolute http(s) URL"
    assert unsendable("/relative") == "it is not an absolute http(s) URL"
    assert unsendable("https://example.com/a\tb") == "it holds a space or a control character"
