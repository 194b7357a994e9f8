"""The build output (``--site-dir``, or the sitemap's folder when it holds the home page):
its files, scanned once, and the page file each listed URL is served from.

A URL's page file is the first of ``{path}/index.html``, ``{path}.html`` and ``{path}``
that the build holds, the path percent-decoded (``/`` is ``index.html``), without the path
the build is served under (``project/`` of ``https://host/project/``: ``served_under``). A
run looks at each folder on a page's way once (``lstat``, remembered up to REMEMBERED
paths), on the worker that reads the page (``--site-dir`` fingerprints: see
site/pages.py), and the page file itself is opened without a look first (``open_page``);
``scan`` walks a whole build (tests). Either way no path is resolved per
URL, and nothing leads outside the build: a symbolic link is followed only when it stays
inside, and ``..`` names nothing.
"""

from __future__ import annotations

import array
import bisect
import errno
import os
import stat
import urllib.parse
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path

from notifier.paths import is_inside, is_url, resolved
from notifier.urlhash import loc_hash
from notifier.urls import path_query, under_base

HOME_PAGE = "index.html"
GUESS_SAMPLE = 50  # URLs looked up to tell the folder a build is served under: a folder all 50 lack is no guess
MAX_DEPTH = 64  # a page path of more names (folders and the file) is not a page anyone links to
REMEMBERED = 1 << 16  # paths an unscanned build remembers the kind of (then forgets them all): memory stays flat at any size


