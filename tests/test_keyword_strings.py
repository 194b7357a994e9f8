"""What is wrong with a libpq ``key=value`` connection string libpq cannot read
(``notifier/database.py::broken_keyword_string``): said by keyword, never with a value, and
nothing said of a text that is no such string. The run's tests check only that a line says
"key=value"; these name the mutants of scripts/mutate.py they kill (#44)."""

from __future__ import annotations

import pytest

from notifier.database import broken_keyword_string, is_database_url


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("host=h password='never-closed", "the value of password opens a quote it never closes"),
        ("host=h dbname=x password", "password has no =value"),
        ("host=h port=5432 user", "user has no =value"),
        ("dbname=x host = 'a b", "the value of host opens a quote it never closes"),
        ("host=h dbname='it\\'s' sslmode", "sslmode has no =value"),  # an escaped quote closes nothing
        ("host=h dbname=x nosuchword=1", "a word in it is not one of libpq's keyword=value pairs"),
        ("host=h dbname=x 'quoted", "a word in it is not one of libpq's keyword=value pairs"),
        ("  host=h   user  ", "user has no =value"),
    ],
)
def test_a_keyword_string_gone_wrong_says_which_keyword(text: str, said: str) -> None:
    """Kills the loop's ``while True`` made False, ``position = 0`` moved, each side of its
    ``or`` dropped, and every test of the word after the pairs (quote, ``=``) dropped or flipped."""
    assert broken_keyword_string(text) == said
    assert not is_database_url(text)


@pytest.mark.parametrize(
    "text",
    ["host=h dbname=x", "host=h password='a b c' dbname=x", "state/deploys.json", "notakeyword=1 x", "host", "host=h"],
)
def test_a_text_that_is_no_broken_keyword_string_is_none(text: str) -> None:
    assert broken_keyword_string(text) is None


@pytest.mark.parametrize("text", ["state/deploys.json", "a text with spaces", "C:\\states\\deploys.json"])
def test_a_text_that_is_no_connection_text_is_shown_as_it_is(text: str) -> None:
    """A file's path comes back as it was (kills ``return dsn`` raised: every part's name and
    every file state is printed through it)."""
    from notifier.database import without_password

    assert without_password(text) == text
