"""The MkDocs plugin and the Sphinx extension (issue #21), built for real in git repositories
with fixed commit dates: the first build (stamped from git, the check passes), an edit (only
that page's date moves), a fresh clone (nothing moves), and a lying configuration (the build
fails with the finding in the generator's own log).

They run the generator with the interpreter of the program under test: in CI that is the
installed wheel's (with its ``[mkdocs,sphinx]`` extras), so the entry point and the
extension are found as a user's build finds them.
"""

from __future__ import annotations

import datetime as dt
import gzip
import importlib.util
import os
import re
import subprocess
from pathlib import Path

import pytest

from tests.conftest import BASE, program_python
from tests.test_history import Repo

pytestmark = pytest.mark.program

FIRST = "2025-01-10T10:00:00Z"
EDIT = "2025-03-05T09:30:00Z"
BUILD_DAY = dt.datetime(2025, 6, 1, 12, 0, tzinfo=dt.UTC)  # every build runs on this day, months after the commits


def _run(root: Path, *argv: str, day: dt.datetime = BUILD_DAY, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    environ = {key: value for key, value in os.environ.items() if not key.startswith("GIT_")}
    environ["SOURCE_DATE_EPOCH"] = str(int(day.timestamp()))  # MkDocs and Sphinx date their builds by it
    environ.update(env or {})
    return subprocess.run([program_python(), *argv], cwd=root, env=environ, capture_output=True, text=True, check=False)


def _deploy(root: Path, site: str, state: str = "../state/notify-changes.json") -> None:
    """The deploy's ``notify-changes run`` (a first one records the baseline, fingerprints included)."""
    done = _run(root, "-m", "notifier", "run", f"{site}/sitemap.xml", "--site-dir", site, "--state", state)
    assert done.returncode == 0, done.stdout + done.stderr


def _lastmods(sitemap: Path) -> dict[str, str | None]:
    text = sitemap.read_text()
    found: dict[str, str | None] = {}
    for block in re.findall(r"<url>(.*?)</url>", text, re.S):
        loc = re.search(r"<loc>(.*?)</loc>", block)
        lastmod = re.search(r"<lastmod>(.*?)</lastmod>", block)
        assert loc is not None
        found[loc.group(1).strip()] = lastmod.group(1).strip() if lastmod else None
    return found


def _clone(source: Path, target: Path) -> Path:
    subprocess.run(["git", "clone", "-q", str(source), str(target)], check=True, capture_output=True)
    return target


# -- MkDocs ------------------------------------------------------------------------------------
needs_mkdocs = pytest.mark.skipif(importlib.util.find_spec("mkdocs") is None, reason="mkdocs is not installed (pip install -e '.[test]')")

MKDOCS_YML = f"""site_name: Tea
site_url: {BASE}/
plugins:
  - notify-changes:
      state: ../state/notify-changes.json
"""


def _mkdocs_site(root: Path, config: str = MKDOCS_YML) -> Repo:
    repo = Repo(root)
    repo.commit({"mkdocs.yml": config, "docs/index.md": "# Tea\n", "docs/green.md": "# Green\n", "docs/black.md": "# Black\n"}, FIRST)
    return repo


def _mkdocs_build(root: Path) -> subprocess.CompletedProcess[str]:
    return _run(root, "-m", "mkdocs", "build")


def _mkdocs_dates(root: Path) -> dict[str, str | None]:
    return _lastmods(root / "site" / "sitemap.xml")


@needs_mkdocs
def test_mkdocs_first_build_edit_and_fresh_clone(tmp_path: Path) -> None:
    root = tmp_path / "tea"
    repo = _mkdocs_site(root)
    first = _mkdocs_build(root)
    assert first.returncode == 0, first.stderr
    assert "stamp: rewrote 3 date(s)" in first.stderr  # MkDocs' own log, at INFO
    assert set(_mkdocs_dates(root).values()) == {"2025-01-10T10:00:00Z"}  # the commit, not the build day
    assert "a real run would record a baseline of 3 URLs" in first.stderr  # the check ran: no state yet
    gzipped = root / "site" / "sitemap.xml.gz"
    assert gzip.decompress(gzipped.read_bytes()) == (root / "site" / "sitemap.xml").read_bytes()  # the .gz copy in step

    repo.commit({"docs/green.md": "# Green\n\nNow with jasmine.\n"}, EDIT)
    edited = _mkdocs_build(root)
    assert edited.returncode == 0, edited.stderr
    dates = _mkdocs_dates(root)
    assert dates == {f"{BASE}/": FIRST, f"{BASE}/black/": FIRST, f"{BASE}/green/": EDIT}  # only the edited page moved

    cloned = _clone(root, tmp_path / "clone")
    fresh = _mkdocs_build(cloned)
    assert fresh.returncode == 0, fresh.stderr
    assert _mkdocs_dates(cloned) == dates  # a fresh checkout (every mtime new) moves nothing


@needs_mkdocs
def test_mkdocs_build_strict_passes_twice_after_a_deploy(tmp_path: Path) -> None:
    """The default theme writes its build date into the home page: a rebuild with nothing
    changed is the same site, and ``--strict`` (docs CI's usual setting) passes, again and again."""
    root = tmp_path / "tea"
    _mkdocs_site(root)
    first = _run(root, "-m", "mkdocs", "build", "--strict")
    assert first.returncode == 0, first.stderr
    assert "Build Date UTC" in (root / "site" / "index.html").read_text()
    _deploy(root, "site")
    for later in (BUILD_DAY + dt.timedelta(hours=3), BUILD_DAY + dt.timedelta(days=1, minutes=7)):
        again = _run(root, "-m", "mkdocs", "build", "--strict", day=later)
        assert again.returncode == 0, again.stderr
        assert "WARNING" not in again.stderr and "change-without-lastmod" not in again.stderr, again.stderr
        assert f"Build Date UTC : {later:%Y-%m-%d %H:%M}" in (root / "site" / "index.html").read_text()


@needs_mkdocs
def test_mkdocs_build_strict_passes_after_a_deploy_when_a_page_is_added(tmp_path: Path) -> None:
    """A page added is in every page's nav: each page is built anew, none of their sources
    changed, and ``--strict`` passes; only the new page's date is new."""
    root = tmp_path / "tea"
    repo = _mkdocs_site(root)
    assert _run(root, "-m", "mkdocs", "build", "--strict").returncode == 0
    _deploy(root, "site")
    repo.commit({"docs/oolong.md": "# Oolong\n"}, EDIT)
    added = _run(root, "-m", "mkdocs", "build", "--strict")
    assert added.returncode == 0 and "WARNING" not in added.stderr, added.stderr
    assert "oolong" in (root / "site" / "green" / "index.html").read_text()  # the nav of every page lists it
    assert _mkdocs_dates(root) == {f"{BASE}/": FIRST, f"{BASE}/black/": FIRST, f"{BASE}/green/": FIRST, f"{BASE}/oolong/": EDIT}


@needs_mkdocs
def test_mkdocs_git_mv_docs_content_moves_no_date(tmp_path: Path) -> None:
    """`git mv docs content` with `docs_dir: content`: every page keeps its date (a pure rename
    is no change), and the plugin's check passes."""
    root = tmp_path / "tea"
    repo = _mkdocs_site(root)
    repo.commit({"docs/green.md": "# Green\n\nNow with jasmine.\n"}, EDIT)
    assert _mkdocs_build(root).returncode == 0
    before = _mkdocs_dates(root)
    assert before == {f"{BASE}/": FIRST, f"{BASE}/black/": FIRST, f"{BASE}/green/": EDIT}
    _deploy(root, "site")
    repo.git("mv", "docs", "content", when="2025-05-20T08:00:00Z")
    (root / "mkdocs.yml").write_text(MKDOCS_YML.replace("plugins:", "docs_dir: content\nplugins:"))
    repo.git("add", "mkdocs.yml", when="2025-05-20T08:00:00Z")
    repo.git("commit", "-q", "-m", "docs -> content", when="2025-05-20T08:00:00Z")
    moved = _run(root, "-m", "mkdocs", "build", "--strict")
    assert moved.returncode == 0, moved.stderr
    assert _mkdocs_dates(root) == before, moved.stderr
    assert "stamp: rewrote 3 date(s)" in moved.stderr and "held back" not in moved.stderr, moved.stderr


@needs_mkdocs
def test_mkdocs_plugin_enabled_from_the_environment(tmp_path: Path) -> None:
    """`enabled: !ENV [NOTIFY_CHANGES, true]`: NOTIFY_CHANGES=false leaves the build as MkDocs wrote it."""
    root = tmp_path / "tea"
    _mkdocs_site(root, MKDOCS_YML.replace("      state:", "      enabled: !ENV [NOTIFY_CHANGES, true]\n      state:"))
    off = _run(root, "-m", "mkdocs", "build", env={"NOTIFY_CHANGES": "false"})
    assert off.returncode == 0 and "notify-changes" not in off.stderr, off.stderr
    assert set(_mkdocs_dates(root).values()) == {"2025-06-01"}  # MkDocs' build day: not stamped
    on = _run(root, "-m", "mkdocs", "build")
    assert on.returncode == 0 and "notify-changes: stamp: rewrote 3 date(s)" in on.stderr, on.stderr
    assert set(_mkdocs_dates(root).values()) == {FIRST}


@needs_mkdocs
def test_a_mkdocs_site_served_under_a_path_is_stamped_page_by_page(tmp_path: Path) -> None:
    """`site_url: https://host/project/`: MkDocs builds /project/green/ into site/green/index.html
    from docs/green.md; the plugin maps each URL without /project/. The command does the same
    with --sitemap-url (or sitemap-url in its config), for stamp and check alike."""
    root = tmp_path / "tea"
    repo = _mkdocs_site(root, MKDOCS_YML.replace(f"site_url: {BASE}/", f"site_url: {BASE}/project/"))
    repo.commit({"docs/green.md": "# Green\n\nNow with jasmine.\n"}, EDIT)
    done = _run(root, "-m", "mkdocs", "build", "--strict")
    assert done.returncode == 0, done.stderr
    assert _mkdocs_dates(root) == {f"{BASE}/project/": FIRST, f"{BASE}/project/black/": FIRST, f"{BASE}/project/green/": EDIT}
    assert "page-missing" not in done.stderr and "left as they were" not in done.stderr, done.stderr
    (root / "notify-changes.toml").write_text('[history]\npreset = "mkdocs"\n')
    command = ("site/sitemap.xml", "--site-dir", "site", "--state", "../state/notify-changes.json")
    unplaced = _run(root, "-m", "notifier", "check", *command)
    assert "warn[page-missing]" in unplaced.stdout, unplaced.stdout  # nothing says where the build is served
    placed = ("--sitemap-url", f"{BASE}/project/sitemap.xml")
    checked = _run(root, "-m", "notifier", "check", *command, *placed)
    assert checked.returncode == 0 and "page-missing" not in checked.stdout and "lastmod-vs-history" not in checked.stdout, checked.stdout
    stamped = _run(root, "-m", "notifier", "stamp", "site/sitemap.xml", "--dry-run", *placed)
    assert stamped.returncode == 0 and "0 date(s) in 0 file(s); 3 already named their content's date" in stamped.stdout, stamped.stdout


@needs_mkdocs
def test_mkdocs_serve_neither_stamps_nor_checks(tmp_path: Path) -> None:
    """``mkdocs serve`` builds into a temporary folder for a dev server: not a deploy. The
    plugin's on_startup sees the command; a build made for serve is left as MkDocs wrote it."""
    root = tmp_path / "tea"
    _mkdocs_site(root)
    probe = (
        "import sys\n"
        "from mkdocs.config import load_config\n"
        "from mkdocs.commands.build import build\n"
        "config = load_config('mkdocs.yml')\n"
        "config.plugins.on_startup(command='serve', dirty=False)\n"
        "build(config)\n"
    )
    done = _run(root, "-c", probe)
    assert done.returncode == 0, done.stderr
    assert set(_mkdocs_dates(root).values()) == {"2025-06-01"}  # MkDocs' build day: untouched
    unannounced = _run(root, "-c", probe.replace("config.plugins.on_startup(command='serve', dirty=False)\n", ""))
    assert unannounced.returncode == 0, unannounced.stderr  # a build from Python that never says its command: a build
    assert set(_mkdocs_dates(root).values()) == {FIRST}


@needs_mkdocs
def test_a_lying_mkdocs_configuration_fails_the_build_with_the_finding_in_its_log(tmp_path: Path) -> None:
    """``stamp: false`` leaves MkDocs' build-day date on every page; the check holds each
    against its source's history and the build fails, saying which page and why."""
    root = tmp_path / "tea"
    _mkdocs_site(root, MKDOCS_YML.replace("      state:", "      stamp: false\n      state:"))
    done = _mkdocs_build(root)
    assert done.returncode == 1, done.stderr
    assert f"ERROR   -  notify-changes: error[lastmod-vs-history] {BASE}/green/: lastmod 2025-06-01 is later than" in done.stderr
    assert "ERROR   -  notify-changes: the check found 3 error(s) above: fix them before deploying" in done.stderr
    assert "Aborted with a BuildError" in done.stdout + done.stderr
    honest = _mkdocs_site(tmp_path / "honest")  # the same site, stamped: the build passes
    assert honest is not None and _mkdocs_build(tmp_path / "honest").returncode == 0


@needs_mkdocs
def test_a_broken_mkdocs_plugin_setting_is_one_error_line_not_a_traceback(tmp_path: Path) -> None:
    root = tmp_path / "tea"
    _mkdocs_site(
        root,
        MKDOCS_YML.replace(
            "      state: ../state/notify-changes.json", "      state: ../state/notify-changes.json\n      config: nowhere.toml"
        ),
    )
    done = _mkdocs_build(root)
    assert done.returncode == 1
    assert "notify-changes: " in done.stderr and "nowhere.toml" in done.stderr and "Traceback" not in done.stderr, done.stderr


# -- Sphinx ------------------------------------------------------------------------------------
needs_sphinx = pytest.mark.skipif(
    importlib.util.find_spec("sphinx") is None or importlib.util.find_spec("sphinx_sitemap") is None,
    reason="sphinx and sphinx-sitemap are not installed (pip install -e '.[test]')",
)

CONF_PY = f"""project = "Tea"
extensions = ["sphinx_sitemap", "notifier.sphinx"]
html_baseurl = "{BASE}/"
sitemap_url_scheme = "{{link}}"
sitemap_excludes = ["search.html", "genindex.html"]  # as sphinx-sitemap advises: no source, and search.html is noindex
notify_changes_state = "../state/notify-changes.json"
"""

INDEX_RST = """Tea
===

.. toctree::

   green
   black
"""


def _sphinx_site(root: Path, conf: str = CONF_PY) -> Repo:
    repo = Repo(root)
    files = {"docs/conf.py": conf, "docs/index.rst": INDEX_RST, "docs/green.rst": "Green\n=====\n", "docs/black.rst": "Black\n=====\n"}
    repo.commit(files, FIRST)
    return repo


def _sphinx_build(root: Path) -> subprocess.CompletedProcess[str]:
    # as `make html` builds: incremental, only the changed pages written
    return _run(root, "-m", "sphinx", "-b", "html", "-q", "docs", "docs/_build/html")


def _sphinx_dates(root: Path) -> dict[str, str | None]:
    return _lastmods(root / "docs" / "_build" / "html" / "sitemap.xml")


@needs_sphinx
def test_sphinx_first_build_edit_and_fresh_clone(tmp_path: Path) -> None:
    root = tmp_path / "tea"
    repo = _sphinx_site(root)
    first = _sphinx_build(root)
    assert first.returncode == 0, first.stderr
    assert set(_sphinx_dates(root).values()) == {FIRST}, _sphinx_dates(root)  # the commit, not the build day
    assert len(_sphinx_dates(root)) == 3

    repo.commit({"docs/green.rst": "Green\n=====\n\nNow with jasmine.\n"}, EDIT)
    edited = _sphinx_build(root)
    assert edited.returncode == 0, edited.stderr
    dates = _sphinx_dates(root)
    assert dates == {f"{BASE}/index.html": FIRST, f"{BASE}/black.html": FIRST, f"{BASE}/green.html": EDIT}

    cloned = _clone(root, tmp_path / "clone")
    fresh = _sphinx_build(cloned)
    assert fresh.returncode == 0, fresh.stderr
    assert _sphinx_dates(cloned) == dates


@needs_sphinx
def test_an_incremental_sphinx_build_after_a_deploy_lists_every_page_and_dates_the_edited_one(tmp_path: Path) -> None:
    """`make html` writes only the changed page, and sphinx-sitemap lists only the pages a build
    writes: the extension lists every document, so nothing looks removed, and only the edited
    page's date moves."""
    root = tmp_path / "tea"
    teas = ["green", "black", "oolong", "white", "puerh"]
    repo = Repo(root)
    toctree = "Tea\n===\n\n.. toctree::\n\n" + "".join(f"   {tea}\n" for tea in teas)
    files = {"docs/conf.py": CONF_PY, "docs/index.rst": toctree} | {f"docs/{tea}.rst": f"{tea}\n=====\n" for tea in teas}
    repo.commit(files, FIRST)
    first = _sphinx_build(root)
    assert first.returncode == 0, first.stderr
    everything = {f"{BASE}/{page}.html": FIRST for page in ["index", *teas]}
    assert _sphinx_dates(root) == everything
    _deploy(root, "docs/_build/html", "state/notify-changes.json")
    built = root / "docs" / "_build" / "html"
    untouched = (built / "black.html").stat().st_mtime_ns
    repo.commit({"docs/green.rst": "green\n=====\n\nNow with jasmine.\n"}, EDIT)
    edited = _sphinx_build(root)
    assert edited.returncode == 0, edited.stderr
    assert _sphinx_dates(root) == everything | {f"{BASE}/green.html": EDIT}, edited.stdout
    assert (built / "black.html").stat().st_mtime_ns == untouched  # incremental: only the edited page was written
    command = ("docs/_build/html/sitemap.xml", "--site-dir", "docs/_build/html", "--state", "state/notify-changes.json")
    checked = _run(root, "-m", "notifier", "check", *command)
    assert checked.returncode == 0 and "0 added, 1 changed, 0 removed" in checked.stdout, checked.stdout + checked.stderr
    nothing = _sphinx_build(root)  # nothing changed: sphinx-sitemap is handed no page at all
    assert nothing.returncode == 0 and _sphinx_dates(root) == everything | {f"{BASE}/green.html": EDIT}, nothing.stderr


@needs_sphinx
def test_a_sphinx_site_served_under_a_path_is_stamped_page_by_page(tmp_path: Path) -> None:
    """`html_baseurl = ".../en/latest/"` with `sitemap_url_scheme = "{link}"`: every page mapped
    without the path; with sphinx-sitemap's default scheme, its `en/` (Sphinx's default
    language) before every page is said in one line, what to set with it, and the pages
    still map."""
    root = tmp_path / "tea"
    served = CONF_PY.replace(f'html_baseurl = "{BASE}/"', f'html_baseurl = "{BASE}/en/latest/"')
    repo = _sphinx_site(root, served)
    repo.commit({"docs/green.rst": "Green\n=====\n\nNow with jasmine.\n"}, EDIT)
    done = _sphinx_build(root)
    assert done.returncode == 0 and "WARNING" not in done.stderr, done.stderr
    latest = f"{BASE}/en/latest"
    assert _sphinx_dates(root) == {f"{latest}/index.html": FIRST, f"{latest}/black.html": FIRST, f"{latest}/green.html": EDIT}
    (root / "docs" / "conf.py").write_text(CONF_PY.replace('sitemap_url_scheme = "{link}"\n', ""))  # sphinx-sitemap's default
    default = _run(root, "-m", "sphinx", "-b", "html", "-q", "docs", "docs/_build/default")
    said = [line for line in default.stderr.splitlines() if "sitemap_url_scheme" in line]
    assert said == [
        "WARNING: notify-changes: sphinx-sitemap puts 'en/' before every page (sitemap_url_scheme '{lang}{version}{link}', "
        "language 'en'), a folder no built file is in: unless the site is served under it, set "
        'sitemap_url_scheme = "{link}" in conf.py (and any path in html_baseurl) [notify-changes.url-scheme]'
    ], default.stderr
    dates = _lastmods(root / "docs" / "_build" / "default" / "sitemap.xml")
    assert dates == {f"{BASE}/en/index.html": FIRST, f"{BASE}/en/black.html": FIRST, f"{BASE}/en/green.html": EDIT}
    assert "page-missing" not in default.stderr, default.stderr


@needs_sphinx
def test_a_sphinx_sitemap_without_the_list_the_extension_completes_is_said(tmp_path: Path) -> None:
    """A sphinx-sitemap that keeps no ``sitemap_links`` queue (another version's insides): the
    extension cannot list the documents a build did not write, and says so in one warning."""
    root = tmp_path / "tea"
    _sphinx_site(root, "import sys, os\nsys.path.insert(0, os.path.abspath('ext'))\n" + CONF_PY)
    other = (
        "from pathlib import Path\n\n"
        "def _write(app, exception):\n"
        "    urls = ''.join(f'<url><loc>{app.config.html_baseurl}{name}.html</loc></url>' for name in sorted(app.env.found_docs))\n"
        '    xml = f\'<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{urls}</urlset>\'\n'
        "    (Path(app.outdir) / 'sitemap.xml').write_text(xml)\n\n"
        "def setup(app):\n"
        "    app.add_config_value('sitemap_url_scheme', '{link}', '')\n"
        "    app.add_config_value('sitemap_excludes', [], '')\n"
        "    app.connect('build-finished', _write)\n"
        "    return {'parallel_read_safe': True}\n"
    )
    (root / "docs" / "ext").mkdir()
    (root / "docs" / "ext" / "sphinx_sitemap.py").write_text(other)
    done = _sphinx_build(root)
    assert done.returncode == 0, done.stderr
    said = [line for line in done.stderr.splitlines() if "sitemap_links" in line]
    assert said == [
        "WARNING: notify-changes: this sphinx-sitemap keeps no sitemap_links list to complete, so an incremental build's "
        "sitemap lists only the pages it wrote: build with -a (sphinx-sitemap 2.9 keeps that list) [notify-changes.sitemap-links]"
    ], done.stderr
    assert set(_sphinx_dates(root).values()) == {FIRST}  # stamped all the same


@needs_sphinx
def test_sphinx_extension_off_with_notify_changes_enabled(tmp_path: Path) -> None:
    root = tmp_path / "tea"
    _sphinx_site(root, CONF_PY + "notify_changes_enabled = False\n")
    done = _run(root, "-m", "sphinx", "-b", "html", "docs", "docs/_build/html")
    assert done.returncode == 0 and "notify-changes" not in done.stdout + done.stderr, done.stdout
    assert set(_sphinx_dates(root).values()) == {None}  # as sphinx-sitemap wrote it: no dates


@needs_sphinx
def test_sphinx_logs_what_the_plugin_did_and_lets_other_builds_be(tmp_path: Path) -> None:
    """A parallel build (-j 2) logs the stamp and the check's note, with no word on parallel
    safety; a text build is none of the plugin's business; without sphinx-sitemap it says why
    nothing was checked."""
    root = tmp_path / "tea"
    _sphinx_site(root)
    done = _run(root, "-m", "sphinx", "-b", "html", "-a", "-j", "2", "docs", "docs/_build/html")
    assert done.returncode == 0 and "parallel" not in done.stderr, done.stderr
    assert "notify-changes: stamp: rewrote 3 date(s) in 1 file(s); 0 already named their content's date" in done.stdout, done.stdout
    assert "notify-changes: no state file at " in done.stdout and "a real run would record a baseline of 3 URLs" in done.stdout
    text = _run(root, "-m", "sphinx", "-b", "text", "-a", "docs", "docs/_build/text")
    assert text.returncode == 0 and "notify-changes" not in text.stdout + text.stderr, text.stdout + text.stderr
    (root / "docs" / "conf.py").write_text(CONF_PY.replace('"sphinx_sitemap", ', ""))
    bare = _run(root, "-m", "sphinx", "-b", "html", "-a", "-q", "docs", "docs/_build/bare")
    assert bare.returncode == 0 and "WARNING: notify-changes: no sitemap.xml in " in bare.stderr, bare.stderr
    assert "(add sphinx_sitemap to extensions, with html_baseurl): nothing checked" in bare.stderr


@needs_sphinx
def test_a_lying_sphinx_configuration_fails_the_build_with_the_finding_in_its_log(tmp_path: Path) -> None:
    """sphinx-sitemap's own git dates are off here; with ``notify_changes_stamp = False`` a
    lastmod written by hand into the sitemap (a later date than any commit) is a lie the
    check catches, and sphinx-build fails, naming the page."""
    conf = CONF_PY + "notify_changes_stamp = False\n"
    root = tmp_path / "tea"
    _sphinx_site(root, conf)
    hook = "\nfrom pathlib import Path\n\ndef _lie(app, exception):\n" + (
        "    path = Path(app.outdir) / 'sitemap.xml'\n"
        "    path.write_text(path.read_text().replace('</loc>', '</loc><lastmod>2025-05-30T00:00:00Z</lastmod>'))\n"
        "\ndef setup(app):\n    app.connect('build-finished', _lie, priority=700)\n"
    )
    (root / "docs" / "conf.py").write_text(conf + hook)
    done = _sphinx_build(root)
    assert done.returncode == 1, done.stderr
    assert f"ERROR: notify-changes: error[lastmod-vs-history] {BASE}/green.html: lastmod 2025-05-30T00:00:00Z is later than" in done.stderr
    assert "ERROR: notify-changes: the check found 3 error(s) above: fix them before deploying" in done.stderr, done.stderr
    assert "Extension error" not in done.stderr and "Traceback" not in done.stderr  # no crash report for a finding


@needs_sphinx
def test_a_bad_sphinx_setting_is_one_error_line_and_a_failed_build(tmp_path: Path) -> None:
    root = tmp_path / "tea"
    _sphinx_site(root, CONF_PY + 'notify_changes_config = "nowhere.toml"\n')
    done = _sphinx_build(root)
    assert done.returncode == 1
    assert "ERROR: notify-changes: " in done.stderr and "nowhere.toml" in done.stderr and "Traceback" not in done.stderr, done.stderr
