"""notifier/deploy-hook.sh (what `notify-changes deploy-hook` prints), run by a POSIX sh with a fake publish step and the fake endpoint."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import BASE, KEY, Site, pages, program, urlset
from tests.fakeindexnow import status

HOOK = Path(__file__).resolve().parents[1] / "notifier" / "deploy-hook.sh"
pytestmark = pytest.mark.program
SH = shutil.which("dash") or shutil.which("sh") or "sh"


def hook(site: Site, *publish: str, **env: str) -> subprocess.CompletedProcess[str]:
    assert site.fake is not None
    environment = dict(os.environ, INDEXNOW_KEY=KEY, NOTIFY_CHANGES=program()[0])
    environment["NOTIFY_ARGS"] = f"--state {site.state} --endpoint {site.fake.endpoint} --retry-timeout 0.2 " + env.pop("args", "")
    environment.update(env)
    return subprocess.run(
        [SH, str(HOOK), str(site.sitemap), *publish], env=environment, cwd=site.root, capture_output=True, text=True, check=False
    )


@pytest.fixture
def deployed(site: Site) -> Site:
    site.write(urlset(pages(3)))
    assert site.run().code == 0
    site.write(urlset(pages(4)))  # one page added by this deploy
    return site


def test_an_honest_deploy_checks_publishes_and_announces(deployed: Site) -> None:
    done = hook(deployed, "sh", "-c", "echo live > published")
    assert done.returncode == 0, done.stderr
    assert (deployed.root / "published").read_text() == "live\n"
    assert deployed.fake is not None and deployed.fake.delivered() == [f"{BASE}/p/3/"]


def test_the_publish_command_can_come_from_the_environment(deployed: Site) -> None:
    done = hook(deployed, NOTIFY_PUBLISH="echo live > published")
    assert done.returncode == 0, done.stderr
    assert (deployed.root / "published").exists()


def test_a_lying_sitemap_stops_the_deploy_before_publishing(deployed: Site) -> None:
    deployed.write(urlset({"http://localhost:1313/": "2024-01-01"}))
    done = hook(deployed, "sh", "-c", "echo live > published")
    assert done.returncode == 1 and "not publishing" in done.stderr
    assert not (deployed.root / "published").exists()
    assert deployed.fake is not None and deployed.fake.posts == []


def test_an_unreadable_sitemap_stops_the_deploy(deployed: Site) -> None:
    deployed.write("<html>")
    done = hook(deployed, "sh", "-c", "echo live > published")
    assert done.returncode == 2 and not (deployed.root / "published").exists()


def test_a_failed_publish_announces_nothing(deployed: Site) -> None:
    done = hook(deployed, "sh", "-c", "exit 7")
    assert done.returncode == 7 and "publish failed" in done.stderr
    assert deployed.fake is not None and deployed.fake.posts == []


def test_an_outage_after_publishing_does_not_fail_the_live_deploy_unless_asked(deployed: Site) -> None:
    assert deployed.fake is not None
    deployed.fake.plan = [status(503)] * 50
    done = hook(deployed, "true")
    assert done.returncode == 0 and "stay pending" in done.stderr
    deployed.write(urlset(pages(5)))
    done = hook(deployed, "true", NOTIFY_STRICT="1")
    assert done.returncode == 3


def test_no_publish_command_is_exit_2(deployed: Site) -> None:
    done = hook(deployed)
    assert done.returncode == 2 and "no publish command" in done.stderr


def test_a_dash_runs_every_site_of_the_config_and_one_lying_site_stops_the_publish(site: Site) -> None:
    """``sh deploy-hook.sh - PUBLISH``: the config's [[sites]]; the check covers every site, so
    one that lies stops the one publish of the whole repository."""
    assert site.fake is not None
    for name in ("docs", "blog"):
        (site.root / name).mkdir()
        (site.root / name / "sitemap.xml").write_text(urlset(pages(2, prefix=f"/{name}/")))
    (site.root / "notify-changes.toml").write_text(
        f'endpoint = ["{site.fake.endpoint}"]\nretry-timeout = 0.2\n'
        '[[sites]]\nname = "docs"\nsitemap = "docs/sitemap.xml"\nstate = "state/docs.json"\n'
        '[[sites]]\nname = "blog"\nsitemap = "blog/sitemap.xml"\nstate = "state/blog.json"\n'
    )
    environment = dict(os.environ, INDEXNOW_KEY=KEY, NOTIFY_CHANGES=program()[0])

    def deploy() -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [SH, str(HOOK), "-", "sh", "-c", "echo live >> published"], env=environment, cwd=site.root, capture_output=True, text=True
        )

    done = deploy()
    assert done.returncode == 0, done.stderr + done.stdout
    assert (site.root / "state" / "docs.json").is_file() and (site.root / "state" / "blog.json").is_file()
    (site.root / "blog" / "sitemap.xml").write_text(urlset(pages(2, prefix="/blog/") | {"/blog/9/": "2031-01-01"}))
    done = deploy()
    assert done.returncode == 1 and "not publishing" in done.stderr
    assert (site.root / "published").read_text() == "live\n"  # the first deploy's only
