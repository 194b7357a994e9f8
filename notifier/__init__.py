"""notify-changes: announce exactly the pages a deploy changed to IndexNow, and refuse lying sitemaps."""

from __future__ import annotations

__version__ = "0.1.0"
