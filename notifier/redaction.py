"""What no output shows whole: an IndexNow key appears cut to its first four characters (they
say which key it is), a database password not at all. One redactor for every channel: the
report (text, JSON, the API's), the stderr lines, the annotations and job summary, the
ledger and the crash log. A leaf: it knows secrets as strings, not where they come from."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from notifier.database import is_database_url, passwords, without_password
from notifier.urls import userinfo

KEY_SHOWN = 4  # characters of a key a message may show
HIDDEN = "•••"  # what stands for a password
# environment variables whose values are secrets whatever the config says: a crash may come
# before the config is read ([keys] derive names its variable there)
_SECRET_NAMES = re.compile(r"KEY|SECRET|TOKEN|PASSWORD|PGPASS", re.IGNORECASE)
_SHORTEST_SECRET = 8  # an IndexNow key has at least 8 characters; a shorter value is no secret to find in text
_KEY_FLAGS = ("--key",)  # options whose value is a key


@dataclass(frozen=True)
class Secrets:
    """The keys (shown as their first four characters) and passwords (never shown) to cut."""

    keys: tuple[str, ...] = ()
    passwords: tuple[str, ...] = ()

    def __repr__(self) -> str:  # a settings repr or a crash log never shows them
        return f"Secrets({len(self.keys)} keys, {len(self.passwords)} passwords)"

    def __or__(self, other: Secrets) -> Secrets:
        return Secrets(self.keys + other.keys, self.passwords + other.passwords)

    def redact(self, text: str) -> str:
        """``text`` with each key cut to four characters and each password replaced, the longest first."""
        for secret in sorted({*self.keys, *self.passwords}, key=len, reverse=True):
            if secret and secret in text:
                shown = secret[:KEY_SHOWN] + "…" if secret in self.keys and secret not in self.passwords else HIDDEN
                text = text.replace(secret, shown)
        return text


# a password written in a URL (scheme://user:password@host) or a libpq connection text
# (password=...), wherever it came from: a config file the crash came before, a remote part's URL
_URL_PASSWORD = re.compile(r"(\b[A-Za-z][A-Za-z0-9+.-]*://[^\s/@:'\"]*:)[^\s/@'\"]+@")
_LIBPQ_PASSWORD = re.compile(r"(\bpassword\s*=\s*)(?:'(?:[^'\\]|\\.)*'|[^\s'\"]+)", re.IGNORECASE)


def without_written_passwords(text: str) -> str:
    """``text`` with every password a URL or a connection text spells out replaced: the crash
    log's second pass, for the secrets no setting named (the known ones are cut first)."""
    return _LIBPQ_PASSWORD.sub(rf"\g<1>{HIDDEN}", _URL_PASSWORD.sub(rf"\g<1>{HIDDEN}@", text))


def redact(text: str, key: str) -> str:
    """Never print a whole key: its first four characters say which one it is."""
    return Secrets(keys=(key,)).redact(text) if key else text


def gathered(keys: Iterable[str], argv: Sequence[str], environ: Mapping[str, str], location: object) -> Secrets:
    """Every secret a command knows: the keys its settings gave (the derived ones asked for
    included), its words' and environment's, its state's passwords."""
    return Secrets(keys=tuple(keys)) | of_invocation(argv, environ) | of_location(location)


def of_location(location: object) -> Secrets:
    """The passwords of a database state (none for a file)."""
    found = getattr(location, "passwords", None)
    return Secrets(passwords=tuple(found)) if isinstance(found, list) else Secrets()


def of_invocation(argv: Sequence[str], environ: Mapping[str, str]) -> Secrets:
    """What a command line and its environment hold that no output may show: ``--key``'s
    value, every password of a database URL or an http(s) URL among the words, and the values of the
    variables named like secrets (INDEXNOW_KEY, a ``[keys] derive`` secret, PGPASSWORD)."""
    named = [(name, value) for name, value in environ.items() if _SECRET_NAMES.search(name) and len(value) >= _SHORTEST_SECRET]
    keys = [value for name, value in named if "PASS" not in name.upper()]
    found = [value for name, value in named if "PASS" in name.upper()]
    for n, word in enumerate(argv):
        flag, equals, value = word.partition("=")
        if flag in _KEY_FLAGS and equals:
            keys.append(value)
        elif word in _KEY_FLAGS and n + 1 < len(argv):
            keys.append(argv[n + 1])
        for text in (word, value):
            if is_database_url(text):
                found.extend(passwords(text))
            elif (info := userinfo(text)) is not None and ":" in info:  # https://user:pw@host/sitemap.xml
                found.append(info.partition(":")[2])
    return Secrets(keys=tuple(key for key in keys if key), passwords=tuple(found))


def redacted_words(argv: Iterable[str], secrets: Secrets) -> list[str]:
    """A command line as a log may show it: a database URL without its password, every secret cut."""
    shown = []
    for word in argv:
        flag, equals, value = word.partition("=")
        if is_database_url(word):
            word = without_password(word)
        elif equals and is_database_url(value):
            word = f"{flag}={without_password(value)}"
        shown.append(secrets.redact(word))
    return shown
