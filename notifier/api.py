"""The Python API: the same run as the command line, returning a Report instead of printing."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from notifier.pipeline import execute
from notifier.report import Report
from notifier.settings import build_settings


def run(
    sitemap: str | os.PathLike[str] | None = None,
    *,
    state: str | os.PathLike[str] | None = None,
    key: str | None = None,
    key_location: str | None = None,
    endpoints: Sequence[str] | None = None,
    site_dir: str | os.PathLike[str] | None = None,
    batch_size: int | None = None,
    dry_run: bool = False,
    retry_timeout: float | None = None,
    request_timeout: float | None = None,
    lock_timeout: float | None = None,
    initial: str | None = None,
    config: str | os.PathLike[str] | None = None,
    no_removed: bool = False,
    on_submit_error: str | None = None,
    rules: Mapping[str, str] | None = None,
    clock_skew: str | None = None,
    max_removed: str | float | None = None,
    sitemap_url: str | None = None,
    verify_live: int | None = None,
    environ: Mapping[str, str] | None = None,
    cwd: str | os.PathLike[str] | None = None,
) -> Report:
    """Check, submit and record, like ``notify-changes run``. Prints nothing.

    Settings not given here come from the environment (``INDEXNOW_KEY``), then the config
    file (``notify-changes.toml`` or ``[tool.notify-changes]`` in ``pyproject.toml`` in
    ``cwd``), then the defaults. The outcome, including a failed verification (exit code
    1) or an incomplete submission (3), is in the returned Report's ``exit_code``.

    Raises:
        notifier.NotifierError: bad settings or input (its ``exit_code`` is 2), a state
            lock held by another run (4). Nothing else, except KeyboardInterrupt.
    """
    options = _options(locals())
    return _execute("run", options, environ, cwd)


def check(
    sitemap: str | os.PathLike[str] | None = None,
    *,
    state: str | os.PathLike[str] | None = None,
    key: str | None = None,
    site_dir: str | os.PathLike[str] | None = None,
    config: str | os.PathLike[str] | None = None,
    rules: Mapping[str, str] | None = None,
    clock_skew: str | None = None,
    max_removed: str | float | None = None,
    sitemap_url: str | None = None,
    environ: Mapping[str, str] | None = None,
    cwd: str | os.PathLike[str] | None = None,
) -> Report:
    """Parse, diff and verify, like ``notify-changes check``: never contacts an endpoint,
    never writes state. ``report.exit_code`` is 1 when an error-level rule fired."""
    options = _options(locals())
    return _execute("check", options, environ, cwd)


def _options(arguments: dict[str, Any]) -> dict[str, Any]:
    options: dict[str, Any] = {}
    for name, value in arguments.items():
        if name in ("environ", "cwd") or value is None or value is False:
            continue
        if name == "endpoints":
            options["endpoint"] = list(value)
        elif name == "rules":
            options["rule"] = [f"{rule}={level}" for rule, level in value.items()]
        else:
            options[name.replace("_", "-")] = os.fspath(value) if isinstance(value, os.PathLike) else value
    return options


def _execute(command: str, options: dict[str, Any], environ: Mapping[str, str] | None, cwd: str | os.PathLike[str] | None) -> Report:
    settings = build_settings(command, options, env=environ, cwd=Path(cwd) if cwd is not None else None)
    return execute(settings)
