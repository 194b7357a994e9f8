"""A state in a database server: ``--state postgresql://USER@HOST/DB`` (a libpq connection
URI). The value keeps the whole URI for the connection and shows it without its password:
every message that names the state names it this way. A leaf: no database driver."""

from __future__ import annotations

import urllib.parse
from dataclasses import dataclass, field

SCHEMES = ("postgresql://", "postgres://")


def is_database_url(location: object) -> bool:
    return isinstance(location, str) and location.startswith(SCHEMES)


@dataclass(frozen=True)
class DatabaseURL:
    """A PostgreSQL state's URI and the site whose rows it reads and writes."""

    dsn: str = field(repr=False)  # may hold the password: only the driver sees it
    site: str | None = None  # --site-name: every row carries it

    def __str__(self) -> str:
        return without_password(self.dsn) + (f" (site {self.site})" if self.site else "")


def without_password(dsn: str) -> str:
    """The URI as it may be printed: ``postgresql://user@host/db``, no password, in the netloc
    or in the query (``?password=``)."""
    split = urllib.parse.urlsplit(dsn)
    netloc = split.netloc
    if "@" in netloc:
        user, _, host = netloc.rpartition("@")
        netloc = f"{user.partition(':')[0]}@{host}"
    query = "&".join(part for part in split.query.split("&") if part and not part.lower().startswith("password="))
    return urllib.parse.urlunsplit((split.scheme, netloc, split.path, query, ""))
