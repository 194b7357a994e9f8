"""Built page files and their content fingerprints (with ``--site-dir``)."""

from __future__ import annotations

import hashlib
import urllib.parse
from collections.abc import Iterable
from pathlib import Path

from notifier.source import is_inside, resolved
from notifier.urls import split_url


def page_file(loc: str, site_dir: Path) -> Path | None:
    """The built file of a URL: ``{path}/index.html``, ``{path}.html`` or ``{path}``, first that exists."""
    path = urllib.parse.unquote(split_url(loc).path).strip("/")
    candidates = [f"{path}/index.html", f"{path}.html", path] if path else ["index.html"]
    for candidate in candidates:
        full = resolved(site_dir / candidate)
        if is_inside(full, site_dir) and full.is_file():
            return full
    return None


def fingerprint(path: Path) -> str | None:
    try:
        with path.open("rb") as handle:
            return hashlib.file_digest(handle, lambda: hashlib.blake2b(digest_size=16)).hexdigest()
    except OSError:
        return None


def fingerprints(locs: Iterable[str], site_dir: Path) -> dict[str, str]:
    """loc -> fingerprint of its built page file, for every URL whose file is found."""
    root = resolved(site_dir)
    found: dict[str, str] = {}
    for loc in locs:
        path = page_file(loc, root)
        if path is not None:
            digest = fingerprint(path)
            if digest is not None:
                found[loc] = digest
    return found
