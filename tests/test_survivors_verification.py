"""What notifier/pipeline/verification.py does that the mutation run found no test stating (#44):
page heads give alternates only with --site-dir, the held-back note comes first, a build whose
page rules are all off is not read, robots.txt held against a remote sitemap's path, and the
key files expected in the build (which origins, the fix for a key file of another name, a key
file that cannot be read). Each test names the edit it catches; the edits that cannot change
what a user sees are in scripts/mutants-equivalent.txt with their reasons."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from notifier.pipeline.verification import _missing_key_files, _robots_note
from notifier.settings.settings import Settings, build_settings
from notifier.site.pages import BuiltSite
from tests.conftest import BASE, HOST, KEY, Site, pages, urlset

EN, DE = "/en/tea/", "/de/tee/"
OLD = "2024-05-01T10:00:00Z"
NEW = "2024-06-01T10:00:00Z"


def _settings(tmp_path: Path, **options: Any) -> Settings:
    """``check``'s settings with ``options`` by their config names (``_`` for ``-``)."""
    cli: dict[str, Any] = {
        "sitemap": str(tmp_path / "public" / "sitemap.xml"),
        "state": str(tmp_path / "state.json"),
        "key": KEY,
        **{name.replace("_", "-"): value for name, value in options.items()},
    }
    return build_settings("check", cli, cwd=tmp_path)


# -- diff_and_verify --------------------------------------------------------------------------------
def test_without_site_dir_a_pages_head_gives_no_alternates(site: Site) -> None:
    """The sitemap's folder holds the home page, so the page rules read the build, but only
    --site-dir makes a page's head a source of hreflang alternates: the changed page alone is
    announced. Fails if ``built is not None and site_dir is not None`` (the heads for
    declared_alternates) becomes ``or`` or drops its second side in
    pipeline/verification.py::diff_and_verify."""
    assert site.fake is not None
    (site.public / "index.html").write_text("<!DOCTYPE html><html><head><title>home</title></head><body>home</body></html>")
    site.build_pages([EN], head=f'<link rel="alternate" hreflang="de" href="{DE}">')
    site.build_pages([DE], head=f'<link rel="alternate" hreflang="en" href="{EN}">')
    site.write(urlset({EN: OLD, DE: OLD}))
    assert site.run().code == 0
    site.fake.posts.clear()
    site.write(urlset({EN: NEW, DE: OLD}))
    result = site.run("--alternates", "--format", "json")
    assert result.code == 0, result.err
    assert site.fake.delivered() == [BASE + EN]
    assert json.loads(result.out)["alternates"] == 0


def test_the_held_back_note_comes_before_every_other(site: Site) -> None:
    """Pages held back and a URL unlisted in one check: the held-back note is the first said.
    Fails if ``notes.insert(0, _held_back_note(...))`` inserts at 1 in
    pipeline/verification.py::diff_and_verify."""
    listed = pages(12)
    site.build_pages(listed)
    site.write(urlset(listed))
    assert site.run("--site-dir", str(site.public)).code == 0
    moved = {loc: lastmod for loc, lastmod in listed.items() if loc != "/p/11/"} | {"/p/0/": "2024-09-01T10:00:00Z"}
    site.write(urlset(moved))
    result = site.check("--site-dir", str(site.public), "--format", "json")
    notes = json.loads(result.out)["notes"]
    assert notes[0].startswith("1 URL held back, not announced"), notes
    assert any(note.startswith("1 URL left the sitemap while the build still has their pages") for note in notes[1:]), notes


def test_with_every_page_rule_off_the_sitemaps_folder_is_not_read(offline_site: Site) -> None:
    """No --site-dir, the sitemap's folder holding the home page, every page rule off: the build
    is not read, and nothing is said of its pages. Fails if the second ``return None`` of
    pipeline/verification.py::_built_site is made a raise."""
    site = offline_site
    site.write(urlset({"/": OLD, "/gone/": OLD}))
    (site.public / "index.html").write_text('<html><head><meta name="robots" content="noindex"></head></html>')
    rules = ("page-noindex", "page-canonical-elsewhere", "page-redirect", "page-missing", "url-robots-disallowed")
    result = site.check(*(f"--rule={rule}=off" for rule in rules))
    assert result.code == 0 and "page-" not in result.out, result.out + result.err
    assert "page-missing" in site.check().out  # the same build, read when a page rule is on


