"""Paths as the reader and the build take them: resolved without raising, kept inside a root,
told apart from URLs. A leaf: no reader, no HTTP client."""

from __future__ import annotations

import os
from pathlib import Path


def resolved(path: Path | str) -> Path:
    """``Path.resolve()`` that never raises: a symlink loop (which ``resolve`` turns into a
    RuntimeError) stays as written, absolute, and reading it then says what is wrong."""
    try:
        return Path(path).resolve()
    except (OSError, RuntimeError):
        return Path(os.path.abspath(path))


def is_inside(path: Path, root: Path) -> bool:
    """Whether a resolved ``path`` is ``root`` or below it (no ``..`` escapes the site)."""
    return path == root or root in path.parents


def is_url(location: str) -> bool:
    return location.startswith(("http://", "https://"))


__all__ = ["is_inside", "is_url", "resolved"]
