"""Splitting URLs without ever raising: sitemaps carry whatever a generator wrote."""

from __future__ import annotations

import urllib.parse

_NOTHING = urllib.parse.SplitResult("", "", "", "", "")


def split_url(url: str) -> urllib.parse.SplitResult:
    """``urlsplit``, except that a URL Python cannot split (``http://[::1``, port 99999999)
    reads as empty: no scheme, no host, no path. Callers then treat it as invalid."""
    try:
        result = urllib.parse.urlsplit(url)
        _ = result.port  # raises ValueError for a port that is not a number in range
    except ValueError:
        return _NOTHING
    return result
