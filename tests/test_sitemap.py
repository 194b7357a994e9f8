"""Reading sitemaps: urlset, index with parts, gzip, plain text, a URL; strict and safe."""

from __future__ import annotations

import gzip
import itertools
import os
from pathlib import Path

import pytest

from notifier.errors import InputError
from notifier.sitemap.reader import NS_084, ReadOptions, read_sitemap
from notifier.sitemap.source import MAX_FILE_BYTES
from tests.conftest import BASE, HOST, NS, Site, index, pages, urlset
from tests.fakeindexnow import FakeIndexNow


def locs(path: object, **options: object) -> list[str]:
    return [entry.loc for entry in read_sitemap(str(path), ReadOptions(**options)).entries]  # type: ignore[arg-type]


def test_urlset_entries_in_order_with_lastmod_as_written(offline_site: Site) -> None:
    path = offline_site.write({"/": "2024-01-01", "/a/": None, "/b/?x=1&y=2": "2024-02-03T04:05:06.789+01:00"})
    sitemap = read_sitemap(str(path))
    assert [(e.loc, e.lastmod) for e in sitemap.entries] == [
        (BASE + "/", "2024-01-01"),
        (BASE + "/a/", None),
        (BASE + "/b/?x=1&y=2", "2024-02-03T04:05:06.789+01:00"),
    ]
    assert [e.line for e in sitemap.entries] == [3, 7, 10]  # the line of each <url>


def test_a_sitemap_of_several_megabytes_reads_every_url_whole_across_its_chunks(offline_site: Site) -> None:
    """The file is parsed a megabyte at a time: a <url> that a chunk's end cuts in two is read
    once it is whole, its loc and lastmod not cut, and its line the line it starts on."""
    listed = {f"/posts/{n}/{'x' * (n % 37)}/": f"2024-05-{1 + n % 28:02d}T10:{n % 60:02d}:00Z" for n in range(40_000)}
    path = offline_site.write(urlset(listed))
    assert path.stat().st_size > 3 * 1024 * 1024  # several chunks, so several cut <url>s
    sitemap = read_sitemap(str(path))
    assert [(e.loc, e.lastmod) for e in sitemap.entries] == [(BASE + loc, lastmod) for loc, lastmod in listed.items()]
    lines = [e.line for e in sitemap.entries]
    assert lines[:16_000] == list(range(3, 3 + 4 * 16_000, 4))  # (libxml2 names line 65,535 as 65,536)
    assert all(earlier < later for earlier, later in itertools.pairwise(lines))
    assert sitemap.findings == []


def test_index_parts_are_read_from_the_local_build(offline_site: Site) -> None:
    offline_site.write(urlset(pages(3, prefix="/blog/")), "sitemaps/blog.xml")
    offline_site.write(gzip.compress(urlset(pages(2, prefix="/docs/")).encode()), "sitemaps/docs.xml.gz")
    path = offline_site.write(index({"/sitemaps/blog.xml": None, "/sitemaps/docs.xml.gz": "2024-01-01"}))
    sitemap = read_sitemap(str(path))
    assert len(sitemap.entries) == 5
    assert [f.kind for f in sitemap.files] == ["index", "urlset", "urlset"]


def test_index_parts_resolve_under_site_dir(offline_site: Site, tmp_path: object) -> None:
    offline_site.write(urlset(pages(2)), "part-1.xml")
    elsewhere = offline_site.root / "index-only"
    elsewhere.mkdir()
    (elsewhere / "sitemap.xml").write_text(index({"/part-1.xml": None}))
    assert len(locs(elsewhere / "sitemap.xml", site_dir=offline_site.public)) == 2
    with pytest.raises(InputError, match="pass --site-dir"):
        read_sitemap(str(elsewhere / "sitemap.xml"))


def test_a_missing_part_is_an_error_naming_it(offline_site: Site) -> None:
    offline_site.write(urlset(pages(2)), "part-1.xml")
    offline_site.write(index({"/part-1.xml": None, "/part-2.xml": None}))
    result = offline_site.check()
    assert result.code == 2
    assert "part-2.xml" in result.err and "not found" in result.err
    assert result.err.count("\n") == 1 and "Traceback" not in result.err


