"""The rules that judge the sitemap as a whole: sitemap-empty, mass-removal, and the built
pages against their lastmods (lastmod-without-change, change-without-lastmod)."""

from __future__ import annotations

import itertools
from collections.abc import Iterator

from notifier.rules.context import Context
from notifier.rules.table import Found, RuleSettings


def _sitemap_empty(context: Context) -> Iterator[Found]:
    if not context.diff.total:
        root = context.sitemap.files[0].name if context.sitemap.files else "sitemap"
        yield (
            "sitemap-empty",
            root,
            "the sitemap lists no URL; a broken build, not a site without pages (nothing was treated as removed)",
            None,
        )


# -- URLs ----------------------------------------------------------------------------


def _mass_removal(context: Context, settings: RuleSettings) -> Iterator[Found]:
    removed = len(context.diff.removed) + len(context.diff.unlisted)  # unlisted: its page still built, gone from the sitemap all the same
    recorded = context.state.url_count() - context.diff.news_recorded  # a news file's articles come and go by design
    if removed >= settings.max_removed_min and removed > settings.max_removed * recorded:
        yield (
            "mass-removal",
            context.sitemap.files[0].name if context.sitemap.files else "sitemap",
            f"{removed} of {recorded} recorded URLs vanished (over {settings.max_removed:.0%}); a broken build is the "
            "usual cause — if the removal is intended, raise --max-removed for this deploy",
            None,
        )


def _page_changes(context: Context) -> Iterator[Found]:
    """lastmod-without-change and change-without-lastmod, from the built page files."""
    listings = _listings(context) if any(each.rule == "change-without-lastmod" for each in context.diff.page_findings) else set()
    for finding in context.diff.page_findings:
        if finding.rule == "change-without-lastmod" and _listing_folder(finding.loc) in listings:
            continue  # a home, section or tag page changes when what it lists does: not an author's missed date
        if finding.rule == "change-without-lastmod" and finding.loc in context.current_by_history:
            continue  # its source has no commit after its lastmod ([history]): the build changed it (MkDocs' nav of a new page)
        if finding.rule == "lastmod-without-change":
            yield (
                finding.rule,
                finding.loc,
                f"lastmod moved from {finding.old} to {finding.new} but the built page is byte-identical; "
                "take lastmod from the content's history, not the build",
                None,
            )
        else:
            yield (
                finding.rule,
                finding.loc,
                f"the built page changed but its lastmod {finding.new} did not: update the page's date when its content "
                "changed; if it is said of this page on every deploy, the build writes something into it each time (a build "
                "date, a list of recent pages), and its date is right as it is",
                None,
            )


def _listing_folder(loc: str) -> str | None:
    """The folder a page stands for when its URL is a folder's (``/posts/``, ``/posts/index.html``)."""
    folder = _folder_of(loc)
    return folder if loc.partition("#")[0].partition("?")[0][len(folder) :] in ("", "index.html") else None


def _folder_of(loc: str) -> str:
    """A URL up to its last "/" (its query and fragment dropped): the folder a listing page stands for."""
    base = loc.partition("#")[0].partition("?")[0]
    return base[: base.rfind("/") + 1]


def _listings(context: Context) -> set[str]:
    """The folders whose pages this deploy added, removed or moved the date of: the listing
    pages over them (``/``, ``/posts/``, ``/tags/tea/``) change with what they list."""
    diff = context.diff
    folders: set[str] = set()
    for loc in itertools.chain(diff.added.locs, (change.loc for change in itertools.chain(diff.changed, diff.removed))):
        folder = _folder_of(loc.rstrip("/"))
        while folder.count("/") >= 3 and folder not in folders:  # scheme://host/ and each folder down to the page's
            folders.add(folder)
            folder = _folder_of(folder.rstrip("/"))
    return folders
