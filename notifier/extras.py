"""How to add an optional dependency to the installation that is running: the words a
"needs X, which is not installed" line tells the user to type. pipx and ``uv tool`` keep
each tool in an environment of its own, where ``pip install`` in a shell reaches nothing."""

from __future__ import annotations

import sys
from pathlib import PurePath

# extra -> the distributions it adds (pyproject.toml's [project.optional-dependencies])
PACKAGES = {"report": "jinja2", "postgres": "'psycopg[binary]'", "mkdocs": "mkdocs", "sphinx": "sphinx sphinx-sitemap"}


def install_hint(extra: str, prefix: str | None = None) -> str:
    """The command that adds ``extra`` to this installation (``prefix``: its environment)."""
    parts = PurePath(prefix if prefix is not None else sys.prefix).parts
    packages = PACKAGES[extra]
    if "pipx" in parts and "venvs" in parts:
        return f"pipx inject notify-changes {packages}"
    if "uv" in parts and "tools" in parts:
        with_each = " ".join(f"--with {package}" for package in packages.split())
        return f"uv tool install --reinstall {with_each} notify-changes"
    return f"pip install 'notify-changes[{extra}]' (in the environment notify-changes runs from)"