def test_relative_part_locs_resolve_beside_the_index(offline_site: Site) -> None:
    offline_site.write(urlset(pages(2)), "fr/sitemap.xml")
    offline_site.write(urlset(pages(3, prefix="/en/")), "en/sitemap.xml")
    path = offline_site.write(index({"fr/sitemap.xml": None, "en/sitemap.xml": None}))
    sitemap = read_sitemap(str(path))
    assert len(sitemap.entries) == 5
    assert [f.rule for f in sitemap.findings] == ["url-invalid", "url-invalid"]


def test_gzip_at_the_top_level_and_a_gzip_part_with_an_xml_name(offline_site: Site) -> None:
    offline_site.write(gzip.compress(urlset(pages(2)).encode()), "part.xml")  # gzip bytes, .xml name
    offline_site.write(gzip.compress(index({"/part.xml": None}).encode()), "sitemap.xml.gz")
    assert len(locs(offline_site.public / "sitemap.xml.gz")) == 2


def test_plain_text_sitemap(offline_site: Site) -> None:
    path = offline_site.write(f"{BASE}/\n\n  {BASE}/a/  \r\n{BASE}/b/\n", "sitemap.txt")
    assert locs(path) == [BASE + "/", BASE + "/a/", BASE + "/b/"]


def test_a_comment_inside_a_loc_is_no_part_of_it(offline_site: Site) -> None:
    offline_site.write(f'<urlset xmlns="{NS}"><url><loc>{BASE}/a<!-- generated -->b/</loc></url></urlset>')
    assert locs(offline_site.sitemap) == [f"{BASE}/ab/"]


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("<?xml version='1.0'?>\n<!-- nothing -->\n", r"line 3: not well-formed XML \(Start tag expected, '<' not found\)"),
        (f'<urlset xmlns="{NS}"><url></urlset>', r"line 1: not well-formed XML \(Opening and ending tag mismatch: url line 1 and urlset\)"),
        (
            '<html xmlns="http://www.w3.org/1999/xhtml"><body/></html>',
            r": root element <html> \(namespace http://www\.w3\.org/1999/xhtml\)",
        ),
        ("<html><body/></html>", r": root element <html> \(namespace none\) is not a sitemap"),
    ],
)
def test_a_file_that_is_no_sitemap_says_what_the_parser_saw(offline_site: Site, text: str, said: str) -> None:
    offline_site.write(text)
    with pytest.raises(InputError, match=said):
        read_sitemap(str(offline_site.sitemap))


DOCTYPES = ["<!DOCTYPE html>", "<!doctype html>", "<!DOCTYPE   HTML>", "<!DOCTYPE\nhtml PUBLIC '-//W3C//DTD XHTML 1.0//EN'>"]


@pytest.mark.parametrize("doctype", DOCTYPES)
def test_an_html_page_is_said_so_however_its_doctype_is_written(offline_site: Site, doctype: str) -> None:
    offline_site.write(doctype + "\n<html><head><title>404</title></head><body/></html>")
    with pytest.raises(InputError, match="is an HTML page, not a sitemap"):
        read_sitemap(str(offline_site.sitemap))


@pytest.mark.parametrize("filler", ["whitespace", "comment"])
def test_an_html_doctype_past_the_first_chunk_is_still_an_html_page(offline_site: Site, filler: str) -> None:
    """The first MiB chunk ends inside the prolog (in whitespace, or in an unclosed comment):
    the DOCTYPE in the next is still judged on the bytes, before the parser sees it."""
    declaration = '<?xml version="1.0"?>'
    pad = (1 << 20) - len(declaration)
    prolog = declaration + (" " * pad if filler == "whitespace" else "<!--" + " " * pad + "-->")
    offline_site.write(prolog + "<!DOCTYPE html>\n<html><head><title>404</title></head><body/></html>")
    with pytest.raises(InputError, match="is an HTML page, not a sitemap"):
        read_sitemap(str(offline_site.sitemap))


@pytest.mark.parametrize(("before", "read"), [(1 << 20, True), ((2 << 20) + 1, False)])
def test_what_comes_before_the_root_is_read_up_to_a_mib_a_chunk(offline_site: Site, before: int, read: bool) -> None:
    """The first MiB chunk may be all comment; a file still without its root element past a
    second is refused."""
    offline_site.write("<!--" + " " * (before - 7) + "-->" + f'<urlset xmlns="{NS}"><url><loc>{BASE}/</loc></url></urlset>')
    if read:
        assert locs(offline_site.sitemap) == [f"{BASE}/"]
    else:
        with pytest.raises(InputError, match="over 1 MB before the root element"):
            read_sitemap(str(offline_site.sitemap))


