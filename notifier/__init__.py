"""notify-changes: announce exactly the pages a deploy changed to IndexNow, and refuse lying sitemaps.

The Python API::

    import notifier

    report = notifier.check("public/sitemap.xml")
    if report.exit_code == 0:
        publish()
        report = notifier.run("public/sitemap.xml")
    print(report.summary())

The names below are the whole public surface; every module of the package is internal.
They are imported on first use, so that ``notify-changes`` handles an interrupt from its
very first instruction (see ``_launch``), before lxml and requests are loaded.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.3.0.dev0"  # between releases: the next release, .dev0 (CONTRIBUTING, Releases)

if TYPE_CHECKING:
    from notifier.api import Options, check, run, stamp
    from notifier.commands.stamp import StampResult
    from notifier.errors import ExitCode, HistoryError, InputError, LockTimeout, NotifierError, StateError, UsageError
    from notifier.report import Report
    from notifier.rules import Violation

_WHERE = {
    "check": "notifier.api",
    "run": "notifier.api",
    "Options": "notifier.api",
    "stamp": "notifier.api",
    "StampResult": "notifier.commands.stamp",
    "ExitCode": "notifier.errors",
    "NotifierError": "notifier.errors",
    "UsageError": "notifier.errors",
    "InputError": "notifier.errors",
    "StateError": "notifier.errors",
    "HistoryError": "notifier.errors",
    "LockTimeout": "notifier.errors",
    "Report": "notifier.report",
    "Violation": "notifier.rules",
}

__all__ = [
    "ExitCode",
    "HistoryError",
    "InputError",
    "LockTimeout",
    "NotifierError",
    "Options",
    "Report",
    "StampResult",
    "StateError",
    "UsageError",
    "Violation",
    "__version__",
    "check",
    "run",
    "stamp",
]


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        import importlib

        value = getattr(importlib.import_module(_WHERE[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'notifier' has no attribute {name!r}")
