"""The documented default of --lock-timeout (SPEC: "default 60"; exit 4 "after waiting
--lock-timeout, default 60 s") is the one every store and the options use (edit: LOCK_TIMEOUT
in errors.py made 120, which no other test tells: each sets its own)."""

from __future__ import annotations

from pathlib import Path

from notifier.database import DatabaseURL
from notifier.settings.settings import build_settings
from notifier.store import JsonStore


def test_the_lock_is_waited_for_sixty_seconds_unless_told(tmp_path: Path) -> None:
    settings = build_settings("run", {"sitemap": str(tmp_path / "sitemap.xml")}, environ={}, cwd=tmp_path)
    assert settings.lock_timeout == 60.0
    assert DatabaseURL("postgresql://u@db/notify").lock_timeout == 60.0
    assert JsonStore(tmp_path / "state.json").lock_timeout == 60.0
