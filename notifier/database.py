"""A state in a database server: ``--state postgresql://USER@HOST/DB`` (a libpq connection
URI) or a libpq ``key=value`` connection string (``host=db dbname=states user=ci``). The
value keeps the whole text for the connection and shows it without its passwords: every
message that names the state names it this way. A leaf: no database driver.

Passwords are found by parsing, as libpq reads the text (RFC 3986 userinfo, query
parameters whose percent-decoded names are ``password`` or ``sslpassword``, the
``key=value`` form's quoting), never by the text's shape: ``?pass%77ord=`` is a password."""

from __future__ import annotations

import re
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass, field

from notifier.errors import LOCK_TIMEOUT

SCHEMES = ("postgresql://", "postgres://")
SECRET_PARAMETERS = frozenset({"password", "sslpassword"})  # libpq's keywords that hold a secret
# libpq's connection keywords (PostgreSQL 17, "Parameter Key Words"): a text made only of
# these ``key=value`` pairs is a connection string, never a file name
# fmt: off
KEYWORDS = frozenset({
    "host", "hostaddr", "port", "dbname", "user", "password", "passfile", "require_auth", "channel_binding", "connect_timeout",
    "client_encoding", "options", "application_name", "fallback_application_name", "keepalives", "keepalives_idle", "keepalives_interval",
    "keepalives_count", "tcp_user_timeout", "replication", "gssencmode", "sslmode", "requiressl", "sslnegotiation", "sslcompression",
    "sslcert", "sslkey", "sslkeylogfile", "sslpassword", "sslcertmode", "sslrootcert", "sslcrl", "sslcrldir", "sslsni",
    "requirepeer", "ssl_min_protocol_version", "ssl_max_protocol_version", "min_protocol_version", "max_protocol_version",
    "krbsrvname", "gsslib", "gssdelegation", "service", "target_session_attrs", "load_balance_hosts",
})
# fmt: on
# one ``key = value`` pair of the key=value form: a bare value, or one in single quotes
# where a backslash escapes the next character (libpq's conninfo_parse)
_PAIR = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_]*)\s*=\s*('(?:[^'\\]|\\.)*'|(?:[^\s'\\]|\\.)+)\s*", re.DOTALL)


_LIKE_A_KEYWORD_STRING = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_]*)\s*=[^\s']*['\s]")


def broken_keyword_string(text: str) -> str | None:
    """What is wrong with ``text`` when it reads as a libpq ``key=value`` connection string
    that libpq cannot parse (it begins with one of libpq's keywords and ``=``, and goes on
    after a space or a quote), or None. Said without any value: a value may be a password."""
    start = _LIKE_A_KEYWORD_STRING.match(text)
    if start is None or start.group(1) not in KEYWORDS or _keyword_pairs(text) is not None:
        return None
    position = 0
    while True:
        match = _PAIR.match(text, position)
        if match is None or match.end() == position or match.group(1) not in KEYWORDS:
            break
        position = match.end()
    rest = text[position:]
    word = re.match(r"\s*([A-Za-z_][A-Za-z0-9_]*)\s*(=?)\s*(')?", rest)
    if word is not None and word.group(1) in KEYWORDS and word.group(3):
        return f"the value of {word.group(1)} opens a quote it never closes"
    if word is not None and word.group(1) in KEYWORDS and not word.group(2):
        return f"{word.group(1)} has no =value"
    return "a word in it is not one of libpq's keyword=value pairs"


def is_database_url(location: object) -> bool:
    """Whether ``location`` names a database rather than a file: a postgresql:// URI, or a
    libpq ``key=value`` connection string of libpq's own keywords."""
    if not isinstance(location, str):
        return False
    return location.startswith(SCHEMES) or _keyword_pairs(location) is not None


@dataclass(frozen=True)
class DatabaseURL:
    """A PostgreSQL state's connection text, the site whose rows it reads and writes, and
    how long any exchange with the server may take."""

    dsn: str = field(repr=False)  # may hold the password: only the driver sees it
    site: str | None = None  # --site-name: every row carries it
    lock_timeout: float = field(default=LOCK_TIMEOUT, compare=False)  # --lock-timeout: a lock on its tables is waited for this long
    request_timeout: float = field(default=30.0, compare=False)  # --request-timeout: the server answers within this

    def __str__(self) -> str:
        return without_password(self.dsn) + (f" (site {self.site})" if self.site else "")

    @property
    def passwords(self) -> list[str]:
        return passwords(self.dsn)


