"""``[[sites]]`` in every command (issue #38, item 6): `state`, `stamp` and `key file` take
``--site NAME``; no parser takes an abbreviation (``--site`` was read as ``--site-name``);
two sites whose states are one (a hard link, one database written two ways) are refused
before anything is sent; ``[tool.notify_changes]`` is ``[tool.notify-changes]``."""

from __future__ import annotations

import json
import os
import urllib.parse
from pathlib import Path

import pytest

from notifier.cli import main
from notifier.database import database_identity
from tests.conftest import BASE, KEY, NS, Result, pages, urlset
from tests.fakeindexnow import FakeIndexNow
from tests.test_history import Repo
from tests.test_sites import DOCS, _monorepo


def _main(capsys: pytest.CaptureFixture[str], *args: str) -> Result:
    capsys.readouterr()
    code = main(list(args))
    captured = capsys.readouterr()
    return Result(code, captured.out, captured.err)


@pytest.fixture
def deployed(tmp_path: Path, fake: FakeIndexNow, capsys: pytest.CaptureFixture[str]) -> Path:
    """The monorepo of tests/test_sites.py after its first deploy: docs and blog, each its state."""
    config = _monorepo(tmp_path, fake)
    assert main(["run", "--config", str(config), "--key", KEY]) == 0
    return config


def test_state_show_site_shows_that_sites_state(deployed: Path, capsys: pytest.CaptureFixture[str]) -> None:
    shown = _main(capsys, "state", "show", "--config", str(deployed), "--site", "docs")
    assert shown.code == 0, shown.err  # once taken as --site-name docs: the default state, "no state file yet"
    assert "docs.json" in shown.out and "blog.json" not in shown.out and "3 URLs in 1 sitemap file" in shown.out
    every = _main(capsys, "state", "show", "--config", str(deployed))
    assert every.code == 0 and "== docs\n" in every.out and "== blog\n" in every.out and "blog.json" in every.out
    summary = json.loads(_main(capsys, "state", "show", "--config", str(deployed), "--format", "json").out)
    assert list(summary["sites"]) == ["docs", "blog"] and summary["sites"]["blog"]["urls"] == 3


@pytest.mark.parametrize("action", [["pending"], ["export"], ["history"], ["stats"], ["url", f"{DOCS}/p/0/"], ["forget", f"{DOCS}/p/0/"]])
def test_a_state_command_of_one_sites_records_asks_which_site(
    deployed: Path, capsys: pytest.CaptureFixture[str], action: list[str]
) -> None:
    asked = _main(capsys, "state", *action, "--config", str(deployed))
    assert asked.code == 2 and "lists 2 sites (docs, blog): name one with --site NAME" in asked.err
    assert len(asked.err.strip().splitlines()) == 1
    chosen = _main(capsys, "state", *action, "--config", str(deployed), "--site", "docs")
    if action[0] == "forget":  # nothing of docs is pending: said so, for the docs state
        assert chosen.code == 2 and "not pending in" in chosen.err and "docs.json" in chosen.err
    else:
        assert chosen.code == 0, chosen.err
    if action[0] == "url":
        assert f"{DOCS}/p/0/" in chosen.out and "lastmod" in chosen.out


