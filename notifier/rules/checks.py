"""The rules' passes over what a deploy saw (``CHECKS``), and ``verify``, which runs them."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

from notifier.rules.bulk import lastmod_bulk
from notifier.rules.context import Context
from notifier.rules.dates import _lastmods
from notifier.rules.hreflang import _hreflang
from notifier.rules.pages import _pages
from notifier.rules.site import _mass_removal, _page_changes, _sitemap_empty
from notifier.rules.table import ERROR, OFF, RULES, WARN, Found, RuleSettings, Violation
from notifier.rules.urls import _duplicates, _tracking, _urls


@dataclass(frozen=True)
class Check:
    """One pass of the rules over what a deploy saw, and the rule ids it may find."""

    name: str
    find: Callable[[Context, RuleSettings], Iterator[Found]]
    rules: tuple[str, ...]


def _read(context: Context, settings: RuleSettings) -> Iterator[Found]:
    """What the sitemap reader saw while it parsed (it judges each file as it goes)."""
    for finding in context.sitemap.findings:
        yield finding.rule, finding.url, finding.message, None


def _bulk(context: Context, settings: RuleSettings) -> Iterator[Found]:
    if settings.level("lastmod-bulk") != OFF:  # the one rule that counts every date
        yield from lastmod_bulk(context, settings)


def _key_files(context: Context, settings: RuleSettings) -> Iterator[Found]:
    for path, problem in context.key_file_missing:
        yield "key-file-missing", path, problem, None


def _history(context: Context, settings: RuleSettings) -> Iterator[Found]:
    """What [history] found (notifier.history.git), judged before the rules ran."""
    for violation in context.extra:
        yield violation.rule, violation.url, violation.message, None


#: Every rule's finder, in the order a report lists them; each names the rules it may find, and
#: verify holds it to that (tests/test_rules.py: every rule has a finder, every finder's rules exist).
CHECKS: tuple[Check, ...] = (
    Check(
        "the reader",
        _read,
        (
            "sitemap-limits",
            "sitemap-encoding",
            "sitemap-namespace",
            "sitemap-values",
            "xml-prolog",
            "url-invalid",
            "lastmod-invalid",
            "lastmod-without-change",
            "change-without-lastmod",
        ),
    ),
    Check("an empty sitemap", lambda context, _: _sitemap_empty(context), ("sitemap-empty",)),
    Check("the URLs", _urls, ("url-invalid", "url-out-of-scope", "url-dev-host")),
    Check("tracking parameters", _tracking, ("url-tracking-params",)),
    Check(
        "the built pages", _pages, ("page-noindex", "page-canonical-elsewhere", "page-redirect", "page-missing", "url-robots-disallowed")
    ),
    Check("hreflang", _hreflang, ("hreflang-broken",)),
    Check("duplicates", _duplicates, ("url-duplicate",)),
    Check("the dates", _lastmods, ("lastmod-invalid", "lastmod-future", "lastmod-regressed", "lastmod-missing")),
    Check("the build's clock", _bulk, ("lastmod-bulk",)),
    Check("removals", _mass_removal, ("mass-removal",)),
    Check("the page files", lambda context, _: _page_changes(context), ("lastmod-without-change", "change-without-lastmod")),
    Check("the key file", _key_files, ("key-file-missing",)),
    Check("[history]", _history, ("lastmod-vs-history",)),
)


def verify(context: Context, settings: RuleSettings) -> list[Violation]:
    """Every violation at its effective level, rules at ``off`` left out.

    A configured level wins; else a finding's own level (url-duplicate escalates to
    error when the two lastmods differ); else the rule's default.
    """
    found: list[Violation] = []
    for rule_id, url, message, own_level in _all_findings(context, settings):
        effective = settings.levels.get(rule_id) or own_level or RULES[rule_id].level
        if effective in (ERROR, WARN):
            found.append(Violation(rule_id, effective, url, message))
    return found


def _all_findings(context: Context, settings: RuleSettings) -> Iterator[Found]:
    for check in CHECKS:
        for found in check.find(context, settings):
            if found[0] not in check.rules:  # a bug: the table above is the list of what each finds
                raise AssertionError(f"{check.name} found {found[0]!r}, which it does not name in rules.CHECKS")
            yield found
