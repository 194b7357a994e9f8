"""Real generators built for real, through a deploy story (issue #13, item 7): first build,
edit one page, a fresh clone in CI (every mtime reset), a rollback.

MkDocs comes from PyPI with the test extras, so it runs everywhere the tests run; its build
date is pinned with SOURCE_DATE_EPOCH, which MkDocs honours. Hugo comes from Debian's
packages (`apt-get install hugo`, which .ci/run tries) and is skipped, saying why, where
it is not installed.
"""

from __future__ import annotations

import datetime as dt
import gzip
import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from notifier.cli import main
from notifier.pipeline.loop import Environment, execute
from notifier.report import Report
from notifier.settings.settings import build_settings
from tests.conftest import BASE, KEY
from tests.fakeindexnow import FakeIndexNow
from tests.faketime import FakeTime
from tests.test_history import Repo

PAGES = [f"tea-{n}" for n in range(11)]  # and the home page: 12 pages
DAY = dt.timedelta(days=1)
FIRST_DAY = dt.datetime(2025, 2, 1, 12, 0, tzinfo=dt.UTC)


class Generated:
    """A generator's project in git, its build in ``public/``, and notify-changes run on it."""

    def __init__(self, root: Path, fake: FakeIndexNow) -> None:
        self.root, self.fake = root, fake
        self.repo = Repo(root)
        self.state = root.parent / "state" / "notify-changes.json"  # kept between deploys, outside the checkout

    def clone(self, root: Path) -> Generated:
        """A fresh clone, as CI makes one (every file new), that keeps this site's state."""
        subprocess.run(["git", "clone", "-q", str(self.root), str(root)], check=True, capture_output=True)
        copy = type(self).__new__(type(self))
        copy.__dict__.update(self.__dict__)
        copy.root, copy.repo = root, Repo(root)
        return copy

    @property
    def public(self) -> Path:
        return self.root / "public"

    def deploy(self, now: dt.datetime, *options: str) -> Report:
        """``notify-changes run public/sitemap.xml --site-dir public`` at ``now``, from the project's root."""
        cli: dict[str, Any] = {
            "sitemap": str(self.public / "sitemap.xml"),
            "site-dir": str(self.public),
            "state": str(self.state),
            "endpoint": [self.fake.endpoint],
            "key": KEY,
            "retry-timeout": "0.2",
            "rule": list(options),
        }
        clock = FakeTime(now)
        self.fake.posts.clear()
        return execute(build_settings("run", cli, cwd=self.root), Environment(now=clock.now, sleep=clock.sleep, clock=clock.clock))

    def stamp(self) -> None:
        before = Path.cwd()
        os.chdir(self.root)
        try:
            assert main(["stamp", "public/sitemap.xml"]) == 0
        finally:
            os.chdir(before)


def _errors(report: Report) -> set[str]:
    return {violation.rule for violation in report.errors}


# -- MkDocs ------------------------------------------------------------------------------------
needs_mkdocs = pytest.mark.skipif(importlib.util.find_spec("mkdocs") is None, reason="mkdocs is not installed (pip install -e '.[test]')")


class MkDocs(Generated):
    def __init__(self, root: Path, fake: FakeIndexNow, *, honest: bool) -> None:
        super().__init__(root, fake)
        files = {"mkdocs.yml": f"site_name: Tea\nsite_url: {BASE}/\nsite_dir: public\n", "docs/index.md": "# Tea\n", f"docs/{KEY}.txt": KEY}
        files |= {f"docs/{name}.md": f"# {name}\n\nAbout {name}.\n" for name in PAGES}
        if honest:  # dates from the content's history: `stamp` after the build
            files["notify-changes.toml"] = '[history]\npreset = "mkdocs"\n'
        self.repo.commit(files, "2025-01-10T10:00:00Z")

    def build(self, day: dt.datetime) -> None:
        env = dict(os.environ, SOURCE_DATE_EPOCH=str(int(day.timestamp())))
        done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "-q"], cwd=self.root, env=env, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        assert (self.public / "sitemap.xml").is_file()


@pytest.fixture
def mkdocs_default(tmp_path: Path, fake: FakeIndexNow) -> MkDocs:
    return MkDocs(tmp_path / "site", fake, honest=False)


@pytest.fixture
def mkdocs_honest(tmp_path: Path, fake: FakeIndexNow) -> MkDocs:
    return MkDocs(tmp_path / "site", fake, honest=True)


