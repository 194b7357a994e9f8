"""What users install is the product: the sdist and the wheel hold every module and file the
program needs, carry one version and the licence, and the wheel runs on its own.

The wheel is built as pip builds it (``python -m build``: the sdist first, the wheel from the
unpacked sdist), offline (``--no-isolation``, with the test environment's setuptools), from a
copy of this checkout: an editable install once hid a wheel without ``notifier/store/``.
"""

from __future__ import annotations

import email
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import tomllib
import zipfile
from pathlib import Path

import pytest

import notifier

ROOT = Path(__file__).resolve().parents[1]
NOT_SOURCES = (".venv", ".git", "build", "dist", ".ci", "node_modules", "__pycache__", ".mypy_cache", ".ruff_cache", ".pytest_cache")


def package_files() -> list[str]:
    """Every file of the package in this checkout (``notifier/...``), bytecode aside."""
    return sorted(
        path.relative_to(ROOT).as_posix()
        for path in (ROOT / "notifier").rglob("*")
        if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc"
    )


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The sdist and the wheel, built from a copy of the checkout."""
    work = tmp_path_factory.mktemp("packaging")
    source = work / "source"
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(*NOT_SOURCES, "*.egg-info"), symlinks=True)
    done = subprocess.run(
        [sys.executable, "-m", "build", "--no-isolation", "--outdir", str(work / "dist"), str(source)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    (sdist,) = (work / "dist").glob("*.tar.gz")
    (wheel,) = (work / "dist").glob("*.whl")
    return sdist, wheel


def test_the_wheel_holds_every_file_of_the_package(built: tuple[Path, Path]) -> None:
    names = set(zipfile.ZipFile(built[1]).namelist())
    expected = package_files()
    assert {"notifier/store/sqlite.py", "notifier/rules/table.py", "notifier/py.typed", "notifier/deploy-hook.sh"} <= set(expected)
    assert [name for name in expected if name not in names] == []


def test_the_sdist_holds_every_file_of_the_package_and_what_a_packager_reads(built: tuple[Path, Path]) -> None:
    with tarfile.open(built[0]) as archive:
        top = f"notify_changes-{notifier.__version__}"
        names = {name.removeprefix(top + "/") for name in archive.getnames()}
    needed = [*package_files(), "pyproject.toml", "README.md", "LICENSE", "CHANGELOG.md", "state/schema.json", "state/README.md"]
    assert [name for name in needed if name not in names] == []


def test_one_version_everywhere(built: tuple[Path, Path]) -> None:
    version = notifier.__version__
    assert built[1].name.startswith(f"notify_changes-{version}-")
    with zipfile.ZipFile(built[1]) as wheel:
        metadata = email.message_from_bytes(wheel.read(f"notify_changes-{version}.dist-info/METADATA"))
        assert metadata["Version"] == version
        assert metadata["License-Expression"] == "MIT"
        assert wheel.read(f"notify_changes-{version}.dist-info/licenses/LICENSE") == (ROOT / "LICENSE").read_bytes()
        entry_points = wheel.read(f"notify_changes-{version}.dist-info/entry_points.txt").decode()
        assert "notify-changes = notifier._launch:main" in entry_points
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert "version" not in project and "version" in project["dynamic"]  # written once: notifier/__init__.py


def _release(version: str) -> tuple[int, int, int]:
    major, minor, patch = version.split(".")
    return int(major), int(minor), int(patch)


def test_the_version_names_what_a_user_runs() -> None:
    """A release is X.Y.Z with its CHANGELOG section, newest first; between releases the default
    branch is the next release with .dev0, its changes under Unreleased (issue 38, item 8)."""
    version = notifier.__version__
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    releases = re.findall(r"^## \[(\d+\.\d+\.\d+)\] - \d{4}-\d{2}-\d{2}$", changelog, re.MULTILINE)
    assert releases == sorted(releases, key=_release, reverse=True)  # a section a release, the newest first
    for release in releases:
        assert f"[{release}]: https://github.com/notify-changes/notify-changes/" in changelog
    headings = re.findall(r"^## (.*)$", changelog, re.MULTILINE)
    development = re.fullmatch(r"(\d+\.\d+\.\d+)\.dev0", version)
    if development is not None:
        upcoming = development.group(1)
        assert headings[0] == "[Unreleased]" and _release(upcoming) > _release(releases[0]), (upcoming, releases[0])
        assert upcoming not in releases  # 0.2.0's changes are 0.2.0's; what came after is the next one's
    else:
        assert re.fullmatch(r"\d+\.\d+\.\d+", version) and releases[0] == version, version  # the release this checkout builds
        unreleased = changelog.split("## [Unreleased]", 1)[1].split("\n## ", 1)[0] if "## [Unreleased]" in changelog else ""
        assert not re.search(r"^- ", unreleased, re.MULTILINE)  # a release has nothing after it: a change since is the next's


def test_the_readme_installs_the_default_branch_and_shows_the_tag_to_pin() -> None:
    """``@v0.2.0`` named a tag the repository did not have: every install line takes the default
    branch as it is, and the tag form names the next release (or this one) for pinning."""
    from tests.docs import README, everything

    readme, docs = README, everything()
    installs = re.findall(r"git\+https://github\.com/notify-changes/notify-changes[^\s\"']*", docs)
    assert len(installs) >= 3 and set(installs) == {"git+https://github.com/notify-changes/notify-changes"}, installs
    uses = re.findall(r"uses: notify-changes/notify-changes@(\S+)", docs)
    assert len(uses) >= 4 and set(uses) == {"main"}, uses
    release = notifier.__version__.removesuffix(".dev0")
    assert (
        f"notify-changes@v{release}`" in readme and f"`@v{release}`" in readme and f"`@v{release}`" in docs
    )  # the pin, pip's and the Action's
    assert f"`{notifier.__version__}`" in readme  # what --version says of the default branch


def test_the_shipped_deploy_hook_is_the_tested_one(built: tuple[Path, Path]) -> None:
    """One deploy hook, in the package (tests/test_deploy_hook.py runs it); scripts/ holds only developer tools."""
    with zipfile.ZipFile(built[1]) as wheel:
        assert wheel.read("notifier/deploy-hook.sh") == (ROOT / "notifier" / "deploy-hook.sh").read_bytes()
    assert not (ROOT / "scripts" / "deploy-hook.sh").exists()


def test_the_package_index_page_renders_and_its_links_work_there(built: tuple[Path, Path]) -> None:
    done = subprocess.run([sys.executable, "-m", "twine", "check", "--strict", *map(str, built)], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    relative = [link for link in re.findall(r"\]\(([^)]+)\)", readme) if not re.match(r"https?://|#|mailto:", link)]
    assert relative == []  # a relative link is dead on a package index's page
    assert "../shared" not in readme and "shared/" not in readme  # the workshop's files are not the product's


def test_the_wheel_runs_on_its_own(built: tuple[Path, Path], tmp_path: Path) -> None:
    """Unpacked, with only its dependencies beside it: ``python -m notifier`` and a dry run of the
    bundled example work from the wheel's files. ``-S``: the site folder's ``.pth`` files are not
    read, so the editable install's finder cannot lend the checkout's modules."""
    unpacked = tmp_path / "wheel"
    zipfile.ZipFile(built[1]).extractall(unpacked)
    libraries = dict.fromkeys([sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]])
    env = {
        "PYTHONPATH": os.pathsep.join([str(unpacked), *libraries]),
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path),
        "TMPDIR": os.environ["TMPDIR"],
    }
    python = [sys.executable, "-S"]
    where = subprocess.run(
        [*python, "-c", "import notifier.store, notifier.rules, notifier.cli; print(notifier.__file__)"],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert Path(where.strip()).is_relative_to(unpacked)
    sitemap = ROOT / "examples" / "site" / "public" / "sitemap.xml"
    done = subprocess.run(
        [*python, "-m", "notifier", str(sitemap), "--dry-run", "--initial", "submit"],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "6 added" in done.stdout
    version = subprocess.run([*python, "-m", "notifier", "--version"], env=env, cwd=tmp_path, capture_output=True, text=True)
    assert version.stdout == f"notify-changes {notifier.__version__}\n"


RELEASE = ROOT / ".github" / "workflows" / "release.yml"


def _release_step(name: str) -> str:
    import yaml

    steps = yaml.safe_load(RELEASE.read_text())["jobs"]["build"]["steps"]
    return str(next(step for step in steps if step.get("name") == name)["run"])


def test_the_release_workflow_builds_checks_installs_and_publishes_with_trusted_publishing() -> None:
    import yaml

    workflow = yaml.safe_load(RELEASE.read_text())
    assert workflow[True]["push"]["tags"] == ["v*"]  # YAML reads the key `on` as true
    build_job, publish = workflow["jobs"]["build"], workflow["jobs"]["publish"]
    run = "\n".join(str(step.get("run", "")) for step in build_job["steps"])
    assert "python -m build" in run and "twine check --strict dist/*" in run
    assert 'pip" install --quiet dist/*.whl' in run and "--dry-run --initial submit" in run  # installed, then run
    assert publish["needs"] == "build" and publish["permissions"] == {"id-token": "write"}
    assert publish["steps"][-1]["uses"] == "pypa/gh-action-pypi-publish@release/v1"
    assert "password" not in str(publish)  # no stored token


def _wheel_of(version: str, folder: Path) -> None:
    """A wheel of ``version`` in ``folder``/dist, as far as the release step reads one (its METADATA)."""
    (folder / "dist").mkdir()
    with zipfile.ZipFile(folder / "dist" / f"notify_changes-{version}-py3-none-any.whl", "w") as wheel:
        wheel.writestr(f"notify_changes-{version}.dist-info/METADATA", f"Metadata-Version: 2.4\nName: notify-changes\nVersion: {version}\n")


@pytest.mark.parametrize(
    ("version", "tag", "changelog", "said"),
    [
        ("0.3.0", "v0.3.0", "## [0.3.0] - 2027-01-04\n", None),
        ("0.3.0", "v9.9.9", "## [0.3.0] - 2027-01-04\n", "the tag is v9.9.9 but the package says 0.3.0"),
        ("0.3.0", "0.3.0", "## [0.3.0] - 2027-01-04\n", "the tag is 0.3.0 but the package says 0.3.0"),
        ("0.3.0", "v0.3.0", "## [Unreleased]\n", "CHANGELOG.md has no entry for 0.3.0"),
        ("0.3.0.dev0", "v0.3.0.dev0", "## [0.3.0.dev0] - 2027-01-04\n", "0.3.0.dev0 is not a release: set __version__ to X.Y.Z first"),
    ],
)
def test_a_release_tag_must_name_the_packages_version_a_release_and_its_changelog_section(
    tmp_path: Path, version: str, tag: str, changelog: str, said: str | None
) -> None:
    _wheel_of(version, tmp_path)
    (tmp_path / "CHANGELOG.md").write_text(f"# Changelog\n\n{changelog}")
    script = _release_step("The tag, the package and the changelog name one version")
    env = dict(os.environ, TAG=tag, PATH=f"{Path(sys.executable).parent}:{os.environ['PATH']}")
    done = subprocess.run(["bash", "-eo", "pipefail", "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert (done.returncode == 0) is (said is None), done.stdout + done.stderr
    if said is not None:
        assert f"::error::{said}" in done.stdout


def test_this_checkouts_wheel_is_refused_as_a_release_between_releases(built: tuple[Path, Path], tmp_path: Path) -> None:
    (tmp_path / "dist").mkdir()
    shutil.copy(built[1], tmp_path / "dist")
    shutil.copy(ROOT / "CHANGELOG.md", tmp_path)
    script = _release_step("The tag, the package and the changelog name one version")
    env = dict(os.environ, TAG=f"v{notifier.__version__}", PATH=f"{Path(sys.executable).parent}:{os.environ['PATH']}")
    done = subprocess.run(["bash", "-eo", "pipefail", "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True)
    if notifier.__version__.endswith(".dev0"):
        assert done.returncode == 1 and "is not a release" in done.stdout, done.stdout
    else:
        assert done.returncode == 0, done.stdout + done.stderr
