"""The Sphinx extension's decisions no test stated (sphinx.py, #44), called with the few
attributes of a Sphinx app they read: the links an incremental build's sitemap is completed
with (html and dirhtml), sphinx-sitemap's excludes, when the extension acts, and where the
build is served. The real builds are in tests/test_sphinx*.py. Each test names the edit it fails with."""

from __future__ import annotations

import queue
from types import SimpleNamespace
from typing import Any

from notifier.sphinx import _list_every_document, served_at

DOCS = {"index", "guide/index", "guide/install", "api"}


def _app(builder: str = "html", docs: set[str] = DOCS, listed: list[tuple[str, Any]] | None = None, **config: Any) -> Any:
    links: queue.Queue[tuple[str, Any]] = queue.Queue()
    for item in listed or []:
        links.put(item)
    settings = {
        "notify_changes_enabled": True,
        "notify_changes_stamp": True,
        "notify_changes_check": True,
        "html_file_suffix": None,
        "language": None,
        "version": "",
        **config,
    }
    return SimpleNamespace(
        sitemap_links=links,
        builder=SimpleNamespace(name=builder),
        config=SimpleNamespace(**settings),
        env=SimpleNamespace(found_docs=docs),
        extensions={"sphinx_sitemap": object()},
    )


def _completed(app: Any, exception: BaseException | None = None) -> list[tuple[str, Any]]:
    _list_every_document(app, exception)
    links = []
    while not app.sitemap_links.empty():
        links.append(app.sitemap_links.get_nowait())
    return links


def test_dirhtml_names_each_document_by_its_folder() -> None:
    """index is the root, ``x/index`` is ``x/``, any other ``x`` is ``x/``; a page the build
    wrote keeps its place and date (edits: "dirhtml" renamed, the link's assignment removed or
    made a raise, ``== "index"`` inverted or renamed, ``[:-6]`` unbounded or made ``[:-7]``)."""
    links = _completed(_app("dirhtml", listed=[("api/", "2024-05-01")]))
    assert links == [("api/", "2024-05-01"), ("guide/", None), ("guide/install/", None), ("", None)]


def test_html_names_each_document_with_the_configured_suffix() -> None:
    """(edit: the ``html_file_suffix`` side of the ``or`` dropped)"""
    assert _completed(_app("html", docs={"index", "api"})) == [("api.html", None), ("index.html", None)]
    assert _completed(_app("html", docs={"index"}, html_file_suffix=".htm")) == [("index.htm", None)]


def test_a_document_sphinx_sitemap_excludes_is_not_added() -> None:
    """Any one of the patterns excludes (edits: ``any`` made ``all``, the excludes side dropped)."""
    links = _completed(_app("html", sitemap_excludes=["guide/*", "no-such-page.html"]))
    assert links == [("api.html", None), ("index.html", None)]


def test_a_failed_build_or_one_that_neither_stamps_nor_checks_is_left_alone() -> None:
    """(edits: the ``exception`` side of ``_wanted``'s ``or`` dropped; the ``stamp`` side of
    ``stamp or check`` dropped, which leaves a build that only stamps uncompleted)"""
    assert _completed(_app("html", docs={"index"}), RuntimeError("the build failed")) == []
    assert _completed(_app("html", docs={"index"}, notify_changes_stamp=False, notify_changes_check=False)) == []
    assert _completed(_app("html", docs={"index"}, notify_changes_check=False)) == [("index.html", None)]
    assert _completed(_app("latex", docs={"index"})) == []


def test_site_url_wins_over_html_baseurl_and_no_base_is_none() -> None:
    """(edits: the ``site_url`` side dropped; the ``return None, ""`` made a raise)"""
    app = _app(site_url="https://docs.example.org/", html_baseurl="https://old.example.org/")
    assert served_at(app) == ("https://docs.example.org/", "")
    assert served_at(_app(html_baseurl="")) == (None, "")


def test_a_scheme_of_its_own_puts_nothing_known_before_the_pages() -> None:
    """sitemap_url_scheme not ending in {link}: no prefix (edits: ``prefix = ""`` removed or made a raise)."""
    app = _app(html_baseurl="https://docs.example.org/", sitemap_url_scheme="{link}?from=sitemap", language="en")
    assert served_at(app) == ("https://docs.example.org/", "")
    app = _app(html_baseurl="https://docs.example.org/", sitemap_url_scheme="{lang}{version}{link}", language="en", version="2.1")
    assert served_at(app) == ("https://docs.example.org/en/2.1/", "en/2.1/")
    app = _app(html_baseurl="https://docs.example.org/", sitemap_url_scheme="{edition}/{link}", language="en")
    assert served_at(app) == ("https://docs.example.org/", "")  # a field sphinx-sitemap does not fill: nothing known
