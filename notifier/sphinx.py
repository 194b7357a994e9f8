"""The Sphinx extension: after an ``html`` or ``dirhtml`` build, stamp the sitemap that
``sphinx-sitemap`` wrote from each page's source history, and check it.

In ``conf.py``::

    extensions = ["sphinx_sitemap", "notifier.sphinx"]
    html_baseurl = "https://docs.example.org/"
    notify_changes_enabled = True   # False: the extension does nothing (default: True)
    notify_changes_stamp = True     # rewrite the sitemap's lastmods from git (default)
    notify_changes_check = True     # fail the build when the dates lie (default)
    notify_changes_state = "state/notify-changes.json"   # default: the config file's, else notify-changes.json

sphinx-sitemap lists the pages a build writes, and an incremental build (``make html``)
writes only the changed ones: just before sphinx-sitemap writes the sitemap, every other
document the project has (the environment's found documents) is added to its list, so the
sitemap always lists every page, and a page leaves it only when its document is gone.

On ``build-finished`` (after sphinx-sitemap's own handler) the sitemap is stamped with the
``sphinx`` preset (sources under the folder that holds ``conf.py``), then checked against
the state the last deploy recorded. Its URLs are mapped to sources and built files without
the path the build is served under: ``html_baseurl``'s, and the ``{lang}{version}`` that
sphinx-sitemap's default ``sitemap_url_scheme`` puts before every page (said in one line:
no built file has it; ``sitemap_url_scheme = "{link}"`` drops it). Findings are Sphinx's own log lines, a warn-level one a
warning (``-W`` makes it fail the build), an error-level one an error; an error ends
``sphinx-build`` with exit status 1, as ``linkcheck`` does with a broken link (an
``ExtensionError`` would print a crash report asking to file a Sphinx bug, and run every
build-finished handler a second time). Submitting stays a deploy step: ``notify-changes
run`` after the publish.

It uses the public API only (:func:`notifier.stamp`, :func:`notifier.check`); everything
else comes from ``notify-changes.toml`` or ``[tool.notify-changes]``, as for the command.
"""

from __future__ import annotations

import contextlib
import fnmatch
import queue
import urllib.parse
from pathlib import Path
from typing import Any

from sphinx.application import Sphinx
from sphinx.util import logging

import notifier

log = logging.getLogger(__name__)

BUILDERS = ("html", "dirhtml")  # the builders whose output sphinx-sitemap maps
AFTER_SPHINX_SITEMAP = 900  # build-finished handlers run by priority; sphinx-sitemap's is the default 500
BEFORE_SPHINX_SITEMAP = 400


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_config_value("notify_changes_enabled", True, "", bool)
    app.add_config_value("notify_changes_stamp", True, "", bool)
    app.add_config_value("notify_changes_check", True, "", bool)
    app.add_config_value("notify_changes_state", None, "", (str, type(None)))
    app.add_config_value("notify_changes_config", None, "", (str, type(None)))
    app.connect("build-finished", _list_every_document, priority=BEFORE_SPHINX_SITEMAP)
    app.connect("build-finished", _build_finished, priority=AFTER_SPHINX_SITEMAP)
    return {"version": notifier.__version__, "parallel_read_safe": True, "parallel_write_safe": True}


def _wanted(app: Sphinx, exception: BaseException | None) -> bool:
    """Whether this build is one the extension stamps and checks."""
    config = app.config
    if exception is not None or app.builder.name not in BUILDERS or not config.notify_changes_enabled:
        return False
    return bool(config.notify_changes_stamp or config.notify_changes_check)


def _list_every_document(app: Sphinx, exception: BaseException | None) -> None:
    """Complete sphinx-sitemap's list of pages (the pages this build wrote) with every other
    document of the project, formed as sphinx-sitemap forms them (its ``add_html_link``)."""
    links = getattr(app, "sitemap_links", None)  # sphinx-sitemap's queue, made when the builder starts
    if not _wanted(app, exception):
        return
    if links is None:
        if "sphinx_sitemap" in app.extensions:  # a sphinx-sitemap that keeps its list elsewhere
            log.warning(
                "notify-changes: this sphinx-sitemap keeps no sitemap_links list to complete, so an incremental build's sitemap "
                "lists only the pages it wrote: build with -a (sphinx-sitemap 2.9 keeps that list)",
                type="notify-changes",
                subtype="sitemap-links",
            )
        return
    listed: list[Any] = []
    while True:
        try:
            listed.append(links.get_nowait())
        except queue.Empty:
            break
    config = app.config
    suffix = config.html_file_suffix or ".html"
    directories = app.builder.name == "dirhtml"
    seen = {link for link, _ in listed}
    excludes = list(getattr(config, "sitemap_excludes", []))
    for docname in sorted(app.env.found_docs):
        if directories:
            link = "" if docname == "index" else docname[:-6] + "/" if docname.endswith("/index") else docname + "/"
        else:
            link = docname + suffix
        if link not in seen and not any(fnmatch.fnmatch(link, pattern) for pattern in excludes):
            listed.append((link, None))  # its date: the stamp's, from git
    for item in listed:
        links.put(item)


def served_at(app: Sphinx) -> tuple[str | None, str]:
    """The public URL of the build's root as sphinx-sitemap's URLs name it (``html_baseurl``
    and the ``{lang}{version}`` its scheme puts before every page), and that prefix."""
    config = app.config
    base = getattr(config, "site_url", None) or getattr(config, "html_baseurl", None)
    if not base:
        return None, ""
    scheme = getattr(config, "sitemap_url_scheme", "{link}")
    prefix = ""
    if scheme.endswith("{link}"):
        lang = f"{config.language}/" if config.language else ""
        version = f"{config.version}/" if config.version else ""
        with contextlib.suppress(KeyError, IndexError, ValueError):  # a scheme of its own: nothing known to take off
            prefix = scheme[: -len("{link}")].format(lang=lang, version=version)
    return base + prefix, prefix


def _build_finished(app: Sphinx, exception: BaseException | None) -> None:
    if not _wanted(app, exception):
        return
    config = app.config
    site = Path(app.outdir)
    sitemap = site / getattr(config, "sitemap_filename", "sitemap.xml")
    if not sitemap.is_file():
        log.warning(f"notify-changes: no {sitemap.name} in {site} (add sphinx_sitemap to extensions, with html_baseurl): nothing checked")
        return
    root = Path(app.confdir).resolve()
    common: dict[str, Any] = {"site_dir": site, "history": {"preset": "sphinx", "repo": str(Path(app.srcdir).resolve())}, "cwd": root}
    public, prefix = served_at(app)
    if public is not None:
        common["sitemap_url"] = urllib.parse.urljoin(public, sitemap.name)
    if prefix and not (site / prefix).is_dir():
        log.warning(
            f"notify-changes: sphinx-sitemap puts {prefix!r} before every page (sitemap_url_scheme "
            f"{config.sitemap_url_scheme!r}, language {config.language!r}), a folder no built file is in: unless the site is "
            f'served under it, set sitemap_url_scheme = "{{link}}" in conf.py (and any path in html_baseurl)',
            type="notify-changes",
            subtype="url-scheme",
        )
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
