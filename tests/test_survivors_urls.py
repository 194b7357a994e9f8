"""What notifier/rules/urls.py does that the mutation run found no test stating (#44): which
messages ``url_problem`` gives a URL with no path, an empty loc and a loc with no host, the
escaped form of a host IDNA cannot encode, a URL with no path against the sitemap's folder,
a theme's default base URL judged URL by URL, and url-tracking-params off. Each test names the
edit it catches."""

from __future__ import annotations

import re

from notifier.rules import url_problem
from tests.conftest import BASE, Result, Site, urlset


def _flagged(result: Result, rule: str) -> list[str]:
    return re.findall(rf"^(?:error|warn)\[{rule}\] (\S+):", result.out, re.MULTILINE)


# -- url_problem -------------------------------------------------------------------------------
def test_a_url_with_no_path_is_judged_for_its_host_not_taken_for_a_broken_one() -> None:
    """fails if ``not split.scheme and not split.path and loc`` loses its first side in
    rules/urls.py::url_problem (a URL without a path would be "a broken host or port")"""
    assert (
        url_problem("http://exämple.org") == "the host exämple.org is not ASCII; write its punycode (IDNA) form: http://xn--exmple-cua.org"
    )
    assert url_problem("https://www.shop-site.org?lang=en") is None


def test_an_empty_loc_is_no_absolute_url() -> None:
    """fails if ``not split.scheme and not split.path and loc`` loses its third side in
    rules/urls.py::url_problem (an empty loc would be "a broken host or port")"""
    assert url_problem("") == "loc is not an absolute http(s) URL"
    assert url_problem("http://[::1") == "loc is not a valid URL (a broken host or port)"


def test_a_loc_with_a_port_and_no_host_has_no_host() -> None:
    """fails if ``return "loc has no host"`` raises in rules/urls.py::url_problem"""
    assert url_problem("http://:8080/a/") == "loc has no host"


def test_a_host_idna_cannot_encode_is_shown_as_written_in_the_escaped_form() -> None:
    """fails if ``return name`` in rules/urls.py::_punycode raises (an empty label is no IDNA)"""
    assert url_problem("http://shop..site.org/tè") == (
        "loc has an unescaped character 'è'; percent-encode it (RFC 3986): http://shop..site.org/t%C3%A8"
    )


# -- _urls -------------------------------------------------------------------------------------
def test_a_plain_url_with_no_path_is_the_root_not_under_the_sitemaps_folder(offline_site: Site) -> None:
    """fails if ``plain.group(3) or "/"`` loses its ``"/"`` in rules/urls.py::_urls (a URL with no
    path is a traceback then)"""
    offline_site.write(urlset({"/blog/a/": "2024-01-01", BASE: "2024-01-01"}))
    result = offline_site.check("--sitemap-url", f"{BASE}/blog/sitemap.xml")
    assert result.code == 1 and _flagged(result, "url-out-of-scope") == [BASE], result.out + result.err
    assert "not under the sitemap's folder /blog/" in result.out


def test_a_url_with_a_query_and_no_path_is_on_the_sites_root(offline_site: Site) -> None:
    """fails if ``split.path or "/"`` loses its ``"/"`` in rules/urls.py::_urls (a URL that is not
    plain and has no path would be out of the root's scope)"""
    offline_site.write(urlset({"/a/": "2024-01-01", f"{BASE}?lang=en": "2024-01-01"}))
    result = offline_site.check()
    assert result.code == 0 and "url-out-of-scope" not in result.out, result.out


def test_a_themes_default_base_url_is_judged_url_by_url_on_its_host(offline_site: Site) -> None:
    """The sphinx-material theme's default base URL is a folder of a real host: a URL of that host
    outside the folder is no placeholder, whichever is listed first. Failed before the fix, when
    the first URL's reason was kept for the host (rules/urls.py::_urls)."""
    theme = "http://bashtage.github.io/sphinx-material/"
    other = "http://bashtage.github.io/other/"
    for listed in ({f"{theme}a/": "2024-01-01", other: "2024-01-01"}, {other: "2024-01-01", f"{theme}a/": "2024-01-01"}):
        offline_site.write(urlset(listed))
        result = offline_site.check("--rule", "url-out-of-scope=off")
        assert _flagged(result, "url-dev-host") == [f"{theme}a/"], result.out


# -- _tracking ---------------------------------------------------------------------------------
def test_url_tracking_params_off_finds_nothing(offline_site: Site) -> None:
    """fails if ``return`` raises in rules/urls.py::_tracking (the rule at off)"""
    offline_site.write(urlset({"/a/?utm_source=news": "2024-01-01", "/b/": "2024-01-01"}))
    assert _flagged(offline_site.check(), "url-tracking-params") == [f"{BASE}/a/?utm_source=news"]
    result = offline_site.check("--rule", "url-tracking-params=off")
    assert result.code == 0 and "url-tracking-params" not in result.out, result.out + result.err
