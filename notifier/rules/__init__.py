"""The verification rules: each defined once, with its id, default level and explanation.

``verify`` turns what the reader, the diff and the history saw into violations; any
violation at level ``error`` fails the deploy (exit 1) before anything is submitted.
"""

from __future__ import annotations

from collections.abc import Iterator

from notifier.rules.bulk import lastmod_bulk
from notifier.rules.dates import _lastmods
from notifier.rules.hreflang import _hreflang
from notifier.rules.pages import _pages
from notifier.rules.site import _mass_removal, _page_changes, _sitemap_empty
from notifier.rules.table import (
    ERROR,
    LEVELS,
    OFF,
    RULES,
    WARN,
    BulkThresholds,
    Context,
    Found,
    Rule,
    RuleSettings,
    Violation,
)
from notifier.rules.urls import (
    _PLACEHOLDER_HOSTS,
    HostPattern,
    Scope,
    _duplicates,
    _tracking,
    _urls,
    dev_host_reason,
    sitemap_scope,
    url_problem,
)

__all__ = [
    "ERROR",
    "LEVELS",
    "OFF",
    "RULES",
    "WARN",
    "_PLACEHOLDER_HOSTS",
    "BulkThresholds",
    "Context",
    "HostPattern",
    "Rule",
    "RuleSettings",
    "Scope",
    "Violation",
    "dev_host_reason",
    "sitemap_scope",
    "url_problem",
    "verify",
]


def verify(context: Context, settings: RuleSettings) -> list[Violation]:
    """Every violation at its effective level, rules at ``off`` left out.

    A configured level wins; else a finding's own level (url-duplicate escalates to
    error when the two lastmods differ); else the rule's default.
    """
    found: list[Violation] = []
    for rule_id, url, message, own_level in _all_findings(context, settings):
        effective = settings.levels.get(rule_id) or own_level or RULES[rule_id].level
        if effective != OFF:
            found.append(Violation(rule_id, effective, url, message))
    return found


def _all_findings(context: Context, settings: RuleSettings) -> Iterator[Found]:
    for finding in context.sitemap.findings:
        yield finding.rule, finding.url, finding.message, None
    yield from _sitemap_empty(context)
    yield from _urls(context, settings)
    yield from _tracking(context, settings)
    yield from _pages(context, settings)
    yield from _hreflang(context, settings)
    yield from _duplicates(context, settings)
    yield from _lastmods(context, settings)
    if settings.level("lastmod-bulk") != OFF:  # the one rule that counts every date
        yield from lastmod_bulk(context, settings)
    yield from _mass_removal(context, settings)
    yield from _page_changes(context)
    for path, problem in context.key_file_missing:
        yield "key-file-missing", path, problem, None
    for violation in context.extra:
        yield violation.rule, violation.url, violation.message, None
