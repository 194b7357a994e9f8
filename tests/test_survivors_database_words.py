"""What a libpq key=value string libpq cannot read is said to be (database.py, #44): the first
word that is not a pair, named as what it is. Each test names the edit it fails with; none
repeats a value (a value may be a password)."""

from __future__ import annotations

from notifier.database import broken_keyword_string

NOT_A_PAIR = "a word in it is not one of libpq's keyword=value pairs"


def test_the_pairs_are_walked_only_while_their_words_are_libpqs() -> None:
    """A word of its own stops the walk there, however readable what follows (edit: the
    ``not in KEYWORDS`` side of the walk's stop dropped, which walks on to the quote after it)."""
    assert broken_keyword_string("host=db foo=1 password='abc") == NOT_A_PAIR


def test_an_open_quote_is_said_only_of_libpqs_own_keywords() -> None:
    """(edit: the ``in KEYWORDS`` side of the quote's test dropped)"""
    assert broken_keyword_string("host=db foo='abc") == NOT_A_PAIR
    assert broken_keyword_string("host=db password='abc") == "the value of password opens a quote it never closes"


def test_a_missing_value_is_said_only_of_a_keyword_with_no_equals_sign() -> None:
    """``port`` alone has no =value; ``foo`` alone is no keyword; ``port=`` has its sign (edits:
    the ``in KEYWORDS`` or the ``not group(2)`` side dropped, ``group(2)`` made ``group(3)``)."""
    assert broken_keyword_string("host=db port") == "port has no =value"
    assert broken_keyword_string("host=db foo") == NOT_A_PAIR
    assert broken_keyword_string("host=db port=") == NOT_A_PAIR