def test_a_text_sitemap_skips_its_bom_and_names_its_lines(offline_site: Site) -> None:
    path = offline_site.write(f"\ufeff{BASE}/\n\n{BASE}/a/\n", "sitemap.txt")
    assert [(entry.loc, entry.line) for entry in read_sitemap(str(path)).entries] == [(BASE + "/", 1), (BASE + "/a/", 3)]


@pytest.mark.parametrize(
    ("second", "said"), [(b"\xff\xfe", "line 2: not UTF-8 text; a sitemap must be UTF-8"), (b"\x00", "line 2: contains a NUL byte")]
)
def test_a_text_sitemap_that_is_not_text_names_the_line(offline_site: Site, second: bytes, said: str) -> None:
    path = offline_site.write(f"{BASE}/\n{BASE}/".encode() + second + b"\n", "sitemap.txt")
    with pytest.raises(InputError, match=said):
        read_sitemap(str(path))


def test_a_text_sitemap_is_told_by_its_name_gzipped_or_not_whatever_it_begins_with(offline_site: Site) -> None:
    path = offline_site.write(gzip.compress(f"{BASE}/\n{BASE}/a/\n".encode()), "sitemap.txt.gz")
    assert locs(path) == [BASE + "/", BASE + "/a/"]
    path = offline_site.write(f"<{BASE}/>\n{BASE}/a/\n", "urls.txt")  # a URL in angle brackets, pasted from Markdown
    sitemap = read_sitemap(str(path))
    assert sitemap.files[0].kind == "text" and [entry.loc for entry in sitemap.entries] == [f"<{BASE}/>", BASE + "/a/"]


def test_truncated_gzip_data_is_said_so(offline_site: Site) -> None:
    path = offline_site.write(gzip.compress(urlset(pages(50)).encode())[:-20], "sitemap.xml.gz")
    with pytest.raises(InputError, match="truncated gzip data; rebuild the file"):
        read_sitemap(str(path))


def test_a_sitemap_is_on_its_own_site_over_an_upgrade_to_https_only() -> None:
    from notifier.sitemap.source import same_site

    assert same_site("http://example.org/sitemap.xml", "https://example.org/part.xml")
    assert not same_site("https://example.org/sitemap.xml", "http://example.org/part.xml")
    assert not same_site("https://example.org/sitemap.xml", "https://www.example.org/part.xml")


def test_sitemap_by_url(fake: FakeIndexNow) -> None:
    host = f"127.0.0.1:{fake.port}"
    fake.sites[host] = {
        "/sitemap.xml": urlset(pages(4)).encode(),
        "/urls": f"{BASE}/x/\n{BASE}/y/\n".encode(),  # answered as text/plain: a text sitemap
        "/sitemap": urlset(pages(3)).encode(),  # XML answered as text/plain: still XML
        "/list.txt": f"<{BASE}/x/>\n".encode(),  # named .txt: text, whatever its first byte
    }
    assert len(locs(f"{fake.url}/sitemap.xml")) == 4
    assert locs(f"{fake.url}/urls") == [BASE + "/x/", BASE + "/y/"]
    assert len(locs(f"{fake.url}/sitemap")) == 3
    assert read_sitemap(f"{fake.url}/list.txt").files[0].kind == "text"
    with pytest.raises(InputError, match="answered 404"):
        read_sitemap(f"{fake.url}/missing.xml")


def test_old_084_namespace_is_read_like_09(offline_site: Site) -> None:
    path = offline_site.write(urlset(pages(3), namespace=NS_084))
    assert len(locs(path)) == 3


