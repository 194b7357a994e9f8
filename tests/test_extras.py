"""The "X is not installed" lines name the command for the installation that runs:
``pipx inject`` in a pipx venv, ``uv tool install --with`` for a uv tool, pip elsewhere."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

from notifier.extras import PACKAGES, install_hint

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize(
    ("prefix", "hint"),
    [
        ("/home/ann/.local/share/pipx/venvs/notify-changes", "pipx inject notify-changes jinja2"),
        ("/home/ann/.local/share/uv/tools/notify-changes", "uv tool install --reinstall --with jinja2 notify-changes"),
        ("/srv/site/.venv", "pip install 'notify-changes[report]' (in the environment notify-changes runs from)"),
        ("/usr", "pip install 'notify-changes[report]' (in the environment notify-changes runs from)"),
        # each word alone is no pipx or uv tool (#44: an "or" for an "and", or one side dropped, lived)
        ("/home/ann/.local/share/pipx/shared", "pip install 'notify-changes[report]' (in the environment notify-changes runs from)"),
        ("/srv/venvs/notify-changes", "pip install 'notify-changes[report]' (in the environment notify-changes runs from)"),
        ("/home/uv/site/.venv", "pip install 'notify-changes[report]' (in the environment notify-changes runs from)"),
        ("/srv/tools/notify-changes", "pip install 'notify-changes[report]' (in the environment notify-changes runs from)"),
    ],
)
def test_the_hint_fits_the_installation(prefix: str, hint: str) -> None:
    assert install_hint("report", prefix) == hint


def test_every_extra_named_is_the_projects_with_its_distributions() -> None:
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    for extra, packages in PACKAGES.items():
        wanted = {re.match(r"[A-Za-z0-9_.-]+", each).group(0).lower() for each in extras[extra]}  # type: ignore[union-attr]
        assert {re.sub(r"\[.*", "", each.strip("'")).lower() for each in packages.split()} == wanted, extra


def test_the_report_without_jinja2_is_one_line_naming_the_command(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    from notifier.errors import InputError
    from notifier.report_page import render_page

    monkeypatch.setitem(sys.modules, "jinja2", None)  # import jinja2 raises ImportError
    monkeypatch.setattr(sys, "prefix", "/home/ann/.local/share/pipx/venvs/notify-changes")
    with pytest.raises(InputError, match=r"^state report needs Jinja2, which is not installed: pipx inject notify-changes jinja2$"):
        render_page(None, "state.json", None)  # type: ignore[arg-type]
