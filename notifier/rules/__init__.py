"""The verification rules: each defined once, with its id, default level and explanation.

``verify`` turns what the reader, the diff and the history saw into violations; any
violation at level ``error`` fails the deploy (exit 1) before anything is submitted.

Where each part lives: ``table`` (a leaf: the rule list, levels, Violation, thresholds),
``context`` (what the rules look at), ``checks`` (the passes and ``verify``), and the rules
themselves by what they judge: ``urls``, ``dates``, ``bulk``, ``site``, ``pages``,
``hreflang``. The names below are imported on first use, so that reading the rule list
(``notifier.settings``, the command line's help) loads no page reader and no HTTP client.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from notifier.rules.checks import CHECKS, Check, verify
    from notifier.rules.context import Context, Dated
    from notifier.rules.table import ERROR, LEVELS, OFF, RULES, WARN, BulkThresholds, Found, Rule, RuleSettings, Violation
    from notifier.rules.urls import _PLACEHOLDER_HOSTS, HostPattern, Scope, dev_host_reason, sitemap_scope, url_problem

_WHERE = {
    **dict.fromkeys(("CHECKS", "Check", "verify"), "notifier.rules.checks"),
    **dict.fromkeys(("Context", "Dated"), "notifier.rules.context"),
    **dict.fromkeys(
        ("ERROR", "LEVELS", "OFF", "RULES", "WARN", "BulkThresholds", "Found", "Rule", "RuleSettings", "Violation"), "notifier.rules.table"
    ),
    **dict.fromkeys(
        ("_PLACEHOLDER_HOSTS", "HostPattern", "Scope", "dev_host_reason", "sitemap_scope", "url_problem"), "notifier.rules.urls"
    ),
}

__all__ = [
    "CHECKS",
    "ERROR",
    "LEVELS",
    "OFF",
    "RULES",
    "WARN",
    "_PLACEHOLDER_HOSTS",
    "BulkThresholds",
    "Check",
    "Context",
    "Dated",
    "Found",
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


def __getattr__(name: str) -> Any:
    where = _WHERE.get(name)
    if where is None:
        raise AttributeError(f"module 'notifier.rules' has no attribute {name!r}")
    value = getattr(importlib.import_module(where), name)
    globals()[name] = value
    return value
