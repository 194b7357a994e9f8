"""The rules that judge the sitemap as a whole: sitemap-empty, mass-removal, and the built
pages against their lastmods (lastmod-without-change, change-without-lastmod)."""

from __future__ import annotations

from collections.abc import Iterator

from notifier.rules.table import Context, Found, RuleSettings


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
    removed = len(context.diff.removed)
    recorded = context.state.url_count()
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
    for finding in context.diff.page_findings:
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
                f"the built page changed but its lastmod {finding.new} did not; update the page's date",
                None,
            )
