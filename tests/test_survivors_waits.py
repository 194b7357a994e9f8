"""The shared back-off's decisions no test stated (waits.py, #44): the one form endpoints are
compared in, the latest of two spellings' waits, and which stored waits are believed. Each
test names the edit it fails with."""

from __future__ import annotations

import datetime as dt

from notifier.waits import bounded, endpoint_key, same_endpoint, wait_for

NOW = dt.datetime(2024, 5, 1, 12, 0, tzinfo=dt.UTC)


def test_an_ipv6_endpoint_keeps_its_brackets_in_the_one_form() -> None:
    """(edits: the bracketing assignment removed or replaced by a raise)"""
    assert endpoint_key("https://[2001:DB8::1]:443/indexnow/") == "https://[2001:db8::1]/indexnow"
    assert endpoint_key("http://[::1]:8080/indexnow") == "http://[::1]:8080/indexnow"


def test_the_default_port_of_each_scheme_goes_and_any_other_stays() -> None:
    """(edit: 80 made 81)"""
    assert endpoint_key("http://Bing.com:80/indexnow") == "http://bing.com/indexnow"
    assert endpoint_key("http://bing.com:81/indexnow") == "http://bing.com:81/indexnow"
    assert endpoint_key("https://bing.com:80/indexnow") == "https://bing.com:80/indexnow"


def test_what_is_no_url_is_compared_as_written_without_the_spaces_around_it() -> None:
    """(edit: that ``return`` replaced by a raise)"""
    assert endpoint_key("  not an endpoint \n") == "not an endpoint"


def test_two_spellings_of_one_endpoint_are_the_same_endpoint() -> None:
    """(edit: ``==`` made ``!=``)"""
    assert same_endpoint("HTTPS://Api.IndexNow.org:443/indexnow/", "https://api.indexnow.org/indexnow")
    assert not same_endpoint("https://api.indexnow.org/indexnow", "https://www.bing.com/indexnow")


def test_the_later_of_two_spellings_waits_is_the_wait() -> None:
    """Two spellings of one endpoint each stored a wait: nothing goes there before the later (edit: ``max`` made ``min``)."""
    backoff = {"https://api.indexnow.org/indexnow": "2024-05-01T13:00:00Z", "https://API.indexnow.org/indexnow/": "2024-05-01T15:00:00Z"}
    assert wait_for(backoff, "https://api.indexnow.org/indexnow") == "2024-05-01T15:00:00Z"
    assert wait_for(backoff, "https://www.bing.com/indexnow") is None


def test_a_wait_that_ends_now_is_over() -> None:
    """(edit: ``until > current`` made ``>=``)"""
    kept, notes = bounded([("https://api.indexnow.org/indexnow", "2024-05-01T12:00:00Z")], NOW)
    assert kept == {} and notes == []
    kept, _ = bounded([("https://api.indexnow.org/indexnow", "2024-05-01T12:00:01Z")], NOW)
    assert kept == {"https://api.indexnow.org/indexnow": "2024-05-01T12:00:01Z"}


def test_a_stored_wait_that_is_no_text_is_dropped_with_a_note() -> None:
    """A garbage row of a shared database (a number): dropped, never a TypeError (edit: the
    ``isinstance`` side of the ``or`` dropped)."""
    kept, notes = bounded([("https://api.indexnow.org/indexnow", 17)], NOW)
    assert kept == {}
    assert len(notes) == 1 and "'17' is not a time" in notes[0] and "a wait is a time" in notes[0]


def test_the_note_gives_each_reason_its_dropped_waits_have() -> None:
    """A wait too far and one that is no time: both reasons said; one kind alone, only its own
    (edit: ``any`` made ``all``)."""
    _, notes = bounded([("https://a.example/indexnow", "2024-06-01T00:00:00Z"), ("https://b.example/indexnow", "soon")], NOW)
    assert "no Retry-After is kept beyond a week" in notes[0] and "a wait is a time" in notes[0], notes
    _, notes = bounded([("https://a.example/indexnow", "2024-06-01T00:00:00Z")], NOW)
    assert "no Retry-After is kept beyond a week" in notes[0] and "a wait is a time" not in notes[0], notes
