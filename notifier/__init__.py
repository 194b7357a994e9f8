"""notify-changes: announce exactly the pages a deploy changed to IndexNow, and refuse lying sitemaps.

The Python API::

    import notifier

    report = notifier.check("public/sitemap.xml")
    if report.exit_code == 0:
        publish()
        report = notifier.run("public/sitemap.xml")
    print(report.summary())
"""

from __future__ import annotations

__version__ = "0.1.0"

from notifier.api import check, run
from notifier.errors import ExitCode, NotifierError
from notifier.report import Report
from notifier.rules import Violation

__all__ = ["ExitCode", "NotifierError", "Report", "Violation", "__version__", "check", "run"]