@dataclass
class SiteFolder:
    """The build's files, paths relative to its root with ``/`` between folders, kept as a
    sorted array of their 64-bit hashes: 8 bytes a file, not a hundred (a set of strings
    would hold 24 MB at 200,000 pages). The hash is ``loc_hash``, the same in every process
    (``hash()`` of a str is seeded per interpreter): a folder scanned on a worker is right
    however the worker was started. Two paths sharing a hash (odds of one in 10**13 at
    that size) would only make a missing page look present, and then unreadable."""

    root: Path
    hashes: array.array[int] | None = None  # None: not scanned, each path looked at when asked
    # the hashes of the URL paths some file serves (``a`` for a/index.html, a.html and a):
    # a URL with no file costs one lookup here, not one per file it could be
    served: array.array[int] | None = None
    _found: list[int] = field(default_factory=list, repr=False)  # while scanning
    _served: list[int] = field(default_factory=list, repr=False)
    _kinds: dict[str, str | None] = field(default_factory=dict, repr=False)  # not scanned: path -> "dir", "file" or None
    base: str = ""  # the URL path the build's root is served under ("project" for https://host/project/)

    @classmethod
    def scan(cls, root: Path, base: str = "") -> SiteFolder:
        """Walk the build once, depth first: a folder of 200,000 page folders is never held
        as a list. Links are followed only when they stay inside the build."""
        build = cls(resolved(root), base=base)
        build._walk(str(build.root), "", {build.root}, 0)
        build.hashes = _sorted(build._found)
        build.served = _sorted(build._served)
        build._found, build._served = [], []
        return build

    @classmethod
    def of(cls, root: Path, names: Iterable[str]) -> SiteFolder:
        """A build holding ``names`` (for tests)."""
        names = set(names)
        return cls(root, _sorted(map(loc_hash, names)), _sorted(loc_hash(served_path(name)) for name in names))

    @classmethod
    def unscanned(cls, root: Path, base: str = "") -> SiteFolder:
        """A build whose paths are looked at one by one, as they are asked for."""
        return cls(resolved(root), base=base)

    def has(self, relative: str) -> bool:
        """Whether the build holds the file ``relative``."""
        hashes = self.hashes
        if hashes is None:
            return self._kind(relative) == "file"
        return _holds(hashes, loc_hash(relative))

    def _kind(self, relative: str) -> str | None:
        """ "dir", "file" or None for a path under the root, each folder on the way looked at
        once; a link counts for what it leads to when that stays inside the build."""
        kinds = self._kinds
        kind = kinds.get(relative, "?")
        if kind != "?":
            return kind
        names = relative.split("/")
        if len(names) > MAX_DEPTH or "" in names or "." in names or ".." in names:
            return None
        parent = relative.rpartition("/")[0]
        if parent and self._kind(parent) != "dir":
            return None  # a file or nothing on the way
        if len(kinds) >= REMEMBERED:
            kinds.clear()
        kind = kinds[relative] = self._look(relative)
        return kind

    def _look(self, path: str) -> str | None:
        try:
            mode = os.lstat(f"{self.root}{os.sep}{path}").st_mode  # a str: a Path joined costs more than the lstat
            if stat.S_ISLNK(mode):
                target = resolved(self.root / path)
                mode = os.stat(target).st_mode if is_inside(target, self.root) else 0
        except (OSError, ValueError):
            return None
        return "dir" if stat.S_ISDIR(mode) else "file" if stat.S_ISREG(mode) else None

    def _walk(self, folder: str, prefix: str, seen_dirs: set[Path], depth: int) -> None:
        if depth >= MAX_DEPTH:  # its files' paths would have more than MAX_DEPTH names (as _kind counts them)
            return
        add, serve = self._found.append, self._served.append
        try:
            with os.scandir(folder) as listing:
                for entry in listing:  # the file type comes with the listing: no call per file
                    if entry.is_file(follow_symlinks=False):
                        name = prefix + entry.name
                        add(loc_hash(name))  # served at its own name too: the same hash, in ``hashes``
                        serve(loc_hash(served_path(name)))
                    elif entry.is_dir(follow_symlinks=False):
                        self._walk(entry.path, f"{prefix}{entry.name}/", seen_dirs, depth + 1)
                    elif entry.is_symlink():
                        self._follow(entry, prefix + entry.name, seen_dirs, depth)
        except OSError:
            return  # an unreadable folder: its pages are reported missing

    def _follow(self, entry: os.DirEntry[str], name: str, seen_dirs: set[Path], depth: int) -> None:
        """A symbolic link: a file or folder inside the build counts; anything else does not."""
        try:
            target = resolved(Path(entry.path))
            if not is_inside(target, self.root):
                return
            if target.is_dir():
                if target not in seen_dirs:
                    seen_dirs.add(target)
                    self._walk(str(target), name + "/", seen_dirs, depth + 1)
            elif target.is_file():
                self._found.append(loc_hash(name))
                self._served.append(loc_hash(served_path(name)))
        except OSError:
            return

    def page_file(self, loc: str) -> str | None:
        """The built file ``loc`` is served from (relative to the root), or None."""
        path = url_path(loc, self.base)
        if self.served is not None:  # no file serves this path: one lookup (two for a file's own name)
            wanted = loc_hash(path)
            if not _holds(self.served, wanted) and not _holds(self.hashes or self.served, wanted):
                return None
        for candidate in candidates_of(path):
            if self.has(candidate):
                return candidate
        return None

    def open_page(self, loc: str) -> tuple[int, int] | None:
        """The page file ``loc`` is served from, opened: (descriptor, size), or None. A
        candidate is opened where its folder was looked at (``_kind``), with no ``lstat`` of
        the file first: one ``open`` that follows no link, then ``fstat`` (a link is looked at
        as ``_kind`` looks, and opened only when it stays inside). On disk even when the build
        was scanned: the page reader's own views never are."""
        path = url_path(loc, self.base)
        first, slash, _ = path.partition("/")
        if slash and self._kind(first) != "dir":  # its first folder is not in the build: one look for every URL under it
            return None
        for candidate in candidates_of(path):
            opened = self._open_file(candidate)
            if opened is not None:
                return opened
        return None

    def _open_file(self, relative: str) -> tuple[int, int] | None:
        if relative.count("/") >= MAX_DEPTH:
            return None
        # every folder on the way is looked at by _kind, which refuses "", "." and "..": a last
        # name of "." or ".." opens a folder, which _regular turns down
        parent = relative.rpartition("/")[0]
        if parent and self._kind(parent) != "dir":
            return None  # a file or nothing on the way, or a link that leads outside
        path = f"{self.root}{os.sep}{relative}"
        try:
            fd = os.open(path, _OPEN | os.O_NOFOLLOW)
        except OSError as error:  # ELOOP: a link, opened when it leads to a file inside the build
            return _open_regular(path) if error.errno == errno.ELOOP and self._kind(relative) == "file" else None
        return _regular(fd)

    def served_under_guess(self, locs: list[str]) -> str | None:
        """The folder every one of ``locs`` (none with a page file) begins with, such that the
        build has their pages without it: ``project`` when a site_url or html_baseurl of
        ``https://host/project/`` puts it before every page and nothing said so (no
        --sitemap-url). The shortest such folder; None when there is none. At most
        GUESS_SAMPLE URLs are looked up for each folder tried, and the paths of all ``locs``
        are looked at only when a folder fits those (a build with none of 200,000 listed
        pages, a wrong --site-dir, costs 50 lookups a folder, not 0.7 s)."""
        sample = locs[:GUESS_SAMPLE]
        shared, _ = _shared_names([url_path(loc, self.base).split("/") for loc in sample])
        for depth in range(1, len(shared) + 1):
            base = "/".join(filter(None, [self.base, *shared[:depth]]))
            trial = replace(self, base=base)
            if all(trial.page_file(loc) is not None for loc in sample):
                # every URL must begin with it, and it must be a folder, never a whole page's path;
                # a deeper folder would fail the same test, so the answer is this one or none
                common, longest = _shared_names([url_path(loc, self.base).split("/") for loc in locs])
                return base if depth <= min(len(common), longest - 1) else None
        return None

    def candidates(self, loc: str) -> tuple[str, ...]:
        """The files ``loc`` may be served from, in the order they are looked for."""
        return candidates_of(url_path(loc, self.base))

    def path_of(self, relative: str) -> Path:
        return self.root / relative

    def read_text(self, relative: str, limit: int = 1 << 20) -> str | None:
        """A small file of the build (robots.txt, _headers, _redirects) as text, or None."""
        if not self.has(relative):
            return None
        try:
            with self.path_of(relative).open("rb") as handle:
                return handle.read(limit).decode("utf-8", errors="replace")
        except OSError:
            return None


