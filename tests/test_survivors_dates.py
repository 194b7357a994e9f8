"""What notifier/dates.py's RFC 822 reading does that the mutation run found no test stating
(#44): a backslash quotes only inside a comment, a quoted-pair is two characters, and a weekday
that is no weekday is no date (never a crash). Each test names the edit it catches."""

from __future__ import annotations

from notifier.dates import rfc822_to_w3c


def test_a_backslash_outside_a_comment_is_text_not_a_quote() -> None:
    """Outside a comment ``\\x`` stays, so the zone "GMT\\x" is no zone.
    fails if ``depth and character == "\\\\"`` loses ``depth`` in dates.py::_uncommented"""
    assert rfc822_to_w3c("Sat, 01 Jun 2024 12:00:00 GMT\\x (UTC)") is None
    assert rfc822_to_w3c("Sat, 01 Jun 2024 12:00:00 GMT (U\\)TC)") == "2024-06-01T12:00:00Z"


def test_a_quoted_pair_in_a_comment_is_the_backslash_and_one_character() -> None:
    """``(\\))``: the quoted ``)`` is text, the next one closes the comment.
    fails if ``position += 2`` becomes ``3`` in dates.py::_uncommented"""
    assert rfc822_to_w3c("Sat, 01 Jun 2024 12:00:00 GMT (\\))") == "2024-06-01T12:00:00Z"
    assert rfc822_to_w3c("Sat, 01 Jun 2024 12:00:00 +0200 (\\()") == "2024-06-01T12:00:00+02:00"


def test_a_weekday_that_is_no_weekday_is_no_date() -> None:
    """fails (a ValueError from ``_DAYS.index``) if ``weekday.lower() not in _DAYS`` is dropped
    from the ``or`` in dates.py::rfc822_to_w3c"""
    assert rfc822_to_w3c("Abc, 01 Jun 2024 12:00:00 GMT") is None
    assert rfc822_to_w3c("Sun, 01 Jun 2024 12:00:00 GMT") is None
    assert rfc822_to_w3c("sat, 01 Jun 2024 12:00:00 GMT") == "2024-06-01T12:00:00Z"
