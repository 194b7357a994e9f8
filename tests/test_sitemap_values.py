"""What a sitemap says beside its locs and dates: changefreq, priority, its encoding, and
hreflang alternates; and how url-invalid tells the fix for a non-ASCII host or path."""

from __future__ import annotations

import json
import re

import pytest

from notifier.rules import url_problem
from tests.conftest import BASE, NS, Result, Site, pages, urlset

XHTML = "http://www.w3.org/1999/xhtml"


def fired(result: Result) -> set[str]:
    return set(re.findall(r"^(?:error|warn)\[([a-z-]+)\]", result.out, re.MULTILINE))


def urls(rows: str, declaration: str = '<?xml version="1.0" encoding="UTF-8"?>') -> str:
    return f'{declaration}\n<urlset xmlns="{NS}" xmlns:xhtml="{XHTML}">\n{rows}</urlset>\n'


def row(path: str, extra: str = "") -> str:
    return f"<url><loc>{BASE}{path}</loc><lastmod>2024-05-01</lastmod>{extra}</url>\n"


@pytest.mark.parametrize(
    ("extra", "bad"),
    [
        ("<changefreq>daily</changefreq><priority>0.8</priority>", False),
        ("<changefreq>never</changefreq><priority>1.0</priority>", False),
        ("<changefreq> weekly </changefreq><priority>0</priority>", False),
        ("<priority>.5</priority>", False),
        ("<changefreq>sometimes</changefreq>", True),
        ("<changefreq>Daily</changefreq>", True),
        ("<priority>7</priority>", True),
        ("<priority>1.01</priority>", True),
        ("<priority>-0.1</priority>", True),
        ("<priority>high</priority>", True),
        ("<priority></priority>", True),
        ("<priority>0.5.1</priority>", True),
        ("<priority>nan</priority>", True),
        ("<priority>.</priority>", True),  # a point alone is no number (and no crash)
    ],
)
def test_sitemap_values(offline_site: Site, extra: str, bad: bool) -> None:
    offline_site.write(urls(row("/a/", extra)))
    result = offline_site.check()
    assert ("sitemap-values" in fired(result)) is bad and result.code == 0  # a warning: engines ignore the field
    if bad:
        assert "engines ignore it" in result.out


def test_sitemap_values_are_counted_past_twenty_in_a_file(offline_site: Site) -> None:
    offline_site.write(urls("".join(row(f"/p{n}/", "<priority>5</priority>") for n in range(25))))
    result = offline_site.check("--format", "json")
    found = [violation for violation in json.loads(result.out)["violations"] if violation["rule"] == "sitemap-values"]
    assert len(found) == 21 and found[-1]["message"] == "and 5 more such values"


@pytest.mark.parametrize(
    ("declaration", "bad"),
    [
        ('<?xml version="1.0" encoding="UTF-8"?>', False),
        ("<?xml version='1.0' encoding='utf-8'?>", False),
        ('<?xml version="1.0"?>', False),
        ('<?xml version="1.0" encoding="ISO-8859-1"?>', True),
        ('<?xml version="1.0" encoding="windows-1252" standalone="yes"?>', True),
    ],
)
def test_sitemap_encoding(offline_site: Site, declaration: str, bad: bool) -> None:
    content = urls(row("/caf%C3%A9/"), declaration).encode("latin-1")
    offline_site.write(content)
    result = offline_site.check()
    assert ("sitemap-encoding" in fired(result)) is bad
    assert result.code == (1 if bad else 0)
    if bad:
        assert "requires UTF-8" in result.out


def alternate(lang: str, path: str) -> str:
    return f'<xhtml:link rel="alternate" hreflang="{lang}" href="{BASE}{path}"/>'


def test_only_a_link_with_rel_alternate_and_a_hreflang_is_a_language_alternate(offline_site: Site) -> None:
    """A mobile alternate (media, no hreflang) and a link with a hreflang but another rel are
    not hreflang pairs: pages they name need not be listed."""
    mobile = f'<xhtml:link rel="alternate" media="only screen and (max-width: 640px)" href="{BASE}/m/en/"/>'
    other_rel = f'<xhtml:link rel="canonical" hreflang="fr" href="{BASE}/fr/"/>'
    offline_site.write(urls(row("/en/", alternate("de", "/de/") + mobile + other_rel) + row("/de/", alternate("en", "/en/"))))
    result = offline_site.check()
    assert result.code == 0 and "hreflang-broken" not in result.out, result.out


