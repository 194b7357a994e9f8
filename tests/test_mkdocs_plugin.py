"""The MkDocs plugin's decisions, in this process (tests/test_plugins.py builds real sites)."""

from __future__ import annotations

import importlib.util
import logging
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(importlib.util.find_spec("mkdocs") is None, reason="mkdocs is not installed (pip install -e '.[test]')")


def test_a_build_without_a_sitemap_says_so_and_touches_nothing(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    from mkdocs.config import load_config

    from notifier.mkdocs import NotifyChangesPlugin

    (tmp_path / "docs").mkdir()
    (tmp_path / "mkdocs.yml").write_text("site_name: Tea\n")
    config = load_config(str(tmp_path / "mkdocs.yml"))
    site = tmp_path / "site"
    site.mkdir()
    plugin = NotifyChangesPlugin()
    plugin.load_config({})
    with caplog.at_level(logging.WARNING):
        plugin.on_post_build(config=config)
    said = [record.getMessage() for record in caplog.records]
    assert said == [
        f"notify-changes: no sitemap.xml in {site} (set site_url in mkdocs.yml so MkDocs writes one): nothing stamped or checked"
    ]
    assert list(site.iterdir()) == []
