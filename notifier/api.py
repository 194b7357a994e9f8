"""The Python API: the same run as the command line, returning a Report instead of printing.

Keyword arguments are typed settings (:class:`Options`). They go through the same checks
as the command line's options, with the same precedence (an argument, then the
environment, then the config file, then the defaults); a bad value raises a
:class:`~notifier.errors.UsageError` that names the argument, never a TypeError.
"""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, TypedDict, Unpack

from notifier.commands.stamp import StampResult, stamp_sitemap
from notifier.errors import UsageError
from notifier.pipeline.loop import execute
from notifier.pipeline.sites import execute_sites
from notifier.report import Report
from notifier.settings.config_sites import build_runs
from notifier.settings.options import OPTIONS
from notifier.settings.settings import RUN_ONLY, build_settings


class Options(TypedDict, total=False):
    """Every setting of :func:`run` and :func:`check`, as the README's options table lists them."""

    state: str | os.PathLike[str]
    key: str
    key_location: str
    key_previous: str  # a rotation's previous key (prefer INDEXNOW_KEY_PREVIOUS in environ=)
    endpoints: str | Sequence[str]  # one endpoint URL, or several
    site_dir: str | os.PathLike[str]
    batch_size: int
    dry_run: bool
    retry_timeout: float
    request_timeout: float
    lock_timeout: float
    initial: str  # "baseline" | "submit" | "since:14d" | "fail"
    config: str | os.PathLike[str]
    no_removed: bool
    on_submit_error: str  # "fail" | "warn"
    endpoint_mode: str  # "all" | "first"
    rules: Mapping[str, str]  # rule id -> "error" | "warn" | "off"
    clock_skew: str | float | dt.timedelta  # "1h", or seconds
    max_removed: str | float  # "20%", or 0.2
    sitemap_url: str
    verify_live: int
    wait_live: float  # seconds
    platform: str  # "netlify" | "cloudflare-pages" (default: detected from the environment)
    jobs: int  # worker processes (1: none)
    history: Mapping[str, Any]  # keys of the [history] table, each taking the place of the config file's
    site: str  # with [[sites]] in the config: only this site
    keep_batches: int  # batches the ledger keeps
    metrics: str | os.PathLike[str]  # after the run, Prometheus metrics to this file
    site_name: str  # with a postgresql:// state: this site's name
    include: str | Sequence[str]  # [announce] include: glob patterns on a URL's path
    exclude: str | Sequence[str]  # [announce] exclude
    min_interval: str | float | dt.timedelta  # [announce] min-interval: "10m", or seconds
    per_run: int  # [announce] per-run: URLs to each endpoint a run
    per_day: int  # [announce] per-day: URLs to each endpoint a UTC day
    alternates: bool  # [announce] alternates: a changed page's hreflang alternates with it
    environ: Mapping[str, str]  # instead of os.environ (INDEXNOW_KEY, GITHUB_ACTIONS)
    cwd: str | os.PathLike[str]  # where the config file is looked for and relative paths start


_SETTINGS = frozenset(Options.__annotations__)
_OPTION_OF = {option.keyword: option.name for option in OPTIONS}  # endpoints= is --endpoint, rules= --rule


def run(sitemap: str | os.PathLike[str] | None = None, /, **options: Unpack[Options]) -> Report:
    """Check, submit and record, like ``notify-changes run``. Prints nothing.

    The outcome, a failed verification (exit code 1) or an incomplete submission (3)
    included, is in the returned Report's ``exit_code``.

    Raises:
        notifier.NotifierError: bad settings or input (its ``exit_code`` is 2), a state
            lock held by another run (4). Nothing else, except KeyboardInterrupt.
    """
    return _execute("run", sitemap, dict(options))


def check(sitemap: str | os.PathLike[str] | None = None, /, **options: Unpack[Options]) -> Report:
    """Parse, diff and verify, like ``notify-changes check``: never contacts an endpoint,
    never writes state. ``report.exit_code`` is 1 when an error-level rule fired. It takes
    every setting :func:`run` takes; those only a run uses are named in ``report.notes``."""
    unused = [name for name in (option.replace("-", "_") for option in RUN_ONLY) if name in options]
    notes = [f"check does not use {', '.join(unused)} (they apply to run)"] if unused else []
    return _execute("check", sitemap, dict(options), notes)


def _execute(command: str, sitemap: object, options: dict[str, Any], notes: list[str] | None = None) -> Report:
    unknown = sorted(set(options) - _SETTINGS)
    if unknown:
        raise UsageError(f"{unknown[0]}=: no such setting; the settings are {', '.join(sorted(_SETTINGS))}")
    environ = options.pop("environ", None)
    if environ is not None and not (isinstance(environ, Mapping) and all(isinstance(v, str) for v in environ.values())):
        raise UsageError(f"environ={environ!r}: give a mapping of variable name to text, such as os.environ")
    cwd = options.pop("cwd", None)
    if cwd is not None and not isinstance(cwd, (str, os.PathLike)):
        raise UsageError(f"cwd={cwd!r}: give a folder path")
    rules = options.get("rules")
    if rules is not None and not isinstance(rules, Mapping):
        raise UsageError(f"rules={rules!r}: give a mapping of rule id to level, e.g. {{'lastmod-missing': 'off'}}")
    given: dict[str, Any] = {"sitemap": sitemap}
    for name, value in options.items():
        if value is None:
            continue
        if isinstance(value, os.PathLike):
            value = os.fspath(value)
        given[_OPTION_OF.get(name, name)] = value
    runs = build_runs(command, given, environ=environ, cwd=Path(cwd) if cwd is not None else None, api=True)
    if runs[0].site is None:
        return execute(runs[0], notes=notes or ())
    return execute_sites(runs, notes=notes or ())


def stamp(
    sitemap: str | os.PathLike[str] | None = None,
    /,
    *,
    dry_run: bool = False,
    site_dir: str | os.PathLike[str] | None = None,
    config: str | os.PathLike[str] | None = None,
    history: Mapping[str, Any] | None = None,
    sitemap_url: str | None = None,
    environ: Mapping[str, str] | None = None,
    cwd: str | os.PathLike[str] | None = None,
) -> StampResult:
    """Rewrite the built sitemap's lastmods from the content's history, like ``notify-changes
    stamp``: each file replaced atomically, only the dates changed. ``history``: keys of the
    ``[history]`` table (``{"preset": "mkdocs", "repo": ...}``), each taking the place of the
    config file's. ``sitemap_url``: the sitemap's public URL; a site served under a path
    (``https://host/project/sitemap.xml``) maps its pages to sources without it.
    ``result.lines()`` are what the command prints.

    Raises:
        notifier.NotifierError: no ``[history]``, a malformed sitemap, a file it cannot
            write (its ``exit_code`` is 2); that file is then as it was, and the message
            names the files rewritten before it (each whole).
    """
    if not isinstance(dry_run, bool):
        raise UsageError(f"dry_run={dry_run!r}: give True or False")
    given: dict[str, Any] = {"sitemap": sitemap, "site-dir": site_dir, "config": config, "history": history, "sitemap-url": sitemap_url}
    if cwd is not None and not isinstance(cwd, (str, os.PathLike)):
        raise UsageError(f"cwd={cwd!r}: give a folder path")
    cli = {name: os.fspath(value) if isinstance(value, os.PathLike) else value for name, value in given.items() if value is not None}
    settings = build_settings("check", cli, environ=environ, cwd=Path(cwd) if cwd is not None else None, api=True)
    return stamp_sitemap(settings, dry_run=dry_run)
