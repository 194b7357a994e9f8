"""What notifier/sitemap/source.py does that the mutation run found no test stating (#44): a
list of URLs served as XML is said to be one, a gzip file of several members is read whole, a
redirect to a Location Python cannot join names it, and an unreadable file's digest is empty.
Each test names the edit it catches."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from notifier.errors import InputError
from notifier.sitemap.reader import read_sitemap
from notifier.sitemap.source import file_digest
from tests.conftest import BASE, NS, Site
from tests.fakeindexnow import FakeIndexNow


def test_a_list_of_urls_served_as_xml_is_said_to_be_a_text_sitemap(fake: FakeIndexNow) -> None:
    """Served as application/xml under a .xml name, it is read as XML, which it is not: the
    error says what it is. fails if ``content_type == "text/plain"`` is dropped from the ``and``
    in sitemap/source.py::Source.__init__ (every fetched file would be taken for text)"""
    host = f"127.0.0.1:{fake.port}"
    fake.sites[host] = {"/sitemap.xml": f"{BASE}/a/\n{BASE}/b/\n".encode()}
    with pytest.raises(InputError) as raised:
        read_sitemap(f"{fake.url}/sitemap.xml")
    assert str(raised.value) == (
        f"{fake.url}/sitemap.xml: not XML but a list of URLs, one a line: that is a text sitemap; name it .txt (e.g. sitemap.txt)"
    )


def test_a_gzip_file_of_two_members_is_read_whole(offline_site: Site) -> None:
    """``cat a.gz b.gz``: the second member goes on where the first ends. fails (it never ends)
    if the second ``decompressor = zlib.decompressobj(wbits=31)`` is removed in
    sitemap/source.py::Source.chunks"""
    document = f'<urlset xmlns="{NS}"><url><loc>{BASE}/a/</loc></url><url><loc>{BASE}/b/</loc></url></urlset>'.encode()
    middle = document.index(b"<url><loc>" + f"{BASE}/b/".encode())
    path = offline_site.write(gzip.compress(document[:middle]) + gzip.compress(document[middle:]), "sitemap.xml.gz")
    assert [entry.loc for entry in read_sitemap(str(path)).entries] == [f"{BASE}/a/", f"{BASE}/b/"]


def test_a_redirect_to_a_location_that_is_no_url_is_an_input_error(fake: FakeIndexNow) -> None:
    """A real bug the survivor ``join_url(...) or response.headers.get("Location", "")`` in
    sitemap/source.py::fetch led to: requests reads a redirect's Location even when it does not
    follow it, and one Python cannot split (an unclosed bracket) raised ValueError: a crash,
    not the input error a wrong sitemap URL is"""
    host = f"127.0.0.1:{fake.port}"
    fake.redirects[f"{host}/old.xml"] = "http://[::1/x"
    with pytest.raises(InputError) as raised:
        read_sitemap(f"{fake.url}/old.xml")
    assert str(raised.value) == (
        f"{fake.url}/old.xml: redirects to a Location that is no URL (Python cannot read it); a sitemap is read from its own "
        "site only: pass its final URL"
    )


def test_an_unreadable_files_digest_is_empty(tmp_path: Path) -> None:
    """The reader then parses it, and the parse says why. fails if ``return ""`` raises in
    sitemap/source.py::file_digest"""
    assert file_digest(str(tmp_path)) == ""
    assert file_digest(str(tmp_path / "missing.xml")) == ""
    (tmp_path / "a.xml").write_bytes(b"<urlset/>")
    assert len(file_digest(str(tmp_path / "a.xml"))) == 32
