"""Decisions users rely on that no test stated, round two (#44's audit): each test states the
behaviour, and its docstring names the faulty edit it fails with."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from notifier.cli import main
from notifier.protocol import derive_key
from tests.conftest import BASE, HOST, KEY, Site, pages, recorded_pending, urlset
from tests.fakeindexnow import FakeIndexNow, status
from tests.test_history import Repo


# -- dates, history, page truth (#44 items 12-16) --------------------------------------------------
@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("tea.md", "Title: Tea\nModified: 2025-02-30\n"),  # Pelican
        ("tea.md", "Title: Tea\nModified: 2025-02-28T25:00:00Z\n"),
        ("tea.md", "Title: Tea\nModified: 2025-02-28T10:00:00+25:00\n"),
        ("tea.rst", "Tea\n===\n\n:modified: 2025-02-30\n"),
        ("tea.md", '{"lastmod": "2025-02-30"}\n'),  # Hugo's JSON front matter
        ("tea.md", '{"lastmod": "2025-02-28T24:30:00Z"}\n'),
    ],
)
def test_an_impossible_date_in_a_source_is_no_date(offline_site: Site, name: str, text: str) -> None:
    """Fails with ``as_w3c``'s ``parse_w3c`` check of the whole value dropped (a day or a time
    that does not exist reached the rules: exit 70)."""
    repo = Repo(offline_site.root)
    repo.commit({f"content/{name}": text}, "2025-03-01T10:00:00Z")
    extension = name.split(".")[1]
    fields = '["modified", "Modified", "lastmod"]'
    (offline_site.root / "notify-changes.toml").write_text(f'[history]\nsources = ["content/{{path}}.{extension}"]\nfields = {fields}\n')
    offline_site.write(urlset({"/tea/": "2025-03-01T10:00:00Z"}))
    result = offline_site.check()
    assert result.code == 0, (result.out, result.err)


# -- commands and delivery (#44 items 17-22) -------------------------------------------------------
@pytest.fixture
def second() -> Iterator[FakeIndexNow]:
    """Another endpoint, which checks the same key file."""
    server = FakeIndexNow()
    server.serve_key(HOST, KEY)
    yield server
    server.close()


def _live_pages(site: Site, count: int) -> None:
    assert site.fake is not None
    for n in range(count):
        site.fake.sites[HOST][f"/p/{n}/"] = b"<html>live</html>"


def test_verify_live_n_fetches_n_pages_however_many_endpoints(site: Site, second: FakeIndexNow) -> None:
    """Fails with the sampling walk stopping only the inner loop (each further endpoint added one
    more page: 3 fetched for ``--verify-live 2`` with two endpoints) — the bug #44 item 22 found."""
    assert site.fake is not None
    both = ["--endpoint", site.fake.endpoint, "--endpoint", second.endpoint, "--on-submit-error", "warn"]
    _live_pages(site, 6)
    site.write(urlset(pages(6)))
    assert site.run(*both).code == 0
    second.plan = [status(503)] * 40  # the second endpoint is down: /p/0/ to /p/2/ stay pending there
    site.write(urlset(pages(6) | {f"/p/{n}/": "2026-06-01T10:00:00Z" for n in range(3)}))
    assert site.run(*both).code == 0
    assert set(recorded_pending(site.state)[second.endpoint]) == {f"{BASE}/p/{n}/" for n in range(3)}
    second.plan = []
    site.write(urlset(pages(6) | {f"/p/{n}/": "2026-06-01T10:00:00Z" for n in range(6)}))  # /p/3/ to /p/5/ at both
    site.fake.gets.clear()
    result = site.run(*both, "--verify-live", "2")
    assert result.code == 0, result.out
    assert len([path for path in site.fake.gets if "/p/" in path]) == 2, site.fake.gets
    assert recorded_pending(site.state) == {}


# -- [[sites]] and settings (#44 items 5-9) --------------------------------------------------------
def _key_file(site: Site, monkeypatch: pytest.MonkeyPatch, secret: str) -> tuple[int, list[str]]:
    """``key file`` for HOST with ``[keys] derive`` naming a variable set to ``secret``: its exit
    code and the key files it wrote."""
    monkeypatch.setenv("INDEXNOW_SECRET", secret)
    config = site.root / "notify-changes.toml"
    config.write_text('[keys]\nderive = "INDEXNOW_SECRET"\n')
    folder = site.root / "static"
    folder.mkdir(exist_ok=True)
    for old in folder.iterdir():
        old.unlink()
    code = main(["key", "file", "--host", HOST, "--write", str(folder), "--config", str(config)])
    return code, sorted(path.read_text() for path in folder.iterdir())


def test_a_derive_secret_of_exactly_sixteen_characters_is_accepted(offline_site: Site, monkeypatch: pytest.MonkeyPatch) -> None:
    """Fails with ``len(secret) < MIN_SECRET`` made ``<=`` (the documented minimum refused) or the
    minimum's test dropped (15 taken)."""
    assert _key_file(offline_site, monkeypatch, "s" * 16) == (0, [derive_key("s" * 16, HOST)])
    code, written = _key_file(offline_site, monkeypatch, "s" * 15)
    assert code == 2 and written == []
    assert "at least 16 characters" in offline_site.capsys.readouterr().err


@pytest.mark.parametrize("ending", ["\n", "\r\n", "  \n"])
def test_a_secret_read_from_a_file_with_its_newline_derives_the_same_keys(
    offline_site: Site, monkeypatch: pytest.MonkeyPatch, ending: str
) -> None:
    """``INDEXNOW_SECRET=$(cat secret)`` keeps no newline, ``--env-file`` and many CI stores do:
    the same keys either way. Fails with the secret's ``.strip()`` dropped."""
    secret = "s" * 16
    assert _key_file(offline_site, monkeypatch, secret + ending) == (0, [derive_key(secret, HOST)])