@needs_mkdocs
def test_mkdocs_default_dates_every_page_with_the_build_day_and_the_deploy_fails(mkdocs_default: MkDocs) -> None:
    site = mkdocs_default
    site.build(FIRST_DAY)
    first = site.deploy(FIRST_DAY)
    assert first.exit_code == 1 and _errors(first) == {"lastmod-bulk"}
    assert "carry the run's own day" in first.errors[0].message


@needs_mkdocs
def test_mkdocs_default_next_day_edit_announces_only_what_changed(mkdocs_default: MkDocs) -> None:
    site = mkdocs_default
    site.build(FIRST_DAY)
    assert site.deploy(FIRST_DAY, "lastmod-bulk=off").exit_code == 0  # a site that turned the rule off
    site.repo.commit({"docs/tea-3.md": "# tea-3\n\nAbout tea-3, steeped longer.\n"}, "2025-02-02T09:00:00Z")
    site.build(FIRST_DAY + DAY)
    gated = site.deploy(FIRST_DAY + DAY)
    assert gated.exit_code == 1 and "byte-identical" in gated.errors[0].message  # 11 pages restamped, unchanged
    passed = site.deploy(FIRST_DAY + DAY, "lastmod-bulk=off")
    assert passed.exit_code == 0
    # the edited page only: never the ten unchanged, nor the home page, whose build-date comment is no change of it
    assert sorted(site.fake.delivered()) == [f"{BASE}/tea-3/"]
    assert len(passed.held_back) == 11


@needs_mkdocs
def test_mkdocs_honest_first_build_edit_fresh_clone_rollback(mkdocs_honest: MkDocs, tmp_path: Path) -> None:
    site = mkdocs_honest
    site.build(FIRST_DAY)
    site.stamp()
    first = site.deploy(FIRST_DAY)
    assert first.exit_code == 0 and not first.errors, first.violations
    assert site.fake.posts == []  # a first run records a baseline

    site.repo.commit({"docs/tea-3.md": "# tea-3\n\nAbout tea-3, steeped longer.\n"}, "2025-02-02T09:00:00Z")
    site.build(FIRST_DAY + DAY)
    site.stamp()
    edit = site.deploy(FIRST_DAY + DAY)
    assert edit.exit_code == 0 and not edit.errors, edit.violations
    assert site.fake.delivered() == [f"{BASE}/tea-3/"]  # exactly the edited page

    cloned = site.clone(tmp_path / "clone")  # CI: a fresh clone, every mtime new, the state restored
    assert isinstance(cloned, MkDocs)
    cloned.build(FIRST_DAY + 2 * DAY)
    cloned.stamp()
    again = cloned.deploy(FIRST_DAY + 2 * DAY)
    assert again.exit_code == 0 and not again.errors and cloned.fake.posts == [], again.violations

    subprocess.run(["git", "checkout", "-q", "HEAD~1"], cwd=cloned.root, check=True)  # roll back one release
    cloned.build(FIRST_DAY + 3 * DAY)
    cloned.stamp()
    rollback = cloned.deploy(FIRST_DAY + 3 * DAY)
    assert rollback.exit_code == 1 and _errors(rollback) == {"lastmod-regressed"}  # as the README says
    intended = cloned.deploy(FIRST_DAY + 3 * DAY, "lastmod-regressed=warn")
    assert intended.exit_code == 0 and cloned.fake.delivered() == [f"{BASE}/tea-3/"]


@needs_mkdocs
def test_stamp_keeps_mkdocs_gzip_copy_in_step(mkdocs_honest: MkDocs) -> None:
    site = mkdocs_honest
    site.build(FIRST_DAY)
    site.stamp()
    plain = (site.public / "sitemap.xml").read_bytes()
    assert b"2025-01-10T10:00:00Z" in plain and gzip.decompress((site.public / "sitemap.xml.gz").read_bytes()) == plain


# -- Hugo --------------------------------------------------------------------------------------
needs_hugo = pytest.mark.skipif(shutil.which("hugo") is None, reason="hugo is not installed (Debian: apt-get install hugo)")

HUGO_LAYOUT = "<!DOCTYPE html><html><head><title>{{ .Title }}</title></head><body>{{ .Content }}</body></html>\n"