def test_loc_whitespace_and_cdata_are_trimmed(offline_site: Site) -> None:
    path = offline_site.write(
        f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>\n   {BASE}/a/\n </loc></url>'
        f"<url><loc><![CDATA[{BASE}/b/?q=1&r=2]]></loc></url></urlset>"
    )
    assert locs(path) == [BASE + "/a/", BASE + "/b/?q=1&r=2"]


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("<urlset xmlns='http://www.sitemaps.org/schemas/sitemap/0.9'><url><loc>http://x.org/?a=1&b=2</loc></url></urlset>", "line 1"),
        ('<?xml version="1.0"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n<url><loc>x', "line 3"),
        ("<!DOCTYPE html><html><body>Not found</body></html>", "is an HTML page"),
        ("<html><body><p>hello<br></p></body></html>", "not well-formed"),
        ("<html><body><p>hello</p></body></html>", "root element <html>"),
        ("", "empty"),
        ("   \n\n", "empty"),
        (
            '<?xml version="1.0"?><!DOCTYPE urlset [<!ENTITY a "b">]><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"/>',
            "DOCTYPE",
        ),
    ],
)
def test_broken_input_is_one_clear_line_and_exit_2(offline_site: Site, content: str, expected: str) -> None:
    offline_site.write(content)
    result = offline_site.check()
    assert result.code == 2, result
    assert expected in result.err
    assert result.err.count("\n") == 1 and "Traceback" not in result.err


@pytest.mark.parametrize(
    "doctype",
    [
        '<!DOCTYPE urlset SYSTEM "http://127.0.0.1:9/evil.dtd">',
        '<!DOCTYPE urlset [<!ENTITY e "http://www.shop-site.org/expanded/">]>',
        '<!DOCTYPE urlset [<!ENTITY e SYSTEM "file:///etc/hostname">]>',
    ],
)
def test_no_entity_is_ever_expanded(offline_site: Site, doctype: str) -> None:
    offline_site.write(
        f'<?xml version="1.0"?>{doctype}<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>&e;</loc></url></urlset>'
    )
    result = offline_site.check()
    assert result.code == 2 and "DOCTYPE" in result.err and "expanded" not in result.out + result.err


def test_an_entity_without_a_doctype_is_not_well_formed_and_not_expanded(offline_site: Site) -> None:
    offline_site.write(urlset({"/a/": "2024-01-01"}).replace(f"{BASE}/a/", f"{BASE}/&e;/"))
    result = offline_site.check()
    assert result.code == 2 and "not well-formed XML" in result.err and "entity" in result.err


@pytest.mark.parametrize(
    ("before", "said"),
    [(b"\xef\xbb\xbf\n  ", "a byte-order mark and whitespace"), (b"\xef\xbb\xbf", "a byte-order mark"), (b"\n  ", "whitespace")],
)
def test_bom_and_whitespace_before_the_declaration_are_tolerated_with_a_warning(offline_site: Site, before: bytes, said: str) -> None:
    offline_site.write(before + urlset(pages(2)).encode())
    result = offline_site.check()
    assert result.code == 0, result.err
    assert f"warn[xml-prolog] {offline_site.sitemap}: {said} before the XML declaration;" in result.out, result.out


def test_whitespace_before_a_root_without_a_declaration_is_well_formed_and_not_warned(offline_site: Site) -> None:
    """XML allows white space before the root element when there is no declaration: the honest
    twin of the warning above (edit: ``body.startswith(b"<?xml")`` dropped from the condition)."""
    body = urlset(pages(2))
    assert body.startswith("<?xml")
    offline_site.write(b"\n\n  " + body.partition("?>")[2].lstrip().encode())
    result = offline_site.check()
    assert result.code == 0, result.err
    assert "xml-prolog" not in result.out, result.out


def test_a_file_over_50_mb_is_refused_without_reading_it(offline_site: Site) -> None:
    path = offline_site.public / "sitemap.xml"
    with open(path, "wb") as handle:  # sparse: takes no disk
        handle.truncate(MAX_FILE_BYTES * 4)
    result = offline_site.check()
    assert result.code == 2 and "over the sitemap limit" in result.err


