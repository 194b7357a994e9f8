"""The bytes of one sitemap file: read by the tool itself, capped, and gunzipped with a bound.

lxml is never handed a path or a URL (it would decompress any file it is given, and
could fetch); it only ever sees the bytes this module yields, at most 50 MB of them.
"""

from __future__ import annotations

import functools
import hashlib
import os
import stat
import zlib
from collections.abc import Iterator
from typing import TYPE_CHECKING

from notifier.errors import InputError
from notifier.paths import cannot, file_kind, is_url
from notifier.urls import join_url, split_url, without_password

MAX_FILE_BYTES = 50 * 1024 * 1024  # sitemaps.org: at most 50 MB (52,428,800 bytes) uncompressed
CHUNK = 1 << 20
_GZIP_MAGIC = b"\x1f\x8b"

if TYPE_CHECKING:
    import requests  # loaded where a sitemap is fetched: a local one never loads it (a tenth of a second)


class Source:
    """The bytes of one sitemap file, capped and gunzipped by the reader itself."""

    def __init__(self, location: str, request_timeout: float, auth: tuple[str, str] | None = None) -> None:
        self.location = location
        self._hash = hashlib.blake2b(digest_size=16)
        self._response: requests.Response | None = None
        name = location.lower().partition("?")[0]
        self.gz_name = name.endswith(".gz")
        if self.gz_name:
            name = name[:-3]
        self.is_text = name.endswith(".txt")
        self.text_by_content_type = False
        if is_url(location):
            self._response = fetch(location, request_timeout, auth)
            content_type = self._response.headers.get("Content-Type", "").partition(";")[0].strip().lower()
            self.text_by_content_type = not self.is_text and content_type == "text/plain"
            self.is_text = self.is_text or self.text_by_content_type
        else:
            try:
                status = os.stat(location)  # after symlinks
            except FileNotFoundError:
                raise InputError(f"{location}: no such file; build the site first or pass the right path") from None
            except OSError as error:
                raise InputError(f"{location}: {cannot('read it', error)}") from None
            if not stat.S_ISREG(status.st_mode):
                raise InputError(f"{location}: is {_kind(status.st_mode)}, not a sitemap file; pass the path of the built sitemap")
            size = status.st_size
            if size > MAX_FILE_BYTES:
                raise InputError(
                    f"{location}: {size} bytes, over the sitemap limit of {MAX_FILE_BYTES} bytes; split it into an index with parts"
                )

    def digest(self) -> str:
        return self._hash.hexdigest()

    def _raw(self) -> Iterator[bytes]:
        if self._response is not None:
            import requests  # loaded by fetch already

            try:
                yield from self._response.iter_content(CHUNK)
            except requests.RequestException as error:
                raise InputError(f"{self.location}: download failed ({type(error).__name__}); try again") from None
            finally:
                self._response.close()
            return
        try:
            with open(self.location, "rb") as handle:
                while chunk := handle.read(CHUNK):
                    yield chunk
        except OSError as error:
            raise InputError(f"{self.location}: {cannot('read it', error)}") from None

    def chunks(self) -> Iterator[bytes]:
        """The file's content, decompressed if it is gzip, never more than MAX_FILE_BYTES."""
        decompressor: zlib._Decompress | None = None
        started = member_open = False
        total_raw = produced = 0
        for chunk in self._raw():
            if not chunk:
                continue
            if not started:
                started = True
                if chunk.startswith(_GZIP_MAGIC):  # by content, not by name: ".gz" at any level
                    decompressor = zlib.decompressobj(wbits=31)
                elif self.gz_name and not self.is_text and not chunk.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"<"):
                    # plain XML under a .gz name reads (a server may have unpacked it); anything else is no sitemap
                    raise InputError(f"{self.location}: named .gz but not gzip data; compress it with gzip, or drop .gz from its name")
            total_raw += len(chunk)
            if total_raw > MAX_FILE_BYTES:
                raise InputError(f"{self.location}: over {MAX_FILE_BYTES} bytes; split it into an index with parts")
            self._hash.update(chunk)
            if decompressor is None:
                yield chunk
                continue
            data = chunk
            while data:
                member_open = True
                try:
                    out = decompressor.decompress(data, CHUNK)
                except zlib.error as error:
                    raise InputError(f"{self.location}: broken gzip data ({error}); rebuild the file") from None
                produced += len(out)
                if produced > MAX_FILE_BYTES:
                    raise InputError(
                        f"{self.location}: more than {MAX_FILE_BYTES} bytes once uncompressed, over the sitemap "
                        "limit; split it into an index with parts"
                    )
                if out:
                    yield out
                if decompressor.eof:  # a multi-member gzip file goes on; trailing junk does not count
                    member_open = False
                    rest = decompressor.unused_data
                    decompressor = zlib.decompressobj(wbits=31)
                    data = rest if rest.startswith(_GZIP_MAGIC) else b""
                else:
                    data = decompressor.unconsumed_tail
        if member_open:
            raise InputError(f"{self.location}: truncated gzip data; rebuild the file")