def without_password(dsn: str) -> str:
    """The connection text as it may be printed: ``postgresql://user@host/db`` with no
    password, neither in the userinfo nor in the query; ``host=db user=ci`` without its
    ``password=`` pair. It never raises, however malformed the text."""
    pairs = _keyword_pairs(dsn) if not dsn.startswith(SCHEMES) else None
    if pairs is not None:
        return " ".join(f"{key}={value}" for key, value, _ in pairs if key.lower() not in SECRET_PARAMETERS)
    if not dsn.startswith(SCHEMES):
        return dsn
    scheme, userinfo, rest, query = _uri_parts(dsn)
    user = (userinfo.partition(":")[0] + "@") if userinfo is not None else ""
    kept = [part for part in query.split("&") if part and _decoded(part.partition("=")[0]).lower() not in SECRET_PARAMETERS]
    return f"{scheme}{user}{rest}" + (f"?{'&'.join(kept)}" if kept else "")


def passwords(dsn: str) -> list[str]:
    """Every spelling of every secret in ``dsn`` that a driver's message may quote: as
    written and percent-decoded, longest first (so a shorter one never leaves a piece of a
    longer one). A userinfo with an unescaped ``@`` is read both ways libpq and RFC 3986 may
    split it."""
    found: list[str] = []
    pairs = _keyword_pairs(dsn) if not dsn.startswith(SCHEMES) else None
    if pairs is not None:
        found.extend(text for key, written, value in pairs if key.lower() in SECRET_PARAMETERS for text in (written.strip("'"), value))
    elif dsn.startswith(SCHEMES):
        found.extend(_uri_passwords(dsn))
    every = {spelling for secret in found if secret for spelling in (secret, _decoded(secret))}
    return sorted(every, key=len, reverse=True)


def _uri_passwords(dsn: str) -> Iterator[str]:
    _, userinfo, _, query = _uri_parts(dsn)
    if userinfo is not None:
        yield userinfo.partition(":")[2]
        authority = dsn.split("://", 1)[1].split("/", 1)[0]
        yield authority.partition("@")[0].partition(":")[2]  # libpq's reading: the first "@" ends the userinfo
    for part in query.split("&"):
        name, _, value = part.partition("=")
        if _decoded(name).lower() in SECRET_PARAMETERS:
            yield value


def _uri_parts(dsn: str) -> tuple[str, str | None, str, str]:
    """scheme://, the userinfo (None: none), hosts and path, the query: split by hand, as no
    bracket, port or percent sign can make it fail (``urlsplit`` raises on ``[::1``)."""
    scheme, _, rest = dsn.partition("://")
    rest = rest.partition("#")[0]
    userinfo: str | None = None
    at = rest.rfind("@", 0, rest.find("/") if "/" in rest else len(rest))  # libpq looks for the "@" up to the first "/"
    if at >= 0:
        userinfo, rest = rest[:at], rest[at + 1 :]
    rest, _, query = rest.partition("?")
    return f"{scheme}://", userinfo, rest, query


def _keyword_pairs(text: str) -> list[tuple[str, str, str]] | None:
    """The (keyword, value as written, value) pairs of a libpq ``key=value`` string, or None
    when ``text`` is not one (a pair whose keyword libpq does not know, or anything else)."""
    pairs: list[tuple[str, str, str]] = []
    position = 0
    while position < len(text):
        match = _PAIR.match(text, position)
        if match is None or match.end() == position or match.group(1) not in KEYWORDS:
            return None
        written = match.group(2)
        value = written[1:-1] if written.startswith("'") else written
        pairs.append((match.group(1), written, re.sub(r"\\(.)", r"\1", value, flags=re.DOTALL)))
        position = match.end()
    return pairs or None


def _decoded(text: str) -> str:
    return urllib.parse.unquote(text, errors="replace")


_LOOPBACK = ("localhost", "127.0.0.1", "::1", "")  # "": libpq's default, the local server


def database_identity(dsn: str) -> tuple[str, int, str, str]:
    """(host, port, database, user) of a ``postgresql://`` URI: the query's ``host=``,
    ``port=``, ``dbname=`` and ``user=`` over the URI's own parts, the local server's names
    (and a socket folder) taken as one, libpq's defaults (port 5432, the database named as
    the user) filled in. Never the password."""
    split = urllib.parse.urlsplit(dsn)
    query = {key.lower(): value for key, value in urllib.parse.parse_qsl(split.query)}
    try:
        host, port = urllib.parse.unquote(split.hostname or ""), split.port
    except ValueError:  # several hosts (host1,host2:5433): compared as written
        host, port = split.netloc.rpartition("@")[2], None
    host = query.get("host", host).lower()
    user = query.get("user", urllib.parse.unquote(split.username or ""))
    database = query.get("dbname", urllib.parse.unquote(split.path.lstrip("/"))) or user
    try:
        number = int(query.get("port") or port or 5432)
    except ValueError:
        number = -1
    return ("localhost" if host in _LOOPBACK or host.startswith("/") else host, number, database, user)
