"""The rules that judge a listed URL by what the site says of it: its built page (noindex,
canonical, redirect stub, no page at all), robots.txt, and the host's ``_headers`` and
``_redirects``. Like the other URL rules, they judge what a deploy adds or changes.

IndexNow shares every URL with all its engines, so a page only some of them may crawl or
index (robots.txt, a robots meta or an X-Robots-Tag naming one engine's crawler) harms no one:
those engines leave it alone. That is one note per run; the rule fails a deploy only when every
IndexNow engine's crawler is kept away.
"""

from __future__ import annotations

import urllib.parse
from collections.abc import Iterator
from dataclasses import replace

from notifier.paths import is_url
from notifier.rules.context import Context
from notifier.rules.table import OFF, Found, RuleSettings
from notifier.site.head import EVERY_CRAWLER, NO_HEAD, canonical_elsewhere, noindex_header, noindex_meta, refresh_target, same_page
from notifier.site.pages import BuiltSite
from notifier.site.robots import INDEXNOW_CRAWLERS
from notifier.urls import join_url

ALL_MISSING = 20  # from this many judged URLs, all without a page file, one finding says so
PAGE_RULES = ("page-noindex", "page-canonical-elsewhere", "page-redirect", "page-missing", "url-robots-disallowed")


def _pages(context: Context, settings: RuleSettings) -> Iterator[Found]:
    site = context.built
    if site is None or all(settings.level(rule) == OFF for rule in PAGE_RULES):
        return
    context.notes.extend(site.host_notes())  # said on every run that reads the files, judged or not
    diff = context.diff
    judged: list[str] = [*diff.added.locs, *(change.loc for change in diff.changed)]  # locs: no Change per URL
    missing = site.reader.missing
    served = site.folder.served_under_guess(judged) if judged and all(loc in missing for loc in judged) else None
    if served is not None:
        yield "page-missing", "(all URLs)", _served_under(context, served, judged), None
        return  # the page files are there, under other names: nothing more to judge until the folder is said
    if len(judged) >= ALL_MISSING and all(loc in missing for loc in judged):
        # not one page of the build: a wrong --site-dir, not thousands of missing pages
        example = judged[0]
        yield (
            "page-missing",
            "(all URLs)",
            f"none of the {len(judged)} URLs has a page file in {site.folder.root} (e.g. {example}: looked for "
            f"{', '.join(site.folder.candidates(example))}); is it the build output root? pass --site-dir with the folder the build wrote",
            None,
        )
        return  # the other page rules need page files: nothing more to judge
    kept = _KeptAway()
    for loc in judged:
        yield from _judge(loc, site, kept)
    context.notes.extend(kept.notes())


def _served_under(context: Context, served: str, judged: list[str]) -> str:
    """Every URL begins with a folder the build has no file in, and without it each has its
    page: the build is served under that folder (MkDocs' site_url, Sphinx's html_baseurl with
    a path), which only --sitemap-url tells the command."""
    example = judged[0]
    site = context.built
    assert site is not None, "the page rules run with a build"
    split = urllib.parse.urlsplit(example)
    root = context.sitemap.files[0] if context.sitemap.files else None
    name = root.key if root is not None and root.key and not is_url(root.key) else "sitemap.xml"
    sitemap_url = f"{split.scheme}://{split.netloc}/{served}/{name}"
    found = replace(site.folder, base=served).page_file(example)
    if len(judged) == 1:
        which = f"{example} has no page file in {site.folder.root}, but has one without /{served}/ ({found})"
    else:
        which = (
            f"none of the {len(judged)} URLs has a page file in {site.folder.root}, "
            f"but each has one without /{served}/ (e.g. {example}: {found})"
        )
    return (
        f"{which}: the build is served under /{served}/ (a site_url or html_baseurl with a path); "
        f"pass --sitemap-url {sitemap_url} (config sitemap-url) so its pages are found"
    )


class _KeptAway:
    """The announced URLs that some, not all, of the engines' crawlers are kept from, by cause."""

    def __init__(self) -> None:
        self.by_cause: dict[str, tuple[set[str], list[str]]] = {}

    def add(self, cause: str, crawlers: frozenset[str], loc: str) -> None:
        named, locs = self.by_cause.setdefault(cause, (set(), []))
        named |= crawlers
        locs.append(loc)

    def notes(self) -> list[str]:
        notes = []
        for cause, (named, locs) in self.by_cause.items():
            who = ", ".join(crawler for crawler in INDEXNOW_CRAWLERS if crawler in named)
            many, them = ("1 URL", "it") if len(locs) == 1 else (f"{len(locs)} URLs", "them")
            notes.append(
                f"{cause} keeps {who} away from {many} this deploy announces (e.g. {locs[0]}); IndexNow still shares "
                f"{them} with every engine, and the others may crawl and index {them} (not an error)"
            )
        return notes


def _everyone(crawlers: frozenset[str] | list[str]) -> bool:
    return EVERY_CRAWLER.issubset(crawlers)


def _judge(loc: str, site: BuiltSite, kept: _KeptAway) -> Iterator[Found]:
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
            f"no page file for it in the build {site.folder.root} (looked for {', '.join(site.folder.candidates(loc))}); "
            "the sitemap lists a page the build did not make",
            None,
        )
    head = reader.heads.get(loc)
    if head is not None and head is not NO_HEAD:
        relative = site.folder.page_file(loc)
        meta = noindex_meta(head)
        if meta is not None and _everyone(meta.crawlers):
            yield "page-noindex", loc, f"{relative} says {meta.said}; leave it out of the sitemap, or drop the noindex", None
        elif meta is not None:
            kept.add("a robots meta", meta.crawlers, loc)
        target = refresh_target(loc, head)
        if target is not None:
            yield "page-redirect", loc, f"{relative} is a redirect stub (meta refresh) to {target}; list the target instead", None
        elif (canonical := canonical_elsewhere(loc, head)) is not None:
            yield "page-canonical-elsewhere", loc, f"{relative} names {canonical} as its canonical URL; list that one instead", None
    if site.headers is not None:
        header = noindex_header(site.headers.robots_tag(loc))
        if header is not None and _everyone(header.crawlers):
            said = header.said
            yield "page-noindex", loc, f"_headers sends X-Robots-Tag: {said} for it; leave it out of the sitemap, or change _headers", None
        elif header is not None:
            kept.add("an X-Robots-Tag in _headers", header.crawlers, loc)
    if site.robots is not None:
        blocked = site.robots.blocking(loc)
        if blocked and not _everyone(blocked):
            kept.add("the build's robots.txt", frozenset(blocked), loc)
        elif blocked:
            yield (
                "url-robots-disallowed",
                loc,
                f"the build's robots.txt keeps {', '.join(blocked)} away from it; leave it out of the sitemap, or allow it in robots.txt",
                None,
            )
