"""Keys for many hosts (issue #20, item 2): ``[keys] derive = "VARIABLE"`` makes each host's
key from one secret, HMAC-SHA256 over the lowercase host name, so nothing is stored and
every runner agrees; ``notify-changes key file --host H --write DIR`` writes a host's file.
"""

from __future__ import annotations

import pytest

from notifier.cli import main
from notifier.protocol import derive_key
from tests.conftest import HOST, KEY, Site, pages, urlset

SECRET = "correct horse battery staple"
# computed apart from the code: printf 'www.example.org' | openssl dgst -sha256 -hmac 'correct horse battery staple'
VECTOR = {
    "www.example.org": "629841c6013b85fbed97b458985ce825",  # fb0f33f8f2dc6833333ba2ddee7cb3e3 cut off
    "docs.example.org": "aba09aa7d2948a0ff5337c445d866690",
}


def test_a_derived_key_is_hmac_sha256_of_the_host_cut_to_32_hex_digits() -> None:
    for host, key in VECTOR.items():
        assert derive_key(SECRET, host) == key
    assert derive_key(SECRET, "WWW.Example.ORG") == VECTOR["www.example.org"]  # host names have no case
    assert derive_key(SECRET + "!", "www.example.org") != VECTOR["www.example.org"]


def _config(site: Site, extra: str = "") -> str:
    path = site.root / "notify-changes.toml"
    path.write_text(f'[keys]\nderive = "INDEXNOW_SECRET"\n{extra}')
    return str(path)


def test_a_run_sends_each_host_its_derived_key_and_prints_neither_key_nor_secret(site: Site, monkeypatch: pytest.MonkeyPatch) -> None:
    assert site.fake is not None
    monkeypatch.setenv("INDEXNOW_SECRET", SECRET)
    derived = derive_key(SECRET, HOST)
    site.fake.serve_key(HOST, derived)
    site.write(urlset(pages(2)))
    config = _config(site)
    assert site.run("--config", config, key=False).code == 0  # the baseline
    site.write(urlset(pages(3)))
    result = site.run("--config", config, "--format", "json", key=False)
    assert result.code == 0, result
    assert [post.json["key"] for post in site.fake.posts] == [derived]
    assert derived not in result.out + result.err and SECRET not in result.out + result.err
    assert SECRET not in site.state.read_text() and derived not in site.state.read_text()


def test_a_host_of_its_own_in_keys_keeps_its_key(site: Site, monkeypatch: pytest.MonkeyPatch) -> None:
    assert site.fake is not None
    monkeypatch.setenv("INDEXNOW_SECRET", SECRET)
    own = "0011223344556677"
    site.fake.serve_key(HOST, own)
    config = _config(site, f'"{HOST}" = "{own}"\n')
    site.write(urlset(pages(1)))
    assert site.run("--config", config, "--initial", "submit", key=False).code == 0
    assert [post.json["key"] for post in site.fake.posts] == [own]


