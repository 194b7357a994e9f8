"""The Sphinx extension: after an ``html`` or ``dirhtml`` build, stamp the sitemap that
``sphinx-sitemap`` wrote from each page's source history, and check it.

In ``conf.py``::

    extensions = ["sphinx_sitemap", "notifier.sphinx"]
    html_baseurl = "https://docs.example.org/"
    notify_changes_stamp = True     # rewrite the sitemap's lastmods from git (default)
    notify_changes_check = True     # fail the build when the dates lie (default)
    notify_changes_state = "state/notify-changes.json"   # default: the config file's, else notify-changes.json

On ``build-finished`` (after sphinx-sitemap's own handler) the sitemap is stamped with the
``sphinx`` preset (sources under the folder that holds ``conf.py``), then checked against
the state the last deploy recorded. Findings are Sphinx's own log lines, a warn-level one a
warning (``-W`` makes it fail the build), an error-level one an error; an error ends
``sphinx-build`` with exit status 1, as ``linkcheck`` does with a broken link (an
``ExtensionError`` would print a crash report asking to file a Sphinx bug, and run every
build-finished handler a second time). Submitting stays a deploy step: ``notify-changes
run`` after the publish.

It uses the public API only (:func:`notifier.stamp`, :func:`notifier.check`); everything
else comes from ``notify-changes.toml`` or ``[tool.notify-changes]``, as for the command.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sphinx.application import Sphinx
from sphinx.util import logging

import notifier

log = logging.getLogger(__name__)

BUILDERS = ("html", "dirhtml")  # the builders whose output sphinx-sitemap maps
AFTER_SPHINX_SITEMAP = 900  # build-finished handlers run by priority; sphinx-sitemap's is the default 500


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_config_value("notify_changes_stamp", True, "", bool)
    app.add_config_value("notify_changes_check", True, "", bool)
    app.add_config_value("notify_changes_state", None, "", (str, type(None)))
    app.add_config_value("notify_changes_config", None, "", (str, type(None)))
    app.connect("build-finished", _build_finished, priority=AFTER_SPHINX_SITEMAP)
    return {"version": notifier.__version__, "parallel_read_safe": True, "parallel_write_safe": True}


def _build_finished(app: Sphinx, exception: BaseException | None) -> None:
    if exception is not None or app.builder.name not in BUILDERS:
        return
    config = app.config
    if not (config.notify_changes_stamp or config.notify_changes_check):
        return
    site = Path(app.outdir)
    sitemap = site / getattr(config, "sitemap_filename", "sitemap.xml")
    if not sitemap.is_file():
        log.warning(f"notify-changes: no {sitemap.name} in {site} (add sphinx_sitemap to extensions, with html_baseurl): nothing checked")
        return
    root = Path(app.confdir).resolve()
    common: dict[str, Any] = {"site_dir": site, "history": {"preset": "sphinx", "repo": str(Path(app.srcdir).resolve())}, "cwd": root}
    if config.notify_changes_config:
        common["config"] = config.notify_changes_config
    try:
        if config.notify_changes_stamp:
            for line in notifier.stamp(sitemap, **common).lines():  # each date changed (-v), then the counts
                (log.info if line.startswith("stamp:") else log.verbose)(f"notify-changes: {line}")
        if config.notify_changes_check:
            state: dict[str, Any] = {"state": config.notify_changes_state} if config.notify_changes_state else {}
            report = notifier.check(sitemap, **common, **state)
    except notifier.NotifierError as error:  # a bad setting, a malformed sitemap: one line, the build fails
        log.error(f"notify-changes: {error}")
        app.statuscode = 1
        return
    if config.notify_changes_check and not _report(report):
        app.statuscode = 1


def _report(report: notifier.Report) -> bool:
    """The check's notes and findings as Sphinx log lines; False when an error fails the build."""
    for note in report.notes:
        log.info(f"notify-changes: {note}")
    for violation in report.violations:
        line = f"notify-changes: {violation.level}[{violation.rule}] {violation.url}: {violation.message}"
        (log.error if violation.level == "error" else log.warning)(line, type="notify-changes", subtype=violation.rule)
    if report.exit_code == notifier.ExitCode.VERIFICATION_FAILED:
        errors = sum(violation.level == "error" for violation in report.violations)
        log.error(
            f"notify-changes: the check found {errors} error(s) above: fix them before deploying "
            "(or set that rule's level in notify-changes.toml); nothing was announced and the state is unchanged"
        )
        return False
    return True
