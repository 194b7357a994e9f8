"""The MkDocs plugin: ``mkdocs build`` stamps its sitemap from git and checks it.

In ``mkdocs.yml``::

    plugins:
      - search
      - notify-changes:
          enabled: !ENV [NOTIFY_CHANGES, true]   # MkDocs' own switch of any plugin (default: on)
          stamp: true    # rewrite sitemap.xml(.gz)'s lastmods from each page's source (default)
          check: true    # fail the build when the dates lie (default)
          state: state/notify-changes.json

After the build (``on_post_build``) the plugin stamps ``site/sitemap.xml`` and its ``.gz``
copy from the history of the Markdown files (the ``mkdocs`` preset in the repository that
holds ``mkdocs.yml``, ``docs_dir`` as configured), then checks the build against the state
the last deploy recorded. A ``site_url`` with a path (``https://host/project/``) is the
path the build is served under: pages are mapped to their sources and files without it.
Findings are MkDocs log lines (``notify-changes: ...``); an error fails the build (MkDocs'
``PluginError``). ``mkdocs serve`` does neither: a dev server's sitemap is not a deploy.
Submitting stays a deploy step: ``notify-changes run`` after the publish.

It uses the public API only (:func:`notifier.stamp`, :func:`notifier.check`); everything
else comes from ``notify-changes.toml`` or ``[tool.notify-changes]``, as for the command.
"""

from __future__ import annotations

import urllib.parse
from pathlib import Path
from typing import Any

from mkdocs.config import config_options
from mkdocs.config.base import Config
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import PluginError
from mkdocs.plugins import BasePlugin, get_plugin_logger

import notifier

log = get_plugin_logger("notify-changes")  # its lines read "notify-changes: ..."


class NotifyChangesConfig(Config):  # type: ignore[no-untyped-call]  # MkDocs' __init_subclass__
    stamp = config_options.Type(bool, default=True)
    check = config_options.Type(bool, default=True)
    state = config_options.Optional(config_options.Type(str))
    config = config_options.Optional(config_options.Type(str))  # a notify-changes.toml elsewhere


class NotifyChangesPlugin(BasePlugin[NotifyChangesConfig]):  # type: ignore[no-untyped-call]
    """``notify-changes`` in ``plugins:``."""

    def __init__(self) -> None:
        self.serving = False

    def on_startup(self, *, command: str, dirty: bool) -> None:
        self.serving = command == "serve"

    def on_post_build(self, *, config: MkDocsConfig) -> None:
        if self.serving or not (self.config.stamp or self.config.check):
            return
        site = Path(config.site_dir)
        sitemap = site / "sitemap.xml"
        if not sitemap.is_file():
            log.warning(f"no sitemap.xml in {site} (set site_url in mkdocs.yml so MkDocs writes one): nothing stamped or checked")
            return
        root = Path(config.config_file_path).resolve().parent
        common: dict[str, Any] = {"site_dir": site, "history": _history(config, root), "cwd": root}
        if config.site_url:  # served under a path (site_url: https://host/project/): pages are mapped without it
            common["sitemap_url"] = urllib.parse.urljoin(config.site_url, "sitemap.xml")
        if self.config.config:
            common["config"] = self.config.config
        try:
            if self.config.stamp:
                for line in notifier.stamp(sitemap, **common).lines():  # each date changed (--verbose), then the counts
                    (log.info if line.startswith("stamp:") else log.debug)(line)
            if self.config.check:
                state: dict[str, Any] = {"state": self.config.state} if self.config.state else {}
                report = notifier.check(sitemap, **common, **state)
        except notifier.NotifierError as error:
            raise PluginError(f"notify-changes: {error}") from None
        if self.config.check:
            _log(report)


def _history(config: MkDocsConfig, root: Path) -> dict[str, Any]:
    """The mkdocs preset's templates, under ``docs_dir`` (``docs/`` unless mkdocs.yml moves it)."""
    docs = Path(config.docs_dir).resolve()
    try:
        folder = docs.relative_to(root).as_posix()
    except ValueError:  # docs outside the repository: the preset cannot name them
        raise PluginError(f"notify-changes: docs_dir {docs} is outside {root}, the folder of mkdocs.yml") from None
    templates = [f"{folder}/{{path}}.md", f"{folder}/{{path}}/index.md", f"{folder}/{{path}}/README.md", f"{folder}/{{path}}"]
    return {"sources": templates, "repo": str(root)}


def _log(report: notifier.Report) -> None:
    """The check's notes and findings as MkDocs log lines; an error fails the build."""
    for note in report.notes:
        log.info(note)
    for violation in report.violations:
        line = f"{violation.level}[{violation.rule}] {violation.url}: {violation.message}"
        (log.error if violation.level == "error" else log.warning)(line)
    if report.exit_code == notifier.ExitCode.VERIFICATION_FAILED:
        errors = sum(violation.level == "error" for violation in report.violations)
        raise PluginError(
            f"notify-changes: the check found {errors} error(s) above: fix them before deploying "
            "(or set that rule's level in notify-changes.toml); nothing was announced and the state is unchanged"
        )
