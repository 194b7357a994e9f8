"""What notifier/urls.py's small functions answer that only the deploy-level tests used to
state (#44): a mutation run judged by the URL test files alone let these edits live. Each
test names the edit it catches; the fast paths (``_one_origin``, the run-length shortcuts of
``origins_in`` and ``by_origin``) are equivalents with their reasons in
scripts/mutants-equivalent.txt, and the answers they must not change are stated here."""

from __future__ import annotations

import pytest

from notifier.urls import (
    MAX_URL_LENGTH,
    Where,
    by_origin,
    credentials,
    host_of,
    irregular,
    join_url,
    key_host,
    locate,
    octets,
    origin,
    origins_in,
    origins_of,
    path_query,
    under_base,
    unsendable,
    userinfo,
    without_password,
)


def test_a_target_python_cannot_join_is_none() -> None:
    """fails if ``return None`` in join_url raises (a canonical ``http://[::1/x`` would crash the page reader)"""
    assert join_url("https://shop.org/a/", "http://[::1/x") is None
    assert join_url("https://shop.org/a/", "b") == "https://shop.org/a/b"


def test_locate_a_plain_url_without_a_path_is_on_the_root() -> None:
    """fails if ``plain.group(3) or "/"`` loses its ``"/"`` in locate (None has no partition)"""
    assert locate("http://Shop.org") == Where("http", "shop.org", "/")
    assert locate("https://shop.org:8443/a/?q#f") == Where("https", "shop.org:8443", "/a/")


def test_locate_a_url_that_is_not_plain_keeps_its_path() -> None:
    """fails if ``split.path or "/"`` becomes ``and`` in locate (every such path would read "/")"""
    assert locate("http://shop.org/a b/") == Where("http", "shop.org", "/a b/")
    assert locate("http://shop.org?a b") == Where("http", "shop.org", "/")


@pytest.mark.parametrize(
    ("text", "spelled", "edit"),
    [
        ("%4G", "%254G", "the and's fourth side dropped (int('4G', 16) raises)"),
        ("%G4", "%25G4", "data[position + 1] made data[position + 2]"),
        ("a%4", "a%254", "position + 2 < len(data) made <= (an escape cut by the end reads past it)"),
        ("~*", "~%2A", "octet > 0x7E made >= (a tilde would be escaped)"),
        ("\x7f*", "%7F%2A", "0x7E made 127 (DEL would stay as it is)"),
        ("a b", "a%20b", "octet <= 0x20 made < (a space would stay as it is)"),
        ("!*", "!%2A", "0x20 made 33 (an exclamation mark would be escaped)"),
        ("%7e%2f", "~%2F", "an unreserved escape decoded, another kept in upper case"),
    ],
)
def test_octets_spells_each_octet_one_way(text: str, spelled: str, edit: str) -> None:
    """fails if octets' escape test or its bounds change: ``edit``"""
    assert octets(text) == spelled, edit


def test_path_query_of_a_url_that_is_not_plain() -> None:
    """fails if ``plain is not None`` becomes ``is`` in path_query (None has no group), or if
    ``split.path or "/"`` loses a side or becomes ``and`` (an empty path is "/", a path is kept)"""
    assert path_query("http://shop.org/a b/?q=1") == ("/a b/", "q=1")
    assert path_query("http://shop.org?x y") == ("/", "x y")


def test_path_query_of_a_plain_url_without_a_path() -> None:
    """fails if ``plain.group(3) or "/"`` loses its ``"/"`` in path_query"""
    assert path_query("https://shop.org") == ("/", "")
    assert path_query("https://shop.org/tea?b=2#top") == ("/tea", "b=2")


@pytest.mark.parametrize(
    ("url", "head", "edit"),
    [
        ("://a/b", "://a", "start < 0 made <= or < 1 (a '://' at the very start is still found)"),
        ("http:///b", "http://", "start + 3 made start + 4 where the path is looked for (an empty host)"),
        ("http://shop.org/a?b", "http://shop.org", ":end loses its bound (the path would stay)"),
        ("http://?x", "http://", "start + 3 made start + 4 where a query is looked for"),
        ("http://shop.org?x=1", "http://shop.org", ":cut loses its bound (the query would stay)"),
        ("shop.org/a", "shop.org/a", "a text without '://' is its own origin"),
    ],
)
def test_origin_is_the_text_before_the_path(url: str, head: str, edit: str) -> None:
    """fails if origin's bounds change: ``edit``"""
    assert origin(url) == head, edit


def test_key_host_keeps_a_name_that_ends_in_two_dots() -> None:
    """fails if ``not host.endswith("..")`` is dropped in key_host (one trailing dot goes, never two)"""
    assert key_host("Shop.org.") == "shop.org"
    assert key_host("shop..") == "shop.."


def test_host_of_names_the_host_or_a_question_mark() -> None:
    """fails if ``where_host(url).host or "?"`` loses either side in host_of"""
    assert host_of("https://Shop.org/a/") == "shop.org"
    assert host_of("not a url") == "?"