def url_path(loc: str, base: str = "") -> str:
    """A URL's path as the build names files: percent-decoded, without its outer slashes and
    without ``base``, the path the build is served under (``served_under``)."""
    path = path_query(loc)[0]
    if "%" in path:
        path = urllib.parse.unquote(path)
    return under_base(path.strip("/"), base)


def _shared_names(paths: list[list[str]]) -> tuple[list[str], int]:
    """The leading names every one of ``paths`` has (none empty), and the most names a path has."""
    common: list[str] = []
    for names in zip(*paths, strict=False):
        if len(set(names)) != 1 or names[0] == "":
            break
        common.append(names[0])
    return common, max((len(names) for names in paths), default=0)


def served_under(sitemap: str, site_dir: Path | None, sitemap_url: str | None) -> str:
    """The URL path the build's root is served under, without its slashes: ``project`` when
    the build's ``sitemap.xml`` is served at ``https://host/project/sitemap.xml``
    (``--sitemap-url``); "" when it is served at the host's root, or nothing says."""
    if not sitemap_url or is_url(sitemap):
        return ""
    try:
        where = Path(sitemap).resolve().relative_to(resolved(site_dir or Path(sitemap).parent)).as_posix()
    except (ValueError, OSError):
        return ""
    public = urllib.parse.unquote(path_query(sitemap_url)[0])
    if not public.endswith("/" + where):
        return ""
    return public[: -len(where)].strip("/")


def candidates_of(path: str) -> tuple[str, ...]:
    return (f"{path}/{HOME_PAGE}", f"{path}.html", path) if path else (HOME_PAGE,)


def served_path(name: str) -> str:
    """The URL path (as url_path gives it) a build file is served at besides its own name:
    a/index.html and a.html at ``a``, index.html at ``""``."""
    if name == HOME_PAGE:
        return ""
    if name.endswith("/" + HOME_PAGE):
        return name[: -len(HOME_PAGE) - 1]
    return name[:-5] if name.endswith(".html") else name


_OPEN = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC  # O_NONBLOCK: a FIFO named like a page never blocks the open


def _open_regular(path: str) -> tuple[int, int] | None:
    try:
        return _regular(os.open(path, _OPEN))
    except OSError:
        return None


def _regular(fd: int) -> tuple[int, int] | None:
    """(``fd``, its size) when it is a regular file; anything else (a folder named like a
    page, a FIFO, a device) is closed again: None."""
    try:
        info = os.fstat(fd)
        if stat.S_ISREG(info.st_mode):
            return fd, info.st_size
    except OSError:
        pass
    os.close(fd)
    return None


def _sorted(values: Iterable[int]) -> array.array[int]:
    return array.array("Q", sorted(values))


def _holds(hashes: array.array[int], wanted: int) -> bool:
    at = bisect.bisect_left(hashes, wanted)
    return at < len(hashes) and hashes[at] == wanted


def site_root(site_dir: Path | None, sitemap: str, remote: bool) -> Path | None:
    """Where the built pages are: ``--site-dir``, else the folder of a local sitemap when it
    holds the home page (``index.html``), else nowhere (the page rules then stay silent)."""
    if site_dir is not None:
        return site_dir
    if remote:
        return None
    folder = Path(sitemap).parent
    return folder if (folder / HOME_PAGE).is_file() else None
