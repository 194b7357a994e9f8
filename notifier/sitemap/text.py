"""A plain-text sitemap: one URL a line, UTF-8 (sitemaps.org), capped like every file."""

from __future__ import annotations

from collections.abc import Iterator

from notifier.errors import InputError
from notifier.sitemap.files import Entry, Sitemap, SitemapFile
from notifier.sitemap.items import XML_SPACE
from notifier.sitemap.xml import BOM


def parse_text(chunks: Iterator[bytes], location: str, file_no: int, sitemap: Sitemap, info: SitemapFile) -> None:
    data = b"".join(chunks)  # at most MAX_FILE_BYTES, checked by the source
    if data.startswith(BOM):
        data = data[len(BOM) :]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data[: error.start].count(b"\n") + 1
        raise InputError(f"{location}, line {line}: not UTF-8 text; a sitemap must be UTF-8") from None
    if "\x00" in text:
        line = text[: text.index("\x00")].count("\n") + 1
        raise InputError(f"{location}, line {line}: contains a NUL byte; this is not a text sitemap")
    for number, raw_line in enumerate(text.splitlines(), start=1):
        loc = raw_line.strip(XML_SPACE)
        if loc:
            sitemap.entries.append((loc, None, file_no, number) if sitemap.plain else Entry(loc, None, file_no, number))  # type: ignore[arg-type]
            info.url_count += 1
