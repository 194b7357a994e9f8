"""What notifier/database.py decides that a mutation run found no test stating (#44): which
database a ``postgresql://`` URI names (so that two sites on one database are known as one),
why a libpq keyword text cannot be read, the passwords' order and the userinfo's end. Each
test names the edit it catches."""

from __future__ import annotations

import pytest

from notifier.database import DatabaseURL, broken_keyword_string, database_identity, passwords, without_password
from notifier.settings.options import default


@pytest.mark.parametrize(
    ("dsn", "identity", "edit"),
    [
        ("postgresql://ci@db.example/site", ("db.example", 5432, "site", "ci"), "split.hostname or '' loses its first side"),
        ("postgresql://ci@h1:5432,h2:5433/site", ("h1:5432,h2:5433", 5432, "site", "ci"),
         "several hosts: the netloc after the last @ as written (the except's assignment removed or raising, [2] made [3])"),
        ("postgresql://ci@/site?host=DB.internal", ("db.internal", 5432, "site", "ci"), "host = query.get('host', host).lower() removed"),
        ("postgresql://db.example/site", ("db.example", 5432, "site", ""), "split.username or '' loses its ''"),
        ("postgresql://ci@db/site?port=5433", ("db", 5433, "site", "ci"), "query.get('port') or port or 5432 loses its first side"),
        ("postgresql://ci@db/site?port=abc", ("db", -1, "site", "ci"), "number = -1 removed, raising, or made -2"),
        ("postgresql:///site?host=/tmp/pg", ("localhost", 5432, "site", ""), "host.startswith('/') dropped (a socket folder: local)"),
        ("postgresql://ci@/", ("localhost", 5432, "ci", "ci"), "libpq's default database is the user's name"),
    ],
)  # fmt: skip
def test_which_database_a_uri_names(dsn: str, identity: tuple[str, int, str, str], edit: str) -> None:
    """fails if database_identity changes: ``edit``"""
    assert database_identity(dsn) == identity, edit


@pytest.mark.parametrize(
    ("text", "said", "edit"),
    [
        ("host=db bogus=1 port", "a word in it is not one of libpq's keyword=value pairs",
         "match.group(1) not in KEYWORDS dropped: an unknown pair would be read past, and the next word blamed"),
        ("host=db bogus='x", "a word in it is not one of libpq's keyword=value pairs",
         "word.group(1) in KEYWORDS dropped from the quote's test: an unknown word taken for a keyword"),
        ("host=db bogus", "a word in it is not one of libpq's keyword=value pairs",
         "word.group(1) in KEYWORDS dropped from the =value test"),
        ("host=db port=", "a word in it is not one of libpq's keyword=value pairs",
         "not word.group(2) dropped or made group(3): a keyword with its = would be said to have none"),
        ("host=db port", "port has no =value", "a keyword without its ="),
        ("host=db password='x", "the value of password opens a quote it never closes", "a quote never closed, its value not shown"),
    ],
)  # fmt: skip
def test_why_a_keyword_text_cannot_be_read(text: str, said: str, edit: str) -> None:
    """fails if broken_keyword_string's tests change: ``edit``"""
    assert broken_keyword_string(text) == said, edit


def test_a_database_url_has_the_options_default_request_timeout() -> None:
    """fails if DatabaseURL's request_timeout default (30.0) moves away from --request-timeout's"""
    assert DatabaseURL("postgresql://ci@db/site").request_timeout == default("request-timeout") == 30.0


def test_passwords_come_longest_first() -> None:
    """fails if ``reverse=True`` becomes False in passwords: a shorter spelling replaced first
    would leave a piece of the longer one in a message"""
    assert passwords("postgresql://u:ab%41cd@h/db") == ["ab%41cd", "abAcd"]


def test_an_at_in_the_query_does_not_end_the_userinfo() -> None:
    """fails if ``rest.find("/")`` looks for another text in _uri_parts: the userinfo would run
    to an @ in the query, and the printed URL lose its host"""
    assert without_password("postgresql://ci:pw@db/site?application_name=a@b") == "postgresql://ci@db/site?application_name=a@b"
    assert "pw@db/site?application_name=a" not in passwords("postgresql://ci:pw@db/site?application_name=a@b")
