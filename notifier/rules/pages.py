"""The rules that judge a listed URL by what the site says of it: its built page (noindex,
canonical, redirect stub, no page at all), robots.txt, and the host's ``_headers`` and
``_redirects``. Like the other URL rules, they judge what a deploy adds or changes.
"""

from __future__ import annotations

from collections.abc import Iterator

from notifier.build import candidates
from notifier.head import NO_HEAD, canonical_elsewhere, noindex_header, noindex_meta, refresh_target, same_page
from notifier.pages import BuiltSite
from notifier.rules.table import OFF, Context, Found, RuleSettings
from notifier.urls import join_url

ALL_MISSING = 20  # from this many judged URLs, all without a page file, one finding says so
PAGE_RULES = ("page-noindex", "page-canonical-elsewhere", "page-redirect", "page-missing", "url-robots-disallowed")


def _pages(context: Context, settings: RuleSettings) -> Iterator[Found]:
    site = context.built
    if site is None or all(settings.level(rule) == OFF for rule in PAGE_RULES):
        return
    diff = context.diff
    judged: list[str] = [*diff.added.locs, *(change.loc for change in diff.changed)]  # locs: no Change per URL
    missing = site.reader.missing
    if len(judged) >= ALL_MISSING and all(loc in missing for loc in judged):
        # not one page of the build: a wrong --site-dir, not thousands of missing pages
        example = judged[0]
        none = "the one URL has no" if len(judged) == 1 else f"none of the {len(judged)} URLs has a"
        yield (
            "page-missing",
            "(all URLs)",
            f"{none} page file in {site.build.root} (e.g. {example}: looked for "
            f"{', '.join(candidates(example))}); is it the build output root? pass --site-dir with the folder the build wrote",
            None,
        )
        return  # the other page rules need page files: nothing more to judge
    for loc in judged:
        yield from _judge(loc, site)


def _judge(loc: str, site: BuiltSite) -> Iterator[Found]:
    reader = site.reader
    has_file = loc not in reader.missing
    redirect = site.redirects.target(loc, has_file) if site.redirects is not None else None
    joined = join_url(loc, redirect) if redirect is not None else None
    if redirect is not None and (joined is None or not same_page(joined, loc)):
        yield "page-redirect", loc, f"_redirects sends this path to {redirect}; list the target in the sitemap, not the old address", None
    elif not has_file:
        yield (
            "page-missing",
            loc,
            f"no page file for it in the build {site.build.root} (looked for {', '.join(candidates(loc))}); "
            "the sitemap lists a page the build did not make",
            None,
        )
    head = reader.heads.get(loc)
    if head is not None and head is not NO_HEAD:
        relative = site.build.page_file(loc)
        meta = noindex_meta(head)
        if meta is not None:
            said = f'<meta name="{meta[0]}" content="{meta[1]}">'
            yield "page-noindex", loc, f"{relative} says {said}; leave it out of the sitemap, or drop the noindex", None
        target = refresh_target(loc, head)
        if target is not None:
            yield "page-redirect", loc, f"{relative} is a redirect stub (meta refresh) to {target}; list the target instead", None
        elif (canonical := canonical_elsewhere(loc, head)) is not None:
            yield "page-canonical-elsewhere", loc, f"{relative} names {canonical} as its canonical URL; list that one instead", None
    if site.headers is not None:
        value = noindex_header(site.headers.robots_tag(loc))
        if value is not None:
            yield "page-noindex", loc, f"_headers sends X-Robots-Tag: {value} for it; leave it out of the sitemap, or change _headers", None
    if site.robots is not None:
        blocked = site.robots.blocking(loc)
        if blocked:
            yield (
                "url-robots-disallowed",
                loc,
                f"the build's robots.txt keeps {', '.join(blocked)} away from it; leave it out of the sitemap, or allow it in robots.txt",
                None,
            )
