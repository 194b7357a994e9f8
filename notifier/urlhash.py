"""64-bit hashes of URLs (and of a build's paths), stable across runs, machines and processes.

A part of the state keeps the sorted hashes of its URLs (its URL-hash index), so that a
run can tell, without decoding the part, that a URL appearing or vanishing elsewhere is
surely not recorded there. The sitemap reader makes the index where it parses a file.
"""

from __future__ import annotations

import array
import zlib
from collections.abc import Iterable


def loc_hash(loc: str) -> int:
    """A 64-bit fingerprint of a URL, stable across runs and machines (``hash()`` is not)."""
    data = loc.encode("utf-8", "surrogatepass")
    return zlib.crc32(data) << 32 | zlib.adler32(data)


def hash_index(locs: Iterable[str]) -> bytes:
    """The sorted fingerprints of ``locs``: whether a part may hold a URL, without decoding it."""
    return array.array("Q", sorted(map(loc_hash, locs))).tobytes()
