"""Key rotation (issue #41, item 1): ``key rotate --write DIR`` makes a new key whose file goes
beside the current one's and prints the steps; a run with a previous key (INDEXNOW_KEY_PREVIOUS,
``[keys] previous-env``, or a previous secret ``[keys] derive-previous``) checks the new key's
file at each host and signs with the new key once it is served, with the previous one until
then, saying so in one line."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import pytest

import notifier
from notifier.cli import main
from notifier.pipeline.loop import Environment, execute
from notifier.protocol import derive_key
from notifier.report import Report
from notifier.settings.settings import build_settings
from tests.conftest import BASE, HOST, KEY, Site, pages, recorded_pending, urlset
from tests.faketime import FakeTime

T0 = dt.datetime(2030, 6, 1, 12, 0, tzinfo=dt.UTC)
NEW = "fedcba9876543210fedc"
SECRET = "the secret of the new year"
OLD_SECRET = "the secret of the last year"


def _deploy(site: Site, environ: dict[str, str], options: dict[str, Any] | None = None, clock: FakeTime | None = None) -> Report:
    assert site.fake is not None
    cli: dict[str, Any] = {
        "sitemap": str(site.sitemap),
        "state": str(site.state),
        "endpoint": [site.fake.endpoint],
        "retry-timeout": "30",
        "initial": "submit",
        **(options or {}),
    }
    clock = clock or FakeTime(T0)
    settings = build_settings("run", cli, environ=environ, cwd=site.root)
    return execute(settings, Environment(now=clock.now, sleep=clock.sleep, clock=clock.clock))


def _signed_with(site: Site) -> list[str]:
    assert site.fake is not None
    return [post.json["key"] for post in site.fake.posts]


# -- key rotate ---------------------------------------------------------------------------
def test_key_rotate_writes_a_new_key_file_beside_the_current_one_and_prints_the_steps(
    site: Site, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("INDEXNOW_KEY", KEY)
    assert main(["key", "rotate", "--write", str(site.public)]) == 0
    out = capsys.readouterr().out
    files = sorted(path.name for path in site.public.glob("*.txt"))
    assert len(files) == 2 and f"{KEY}.txt" in files
    new = next(name[:-4] for name in files if name != f"{KEY}.txt")
    assert (site.public / f"{new}.txt").read_text() == new and len(new) == 32
    assert f"INDEXNOW_KEY={new}\n" in out and "INDEXNOW_KEY_PREVIOUS to the current one (0123…)" in out
    assert "publish both key files" in out and "for 7 days" in out and "[keys] previous-env" in out
    assert KEY not in out  # the current key is a secret already set: named by its first characters only


def test_key_rotate_needs_the_current_key(site: Site, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["key", "rotate", "--write", str(site.public)]) == 2
    err = capsys.readouterr().err
    assert "key rotate: INDEXNOW_KEY is not set" in err and len(err.strip().splitlines()) == 1
    assert sorted(path.name for path in site.public.glob("*.txt")) == [f"{KEY}.txt"]


def test_key_rotate_refuses_a_folder_holding_another_key_file(
    site: Site, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (site.public / f"{NEW}.txt").write_text(NEW)  # a rotation half done: which key is in use?
    monkeypatch.setenv("INDEXNOW_KEY", KEY)
    assert main(["key", "rotate", "--write", str(site.public)]) == 2
    assert "already holds the key file fedc….txt" in capsys.readouterr().err


def test_key_rotate_with_derived_keys_says_to_rotate_the_secret(
    site: Site, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "notify-changes.toml").write_text('[keys]\nderive = "INDEXNOW_SECRET"\n')
    monkeypatch.setenv("INDEXNOW_SECRET", SECRET)
    assert main(["key", "rotate", "--write", str(site.public)]) == 2
    err = capsys.readouterr().err
    assert "[keys] derive-previous" in err and SECRET not in err


# -- a run during the overlap -----------------------------------------------------------
def test_while_the_new_key_file_is_not_live_the_previous_key_signs_and_one_line_says_so(site: Site) -> None:
    site.write(urlset(pages(2)))
    report = _deploy(site, {"INDEXNOW_KEY": NEW, "INDEXNOW_KEY_PREVIOUS": KEY}, {"format": "json", "batch-size": "1"})
    assert report.exit_code == 0, report.notes
    assert _signed_with(site) == [KEY, KEY] and recorded_pending(site.state) == {}
    said = [note for note in report.notes if "previous key" in note]
    assert len(said) == 1 and f"the new key's file is not live yet at {HOST}" in said[0] and "fedc….txt answered HTTP 404" in said[0]
    assert report.previous_key == [HOST] and report.to_json()["previous_key"] == [HOST]
    shown = json.dumps(report.to_json())
    assert KEY not in shown and NEW not in shown


def test_once_the_new_key_file_is_live_the_new_key_signs(site: Site) -> None:
    assert site.fake is not None
    site.fake.serve_key(HOST, NEW)
    site.write(urlset(pages(1)))
    report = _deploy(site, {"INDEXNOW_KEY": NEW, "INDEXNOW_KEY_PREVIOUS": KEY})
    assert report.exit_code == 0 and _signed_with(site) == [NEW]
    assert report.previous_key == [] and not any("previous key" in note for note in report.notes)


def test_without_a_previous_key_a_new_key_file_not_live_fails_as_before(site: Site) -> None:
    site.write(urlset(pages(1)))
    report = _deploy(site, {"INDEXNOW_KEY": NEW})
    assert report.exit_code == 3 and _signed_with(site) == []


def test_with_neither_key_file_served_nothing_is_sent_and_both_are_named(site: Site) -> None:
    assert site.fake is not None
    del site.fake.sites[HOST][f"/{KEY}.txt"]
    site.write(urlset(pages(1)))
    report = _deploy(site, {"INDEXNOW_KEY": NEW, "INDEXNOW_KEY_PREVIOUS": KEY})
    assert report.exit_code == 3 and _signed_with(site) == []
    message = report.batches[0].message
    assert "fedc….txt answered HTTP 404" in message and "the previous key's file is not served either" in message
    assert "0123….txt answered HTTP 404" in message


def test_previous_env_names_the_variable_and_the_command_line_comes_first(site: Site) -> None:
    site.write(urlset(pages(1)))
    (site.root / "notify-changes.toml").write_text('[keys]\nprevious-env = "OLD_INDEXNOW_KEY"\n')
    report = _deploy(site, {"INDEXNOW_KEY": NEW, "OLD_INDEXNOW_KEY": KEY, "INDEXNOW_KEY_PREVIOUS": "not-this-one-0000"})
    assert report.exit_code == 0 and _signed_with(site) == [KEY]
    site.write(urlset(pages(2)))
    other = "abababababababab"
    assert _deploy(site, {"INDEXNOW_KEY": NEW, "OLD_INDEXNOW_KEY": KEY}, {"key-previous": other}).exit_code == 3  # --key-previous wins


def test_a_bad_previous_key_is_one_line_naming_its_variable(site: Site, monkeypatch: pytest.MonkeyPatch) -> None:
    site.write(urlset(pages(1)))
    monkeypatch.setenv("INDEXNOW_KEY_PREVIOUS", "short")
    result = site.run()
    assert result.code == 2 and "INDEXNOW_KEY_PREVIOUS: an IndexNow key is 8 to 128 characters" in result.err


def test_derived_keys_rotate_by_a_previous_secret(site: Site) -> None:
    assert site.fake is not None
    old = derive_key(OLD_SECRET, HOST)
    site.fake.serve_key(HOST, old)
    site.write(urlset(pages(1)))
    (site.root / "notify-changes.toml").write_text('[keys]\nderive = "INDEXNOW_SECRET"\nderive-previous = "INDEXNOW_SECRET_PREVIOUS"\n')
    environ = {"INDEXNOW_SECRET": SECRET, "INDEXNOW_SECRET_PREVIOUS": OLD_SECRET}
    report = _deploy(site, environ, {"format": "json"})
    assert report.exit_code == 0 and _signed_with(site) == [old] and report.previous_key == [HOST]
    new = derive_key(SECRET, HOST)
    site.fake.serve_key(HOST, new)
    site.write(urlset(pages(2)))
    again = _deploy(site, environ)
    assert again.exit_code == 0 and _signed_with(site) == [old, new] and again.previous_key == []
    shown = json.dumps(report.to_json()) + "".join(report.notes)
    assert old not in shown and OLD_SECRET not in shown and new not in shown


def test_wait_live_is_satisfied_by_the_previous_key_file_during_a_rotation(site: Site) -> None:
    site.write(urlset(pages(1)))
    clock = FakeTime(T0)
    report = _deploy(site, {"INDEXNOW_KEY": NEW, "INDEXNOW_KEY_PREVIOUS": KEY}, {"wait-live": "60"}, clock)
    assert report.exit_code == 0 and clock.sleeps == [] and _signed_with(site) == [KEY]


def test_the_api_takes_key_previous(site: Site) -> None:
    assert site.fake is not None
    site.write(urlset(pages(1)))
    report = notifier.run(
        site.sitemap, state=site.state, key=NEW, key_previous=KEY, endpoints=[site.fake.endpoint], initial="submit", cwd=site.root
    )
    assert report.exit_code == 0 and _signed_with(site) == [KEY]
    assert site.fake.delivered() == [f"{BASE}/p/0/"]
