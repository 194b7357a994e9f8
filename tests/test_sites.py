"""Several sites in one config (issue #20, item 1): ``[[sites]]``, each inheriting the top
level; every site verified before any is submitted; a lying one is not submitted and makes
the exit code 1 while the honest one is; ``--site NAME`` runs one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import notifier
from notifier.cli import main
from notifier.pipeline.sites import most_severe
from tests.conftest import BASE, KEY, Site, index, pages, urlset
from tests.fakeindexnow import FakeIndexNow

DOCS = "http://docs.shop-site.org"


def _monorepo(root: Path, fake: FakeIndexNow) -> Path:
    """A repository with two built sites: docs/ and blog/, and one config listing both."""
    for name, base in (("docs", DOCS), ("blog", BASE)):
        folder = root / name / "public"
        folder.mkdir(parents=True)
        listed = pages(3, lastmod="2024-05-{day:02d}T10:00:00Z")
        text = urlset(listed)
        if name == "docs":
            text = text.replace(BASE, DOCS)
        (folder / "sitemap.xml").write_text(text)
        fake.serve_key(base.split("//")[1], KEY)
    config = root / "notify-changes.toml"
    config.write_text(
        f'endpoint = ["{fake.endpoint}"]\nretry-timeout = 0.2\n'
        '[rules]\nlastmod-missing = "off"\n\n'
        '[[sites]]\nname = "docs"\nsitemap = "docs/public/sitemap.xml"\nstate = "state/docs.json"\n\n'
        '[[sites]]\nname = "blog"\nsitemap = "blog/public/sitemap.xml"\nstate = "state/blog.json"\n'
    )
    return config


def _grow(root: Path, *, lie: bool) -> None:
    """A deploy later: each site adds a page; the blog, when it lies, dates a page in 2031."""
    for name in ("docs", "blog"):
        listed = pages(4, lastmod="2024-05-{day:02d}T10:00:00Z")
        if lie and name == "blog":
            listed["/p/3/"] = "2031-01-01"
        text = urlset(listed)
        (root / name / "public" / "sitemap.xml").write_text(text.replace(BASE, DOCS) if name == "docs" else text)


def test_two_sites_one_lying_the_honest_one_is_submitted_and_the_exit_code_is_1(
    tmp_path: Path, fake: FakeIndexNow, capsys: pytest.CaptureFixture[str]
) -> None:
    config = _monorepo(tmp_path, fake)
    assert main(["run", "--config", str(config), "--key", KEY]) == 0  # both baselines
    assert (tmp_path / "state" / "docs.json").is_file() and (tmp_path / "state" / "blog.json").is_file()
    blog_before = (tmp_path / "state" / "blog.json").read_bytes()
    capsys.readouterr()
    _grow(tmp_path, lie=True)
    code = main(["run", "--config", str(config), "--key", KEY])
    out = capsys.readouterr().out
    assert code == 1, out
    assert fake.delivered() == [f"{DOCS}/p/3/"]  # the honest site is announced
    assert (tmp_path / "state" / "blog.json").read_bytes() == blog_before  # the lying one: nothing sent, nothing recorded
    assert "== docs (exit 0)" in out and "== blog (exit 1)" in out and "error[lastmod-future]" in out
    assert out.rstrip().splitlines()[-1] == "all 2 sites: 2 added, 0 changed, 0 removed, 1 submitted, 0 pending"


def test_the_api_returns_one_report_with_a_report_a_site(tmp_path: Path, fake: FakeIndexNow) -> None:
    config = _monorepo(tmp_path, fake)
    first = notifier.run(config=config, key=KEY, cwd=tmp_path)
    assert first.exit_code == 0 and list(first.sites) == ["docs", "blog"]
    _grow(tmp_path, lie=True)
    report = notifier.run(config=config, key=KEY, cwd=tmp_path)
    assert report.exit_code == 1
    assert report.sites["docs"].exit_code == 0 and report.sites["docs"].submitted == [f"{DOCS}/p/3/"]
    assert report.sites["blog"].exit_code == 1 and report.sites["blog"].submitted == []
    assert report.submitted == [f"{DOCS}/p/3/"] and [v.rule for v in report.violations] == ["lastmod-future"]
    assert all(note.startswith(("docs: ", "blog: ")) for note in report.notes)
    checked = notifier.check(config=config, cwd=tmp_path, site="blog")
    assert list(checked.sites) == ["blog"] and checked.exit_code == 1


def test_json_has_each_site_and_site_picks_one(tmp_path: Path, fake: FakeIndexNow, capsys: pytest.CaptureFixture[str]) -> None:
    config = _monorepo(tmp_path, fake)
    assert main(["check", "--config", str(config), "--format", "json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert list(document["sites"]) == ["docs", "blog"] and document["added"] == 6
    assert main(["check", "--config", str(config), "--site", "docs", "--format", "json"]) == 0
    assert list(json.loads(capsys.readouterr().out)["sites"]) == ["docs"]
    assert main(["check", "--config", str(config), "--site", "shop"]) == 2
    err = capsys.readouterr().err
    assert "--site shop: no such site in" in err and "the sites are docs, blog" in err
    assert main(["check", str(tmp_path / "docs/public/sitemap.xml"), "--config", str(config)]) == 2
    assert "lists [[sites]], each with its own sitemap" in capsys.readouterr().err


def test_a_site_inherits_the_top_level_and_overrides_it(tmp_path: Path, fake: FakeIndexNow, monkeypatch: pytest.MonkeyPatch) -> None:
    config = _monorepo(tmp_path, fake)
    text = config.read_text().replace(
        'state = "state/blog.json"\n', 'state = "state/blog.json"\nkey-env = "BLOG_KEY"\n[sites.rules]\nlastmod-future = "warn"\n'
    )
    config.write_text(text)
    monkeypatch.setenv("BLOG_KEY", "blog0123456789ab")
    fake.serve_key("www.shop-site.org", "blog0123456789ab")
    assert notifier.run(config=config, cwd=tmp_path, environ={"INDEXNOW_KEY": KEY, "BLOG_KEY": "blog0123456789ab"}).exit_code == 0
    _grow(tmp_path, lie=True)
    report = notifier.run(config=config, cwd=tmp_path, environ={"INDEXNOW_KEY": KEY, "BLOG_KEY": "blog0123456789ab"})
    assert report.exit_code == 0  # the blog's own [rules] makes its future date a warning
    assert {post.json["key"] for post in fake.posts} == {KEY, "blog0123456789ab"}  # each site's key
    assert [v.level for v in report.sites["blog"].violations] == ["warn"]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('[[sites]]\nsitemap = "a.xml"\n', "[[sites]] number 1: name = None"),
        ('[[sites]]\nname = "a"\nsitemap = "a.xml"\n[[sites]]\nname = "a"\nsitemap = "b.xml"\n', "two [[sites]] are named 'a'"),
        ('[[sites]]\nname = "a"\n', "[[sites]] a: sitemap is missing"),
        ('[[sites]]\nname = "a"\nsitemap = "a.xml"\ncolour = "red"\n', "[[sites]] a: unknown setting 'colour'"),
        (
            '[[sites]]\nname = "a"\nsitemap = "a.xml"\n[[sites]]\nname = "b"\nsitemap = "b.xml"\n',
            "state/notify-changes.json (the default): give each",
        ),
        (
            'state = "one.json"\n[[sites]]\nname = "a"\nsitemap = "a.xml"\n[[sites]]\nname = "b"\nsitemap = "b.xml"\n',
            "one.json: give each",
        ),
        ('sites = "a"\n', "sites must be an array of tables"),
        ('sites = [{ name = "a", sitemap = "a.xml" }, 5]\n', "sites must be an array of tables"),
        ('[[sites]]\nname = "a"\nsitemap = "a.xml"\nkey-env = ""\n', "key-env = '': name the environment variable"),
        (
            '[[sites]]\nname = "a"\nsitemap = "a.xml"\nrule = ["lastmod-missing=off"]\n',
            "[[sites]] a: rule = [...] is the command line's --rule",
        ),
        ('rule = ["lastmod-missing=off"]\n[[sites]]\nname = "a"\nsitemap = "a.xml"\n', "rule = [...] is the command line's --rule"),
        ('[[sites]]\nname = "a"\nsitemap = "a.xml"\nkey-env = 5\n', "key-env = 5: name the environment variable"),
    ],
)
def test_a_bad_sites_table_is_one_line_and_exit_2(tmp_path: Path, text: str, message: str, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "notify-changes.toml"
    config.write_text(text)
    assert main(["check", "--config", str(config)]) == 2
    assert message in capsys.readouterr().err


def test_a_sites_table_merges_over_the_top_levels_key_by_key(tmp_path: Path, fake: FakeIndexNow) -> None:
    """The blog's [sites.rules] adds to the top level's [rules] (lastmod-missing an error stays),
    and a site's own table with none at the top level is taken as it is."""
    config = _monorepo(tmp_path, fake)
    text = config.read_text().replace('lastmod-missing = "off"', 'lastmod-missing = "error"')
    text = text.replace('state = "state/blog.json"\n', 'state = "state/blog.json"\n[sites.rules]\nlastmod-future = "warn"\n')
    text = text.replace('state = "state/docs.json"\n', 'state = "state/docs.json"\n[sites.bulk]\nmin-urls = 5\n')
    config.write_text(text)
    assert notifier.run(config=config, cwd=tmp_path, environ={"INDEXNOW_KEY": KEY}).exit_code == 0
    blog = tmp_path / "blog" / "public" / "sitemap.xml"
    blog.write_text(urlset(pages(3, lastmod="2024-05-{day:02d}T10:00:00Z") | {"/p/3/": "2031-01-01", "/p/4/": None}))
    report = notifier.run(config=config, cwd=tmp_path, environ={"INDEXNOW_KEY": KEY})
    levels = {(v.rule, v.level) for v in report.sites["blog"].violations}
    assert levels == {("lastmod-future", "warn"), ("lastmod-missing", "error")} and report.exit_code == 1, levels


