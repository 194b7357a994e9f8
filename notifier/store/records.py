"""A URL's record: what the state knows of one URL, as a small list.

A record is read and changed only through these helpers (the store's own decoding and
checks aside): the list layout stays an implementation detail of this module.
"""

from __future__ import annotations

import itertools
import operator
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

# A URL's record is a list, not an object: a million of them must fit in memory and load
# fast. [lastmod as written (or None), first_seen, last_submitted (or None)], and the page
# file's fingerprint as a fourth item when --site-dir fingerprints are kept.
Record = list[Any]
LASTMOD, FIRST_SEEN, LAST_SUBMITTED, FINGERPRINT = 0, 1, 2, 3
FIELDS = ("lastmod", "first_seen", "last_submitted", "fingerprint")


def new_record(
    lastmod: str | None, first_seen: str | None = None, last_submitted: str | None = None, fingerprint: str | None = None
) -> Record:
    record: Record = [lastmod, first_seen, last_submitted]
    if fingerprint is not None:
        record.append(fingerprint)
    return record


def lastmod_of(record: Record) -> str | None:
    """The lastmod as the sitemap wrote it, or None."""
    return record[LASTMOD]  # type: ignore[no-any-return]


def fingerprint_of(record: Record) -> str | None:
    """The built page file's fingerprint, when --site-dir recorded one."""
    return record[FINGERPRINT] if len(record) > FINGERPRINT else None


def recorded_lastmods(urls: Mapping[str, Record], locs: Iterable[str], absent: object) -> Iterator[object]:
    """The lastmod recorded for each of ``locs`` in turn (``absent`` for a URL with no record),
    in one sweep at C speed (a check of ten million URLs)."""
    return map(_LASTMOD_OF, map(urls.get, locs, itertools.repeat((absent,) * (LASTMOD + 1))))


_LASTMOD_OF = operator.itemgetter(LASTMOD)


def recorded_on(record: Record) -> str | None:
    """When its lastmod was last announced, or else first seen."""
    return record[LAST_SUBMITTED] or record[FIRST_SEEN]  # type: ignore[no-any-return]


def last_submitted_of(record: Record) -> str | None:
    """When an endpoint last acknowledged it, or None."""
    return record[LAST_SUBMITTED]  # type: ignore[no-any-return]


def renew(record: Record, lastmod: str | None, fingerprint: str | None) -> Record:
    """The record as this deploy leaves it: the sitemap's lastmod, the new fingerprint."""
    record[LASTMOD] = lastmod
    if fingerprint is not None:
        if len(record) > FINGERPRINT:
            record[FINGERPRINT] = fingerprint
        else:
            record.append(fingerprint)
    return record


def stamp_submitted(record: Record, at: str) -> None:
    """An endpoint acknowledged it at ``at``: the latest acknowledgement wins."""
    if record[LAST_SUBMITTED] is None or record[LAST_SUBMITTED] < at:
        record[LAST_SUBMITTED] = at