def test_hreflang_pairs_that_name_each_other_pass(offline_site: Site) -> None:
    other_site = '<xhtml:link rel="alternate" hreflang="fr" href="https://www.shop-site.fr/fr/"/>'
    both = alternate("en", "/en/") + alternate("de", "/de/") + alternate("x-default", "/en/") + other_site
    offline_site.write(urls(row("/en/", both) + row("/de/", both)))
    result = offline_site.check()
    assert result.code == 0 and "hreflang-broken" not in fired(result)


def test_hreflang_broken(offline_site: Site) -> None:
    offline_site.write(
        urls(
            row("/en/", alternate("de", "/de/") + alternate("fr", "/fr/") + alternate("es", "/es/"))
            + row("/de/", alternate("en", "/other/"))  # does not name /en/ back
            + row("/es/")  # declares no alternates
        )
    )
    result = offline_site.check()
    messages = re.findall(r"^warn\[hreflang-broken\] .*$", result.out, re.MULTILINE)
    assert result.code == 0 and len(messages) == 4, result.out
    assert any("its de alternate" in m and "does not name it back" in m for m in messages)
    assert any("its fr alternate" in m and "is not in the sitemap" in m for m in messages)
    assert any("its es alternate" in m and "declares no alternates" in m for m in messages)
    assert any(m.startswith(f"warn[hreflang-broken] {BASE}/de/") and "/other/ is not in the sitemap" in m for m in messages)


@pytest.mark.parametrize(
    ("loc", "said"),
    [
        ("https://bücher.de/a/", "the host bücher.de is not ASCII; write its punycode (IDNA) form: https://xn--bcher-kva.de/a/"),
        ("https://example.org/café/", "percent-encode it (RFC 3986): https://example.org/caf%C3%A9/"),
        ("https://example.org/a b?q=ä", "percent-encode it (RFC 3986): https://example.org/a%20b?q=%C3%A4"),
        ("https://example.org/100%", "percent-encode it (RFC 3986): https://example.org/100%25"),
        ("https://example.org/caf%C3%A9/", None),
        # what needs no escaping is left as it was: a port, an IPv6 literal
        ("https://bücher.de:8443/a", "write its punycode (IDNA) form: https://xn--bcher-kva.de:8443/a"),
        ("https://example.org:8443/a b", "percent-encode it (RFC 3986): https://example.org:8443/a%20b"),
        ("https://[2001:db8::1]:8443/a b", "percent-encode it (RFC 3986): https://[2001:db8::1]:8443/a%20b"),
        ("https://[2001:db8::1]/a b", "percent-encode it (RFC 3986): https://[2001:db8::1]/a%20b"),
        # a user name and password are the problem, before any escape (#39 item 4)
        ("https://user:pw@example.org/a b", "IndexNow would take it for a host of its own: remove it"),
    ],
)
def test_url_invalid_shows_the_escaped_form(loc: str, said: str | None) -> None:
    problem = url_problem(loc)
    assert (problem is None) if said is None else (problem is not None and problem.endswith(said))


@pytest.mark.parametrize(
    ("namespace", "warned"),
    [
        ("http://www.sitemaps.org/schemas/sitemap/0.9", False),
        ("http://www.google.com/schemas/sitemap/0.84", False),
        ("", True),
    ],
)
def test_a_urlset_outside_the_sitemaps_namespace_is_a_warning(offline_site: Site, namespace: str, warned: bool) -> None:
    offline_site.write(urlset(pages(2), namespace=namespace))
    result = offline_site.check()
    assert result.code == 0 and ("warn[sitemap-namespace]" in result.out) is warned, result.out
    if warned:
        assert 'write <urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">' in result.out


def test_hreflang_broken_in_a_run_that_records(site: Site) -> None:
    """A run that records the state judges the alternates against the URLs it records."""
    site.write(urls(row("/en/", alternate("es", "/es/") + alternate("fr", "/fr/")) + row("/es/")))
    result = site.run()
    messages = re.findall(r"^warn\[hreflang-broken\] .*$", result.out, re.MULTILINE)
    assert result.code == 0 and len(messages) == 2, result.out
    assert any("its es alternate" in m and "declares no alternates" in m for m in messages)
    assert any("its fr alternate" in m and "is not in the sitemap" in m for m in messages)