def test_a_gzip_bomb_stops_at_50_mb(offline_site: Site) -> None:
    filler = (b"<a/>" + b" " * 4092) * (MAX_FILE_BYTES // 4096 + 16)
    bomb = gzip.compress(b'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">' + filler, compresslevel=9)
    offline_site.write(bomb, "sitemap.xml.gz")
    result = offline_site.run(sitemap=str(offline_site.public / "sitemap.xml.gz"), command="check")
    assert result.code == 2 and "once uncompressed" in result.err


def test_a_part_escaping_the_site_dir_is_refused(offline_site: Site) -> None:
    offline_site.write(index({"/../../etc/passwd": None}))
    result = offline_site.check()
    assert result.code == 2 and "outside the site dir" in result.err


def test_an_index_listing_itself_is_refused(offline_site: Site) -> None:
    offline_site.write(index({"/sitemap.xml": None}))
    result = offline_site.check()
    assert result.code == 2 and "lists itself" in result.err


def test_an_unreadable_path_is_exit_2(offline_site: Site) -> None:
    result = offline_site.run(sitemap=str(offline_site.public / "nope.xml"), command="check")
    assert result.code == 2 and "no such file" in result.err
    missing = offline_site.root / "not-built" / "sitemap.xml"  # its folder is missing too: still the sitemap's fault
    result = offline_site.run(sitemap=str(missing), command="check")
    assert result.code == 2 and result.err.endswith(f" {missing}: no such file; build the site first or pass the right path\n")
    loop = offline_site.public / "loop.xml"  # unreadable for every user, root included (CI runs as root)
    loop.symlink_to(offline_site.public / "loop2.xml")
    (offline_site.public / "loop2.xml").symlink_to(loop)
    looped = offline_site.run(sitemap=str(loop), command="check")
    assert looped.code == 2 and "cannot read it" in looped.err and looped.err.count("\n") == 1
    if os.geteuid() != 0:  # root reads a file whatever its mode
        path = offline_site.write(urlset(pages(1)))
        path.chmod(0)
        assert offline_site.check().code == 2


@pytest.mark.parametrize(("hops", "followed"), [(5, True), (6, False)])
def test_a_sitemap_follows_five_redirects_and_no_more(fake: FakeIndexNow, hops: int, followed: bool) -> None:
    host = f"127.0.0.1:{fake.port}"
    fake.sites[host] = {"/final.xml": urlset(pages(2)).encode()}
    for hop in range(hops):  # each a relative Location, joined to the URL it answers
        fake.redirects[f"{host}/hop-{hop}.xml"] = f"/hop-{hop + 1}.xml" if hop + 1 < hops else "/final.xml"
    if followed:
        assert len(locs(f"{fake.url}/hop-0.xml")) == 2
    else:
        with pytest.raises(InputError, match="more than 5 redirects"):
            read_sitemap(f"{fake.url}/hop-0.xml")


def test_a_gzip_file_of_several_chunks_is_read_whole(offline_site: Site) -> None:
    """More than a MiB of gzip data (a long comment that does not compress): read chunk by
    chunk, every chunk after the first as the rest of one stream."""
    noise = os.urandom(3 << 20).hex()
    data = gzip.compress(f'<urlset xmlns="{NS}"><!-- {noise} --><url><loc>{BASE}/a/</loc></url></urlset>'.encode(), compresslevel=1)
    assert len(data) > 2 << 20
    assert locs(offline_site.write(data, "sitemap.xml.gz")) == [BASE + "/a/"]


def test_a_remote_index_reads_only_parts_on_its_own_site(fake: FakeIndexNow) -> None:
    host = f"127.0.0.1:{fake.port}"
    fake.sites["169.254.169.254"] = {"/latest/meta-data.xml": urlset(pages(1)).encode()}
    fake.sites[host] = {
        "/ok.xml": index({f"{fake.url}/part.xml": None, "part2.xml": None}).encode(),
        "/part.xml": urlset(pages(2)).encode(),
        "/part2.xml": urlset(pages(3, prefix="/q/")).encode(),
        "/bad.xml": index({f"{fake.url}/part.xml": None, "http://169.254.169.254/latest/meta-data.xml": None}).encode(),
    }
    assert len(locs(f"{fake.url}/ok.xml")) == 5
    with pytest.raises(InputError, match=r"not on the sitemap's host \(127\.0\.0\.1:\d+\)"):
        read_sitemap(f"{fake.url}/bad.xml")
    assert not any("169.254" in get for get in fake.gets)


def test_a_sitemap_redirect_is_followed_on_its_own_site_only(fake: FakeIndexNow) -> None:
    host = f"127.0.0.1:{fake.port}"
    fake.sites[host] = {"/new.xml": urlset(pages(2)).encode()}
    fake.sites["169.254.169.254"] = {"/meta.xml": urlset(pages(1)).encode()}
    fake.redirects[f"{host}/old.xml"] = f"{fake.url}/new.xml"
    fake.redirects[f"{host}/away.xml"] = "http://169.254.169.254/meta.xml"
    fake.redirects[f"{host}/loop.xml"] = f"{fake.url}/loop.xml"
    assert len(locs(f"{fake.url}/old.xml")) == 2
    with pytest.raises(InputError, match=r"redirects to http://169\.254\.169\.254/meta\.xml, on another host"):
        read_sitemap(f"{fake.url}/away.xml")
    assert not any("169.254" in get for get in fake.gets)
    with pytest.raises(InputError, match="more than 5 redirects"):
        read_sitemap(f"{fake.url}/loop.xml")


def test_a_dripping_sitemap_download_is_bounded_by_the_request_timeout(fake: FakeIndexNow) -> None:
    from notifier.sitemap.reader import ReadOptions
    from tests.fakeindexnow import drip

    fake.get_faults["/sitemap.xml"] = drip(0.05, 600)  # 30 s of sitemap, a byte every 50 ms
    with pytest.raises(InputError, match=r"cannot fetch the sitemap \(WholeRequestTimeout\)"):
        read_sitemap(f"{fake.url}/sitemap.xml", ReadOptions(request_timeout=0.5))


@pytest.mark.parametrize("loc", ["/sitemaps/a.xml", f"//{HOST}/sitemaps/a.xml"])  # root-relative; protocol-relative
def test_an_index_part_with_a_root_relative_loc_is_read_and_reported(offline_site: Site, loc: str) -> None:
    offline_site.write(urlset(pages(2)), "sitemaps/a.xml")
    offline_site.write(
        '<?xml version="1.0" encoding="UTF-8"?>\n<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
        f"<sitemap><loc>{loc}</loc></sitemap></sitemapindex>",
        "sitemap.xml",
    )
    sitemap = read_sitemap(str(offline_site.sitemap))
    assert len(sitemap.entries) == 2
    result = offline_site.check()
    assert result.code == 1 and f"error[url-invalid] {loc}" in result.out
    assert result.err == ""  # an index of one part is a short read: no step (README: short runs write none)


@pytest.mark.parametrize("extra_parts", [0, 2])  # the serial and the parallel reader
def test_a_cycle_of_indexes_is_named_as_a_cycle(offline_site: Site, extra_parts: int) -> None:
    for number in range(extra_parts):
        offline_site.write(urlset(pages(2, prefix=f"/x{number}/")), f"x{number}.xml")
    extra = {f"/x{number}.xml": None for number in range(extra_parts)}
    offline_site.write(index({"/s2.xml": None, **extra}), "sitemap.xml")
    offline_site.write(index({"/s3.xml": None}), "s2.xml")
    offline_site.write(index({"/sitemap.xml": None}), "s3.xml")
    with pytest.raises(InputError) as caught:
        read_sitemap(str(offline_site.sitemap))
    message = str(caught.value)
    assert "cycle" in message and "nested" not in message
    assert message.index("sitemap.xml ->") < message.index("s2.xml ->") < message.index("s3.xml ->")
    result = offline_site.check()
    assert result.code == 2 and "cycle" in result.err


def test_a_cycle_below_the_root_names_only_its_own_indexes(offline_site: Site) -> None:
    offline_site.write(index({"/s2.xml": None}), "sitemap.xml")
    offline_site.write(index({"/s3.xml": None}), "s2.xml")
    offline_site.write(index({"/s2.xml": None}), "s3.xml")
    with pytest.raises(InputError) as caught:
        read_sitemap(str(offline_site.sitemap))
    cycle = str(caught.value).partition("in a cycle: ")[2].partition(";")[0]
    assert [Path(name).name for name in cycle.split(" -> ")] == ["s2.xml", "s3.xml", "s2.xml"], caught.value


def test_an_index_listing_itself_is_a_cycle_of_one(offline_site: Site) -> None:
    offline_site.write(index({"/sitemap.xml": None}), "sitemap.xml")
    with pytest.raises(InputError, match=r"sitemap\.xml: the sitemap index lists itself \(a cycle of one\)"):
        read_sitemap(str(offline_site.sitemap))


def test_a_deep_chain_without_a_cycle_is_still_too_deep(offline_site: Site) -> None:
    offline_site.write(index({"/s2.xml": None}), "sitemap.xml")
    offline_site.write(index({"/s3.xml": None}), "s2.xml")
    offline_site.write(index({"/s4.xml": None}), "s3.xml")
    offline_site.write(urlset(pages(1)), "s4.xml")
    with pytest.raises(InputError, match="nested more than 2 deep"):
        read_sitemap(str(offline_site.sitemap))


@pytest.mark.parametrize("space", ["\u00a0", "\u2003", "\u0085", "\u3000"])
def test_only_xml_white_space_is_trimmed_from_a_loc(offline_site: Site, space: str) -> None:
    offline_site.write(urlset({"/a/": "2024-01-01"}).replace(f"{BASE}/a/", f" \t{space}{BASE}/a/{space}\n"))
    assert locs(offline_site.sitemap) == [f"{space}{BASE}/a/{space}"]
    result = offline_site.check()
    assert result.code == 1 and "error[url-invalid]" in result.out


def test_xml_white_space_around_a_loc_is_trimmed_without_a_finding(offline_site: Site) -> None:
    offline_site.write(urlset({"/a/": "2024-01-01"}).replace(f"{BASE}/a/", f" \t\r\n{BASE}/a/\n\t "))
    assert locs(offline_site.sitemap) == [f"{BASE}/a/"]
    assert offline_site.check().code == 0


@pytest.mark.parametrize(("twice", "rule"), [("loc", "url-invalid"), ("lastmod", "lastmod-invalid")])
def test_two_locs_or_two_lastmods_in_one_url_are_reported(offline_site: Site, twice: str, rule: str) -> None:
    second = f"<{twice}>{BASE}/other/</{twice}>" if twice == "loc" else "<lastmod>2024-02-02</lastmod>"
    offline_site.write(urlset({"/a/": "2024-01-01", "/b/": "2024-01-01"}).replace("</url>", f"{second}</url>", 1))
    result = offline_site.check()
    assert result.code == 1 and f"error[{rule}] {BASE}/a/" in result.out and f"two <{twice}> in one <url>" in result.out


def test_an_index_inside_an_index_is_said_of_the_inner_index(offline_site: Site) -> None:
    offline_site.write(urlset(pages(2)), "leaf.xml")
    inner = offline_site.write(index({"/leaf.xml": None}), "inner.xml")
    offline_site.write(index({"/inner.xml": None}))
    sitemap = read_sitemap(str(offline_site.sitemap))
    assert [(finding.rule, finding.url) for finding in sitemap.findings] == [("sitemap-limits", f"{BASE}/inner.xml")]
    assert len(sitemap.entries) == 2 and inner.exists()


def test_over_the_limit_says_urls_for_a_urlset_and_parts_for_an_index(offline_site: Site, monkeypatch: pytest.MonkeyPatch) -> None:
    import notifier.sitemap.reader

    monkeypatch.setattr(notifier.sitemap.reader, "MAX_URLS_PER_FILE", 2)
    offline_site.write(urlset(pages(3)), "a.xml")
    offline_site.write(urlset(pages(1, prefix="/q/")), "b.xml")
    offline_site.write(urlset(pages(1, prefix="/r/")), "c.xml")
    offline_site.write(index({"/a.xml": None, "/b.xml": None, "/c.xml": None}))
    messages = [finding.message for finding in read_sitemap(str(offline_site.sitemap)).findings]
    assert messages == ["3 URLs in one file, over the limit of 2; split it", "3 parts in one file, over the limit of 2; split it"]


@pytest.mark.parametrize(("loc", "invalid"), [(f"{BASE}/a.xml", False), ("a.xml", True), ("ftp://www.shop-site.org/a.xml", True)])
def test_an_index_part_loc_must_be_an_absolute_url(offline_site: Site, loc: str, invalid: bool) -> None:
    offline_site.write(urlset(pages(1)), "a.xml")
    offline_site.write(index({loc: None}))
    findings = read_sitemap(str(offline_site.sitemap)).findings
    assert [(finding.rule, finding.url) for finding in findings] == ([("url-invalid", loc)] if invalid else [])


def test_a_sitemap_url_that_streams_without_end_is_refused_at_the_limit(fake: FakeIndexNow, monkeypatch: pytest.MonkeyPatch) -> None:
    """A server that answers the sitemap's URL with an endless body: the download stops just past
    the limit, and the user is told the file is too big (not, a timeout later, that the fetch failed)."""
    import notifier.sitemap.source
    from tests.fakeindexnow import flood

    monkeypatch.setattr(notifier.sitemap.source, "MAX_FILE_BYTES", 256 * 1024)
    fake.get_faults["/big.xml"] = flood(1 << 30)
    with pytest.raises(InputError, match=r"big\.xml: over 262144 bytes; split it into an index with parts"):
        read_sitemap(f"{fake.url}/big.xml", ReadOptions(request_timeout=10))
