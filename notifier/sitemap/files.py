"""What the sitemap reader hands over: each file read, its entries (one per ``<url>`` or text
line), and the findings the rules judge; and what is worked out of a file where it is read.
"""

from __future__ import annotations

import array
import operator
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

from notifier.dates import timestamps
from notifier.urlhash import hash_index
from notifier.urls import irregular, origins_of, without_password

if TYPE_CHECKING:
    from notifier.workers import Workers

MAX_URLS_PER_FILE = 50_000  # sitemaps.org: at most 50,000 URLs per file, 50,000 parts per index


class Entry(NamedTuple):
    """One ``<url>`` of the sitemap (or one line of a plain-text sitemap)."""

    loc: str
    lastmod: str | None
    file: int  # index into Sitemap.files
    line: int


Row = tuple[str, str | None, int, int]  # an Entry as a plain tuple: (loc, lastmod, file, line)


make_entry = tuple.__new__  # Entry(...) without the Python-level constructor: once per URL
_LOC, _LASTMOD = operator.itemgetter(0), operator.itemgetter(1)  # of an Entry or a Row


class Finding(NamedTuple):
    """Something the reader saw that a verification rule judges (rules/checks.py)."""

    rule: str
    url: str
    message: str


@dataclass
class SitemapFile:
    """One file read: the root sitemap or an index part."""

    name: str  # as the user would recognise it: the path or URL
    kind: str  # "urlset", "index" or "text"
    url_count: int = 0
    digest: str = ""  # BLAKE2b of the raw bytes, to notice an unchanged part
    public_url: str | None = None  # the URL an index listed it under
    site_url: str | None = None  # a feed's own link to its site (RSS <channel><link>, Atom's feed-level alternate)
    key: str = ""  # stable identity across deploys: the path under the site dir, or the URL
    skipped: bool = False  # its bytes equal the recorded ones: not parsed, its URLs come from the state
    news: bool = False  # a Google News sitemap (xmlns:news): it lists the last two days' articles only
    alternates: dict[str, list[tuple[str, str]]] = field(default_factory=dict)  # loc -> its (hreflang, href)
    facts: FileFacts = field(default_factory=lambda: FileFacts())  # worked out where it was parsed, for the diff and the rules


@dataclass(frozen=True)
class Condense:
    """What the worker that reads one file does with its rows before handing them over:
    ``work(info, rows, data)`` (a module-level function: it is pickled by name) returns what
    to hand over instead, or None to hand over the rows."""

    work: Callable[[SitemapFile, list[Row], Any], object | None]
    data: Any


class Condenser(Protocol):
    """Lets the workers that read an index's parts hand over less than every row (a check's
    comparison with the recorded file, done where the file was parsed)."""

    def ask(self, key: str) -> Condense | None:
        """Before the part whose file key is ``key`` is sent to a worker: what it does there."""

    def take(self, info: SitemapFile, condensed: object) -> bool:
        """What a worker made of a file; False, having changed nothing: read it again, here,
        and hand its rows to the sink."""


@dataclass(frozen=True)
class Wanted:
    """What the diff and the rules want worked out of each file where it is parsed (on every
    core, for an index's parts), beyond its origins and irregular URLs."""

    url_hashes: bool = False  # its URL-hash index (a run that records the state's new parts)
    stamps: bool = False  # its lastmods parsed (a first run: every URL is added, every date judged)


@dataclass(frozen=True)
class FileFacts:
    """What was worked out of one file's entries where it was parsed (``facts_of``)."""

    origins: list[str] = field(default_factory=list)  # scheme://host of its URLs, first seen first
    irregular: list[str] = field(default_factory=list)  # its URLs that are not plain (urls.irregular)
    url_hashes: bytes | None = None  # urlhash.hash_index of its URLs (Wanted.url_hashes)
    stamps: array.array[float] | None = None  # dates.timestamps of its entries' lastmods (Wanted.stamps)


@dataclass
class Sitemap:
    """Everything read from SITEMAP and its parts, in document order."""

    entries: list[Entry] = field(default_factory=list)
    files: list[SitemapFile] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    root_url: str | None = None  # the sitemap's public URL when known
    # when set, each urlset or text file's entries go here as soon as it is read, in
    # document order, instead of into ``entries``; None stands for a file not read
    sink: Callable[[SitemapFile, Sequence[Row] | None], None] | None = field(default=None, repr=False)
    # a worker's read of one part: its entries are plain Rows (they cross the process
    # boundary several times faster than Entry), its files numbered from ``first_file``
    # (their place in the whole sitemap), so they need no rebuilding on either side
    plain: bool = False
    first_file: int = 0


class IndexPart(NamedTuple):
    """A part an index lists: its loc and the line that lists it."""

    loc: str
    line: int


@dataclass(frozen=True)
class ReadOptions:
    """How to read: where the build lives, how long to wait for a server, what to tell the
    user on the way, the run's workers, and what to work out of each file."""

    site_dir: Path | None = None
    base: str = ""  # the URL path the build is served under (site.folder.served_under): parts are found without it
    request_timeout: float = 30.0
    progress: Callable[[str], None] | None = None
    step: Callable[[str], None] | None = None  # one line per part of an index read
    wanted: Wanted = Wanted()
    workers: Workers | None = field(default=None, compare=False, repr=False)  # the run's worker processes (None: read here)
    auth: tuple[str, str] | None = field(default=None, repr=False)  # a remote sitemap's basic auth, for its site only


def facts_of(entries: Sequence[Entry], wanted: Wanted = Wanted()) -> FileFacts:
    """Work out what the diff and the rules want to know of a file read: its origins, its
    irregular URLs, and as ``wanted`` says, its URL-hash index and parsed dates."""
    locs = list(map(_LOC, entries))
    return FileFacts(
        origins=origins_of(locs),
        irregular=irregular(locs),
        url_hashes=hash_index(locs) if wanted.url_hashes else None,
        stamps=timestamps(list(map(_LASTMOD, entries))) if wanted.stamps else None,
    )


def hide_passwords(entries: list[Entry], facts: FileFacts) -> bool:
    """Replace in ``entries`` each loc's password (``http://admin:hunter2@host/``) by a mark,
    where the loc is read: no state, report, ledger or log holds it after; url-invalid
    names the loc, and it is never sent. Only irregular locs can hold one (``facts``).
    Whether any did (then the caller works ``facts`` out again)."""
    hidden = {loc: shown for loc in facts.irregular if (shown := without_password(loc)) != loc}
    if not hidden:
        return False
    for number, entry in enumerate(entries):
        if entry[0] in hidden:
            entries[number] = make_entry(type(entry), (hidden[entry[0]], *entry[1:]))
    return True