def test_a_key_on_the_command_line_is_every_sites_key_over_key_env(
    tmp_path: Path, fake: FakeIndexNow, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = _monorepo(tmp_path, fake)
    config.write_text(config.read_text().replace('state = "state/blog.json"\n', 'state = "state/blog.json"\nkey-env = "BLOG_KEY"\n'))
    monkeypatch.setenv("BLOG_KEY", "blog0123456789ab")
    assert main(["run", "--config", str(config), "--key", KEY]) == 0
    _grow(tmp_path, lie=False)
    assert main(["run", "--config", str(config), "--key", KEY]) == 0
    assert {post.json["key"] for post in fake.posts} == {KEY}


def test_the_most_severe_exit_code_wins_in_the_documented_order() -> None:
    order = [notifier.ExitCode(code) for code in (1, 2, 4, 3, 0)]
    for position, code in enumerate(order):
        assert most_severe(order[position:]) == code
        assert most_severe(list(reversed(order[position:]))) == code


def test_a_host_with_its_own_key_is_in_the_sites_scope(offline_site: Site) -> None:
    """An index whose parts list pages of another host of the same site (docs. beside www.):
    url-out-of-scope, unless the config gives that host a key of its own."""
    offline_site.write(index({"/part-www.xml": None, "/part-docs.xml": None}))
    offline_site.write(urlset(pages(3)), "part-www.xml")
    escaped = {"/caf%C3%A9/": "2024-05-01"}  # not a plain URL: judged one by one, and in scope all the same
    offline_site.write(urlset(pages(2) | escaped).replace(BASE, DOCS), "part-docs.xml")
    sitemap_url = ["--sitemap-url", f"{BASE}/sitemap.xml"]
    result = offline_site.check(*sitemap_url)
    assert result.code == 1 and f"error[url-out-of-scope] {DOCS}/p/0/" in result.out
    config = offline_site.root / "keys.toml"
    config.write_text(f'[keys]\n"docs.shop-site.org" = "{KEY}"\n')
    result = offline_site.check(*sitemap_url, "--config", str(config))
    assert result.code == 0 and "url-out-of-scope" not in result.out, result.out
