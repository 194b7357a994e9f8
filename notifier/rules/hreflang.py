"""hreflang-broken: the language alternates a sitemap declares (``<xhtml:link
rel="alternate" hreflang href>``) must name URLs it lists, and each pair must name each
other; an engine ignores a one-sided pair. Judged for what the deploy added or changed,
and for alternates on the sitemap's own hosts (another site's pages are in its sitemap)."""

from __future__ import annotations

import itertools
from collections.abc import Iterator

from notifier.rules.context import Context
from notifier.rules.table import OFF, Found, RuleSettings
from notifier.urls import userinfo, where_host


def _hreflang(context: Context, settings: RuleSettings) -> Iterator[Found]:
    alternates: dict[str, list[tuple[str, str]]] = {}
    for info in context.sitemap.files:
        for loc, links in info.alternates.items():
            alternates.setdefault(loc, links)
    if not alternates or settings.level("hreflang-broken") == OFF:
        return
    diff = context.diff
    hosts = {where_host(origin).host for origin in diff.origins}
    both = "list each page in the other's alternates"
    for change in itertools.chain(diff.added, diff.changed):
        for language, href in alternates.get(change.loc, ()):
            if userinfo(href) is not None:  # shown without its password (the reader hid it), never announced
                yield (
                    "hreflang-broken",
                    change.loc,
                    f"its {language} alternate {href} holds a user name or password before its host; a public URL carries none: remove it",
                    None,
                )
    pairs = [
        (change.loc, language, href)
        for change in itertools.chain(diff.added, diff.changed)
        for language, href in alternates.get(change.loc, ())
        # another site's pages are in its own sitemap (example.de, example.fr)
        if href != change.loc and userinfo(href) is None and where_host(href).host in hosts
    ]
    listed = diff.listed_of(href for _, _, href in pairs if href not in alternates)
    for loc, language, href in pairs:
        if href in alternates:
            if not any(back == loc for _, back in alternates[href]):
                yield (
                    "hreflang-broken",
                    loc,
                    f"its {language} alternate {href} does not name it back; {both}",
                    None,
                )
        elif href in listed:
            yield (
                "hreflang-broken",
                loc,
                f"its {language} alternate {href} declares no alternates; {both}",
                None,
            )
        elif not diff.unread_files:
            yield "hreflang-broken", loc, f"its {language} alternate {href} is not in the sitemap; list it, or drop the alternate", None
