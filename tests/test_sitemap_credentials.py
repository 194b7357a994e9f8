"""A password in a URL the run is given or reads (issue #39 item 4), beyond a page's loc
(tests/test_url_credentials.py): the SITEMAP argument fetched with HTTP basic auth, an
index's part, an hreflang alternate, and the URL options. Its password reaches no channel:
the text, JSON and github reports, the job summary, the stderr lines, the state, the ledger
and the crash log; the sitemap's credentials go only in its own site's requests."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from notifier.store import open_store
from tests.conftest import BASE, HOST, KEY, Site, index, pages, urlset
from tests.fakeindexnow import FakeIndexNow

PASSWORD = "hunter2-basic-auth"
BASIC = "Basic " + base64.b64encode(f"admin:{PASSWORD}".encode()).decode()
LAX = ("--rule", "url-out-of-scope=off")


def _everything(root: Path) -> str:
    """Every file under ``root`` the run may have written (the state, its journal, the ledger,
    the job summary, a crash log), the built site aside."""
    files = [path for path in root.rglob("*") if path.is_file() and "public" not in path.relative_to(root).parts]
    return "".join(path.read_bytes().decode("utf-8", "replace") for path in files)


def _auth(fake: FakeIndexNow) -> list[str]:
    """The Authorization header of each GET of the staging site; and none went to another host (its key file)."""
    gets = list(zip(fake.gets, fake.get_auth, strict=True))
    assert all(not auth for path, auth in gets if not path.startswith("/")), gets
    return [auth for path, auth in gets if path.startswith("/")]


def _served(fake: FakeIndexNow, files: dict[str, bytes]) -> tuple[str, str]:
    """The staging site's sitemap URL, with the password and without it."""
    fake.sites[f"127.0.0.1:{fake.port}"] = files
    return f"http://admin:{PASSWORD}@127.0.0.1:{fake.port}/sitemap.xml", f"{fake.url}/sitemap.xml"


@pytest.mark.parametrize("style", ["text", "json", "github"])
def test_a_sitemap_behind_basic_auth_is_fetched_with_it_and_named_without_it(
    site: Site, tmp_path: Path, style: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(tmp_path / "summary.md"))
    assert site.fake is not None
    with_password, shown = _served(site.fake, {"/sitemap.xml": urlset(pages(3)).encode()})
    result = site.run("--initial", "submit", "--format", style, *LAX, sitemap=with_password)
    assert result.code == 0, result
    assert _auth(site.fake) == [BASIC] and site.fake.delivered()  # the credentials went with the GET
    assert PASSWORD not in result.out + result.err + _everything(tmp_path)
    with open_store(site.state) as store:
        state = store.load()
    assert state is not None and [part.name for part in state.parts] == [shown]  # the recorded sitemap: its URL without them
    again = site.run("--format", style, *LAX, sitemap=with_password)  # the same sitemap: nothing new
    assert again.code == 0 and len(site.fake.posts) == 1, again
    if style == "json":
        assert json.loads(again.out)["unchanged"] == 3


@pytest.mark.parametrize("style", ["text", "github"])
def test_a_sitemap_behind_basic_auth_that_fails_is_named_without_its_password(
    site: Site, tmp_path: Path, style: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(tmp_path / "summary.md"))
    assert site.fake is not None
    with_password, shown = _served(site.fake, {})  # 404
    result = site.run("--format", style, sitemap=with_password)
    assert result.code == 2, result
    assert f"{shown}: the server answered 404" in result.err
    assert PASSWORD not in result.out + result.err + _everything(tmp_path)
    if style == "github":
        assert "::error" in result.out and "answered 404" in (tmp_path / "summary.md").read_text()