def test_an_unknown_site_is_exit_2_naming_the_sites(deployed: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for command in (["state", "show"], ["stamp"], ["check"], ["key", "file", "--host", "x.org", "--write", "out"]):
        wrong = _main(capsys, *command, "--config", str(deployed), "--site", "doc")
        assert wrong.code == 2 and "did you mean docs?" in wrong.err and "the sites are docs, blog" in wrong.err, (command, wrong)


def test_no_parser_takes_an_abbreviation(deployed: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for args, meant in (
        (["state", "show", "--site-nam", "www"], "--site-name"),
        (["run", "--config", str(deployed), "--batch", "5", "--dry-run"], "--batch-size"),
        (["check", "--config", str(deployed), "--dry"], "--dry-run"),
        (["stamp", "--dry", "--config", str(deployed)], "--dry-run"),
        (["key", "new", "--wri", "out"], "--write"),
    ):
        refused = _main(capsys, *args)
        assert refused.code == 2 and f"(did you mean {meant}?)" in refused.err, (args, refused)
    assert "(did you mean show?)" in _main(capsys, "state", "shwo").err


def test_key_file_takes_a_sites_keys(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    own = "f" * 32
    config = tmp_path / "notify-changes.toml"
    config.write_text(
        '[[sites]]\nname = "docs"\nsitemap = "docs/sitemap.xml"\nstate = "state/docs.json"\n\n'
        '[[sites]]\nname = "blog"\nsitemap = "blog/sitemap.xml"\nstate = "state/blog.json"\nkey-env = "BLOG_KEY"\n'
    )
    monkeypatch.setenv("BLOG_KEY", own)
    monkeypatch.setenv("INDEXNOW_KEY", KEY)
    (tmp_path / "out").mkdir()
    (tmp_path / "other").mkdir()
    written = _main(
        capsys, "key", "file", "--host", "blog.example.org", "--write", str(tmp_path / "out"), "--config", str(config), "--site", "blog"
    )
    assert written.code == 0, written.err
    assert (tmp_path / "out" / f"{own}.txt").read_text() == own
    both = _main(capsys, "key", "file", "--host", "blog.example.org", "--write", str(tmp_path / "other"), "--config", str(config))
    assert both.code == 2 and "the sites docs and blog give blog.example.org different keys" in both.err


def test_stamp_takes_a_site_and_stamps_every_site_without_one(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = Repo(tmp_path)
    repo.commit({"docs/about.md": "# About\n", "blog/tea.md": "# Tea\n"}, "2025-01-10T10:00:00Z")
    built = "2026-11-30T09:41:07Z"
    for name, loc in (("docs", f"{DOCS}/about/"), ("blog", f"{BASE}/tea/")):
        (tmp_path / name / "public").mkdir(parents=True)
        (tmp_path / name / "public" / "sitemap.xml").write_text(
            f'<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="{NS}"><url><loc>{loc}</loc><lastmod>{built}</lastmod></url></urlset>\n'
        )
    config = tmp_path / "notify-changes.toml"
    config.write_text(
        "".join(
            f'[[sites]]\nname = "{name}"\nsitemap = "{name}/public/sitemap.xml"\nstate = "state/{name}.json"\n'
            f'[sites.history]\nsources = ["{name}/{{path}}.md"]\n\n'
            for name in ("docs", "blog")
        )
    )
    one = _main(capsys, "stamp", "--config", str(config), "--site", "docs")
    assert one.code == 0, one.err
    assert "2025-01-10" in (tmp_path / "docs" / "public" / "sitemap.xml").read_text()
    assert built in (tmp_path / "blog" / "public" / "sitemap.xml").read_text()  # the other site is left alone
    every = _main(capsys, "stamp", "--config", str(config))
    assert every.code == 0 and "== docs\n" in every.out and "== blog\n" in every.out, every
    assert "2025-01-10" in (tmp_path / "blog" / "public" / "sitemap.xml").read_text()


def test_two_sites_in_one_hard_linked_state_file_are_refused_before_anything_is_sent(
    deployed: Path, fake: FakeIndexNow, capsys: pytest.CaptureFixture[str]
) -> None:
    root = deployed.parent
    docs = root / "state" / "docs.json"
    os.link(docs, root / "state" / "docs-too.json")  # one file, two names
    deployed.write_text(deployed.read_text().replace('state = "state/blog.json"', 'state = "state/docs-too.json"'))
    before = docs.read_bytes()
    (root / "blog" / "public" / "sitemap.xml").write_text(urlset(pages(5)))  # blog has pages to announce
    refused = _main(capsys, "run", "--config", str(deployed), "--key", KEY)
    assert refused.code == 2 and "[[sites]] docs and blog share the state file" in refused.err, refused
    assert fake.posts == [] and docs.read_bytes() == before  # nothing sent; docs' pages not announced as removed
    assert _main(capsys, "state", "show", "--config", str(deployed)).code == 2


def test_two_sites_in_one_database_written_two_ways_are_refused(
    tmp_path: Path, fake: FakeIndexNow, pg_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    import psycopg

    config = _monorepo(tmp_path, fake)
    split = urllib.parse.urlsplit(pg_url)
    query = dict(urllib.parse.parse_qsl(split.query))
    other = f"postgres://{split.netloc}/?dbname={split.path.lstrip('/')}&port={query['port']}&host={query['host']}"  # the same database
    assert other != pg_url and database_identity(other) == database_identity(pg_url)
    text = config.read_text().replace('state = "state/docs.json"', f'state = "{pg_url}"\nsite-name = "www"')
    config.write_text(text.replace('state = "state/blog.json"', f'state = "{other}"\nsite-name = "www"'))
    refused = _main(capsys, "run", "--config", str(config), "--key", KEY)
    assert refused.code == 2 and "[[sites]] docs and blog share the PostgreSQL rows of" in refused.err, refused
    assert fake.posts == []
    with psycopg.connect(pg_url) as connection:  # nothing was read or written: not even the tables were made
        assert connection.execute("SELECT count(*) FROM information_schema.tables WHERE table_name LIKE 'notify_changes%'").fetchone() == (
            0,
        )


def test_one_local_database_by_any_of_its_names() -> None:
    local = {
        database_identity(url) for url in ("postgresql://u@127.0.0.1/db", "postgresql://u@localhost:5432/db", "postgres://u:pw@[::1]/db")
    }
    assert len(local) == 1
    assert database_identity("postgresql://u@localhost/db") != database_identity("postgresql://u@localhost:5433/db")
    assert database_identity("postgresql://u@localhost/db") != database_identity("postgresql://u@localhost/other")
    assert database_identity("postgresql://u@db.example.org/u") == database_identity("postgresql://u@DB.example.org")  # the user's database


def test_the_pyproject_table_in_either_spelling(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n\n[tool.notify_changes]\nstate = "state/underscored.json"\n')
    shown = _main(capsys, "state", "show")
    assert shown.code == 2 and "underscored.json: no state file yet" in shown.err, shown  # the table was read
    (tmp_path / "pyproject.toml").write_text('[tool.notify_changes]\nstate = "a.json"\n\n[tool.notify-changes]\nstate = "b.json"\n')
    both = _main(capsys, "state", "show")
    assert both.code == 2 and "both [tool.notify-changes] and [tool.notify_changes]" in both.err
    assert len(both.err.strip().splitlines()) == 1