# -- _robots_note -----------------------------------------------------------------------------------
def test_robots_txt_is_held_against_a_remote_sitemaps_own_path(tmp_path: Path) -> None:
    """A sitemap read from its URL (no --sitemap-url): robots.txt naming another sitemap gets
    the note, naming that URL's path gets none. Fails if ``settings.sitemap_url or
    is_url(settings.sitemap)`` or ``settings.sitemap_url or settings.sitemap`` drops its second
    side in pipeline/verification.py::_robots_note."""
    build = tmp_path / "public"
    build.mkdir()
    (build / "robots.txt").write_text(f"User-agent: *\nAllow: /\nSitemap: {BASE}/other.xml\n")
    settings = _settings(tmp_path, sitemap=f"{BASE}/maps/sitemap.xml", site_dir=str(build))
    said = _robots_note(BuiltSite.load(build), settings)
    assert said == [
        f"robots.txt names {BASE}/other.xml as the sitemap, not /maps/sitemap.xml; "
        "crawlers look where robots.txt points: make it name the sitemap you deploy"
    ]
    (build / "robots.txt").write_text(f"User-agent: *\nAllow: /\nSitemap: {BASE}/maps/sitemap.xml\n")
    assert _robots_note(BuiltSite.load(build), settings) == []


def test_robots_txt_says_nothing_of_a_local_sitemap_outside_the_build(tmp_path: Path) -> None:
    """A local sitemap that does not lie in --site-dir has no path in the build to hold
    robots.txt against: no note, no error. Fails if the ``return []`` after ``except
    ValueError`` in pipeline/verification.py::_robots_note is made a raise."""
    build = tmp_path / "public"
    build.mkdir()
    (build / "robots.txt").write_text(f"User-agent: *\nAllow: /\nSitemap: {BASE}/other.xml\n")
    settings = _settings(tmp_path, sitemap=str(tmp_path / "src" / "sitemap.xml"), site_dir=str(build))
    assert _robots_note(BuiltSite.load(build), settings) == []
    inside = _settings(tmp_path, sitemap=str(build / "sitemap.xml"), site_dir=str(build))
    assert _robots_note(BuiltSite.load(build), inside) != []  # one in the build is held against it


# -- _missing_key_files ------------------------------------------------------------------------------
def test_only_http_and_https_urls_with_a_host_expect_a_key_file(offline_site: Site) -> None:
    """An ftp:// URL, or an http URL with no host, is no site IndexNow hears of (url-invalid
    says so): no key file is expected in the build for it. Fails if ``where.scheme in ("http",
    "https") and where.host`` drops either side in pipeline/verification.py::_missing_key_files."""
    site = offline_site
    (site.public / f"{KEY}.txt").unlink()
    odd = f"<url><loc>ftp://{HOST}/a</loc></url><url><loc>http:///b</loc></url>"
    site.write(f'<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{odd}</urlset>')
    result = site.check("--site-dir", str(site.public))
    assert "error[url-invalid] http:///b" in result.out and "key-file-missing" not in result.out, result.out
    assert [file for file, _ in _missing_key_files(_settings(site.root, site_dir=str(site.public)), [BASE])] == [
        str(site.public / f"{KEY}.txt")
    ]


def test_a_key_file_of_another_name_missing_says_to_write_the_key_into_it(offline_site: Site) -> None:
    """A --key-location whose file is not KEY.txt: `key file` would write KEY.txt, so the fix is
    to write the key into that file. Fails if ``fix = f"write the key of {source} into it"`` is
    removed or made a raise in pipeline/verification.py::_missing_key_files."""
    site = offline_site
    site.write(urlset({"/": OLD}))
    site.build_pages(["/"])
    (site.public / f"{KEY}.txt").unlink()
    result = site.check("--site-dir", str(site.public), "--key-location", f"{BASE}/site-key.txt")
    wanted = site.public / "site-key.txt"
    assert result.code == 1, result.out + result.err
    said = f"the IndexNow key file {wanted} is not in the build; write the key of INDEXNOW_KEY (or --key) into it, or copy it"
    assert said in result.out, result.out


def test_a_key_file_that_cannot_be_read_is_empty(offline_site: Site, monkeypatch: pytest.MonkeyPatch) -> None:
    """The build's key file is there but reading it fails: it is said to be empty, not a crash.
    Fails if ``served = ""`` after ``except OSError`` is removed or made a raise in
    pipeline/verification.py::_missing_key_files."""
    site = offline_site
    site.write(urlset({"/": OLD}))
    site.build_pages(["/"])
    real = Path.read_text

    def read_text(self: Path, *args: Any, **kwargs: Any) -> str:
        if self.name == f"{KEY}.txt":
            raise PermissionError(13, "Permission denied", str(self))
        return real(self, *args, **kwargs)

    monkeypatch.setattr(Path, "read_text", read_text)
    result = site.check("--site-dir", str(site.public))
    assert result.code == 1, result.out + result.err
    assert "is in the build but is empty, not the key this run uses (0123…); delete it:" in result.out, (
        result.out
    )  # the file's name redacted