def test_a_derive_whose_variable_is_not_set_stops_a_run_but_not_a_check(site: Site, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("INDEXNOW_SECRET", raising=False)
    site.write(urlset(pages(1)))
    config = _config(site)
    result = site.run("--config", config, key=False)
    assert result.code == 2 and "[keys] derive = 'INDEXNOW_SECRET', but INDEXNOW_SECRET is not set" in result.err, result.err
    assert not site.state.exists()  # nothing written
    assert site.run("--config", config, command="check", key=False).code == 0
    monkeypatch.setenv("INDEXNOW_SECRET", "short")
    result = site.run("--config", config, key=False)
    assert result.code == 2 and "at least 16 characters" in result.err and "short" not in result.err
    (site.root / "notify-changes.toml").write_text('[keys]\nderive = "not a name"\n')
    result = site.run("--config", config, command="check", key=False)
    assert result.code == 2 and "name the environment variable that holds the secret" in result.err


def test_key_file_writes_the_hosts_key_file_once(
    offline_site: Site, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("INDEXNOW_SECRET", SECRET)
    config = _config(offline_site)
    folder = offline_site.root / "static"
    folder.mkdir()
    argv = ["key", "file", "--host", "WWW.example.org", "--write", str(folder), "--config", config]
    assert main(argv) == 0
    written = folder / f"{VECTOR['www.example.org']}.txt"
    assert written.read_text() == VECTOR["www.example.org"]
    assert main(argv) == 0  # the same key's file again: fine, on every build
    out = capsys.readouterr().out
    assert VECTOR["www.example.org"] not in out and SECRET not in out
    assert "the key file of www.example.org" in out  # the host as a run names it (#39 item 13)
    assert main(["key", "file", "--host", "docs.example.org", "--write", str(folder), "--config", config]) == 2  # another key's file there
    assert "already holds the key file" in capsys.readouterr().err
    assert main(["key", "file", "--write", str(folder)]) == 2
    assert "give --host HOST and --write DIR" in capsys.readouterr().err
    monkeypatch.delenv("INDEXNOW_SECRET")
    assert main(argv) == 2
    assert "INDEXNOW_SECRET is not set" in capsys.readouterr().err


def test_key_file_without_any_key_says_what_to_set(
    offline_site: Site, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("INDEXNOW_KEY", raising=False)
    folder = offline_site.root / "static"
    folder.mkdir()
    empty = offline_site.root / "empty.toml"
    empty.write_text("")
    assert main(["key", "file", "--host", HOST, "--write", str(folder), "--config", str(empty)]) == 2
    assert f"no key for {HOST}: set [keys] derive" in capsys.readouterr().err
    assert list(folder.iterdir()) == []


def test_no_key_and_no_secret_shows_in_a_keys_repr_and_a_derived_key_changes_no_equality() -> None:
    """A crash log prints the run's settings: the secret and the keys made from it never show;
    and asking for a host's key does not make two equal Keys unequal."""
    from notifier.protocol import Keys

    keys = Keys(derive="s3cret-0123456789")
    derived = keys.key_for("www.example.org")
    assert derived is not None and "s3cret" not in repr(keys) and derived not in repr(keys)
    assert keys == Keys(derive="s3cret-0123456789")


def test_with_derived_keys_the_key_file_hints_name_the_derive_not_indexnow_key(
    offline_site: Site, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A missing or stale key file under ``[keys] derive``: the fix is the host's derived key's
    file (``key file``), never ``key new`` (another key) nor INDEXNOW_KEY (issue 38, item 9)."""
    monkeypatch.setenv("INDEXNOW_SECRET", SECRET)
    monkeypatch.delenv("INDEXNOW_KEY", raising=False)
    config = _config(offline_site)
    offline_site.write(urlset(pages(2)))
    offline_site.build_pages(pages(2))
    public = offline_site.public

    def finding() -> str:
        result = offline_site.run("--config", config, "--site-dir", str(public), command="check", key=False)
        assert result.code == 1, result.out
        said = next(line for line in result.out.splitlines() if line.startswith("error[key-file-missing]"))
        assert "INDEXNOW_KEY" not in said and "key new" not in said, said
        return said

    fix = f"`notify-changes key file --host {HOST} --write {public}` writes it (the key of [keys] derive)"
    said = finding()  # the fixture's KEY.txt, the key of before, is there
    assert f"is not in the build; delete the other key's file {KEY[:4]}….txt there: {fix}" in said, said
    assert main(["key", "file", "--host", HOST, "--write", str(public), "--config", config]) == 2  # as it said: delete it first
    err = capsys.readouterr().err
    assert "not the key of [keys] derive; delete that file" in err and "INDEXNOW_KEY" not in err
    (public / f"{KEY}.txt").unlink()
    derived = derive_key(SECRET, HOST)
    (public / f"{derived}.txt").write_text("left over\n")
    assert f"holds another key (left…), not the key this run uses ({derived[:4]}…); delete it: {fix}" in finding()
    (public / f"{derived}.txt").unlink()
    assert f"is not in the build; {fix}, or copy it into the site" in finding()
    assert main(["key", "file", "--host", HOST, "--write", str(public), "--config", config]) == 0  # the hint, followed
    assert offline_site.run("--config", config, "--site-dir", str(public), command="check", key=False).code == 0


def test_with_the_default_key_the_stale_key_file_hint_offers_indexnow_key_too(offline_site: Site) -> None:
    offline_site.write(urlset(pages(2)))
    offline_site.build_pages(pages(2))
    result = offline_site.run("--site-dir", str(offline_site.public), "--key", "another-key-0123", command="check", key=False)
    said = next(line for line in result.out.splitlines() if line.startswith("error[key-file-missing]"))
    assert "(the key of INDEXNOW_KEY (or --key))" in said and "or set INDEXNOW_KEY to the key it holds" in said, said


def test_a_dry_run_with_the_derives_secret_unset_names_that_variable(site: Site, monkeypatch: pytest.MonkeyPatch) -> None:
    """A dry run needs no secret; what it says a real run needs is the derive's variable, not
    INDEXNOW_KEY (issue 38, item 9)."""
    monkeypatch.delenv("INDEXNOW_SECRET", raising=False)
    monkeypatch.delenv("INDEXNOW_KEY", raising=False)
    site.write(urlset(pages(2)))
    result = site.run("--config", _config(site), "--dry-run", "--initial", "submit", key=False)
    assert result.code == 0, result.err
    assert "no IndexNow key is set: for a real run, set INDEXNOW_SECRET, the secret [keys] derive names" in result.out, result.out
    assert "INDEXNOW_KEY" not in result.out
