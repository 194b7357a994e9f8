"""One host, one key, one set of batches (issue #39 item 13): a URL written with its scheme's
default port (``:80``, ``:443``) or a trailing dot (``www.shop-site.org.``) is on the bare
host, so a derived key is the bare host's and the URLs go out in its batches; and ``key file
--host`` takes the host as a run names it, or refuses in one line what no run would use (a
URL, a path, a name not in its IDNA form)."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import pytest

from notifier.cli import main
from notifier.protocol import Keys, derive_key
from notifier.urls import key_host
from tests.conftest import BASE, HOST, KEY, Site, urlset

SECRET = "correct horse battery staple"
SPELLINGS = [f"{BASE}/bare/", f"http://{HOST}:80/with-port/", f"http://{HOST}./trailing-dot/", "http://WWW.Shop-Site.ORG.:80/both/"]


def _config(site: Site) -> str:
    path = site.root / "notify-changes.toml"
    path.write_text('[keys]\nderive = "INDEXNOW_SECRET"\n')
    return str(path)


@pytest.mark.parametrize("derived", [True, False], ids=["derived key", "one key"])
def test_a_default_port_or_a_trailing_dot_is_the_bare_hosts_key_and_batch(
    site: Site, monkeypatch: pytest.MonkeyPatch, derived: bool
) -> None:
    assert site.fake is not None
    key = derive_key(SECRET, HOST) if derived else KEY
    site.fake.serve_key(HOST, key)
    monkeypatch.setenv("INDEXNOW_SECRET", SECRET)
    site.write(urlset(dict.fromkeys(SPELLINGS, "2024-05-01T10:00:00Z")))
    args = ["--config", _config(site)] if derived else []
    result = site.run(*args, "--initial", "submit", "--rule", "url-out-of-scope=off", key=not derived)
    assert result.code == 0, result
    assert len(site.fake.posts) == 1, [post.json for post in site.fake.posts]  # one batch for the host, however written
    sent = site.fake.posts[0].json
    # each URL posted on the host as the batch names it (an endpoint may compare letter by letter),
    # and recorded as the sitemap wrote it, so the next deploy finds nothing changed
    posted = [f"{BASE}/bare/", f"{BASE}/with-port/", f"{BASE}/trailing-dot/", f"{BASE}/both/"]
    assert sent["host"] == HOST and sent["key"] == key and sorted(sent["urlList"]) == sorted(posted)
    state = site.state_bytes()
    assert state is not None and all(url.encode() in state for url in SPELLINGS[1:])
    again = site.run(*args, key=not derived)
    assert again.code == 0 and len(site.fake.posts) == 1, again
    assert site.fake.gets and all(path.startswith(f"http://{HOST}/") for path in site.fake.gets)  # the bare host's key file


@pytest.mark.parametrize(
    ("written", "host"),
    [
        (HOST, HOST),
        ("WWW.Shop-Site.ORG", HOST),
        (f"{HOST}.", HOST),
        (f"{HOST}:443", HOST),
        (f"{HOST}:80", HOST),
        (f"{HOST}.:443", HOST),
        (f"{HOST}:8080", f"{HOST}:8080"),  # another port is another site
        ("[2001:DB8::1]:443", "[2001:db8::1]"),
    ],
)
def test_the_host_a_key_is_made_for(written: str, host: str) -> None:
    assert key_host(written) == host
    keys = Keys(derive=SECRET)
    assert keys.key_for(written) == derive_key(SECRET, host)


def _key_file(*words: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["key", "file", *words])
    return code, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("written", [HOST, "WWW.Shop-Site.ORG.", f"{HOST}:443"])
def test_key_file_writes_the_key_a_run_uses_for_the_host(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, written: str) -> None:
    monkeypatch.setenv("INDEXNOW_SECRET", SECRET)
    (tmp_path / "notify-changes.toml").write_text('[keys]\nderive = "INDEXNOW_SECRET"\n')
    (tmp_path / "public").mkdir()
    code, out, err = _key_file("--host", written, "--write", str(tmp_path / "public"))
    assert code == 0, err
    key = derive_key(SECRET, HOST)
    assert [path.name for path in (tmp_path / "public").iterdir()] == [f"{key}.txt"]
    assert f"the key file of {HOST};" in out and key not in out


@pytest.mark.parametrize(
    ("written", "says"),
    [
        (f"https://{HOST}/", "the host name alone"),
        (f"{HOST}/blog", "the host name alone"),
        ("a/b", "the host name alone"),
        ("bücher.de", "xn--bcher-kva.de"),
        ("www.shop site.org", "not a host name"),
        ("", "give --host HOST"),
    ],
)
def test_key_file_refuses_a_host_no_run_would_use(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, written: str, says: str) -> None:
    monkeypatch.setenv("INDEXNOW_SECRET", SECRET)
    (tmp_path / "notify-changes.toml").write_text('[keys]\nderive = "INDEXNOW_SECRET"\n')
    (tmp_path / "public").mkdir()
    code, out, err = _key_file("--host", written, "--write", str(tmp_path / "public"))
    assert code == 2 and err.count("\n") == 1 and says in err, (out, err)
    assert not list((tmp_path / "public").iterdir())


@pytest.mark.parametrize(
    ("host", "scheme", "bare"),
    [
        (f"{HOST}:443", "https", HOST),
        (f"{HOST}:80", "http", HOST),
        (f"{HOST}:80", "https", f"{HOST}:80"),
        (f"{HOST}:443", "http", f"{HOST}:443"),
    ],
)
def test_only_the_schemes_own_default_port_is_the_bare_host(host: str, scheme: str, bare: str) -> None:
    """``https://host:80/`` is another origin than ``https://host/`` (RFC 3986, 6.2.3 normalises
    the scheme's default port only): its URLs keep their batch. Fails with either default port
    stripped whatever the scheme."""
    assert key_host(host, scheme) == bare