def test_a_crash_while_a_sitemap_behind_basic_auth_is_read_logs_it_without_the_password(
    site: Site, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An internal error whose text holds the SITEMAP argument whole: the stderr line and the crash log hide its password."""
    import notifier.sitemap.reader

    def bug(url: str) -> tuple[str, None]:
        raise RuntimeError(f"could not split {url}")

    assert site.fake is not None
    with_password, _ = _served(site.fake, {"/sitemap.xml": urlset(pages(3)).encode()})
    monkeypatch.setattr(notifier.sitemap.reader, "credentials", bug)
    result = site.run(sitemap=with_password)
    assert result.code == 70, result
    log = next(site.state.parent.glob("notify-changes-crash*.log"))
    assert "could not split http://admin:•••@127.0.0.1" in log.read_text()
    assert PASSWORD not in log.read_text() + result.err + result.out


def test_a_remote_index_fetches_its_parts_with_the_sitemaps_credentials_and_refuses_a_part_with_its_own(site: Site, tmp_path: Path) -> None:
    assert site.fake is not None
    host = f"127.0.0.1:{site.fake.port}"
    with_password, _ = _served(
        site.fake,
        {
            "/sitemap.xml": index({f"{site.fake.url}/part.xml": None, f"{site.fake.url}/part2.xml": None}).encode(),
            "/part.xml": urlset(pages(2)).encode(),
            "/part2.xml": urlset(pages(2, prefix="/q/")).encode(),
            "/bad.xml": index({f"http://admin:{PASSWORD}@{host}/part.xml": None}).encode(),
        },
    )
    result = site.run("--initial", "submit", *LAX, sitemap=with_password)
    assert result.code == 0, result
    assert _auth(site.fake) == [BASIC] * 3 and len(site.fake.delivered()) == 4
    bad = site.run(*LAX, sitemap=f"{site.fake.url}/bad.xml")
    assert bad.code == 2, bad
    assert f"index part http://admin:•••@{host}/part.xml holds a user name or password" in bad.err
    assert PASSWORD not in result.out + result.err + bad.out + bad.err + _everything(tmp_path)
    assert len(_auth(site.fake)) == 4  # the bad index, and its part never fetched


def test_a_local_index_part_with_a_password_is_url_invalid_and_shown_without_it(site: Site, tmp_path: Path) -> None:
    site.write(urlset(pages(2)), "part.xml")
    site.write(index({f"http://admin:{PASSWORD}@{HOST}/part.xml": None}))
    for result in (site.check("--format", "json"), site.run("--format", "json")):
        assert result.code == 1, result
        violations = json.loads(result.out)["violations"]
        assert [each["url"] for each in violations if each["rule"] == "url-invalid"] == [f"http://admin:•••@{HOST}/part.xml"]
        assert PASSWORD not in result.out + result.err
    assert PASSWORD not in _everything(tmp_path)
    honest = site.write(index({f"{BASE}/part.xml": None}))  # the same part without them reads clean
    assert site.run(sitemap=str(honest)).code == 0


def test_an_hreflang_alternate_with_a_password_is_named_without_it_and_never_announced(site: Site, tmp_path: Path) -> None:
    alternate = f"http://admin:{PASSWORD}@{HOST}/de/"
    link = '<xhtml:link rel="alternate" hreflang="{}" href="{}"/>'
    site.write(
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:xhtml="http://www.w3.org/1999/xhtml">\n'
        f"<url><loc>{BASE}/en/</loc><lastmod>2024-05-01</lastmod>{link.format('de', alternate)}{link.format('fr', BASE + '/fr/')}</url>\n"
        f"<url><loc>{BASE}/fr/</loc><lastmod>2024-05-01</lastmod>{link.format('en', BASE + '/en/')}</url>\n"
        "</urlset>\n"
    )
    result = site.run("--initial", "submit", "--format", "json", "--rule", "hreflang-broken=error")
    assert result.code == 1, result
    found = [each for each in json.loads(result.out)["violations"] if each["rule"] == "hreflang-broken"]
    assert [(each["url"], f"http://admin:•••@{HOST}/de/ holds a user name or password" in each["message"]) for each in found] == [
        (f"{BASE}/en/", True)
    ]
    assert PASSWORD not in result.out + result.err + _everything(tmp_path)
    assert site.fake is not None and site.fake.posts == []


@pytest.mark.parametrize("option", ["--endpoint", "--sitemap-url", "--key-location"])
def test_a_url_option_with_a_password_is_refused_in_one_line_without_it(site: Site, tmp_path: Path, option: str) -> None:
    site.write(urlset(pages(2)))
    given = f"https://admin:{PASSWORD}@{HOST}/{KEY}.txt"
    result = site.run(option, given)
    assert result.code == 2, result
    assert result.err.count("\n") == 1 and f"{option}: https://admin:•••@{HOST}/" in result.err and "user name or password" in result.err
    assert PASSWORD not in result.out + result.err + _everything(tmp_path)
    assert site.fake is not None and site.fake.posts == []
    honest = site.run(option, f"https://{HOST}/{KEY}.txt" if option == "--key-location" else "https://nowhere.invalid/x")
    assert "user name or password" not in honest.err


def test_a_crash_with_the_sitemap_url_in_the_config_file_logs_it_without_the_password(
    site: Site, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The SITEMAP URL from notify-changes.toml, not the command line: the crash log still hides its password."""
    import notifier.sitemap.reader
    from notifier.cli import main

    def bug(url: str) -> tuple[str, None]:
        raise RuntimeError(f"could not split {url}")

    assert site.fake is not None
    with_password, _ = _served(site.fake, {"/sitemap.xml": urlset(pages(3)).encode()})
    config = tmp_path / "notify-changes.toml"
    config.write_text(f'sitemap = "{with_password}"\n')
    monkeypatch.setattr(notifier.sitemap.reader, "credentials", bug)
    site.capsys.readouterr()
    code = main(["run", "--config", str(config), *site.state_args, "--endpoint", site.fake.endpoint, "--key", KEY])
    captured = site.capsys.readouterr()
    assert code == 70, captured
    log = next(site.state.parent.glob("notify-changes-crash*.log"))
    assert "could not split http://admin:•••@127.0.0.1" in log.read_text()
    assert PASSWORD not in log.read_text() + captured.err + captured.out


def test_a_sitemap_url_an_older_version_recorded_with_its_password_is_shown_without_it(site: Site) -> None:
    """A state in which an older version recorded the SITEMAP URL whole: ``state show``,
    ``url`` and ``export`` name the file without the password; the next run records it without them."""
    from notifier.cli import main

    assert site.fake is not None
    with_password, shown = _served(site.fake, {"/sitemap.xml": urlset(pages(3)).encode()})
    assert site.run("--initial", "submit", *LAX, sitemap=shown).code == 0
    site.state.write_text(site.state.read_text().replace(shown, with_password))
    for words in (["show"], ["show", "--format", "json"], ["url", f"{BASE}/p/0/"], ["export"]):
        site.capsys.readouterr()
        assert main(["state", *words, *site.state_args]) == 0
        captured = site.capsys.readouterr()
        assert PASSWORD not in captured.out + captured.err and "127.0.0.1" in captured.out, (words, captured)
    assert site.run(*LAX, sitemap=with_password).code == 0
    assert PASSWORD not in site.state.read_text()


def test_a_feed_whose_channel_link_holds_a_password_names_its_site_without_it(site: Site, tmp_path: Path) -> None:
    """RSS's ``<channel><link>`` with a staging site's credentials: the site is its host
    (an item there is in scope), and no finding or file shows the password."""
    item = "<item><title>{0}</title><link>http://{1}/{0}/</link><pubDate>Wed, 01 May 2024 10:00:00 GMT</pubDate></item>"
    feed = site.write(
        f'<?xml version="1.0"?><rss version="2.0"><channel><title>t</title><link>http://admin:{PASSWORD}@{HOST}/</link>'
        f"<description>d</description>{item.format('a', HOST)}{item.format('b', f'admin:{PASSWORD}@{HOST}')}</channel></rss>",
        "feed.xml",
    )
    for style in ("text", "json"):
        result = site.run("--format", style, sitemap=str(feed))
        assert result.code == 1, result
        assert PASSWORD not in result.out + result.err and "url-out-of-scope" not in result.out, result
        assert "url-invalid" in result.out
    assert PASSWORD not in _everything(tmp_path)


def test_a_page_off_a_sitemap_behind_basic_auth_is_out_of_scope_of_its_host_named_without_them(site: Site, tmp_path: Path) -> None:
    assert site.fake is not None
    with_password, _ = _served(site.fake, {"/sitemap.xml": urlset(pages(2)).encode()})
    for style in ("text", "json"):
        result = site.run("--format", style, sitemap=with_password)
        assert result.code == 1 and "url-out-of-scope" in result.out, result
        assert f"127.0.0.1:{site.fake.port}" in result.out and PASSWORD not in result.out + result.err
    assert PASSWORD not in _everything(tmp_path)