class Hugo(Generated):
    def __init__(self, root: Path, fake: FakeIndexNow) -> None:
        super().__init__(root, fake)
        files = {
            "hugo.toml": f'baseURL = "{BASE}/"\ntitle = "Tea"\nenableGitInfo = true\ndisableKinds = ["taxonomy", "term"]\n',
            "layouts/_default/single.html": HUGO_LAYOUT,
            "layouts/_default/list.html": HUGO_LAYOUT,
            "layouts/index.html": HUGO_LAYOUT,
            f"static/{KEY}.txt": KEY,
            "content/_index.md": "---\ntitle: Tea\n---\n",
            "content/posts/_index.md": "---\ntitle: Posts\n---\n",
            "notify-changes.toml": '[history]\npreset = "hugo"\n',
        }
        files |= {f"content/posts/{name}.md": f"---\ntitle: {name}\n---\nAbout {name}.\n" for name in PAGES}
        self.repo.commit(files, "2025-01-10T10:00:00Z")

    def build(self) -> None:
        done = subprocess.run(["hugo", "--quiet", "--destination", "public"], cwd=self.root, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr


@needs_hugo
def test_hugo_with_git_info_is_honest_through_edit_and_fresh_clone(tmp_path: Path, fake: FakeIndexNow) -> None:
    site = Hugo(tmp_path / "site", fake)
    site.build()
    first = site.deploy(FIRST_DAY)
    assert first.exit_code == 0 and not first.errors, first.violations
    site.repo.commit({"content/posts/tea-3.md": "---\ntitle: tea-3\n---\nAbout tea-3, steeped longer.\n"}, "2025-02-02T09:00:00Z")
    site.build()
    edit = site.deploy(FIRST_DAY + DAY)
    assert edit.exit_code == 0 and not edit.errors, edit.violations
    # the page, and the lists whose newest page it is (Hugo dates a list by its newest page)
    assert f"{BASE}/posts/tea-3/" in site.fake.delivered()
    assert set(site.fake.delivered()) <= {f"{BASE}/posts/tea-3/", f"{BASE}/posts/", f"{BASE}/"}
    shutil.rmtree(site.public)
    site.build()  # a fresh build: every file new, the dates from git
    again = site.deploy(FIRST_DAY + 2 * DAY)
    assert again.exit_code == 0 and site.fake.posts == [], again.violations


# -- Jekyll ------------------------------------------------------------------------------------
needs_jekyll = pytest.mark.skipif(
    shutil.which("jekyll") is None, reason="jekyll is not installed (Debian: apt-get install jekyll ruby-jekyll-sitemap)"
)


class Jekyll(Generated):
    def __init__(self, root: Path, fake: FakeIndexNow) -> None:
        super().__init__(root, fake)
        files = {
            "_config.yml": f"title: Tea\nurl: {BASE}\npermalink: /blog/:title/\nplugins:\n  - jekyll-sitemap\n",
            "_layouts/default.html": "<html><head><title>{{ page.title }}</title></head><body>{{ content }}</body></html>\n",
            "_posts/2025-03-14-first-flush.md": "---\nlayout: default\ntitle: First flush\n---\nTea.\n",
            "about.md": "---\nlayout: default\ntitle: About\npermalink: /about/\n---\nAbout us.\n",
            "index.md": "---\nlayout: default\n---\nHome\n",
            f"{KEY}.txt": KEY,
            "notify-changes.toml": '[history]\npreset = "jekyll"\n',
        }
        files |= {f"assets/menu-{n}.pdf": f"%PDF-1.4 menu {n}\n" for n in range(12)}
        self.repo.commit(files, "2025-04-20T10:00:00Z")

    def build(self) -> None:
        done = subprocess.run(["jekyll", "build", "--quiet", "--destination", "public"], cwd=self.root, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr


AFTER_COMMITS = dt.datetime(2025, 5, 1, 12, 0, tzinfo=dt.UTC)


@needs_jekyll
def test_jekyll_static_files_restamped_by_a_fresh_clone_are_held_back_and_stamp_fixes_them(tmp_path: Path, fake: FakeIndexNow) -> None:
    site = Jekyll(tmp_path / "site", fake)
    site.build()
    site.stamp()  # the PDFs' mtimes become their last commit
    first = site.deploy(AFTER_COMMITS, "lastmod-missing=off")
    assert first.exit_code == 0 and not first.errors, first.violations
    cloned = site.clone(tmp_path / "clone")  # every mtime new: jekyll-sitemap dates the PDFs now
    assert isinstance(cloned, Jekyll)
    cloned.build()
    restamped = cloned.deploy(AFTER_COMMITS + DAY, "lastmod-missing=off")
    assert restamped.exit_code == 1 and fake.posts == []
    # lastmod-bulk names the mark; the test's clock (AFTER_COMMITS) lies before the real mtimes,
    # so lastmod-future fires as well: held-back dates are judged like every other
    assert any(error.rule == "lastmod-bulk" and "byte-identical" in error.message for error in restamped.errors)
    cloned.stamp()
    again = cloned.deploy(AFTER_COMMITS + DAY, "lastmod-missing=off")
    assert again.exit_code == 0 and not again.errors and fake.posts == [], again.violations
