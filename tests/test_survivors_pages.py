"""What notifier/rules/pages.py does that the mutation run found no test stating (#44): the
served-under finding only when every judged URL lacks its page, its message for one URL, the
sitemap file it names in the --sitemap-url to pass (a local one by its name, a fetched one as
sitemap.xml), and a _redirects target that cannot be joined. Each test names the edit it catches."""

from __future__ import annotations

import re
import shutil

from tests.conftest import BASE, HOST, Result, Site, urlset


def _findings(result: Result, rule: str) -> list[str]:
    return re.findall(rf"^(?:error|warn)\[{rule}\] (\S+): ", result.out, re.MULTILINE)


def _served_under_project(site: Site, locs: dict[str, str | None], name: str = "sitemap.xml") -> None:
    """``locs`` (under /project/) listed in ``name``, their pages built without /project/."""
    site.write(urlset(locs), name)
    site.build_pages(locs)
    shutil.copytree(site.public / "project", site.public, dirs_exist_ok=True)
    shutil.rmtree(site.public / "project")


# -- _pages ------------------------------------------------------------------------------------
def test_one_url_with_its_page_is_no_build_served_under_a_folder(offline_site: Site) -> None:
    """fails if ``judged and all(loc in missing for loc in judged)`` becomes ``or``, loses its second
    side, or ``all`` becomes ``any``, in rules/pages.py::_pages: /docs/b/ has its page, so only
    /docs/a/ is missing, though both have a page without /docs/ too"""
    site = offline_site
    site.write(urlset({"/docs/a/": "2024-05-01", "/docs/b/": "2024-05-01"}))
    site.build_pages(["/docs/b/", "/a/", "/b/"])
    result = site.check("--site-dir", str(site.public))
    assert _findings(result, "page-missing") == [f"{BASE}/docs/a/"], result.out
    assert "--sitemap-url" not in result.out, result.out


# -- _served_under -----------------------------------------------------------------------------
def test_one_url_served_under_a_folder_is_said_of_that_url(offline_site: Site) -> None:
    """fails if ``len(judged) == 1`` becomes ``== 2``, or its ``which = ...`` raises, in
    rules/pages.py::_served_under"""
    site = offline_site
    _served_under_project(site, {"/project/tea/": "2024-05-01"})
    result = site.check("--site-dir", str(site.public))
    said = (
        f"warn[page-missing] (all URLs): {BASE}/project/tea/ has no page file in {site.public.resolve()}, "
        f"but has one without /project/ (tea/index.html): the build is served under /project/"
    )
    assert said in result.out and f"pass --sitemap-url {BASE}/project/sitemap.xml " in result.out, result.out


def test_the_sitemap_url_to_pass_names_the_local_sitemaps_own_file(offline_site: Site) -> None:
    """fails if ``root is not None`` becomes ``root is None``, or ``not is_url(root.key)`` loses its
    ``not``, in rules/pages.py::_served_under (the file would be called sitemap.xml)"""
    site = offline_site
    path = site.public / "map-pages.xml"
    _served_under_project(site, {"/project/": "2024-05-01", "/project/tea/": "2024-05-01"}, path.name)
    result = site.run("--site-dir", str(site.public), command="check", sitemap=str(path))
    assert f"pass --sitemap-url {BASE}/project/map-pages.xml (config sitemap-url)" in result.out, result.out


def test_the_sitemap_url_to_pass_for_a_fetched_sitemap_is_its_sitemap_xml(site: Site) -> None:
    """fails if ``root is not None and root.key and not is_url(root.key)`` becomes ``or``, or loses
    its third side, in rules/pages.py::_served_under (a fetched file's key is its URL, which would
    be put after the folder)"""
    assert site.fake is not None
    locs: dict[str, str | None] = {"/project/": "2024-05-01", "/project/tea/": "2024-05-01"}
    _served_under_project(site, locs)
    site.fake.sites[HOST]["/sitemap.xml"] = urlset(locs).encode()
    result = site.run("--site-dir", str(site.public), command="check", sitemap=f"{BASE}/sitemap.xml")
    assert f"pass --sitemap-url {BASE}/project/sitemap.xml (config sitemap-url)" in result.out, result.out + result.err


# -- _judge ------------------------------------------------------------------------------------
def test_a_redirect_to_a_target_that_cannot_be_joined_is_a_redirect(offline_site: Site) -> None:
    """A target with an unclosed bracket (no URL parser joins it) is no page of the site's: a
    redirect (rules/pages.py::_judge's ``joined is None``; without that side, same_page reads the
    None as an empty URL, which is no listed page either)"""
    site = offline_site
    site.write(urlset({"/old/": "2024-05-01", "/kept/": "2024-05-01"}))
    site.build_pages(["/kept/"])
    (site.public / "_redirects").write_text("/old/  http://[::1/x  301\n")
    result = site.check("--site-dir", str(site.public))
    assert _findings(result, "page-redirect") == [f"{BASE}/old/"], result.out + result.err
    assert "_redirects sends this path to http://[::1/x;" in result.out
