"""When the MkDocs plugin acts after a build (mkdocs.py, #44), called with a stand-in config:
never under ``mkdocs serve``, never with both stamp and check off, and with either one on.
The real builds are in tests/test_mkdocs*.py. Each test names the edit it fails with."""

from __future__ import annotations

import logging
from pathlib import Path
from types import SimpleNamespace

import pytest

pytest.importorskip("mkdocs")

from notifier.mkdocs import NotifyChangesPlugin


def _after_build(tmp_path: Path, caplog: pytest.LogCaptureFixture, *, stamp: bool, check: bool, command: str = "build") -> list[str]:
    """The plugin's lines after a build of a site with no sitemap.xml (acting, it says so)."""
    plugin = NotifyChangesPlugin()
    plugin.load_config({"stamp": stamp, "check": check})
    plugin.on_startup(command=command, dirty=False)
    with caplog.at_level(logging.WARNING):
        plugin.on_post_build(config=SimpleNamespace(site_dir=str(tmp_path)))  # type: ignore[arg-type]
    return [record.getMessage() for record in caplog.records if "sitemap.xml" in record.getMessage()]


def test_a_build_that_neither_stamps_nor_checks_is_left_alone(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """(edit: the ``not (stamp or check)`` side dropped)"""
    assert _after_build(tmp_path, caplog, stamp=False, check=False) == []


def test_a_build_that_only_stamps_is_acted_on(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """(edit: the ``stamp`` side of ``stamp or check`` dropped)"""
    assert len(_after_build(tmp_path, caplog, stamp=True, check=False)) == 1


def test_mkdocs_serve_is_left_alone(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    assert _after_build(tmp_path, caplog, stamp=True, check=True, command="serve") == []
