"""What notifier/redaction.py decides that a mutation run found no test stating (#44): which
words and variables of a command hold a key or a password, and how a command line is shown in
a crash log. Each test names the edit it catches."""

from __future__ import annotations

from notifier.redaction import HIDDEN, Secrets, of_invocation, redacted_words

KEY = "0123456789abcdef"


def test_a_secret_that_is_a_key_and_a_password_is_hidden_whole() -> None:
    """fails if ``secret in self.keys and secret not in self.passwords`` becomes ``or`` or loses
    its second side in Secrets.redact (a password that is also a key would show four characters)"""
    both = Secrets(keys=("s3cret-shared-value",), passwords=("s3cret-shared-value",))
    assert both.redact("url: s3cret-shared-value") == f"url: {HIDDEN}"
    assert Secrets(keys=(KEY,)).redact(f"key {KEY}") == "key 0123…"
    assert Secrets(passwords=("hunter2hunter2",)).redact("pw hunter2hunter2") == f"pw {HIDDEN}"


def test_a_variable_named_like_a_secret_is_one_only_when_it_is_long_enough() -> None:
    """fails if ``len(value) >= _SHORTEST_SECRET`` is dropped in of_invocation (a short value,
    ``TOKEN=1``, would be cut out of every line that holds a 1)"""
    assert of_invocation([], {"GITHUB_TOKEN": "1", "DEPLOY_KEY": "short"}) == Secrets()
    assert of_invocation([], {"DEPLOY_KEY": "12345678"}) == Secrets(keys=("12345678",))


def test_a_password_variable_is_a_password_and_a_key_variable_a_key() -> None:
    """fails if ``"PASS" in name.upper()`` is flipped or its "PASS" changed in either line of
    of_invocation (PGPASSWORD would show four characters, or INDEXNOW_KEY none)"""
    found = of_invocation([], {"PGPASSWORD": "hunter2hunter2", "INDEXNOW_KEY": KEY, "HOME": "/home/site-owner"})
    assert found == Secrets(keys=(KEY,), passwords=("hunter2hunter2",))


def test_the_key_flag_in_both_spellings() -> None:
    """fails if ``keys.append(value)`` is left out or raises (``--key=K``), or if ``n + 1 <
    len(argv)`` becomes ``n + 2`` (``--key K`` as the last words)"""
    assert of_invocation(["run", f"--key={KEY}"], {}) == Secrets(keys=(KEY,))
    assert of_invocation(["run", "--key", KEY], {}) == Secrets(keys=(KEY,))
    assert of_invocation(["run", "--key"], {}) == Secrets()  # a flag with nothing after it


def test_a_database_urls_password_is_found_in_a_word_or_after_an_equals() -> None:
    """fails if ``found.extend(passwords(text))`` is left out in of_invocation"""
    found = of_invocation(["--state", "postgresql://ci:pw123456@db/site", "--state=postgresql://ci:pass9999@db/site"], {})
    assert set(found.passwords) == {"pw123456", "pass9999"} and found.keys == ()


def test_a_user_without_a_password_in_a_sitemap_url_is_no_secret() -> None:
    """fails if ``":" in info`` is dropped in of_invocation (an empty password would be found,
    and a user name with a colon-less userinfo taken for one)"""
    assert of_invocation(["https://deploy@staging.shop.org/sitemap.xml"], {}) == Secrets()
    assert of_invocation(["https://deploy:letmein1@staging.shop.org/sitemap.xml"], {}) == Secrets(passwords=("letmein1",))


def test_a_crash_log_shows_a_database_url_without_its_password() -> None:
    """fails if ``word = without_password(word)`` or ``word = f"{flag}={without_password(value)}"``
    is removed or raises in redacted_words (with no secret known, the password would be shown)"""
    words = ["check", "postgresql://ci:pw@db/site", "--state=postgresql://ci:pw@db/site", "--state=host=db password=pw", "--dry-run"]
    assert redacted_words(words, Secrets()) == [
        "check",
        "postgresql://ci@db/site",
        "--state=postgresql://ci@db/site",
        "--state=host=db",
        "--dry-run",
    ]
    assert redacted_words([f"--key={KEY}"], Secrets(keys=(KEY,))) == ["--key=0123…"]