MAX_REDIRECTS = 5


def same_site(url: str, other: str) -> bool:
    """Whether ``other`` is on ``url``'s origin (an http -> https upgrade of it counts as the same)."""
    a, b = split_url(url), split_url(other)
    if a.netloc.lower() != b.netloc.lower() or not b.netloc:
        return False
    return a.scheme == b.scheme or (a.scheme, b.scheme) == ("http", "https")


def _get(url: str, timeout: float, auth: tuple[str, str] | None) -> requests.Response:
    import requests

    return requests.get(url, stream=True, timeout=(min(timeout, 10.0), timeout), allow_redirects=False, auth=auth)


def fetch(url: str, timeout: float, auth: tuple[str, str] | None = None) -> requests.Response:
    """GET a sitemap, its body read whole (at most just over the cap) within ``timeout`` in all.

    Redirects are followed by hand and only on the sitemap's own origin: a sitemap's URL
    must not send the tool to another host (a cloud metadata address, say), nor ``auth``
    (the sitemap's basic auth) anywhere but its own site."""
    import requests

    from notifier.http import exchange

    location = url
    for _ in range(MAX_REDIRECTS + 1):
        try:
            response = exchange(functools.partial(_get, location, timeout, auth), timeout, limit=MAX_FILE_BYTES)
        except requests.RequestException as error:
            raise InputError(f"{url}: cannot fetch the sitemap ({type(error).__name__}); check the URL and the network") from None
        except ValueError:  # requests reads a redirect's Location even when it does not follow it: one Python cannot split
            raise InputError(
                f"{url}: redirects to a Location that is no URL (Python cannot read it); a sitemap is read from its own site "
                "only: pass its final URL"
            ) from None
        if response.is_redirect:
            target = join_url(location, response.headers.get("Location", "")) or response.headers.get("Location", "")
            if not same_site(url, target):
                raise InputError(
                    f"{url}: redirects to {without_password(target)}, on another host; "
                    "a sitemap is read from its own site only: pass its final URL"
                )
            location = target
            continue
        if response.status_code != 200:
            raise InputError(f"{url}: the server answered {response.status_code}, not the sitemap; check the URL")
        return response
    raise InputError(f"{url}: more than {MAX_REDIRECTS} redirects; pass the sitemap's final URL")


def _kind(mode: int) -> str:
    """What a path that is not a regular file is, in words (a FIFO would block for ever)."""
    return "a folder (pass the sitemap file inside it)" if stat.S_ISDIR(mode) else file_kind(mode)


def file_digest(location: str) -> str:
    """The digest ``_Source`` computes while reading, from the raw bytes alone."""
    digest = hashlib.blake2b(digest_size=16)
    try:
        with open(location, "rb") as handle:
            while chunk := handle.read(CHUNK):
                digest.update(chunk)
    except OSError:
        return ""  # unreadable: the parse says why
    return digest.hexdigest()