def test_irregular_takes_a_url_of_exactly_the_limit_as_plain() -> None:
    """fails if ``len(url) > MAX_URL_LENGTH`` becomes ``>=`` in irregular (looked at one by one,
    a list the shortcut cannot take)"""
    just = "http://shop.org/" + "a" * (MAX_URL_LENGTH - len("http://shop.org/"))
    over = just + "b"
    assert irregular([just, "http://other.org/a b", over]) == ["http://other.org/a b", over]


@pytest.mark.parametrize(
    ("url", "info", "edit"),
    [
        ("://user@host/", "user", "start < 0 made <= or < 1 in _authority"),
        ("http://host/a@b?c", None, "min(ends) made max in _authority (an @ in the path is no userinfo)"),
        ("a@b://host/", None, "url[bounds[0] : bounds[1]] loses its lower bound (an @ before '://' is no userinfo)"),
        ("http://user@host/p@q", "user", "the returned slice loses its upper bound"),
        ("http://user:pw@host:8080/", "user:pw", "the last @ of the authority ends the userinfo"),
    ],
)
def test_userinfo_is_what_comes_before_the_hosts_last_at(url: str, info: str | None, edit: str) -> None:
    """fails if userinfo's or _authority's bounds change: ``edit``"""
    assert userinfo(url) == info, edit


def test_credentials_take_the_userinfo_out_and_decode_it() -> None:
    """fails if any of credentials' lines changes: ``info is None`` flipped, ``return url, None``
    raising, ``_authority(url) or (0, 0)`` made ``and`` or its first side dropped (the cut would
    start at 0), ``:start`` or ``start + len(info) + 1 :`` losing a bound, ``+ 1`` made ``+ 2``"""
    assert credentials("https://site:p%40ss@staging.shop.org/sitemap.xml") == (
        "https://staging.shop.org/sitemap.xml",
        ("site", "p@ss"),
    )
    assert credentials("https://user@staging.shop.org/") == ("https://staging.shop.org/", ("user", ""))
    assert credentials("https://staging.shop.org/sitemap.xml") == ("https://staging.shop.org/sitemap.xml", None)


def test_without_password_hides_only_the_password() -> None:
    """states what without_password does beside its equivalents (a password already hidden is
    rewritten to itself)"""
    assert without_password("http://admin:hunter2@shop.org/a") == "http://admin:•••@shop.org/a"
    assert without_password("http://admin:•••@shop.org/a") == "http://admin:•••@shop.org/a"
    assert without_password("http://admin@shop.org/a") == "http://admin@shop.org/a"


def test_a_plain_url_over_the_limit_is_unsendable() -> None:
    """fails if ``len(url) <= MAX_URL_LENGTH`` is dropped from unsendable's fast path (a long
    plain URL would be taken as sendable, and stay pending for ever)"""
    url = "http://shop.org/" + "a" * MAX_URL_LENGTH
    assert unsendable(url) == f"it is {len(url)} characters long, over {MAX_URL_LENGTH}"
    assert unsendable("http://shop.org/a") is None


def test_an_origin_that_another_begins_with_is_an_origin_of_its_own() -> None:
    """fails if ``url[size] in "/?#"`` takes other characters in origins_in (shop.orgX would be
    taken for shop.org), and states what the fast paths must not change"""
    urls = ["http://shop.org/", "http://shop.orgX/", "http://shop.org?a", "http://shop.org#b", "relative/x"]
    assert origins_in(urls) == {"http://shop.org", "http://shop.orgX", "relative/x"}
    assert origins_of(urls) == ["http://shop.org", "http://shop.orgX"]
    assert origins_in(["http://shop.org/a", "http://shop.org/b"]) == {"http://shop.org"}


def test_by_origin_takes_a_url_that_is_its_origin() -> None:
    """fails if ``len(url) == size or url[size] in "/?#"`` becomes ``and`` in by_origin (a URL
    that is exactly its origin would be read past its end)"""
    urls = ["http://a.org/x", "http://b.org/", "http://b.org", "http://b.org?q", "http://a.org/y", "x", "x/y"]
    assert by_origin(urls) == {
        "http://a.org": ["http://a.org/x", "http://a.org/y"],
        "http://b.org": ["http://b.org/", "http://b.org", "http://b.org?q"],
        "x": ["x"],
        "x/y": ["x/y"],
    }


@pytest.mark.parametrize(
    ("path", "base", "relative", "edit"),
    [
        ("project/tea", "project", "tea", "the or made and, or its second side dropped"),
        ("project", "project", "", "path == base dropped (the base's own page)"),
        ("other/tea", "project", "other/tea", "base and (...) made or (a path outside the base would be cut)"),
        ("other", "project", "other", "path == base made != (a path outside would be cut to nothing)"),
        ("projector/a", "project", "projector/a", "a name that begins like the base is outside it"),
        ("tea", "", "tea", "no base: every path as it is"),
    ],
)
def test_under_base_is_the_path_inside_the_sites_base(path: str, base: str, relative: str, edit: str) -> None:
    """fails if under_base's test changes (a site served under /project/): ``edit``"""
    assert under_base(path, base) == relative, edit
