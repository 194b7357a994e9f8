"""The build output (``--site-dir``, or the sitemap's folder when it holds the home page):
its files, scanned once, and the page file each listed URL is served from.

A URL's page file is the first of ``{path}/index.html``, ``{path}.html`` and ``{path}``
that the build holds, the path percent-decoded (``/`` is ``index.html``). The lookup is
a set lookup in the scan, never a path resolved per URL; the scan stays inside the build
(a symbolic link leading out of it is not followed), so no URL can name a file outside.
"""

from __future__ import annotations

import os
import re
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path

from notifier.source import is_inside, resolved
from notifier.urls import split_url

HOME_PAGE = "index.html"
_PATH = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^/?#]*([^?#]*)")  # an absolute URL's path, at C speed


@dataclass
class Build:
    """The build's files, as paths relative to its root with ``/`` between folders."""

    root: Path
    files: set[str] = field(default_factory=set)

    @classmethod
    def scan(cls, root: Path) -> Build:
        """Walk the build once. Links are followed only when they stay inside it."""
        top = resolved(root)
        build = cls(top)
        add = build.files.add
        seen_dirs = {top}
        stack: list[tuple[str, str]] = [(str(top), "")]
        while stack:
            folder, prefix = stack.pop()
            try:
                with os.scandir(folder) as listing:
                    for entry in listing:  # the file type comes with the listing: no call per file
                        if entry.is_file(follow_symlinks=False):
                            add(prefix + entry.name)
                        elif entry.is_dir(follow_symlinks=False):
                            stack.append((entry.path, f"{prefix}{entry.name}/"))
                        elif entry.is_symlink():
                            build._follow(entry, prefix + entry.name, seen_dirs, stack)
            except OSError:
                continue  # an unreadable folder: its pages are reported missing
        return build

    def _follow(self, entry: os.DirEntry[str], name: str, seen_dirs: set[Path], stack: list[tuple[str, str]]) -> None:
        """A symbolic link: a file or folder inside the build counts; anything else does not."""
        try:
            target = resolved(Path(entry.path))
            if not is_inside(target, self.root):
                return
            if target.is_dir():
                if target not in seen_dirs:
                    seen_dirs.add(target)
                    stack.append((str(target), name + "/"))
            elif target.is_file():
                self.files.add(name)
        except OSError:
            return

    def page_file(self, loc: str) -> str | None:
        """The built file ``loc`` is served from (relative to the root), or None."""
        match = _PATH.match(loc)
        path = match.group(1) if match else split_url(loc).path
        if "%" in path:
            path = urllib.parse.unquote(path)
        path = path.strip("/")
        if not path:
            return HOME_PAGE if HOME_PAGE in self.files else None
        files = self.files
        for candidate in (f"{path}/{HOME_PAGE}", f"{path}.html", path):
            if candidate in files:
                return candidate
        return None

    def path_of(self, relative: str) -> Path:
        return self.root / relative

    def read_text(self, relative: str, limit: int = 1 << 20) -> str | None:
        """A small file of the build (robots.txt, _headers, _redirects) as text, or None."""
        if relative not in self.files:
            return None
        try:
            with self.path_of(relative).open("rb") as handle:
                return handle.read(limit).decode("utf-8", errors="replace")
        except OSError:
            return None


def build_root(site_dir: Path | None, sitemap: str, remote: bool) -> Path | None:
    """Where the built pages are: ``--site-dir``, else the folder of a local sitemap when it
    holds the home page (``index.html``), else nowhere (the page rules then stay silent)."""
    if site_dir is not None:
        return site_dir
    if remote:
        return None
    folder = Path(sitemap).parent
    return folder if (folder / HOME_PAGE).is_file() else None
