"""The key never shows: not in outputs, reports, summaries, the state file, URLs or child argv."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest
import requests

from tests.conftest import KEY, Site, pages, urlset
from tests.fakeindexnow import status


def test_the_key_appears_nowhere(site: Site, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    assert site.fake is not None
    outputs, summary = tmp_path / "outputs", tmp_path / "summary.md"
    seen: list[str] = []

    def run(*args: str) -> None:
        result = site.run(*args)
        seen.extend([result.out, result.err])

    site.write(urlset(pages(3)))
    run()
    site.write(urlset(pages(5)))
    run("--dry-run")
    run("--format", "json", "--dry-run")
    site.fake.plan = [status(403, f'{{"code":"UserForbiddedToAccessSite","key":"{KEY}"}}')]  # an endpoint that echoes it
    run("--format", "json")
    site.fake.plan = [status(400, f"bad key {KEY}")]
    run()
    site.fake.sites["www.shop-site.org"] = {f"/{KEY}.txt": b"another-key-entirely"}
    run()
    site.fake.sites["www.shop-site.org"] = {}
    run("--format", "json")
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_OUTPUT", str(outputs))
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    site.fake.sites["www.shop-site.org"] = {f"/{KEY}.txt": KEY.encode()}
    result = site.run()
    assert result.code == 0, result
    lines = result.out.splitlines()
    assert lines[0] == f"::add-mask::{KEY}"  # the first line, so GitHub hides it everywhere after
    seen.extend(["\n".join(lines[1:]), result.err, outputs.read_text(), summary.read_text()])
    seen.append(site.state.read_text())
    for text in seen:
        assert KEY not in text
    for post in site.fake.posts:
        assert KEY not in post.path  # the key travels in the POST body only
    assert all(KEY not in path for path in site.fake.gets if not path.endswith(f"/{KEY}.txt"))


def test_the_network_guard_refuses_everything_but_loopback() -> None:
    """The canary: a test that tried to reach the internet would fail, not leak."""
    with pytest.raises(ConnectionRefusedError, match="tests never leave the machine"):
        socket.create_connection(("192.0.2.1", 80), timeout=1)
    with pytest.raises(socket.gaierror, match="no name lookup"):
        socket.getaddrinfo("api.indexnow.org", 443)
    with pytest.raises(requests.ConnectionError, match="no name lookup"):
        requests.get("http://api.indexnow.org/indexnow", timeout=1)


@pytest.mark.parametrize("style", ["text", "json", "github"])
def test_a_missing_key_file_is_named_without_the_key(site: Site, style: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The key file's name is the key: the key-file-missing finding shows its first four characters."""
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    site.write(urlset(pages(2)))
    (site.public / f"{KEY}.txt").unlink()
    result = site.check("--site-dir", str(site.public), "--format", style)
    assert result.code == 1 and "key-file-missing" in result.out
    assert f"{KEY[:4]}…" in result.out
    shown = [line for line in result.out.splitlines() if not line.startswith("::add-mask::")]  # GitHub's masking needs it whole
    assert KEY not in "\n".join(shown) + result.err + (summary.read_text() if summary.exists() else "")


def test_a_url_outside_the_key_files_folder_is_named_without_the_key(site: Site) -> None:
    site.write(urlset(pages(2)))
    assert site.run().code == 0
    site.write(urlset(pages(3)))
    result = site.run("--key-location", f"http://www.shop-site.org/catalog/{KEY}.txt", "--format", "json")
    assert "outside /catalog/, the folder its key file" in result.out
    assert KEY not in result.out + result.err
    skipped = [batch for batch in json.loads(result.out)["batches"] if batch["status"] == "skipped"]
    assert skipped and all(batch["attempts"] == 0 for batch in skipped)  # never sent: no attempt


def test_the_api_report_holds_no_whole_key(site: Site) -> None:
    import notifier

    site.write(urlset(pages(2)))
    (site.public / f"{KEY}.txt").unlink()
    report = notifier.check(str(site.sitemap), state=str(site.state), key=KEY, site_dir=str(site.public))
    assert report.exit_code == 1
    assert KEY not in repr(report.violations) + repr(report.notes)


@pytest.mark.parametrize("style", ["text", "json"])
def test_a_finding_on_a_url_that_holds_the_key_names_it_without_the_key(site: Site, style: str) -> None:
    """A sitemap that lists a URL carrying the key (its key file, with a campaign tag): the
    finding on it is reported with the key cut, as everywhere else."""
    site.write(urlset(pages(2) | {f"/{KEY}.txt?utm_source=feed": "2024-05-01"}))
    result = site.check("--format", style)
    assert "url-tracking-params" in result.out, result.out
    if style == "json":  # the URL lists are the sitemap's own URLs, as it lists them; the findings are cut
        result.out = json.dumps(json.loads(result.out)["violations"], ensure_ascii=False)
    assert KEY not in result.out + result.err and f"{KEY[:4]}…" in result.out
