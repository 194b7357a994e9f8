"""With no SITEMAP, the sitemap comes from the config file, else the generator's usual
output folder (typed by hand in a site's root: ``notify-changes --dry-run``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from notifier.cli import main
from tests.conftest import pages, urlset


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(["check", "--state", "state.json", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.mark.parametrize(
    ("folder", "name"), [("public", "sitemap.xml"), ("_site", "sitemap.xml"), ("build", "sitemap_index.xml"), ("out", "sitemap-index.xml")]
)
def test_the_one_built_sitemap_is_found(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], folder: str, name: str
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / folder).mkdir()
    (tmp_path / folder / name).write_text(urlset(pages(3)))
    code, out, err = run(capsys, "--rule", "page-missing=off")
    assert code == 0 and "3 added" in out
    assert f"no SITEMAP given: reading {tmp_path / folder / name}, with --site-dir {tmp_path / folder}" in err


def test_none_found_says_where_it_looked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    code, _, err = run(capsys)
    assert code == 2 and "none found in public/, _site/, site/, dist/, build/, out/" in err and err.count("\n") == 1


def test_several_found_are_listed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    for folder in ("public", "site"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "sitemap.xml").write_text(urlset(pages(1)))
    code, _, err = run(capsys)
    assert code == 2 and "several found: public/sitemap.xml, site/sitemap.xml; pass the one to read" in err


def test_the_config_files_sitemap_wins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    for folder in ("public", "site"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "sitemap.xml").write_text(urlset(pages(2 if folder == "site" else 1)))
    (tmp_path / "notify-changes.toml").write_text('sitemap = "site/sitemap.xml"\n')
    code, out, err = run(capsys)
    assert code == 0 and "2 added" in out and "no SITEMAP given" not in err
