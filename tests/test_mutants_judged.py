"""What the mutation run at HEAD (scripts/mutants-judged/) found no test stating: each test states
the behaviour a user relies on, and its docstring names the mutant (the edit) it fails with."""

from __future__ import annotations

from pathlib import Path

import pytest

import notifier
from tests.conftest import KEY, Site, pages, urlset
from tests.fakeindexnow import FakeIndexNow
from tests.test_sites import _monorepo
from tests.test_sites_everywhere import _main


def test_an_empty_config_path_is_refused_as_no_path_not_as_a_missing_file(offline_site: Site) -> None:
    """``--config ""`` (a CI variable never set) is "give the path of a TOML file", not a search for a
    file named "". Fails with ``find_config``'s ``or not explicit`` dropped (the folder is looked up
    as the file: "--config : no such file")."""
    offline_site.write(urlset(pages(1)))
    with pytest.raises(notifier.UsageError) as caught:
        notifier.check(offline_site.sitemap, state=offline_site.state, config="")
    assert "give the path of a TOML file" in str(caught.value) and caught.value.exit_code == 2


def test_a_relative_config_path_is_read_from_the_runs_folder(offline_site: Site, tmp_path: Path) -> None:
    """The API's ``cwd`` (a build's folder, not the process's) is where ``config="conf.toml"`` is
    found. Fails with ``find_config``'s ``not path.is_absolute()`` made ``path.is_absolute()``, or its
    ``path = cwd / path`` removed (the file is looked for in the process's folder: "no such file")."""
    offline_site.write(urlset(pages(1)))
    folder = tmp_path / "build"
    folder.mkdir()
    (folder / "conf.toml").write_text('batch-size = "many"\n')
    with pytest.raises(notifier.UsageError) as caught:
        notifier.check(offline_site.sitemap, state=offline_site.state, config="conf.toml", cwd=folder)
    assert "batch" in str(caught.value) and "no such file" not in str(caught.value)


def test_a_config_named_pyproject_toml_is_read_from_its_tool_table(offline_site: Site, tmp_path: Path) -> None:
    """``--config site/pyproject.toml`` reads ``[tool.notify-changes]``, as the pyproject.toml found in
    the folder is read. Fails with ``find_config``'s ``"pyproject.toml"`` changed (the whole document
    is read as the table: its ``tool`` key is refused as unknown)."""
    offline_site.write(urlset(pages(1)))
    config = tmp_path / "site" / "pyproject.toml"
    config.parent.mkdir()
    config.write_text('[project]\nname = "site"\n\n[tool.notify-changes]\nbatch-size = "many"\n')
    with pytest.raises(notifier.UsageError) as caught:
        notifier.check(offline_site.sitemap, state=offline_site.state, config=str(config))
    assert "batch" in str(caught.value), caught.value


def test_a_pyproject_toml_whose_tool_is_no_table_is_no_config(offline_site: Site, tmp_path: Path) -> None:
    """A pyproject.toml with ``tool = 3`` holds no notify-changes table: the run goes on without one
    (never a traceback). Fails with ``_read_toml``'s ``tool = tool if isinstance(tool, dict) else {}``
    removed (``"notify-changes" in 3`` is a TypeError)."""
    offline_site.write(urlset(pages(1)))
    (tmp_path / "pyproject.toml").write_text('tool = 3\n[project]\nname = "site"\n')
    assert notifier.check(offline_site.sitemap, state=offline_site.state, cwd=tmp_path).exit_code == 0


def test_a_postgresql_states_request_timeout_is_the_one_given(tmp_path: Path) -> None:
    """``--request-timeout 7`` bounds each exchange with a PostgreSQL state's server too, not only
    IndexNow's. Fails with ``_state``'s ``bounds["request_timeout"] = ...`` removed (the server gets
    DatabaseURL's own 30 s)."""
    from notifier.database import DatabaseURL
    from notifier.settings.settings import build_settings

    cli = {"sitemap": "s.xml", "state": "postgresql://ci@db/deploys", "site-name": "www", "request-timeout": "7"}
    settings = build_settings("check", cli, environ={}, cwd=tmp_path)
    assert isinstance(settings.state, DatabaseURL) and settings.state.request_timeout == 7.0


def test_state_show_of_every_site_says_which_has_no_state_yet(
    tmp_path: Path, fake: FakeIndexNow, capsys: pytest.CaptureFixture[str]
) -> None:
    """``state show`` with [[sites]], one of them never deployed (its state file gone): its section
    says "no state yet", the other's shows its state, exit 0. Fails with ``run_state_sites``'
    ``state is None`` made ``is not None`` (the state shown is the one that is not there)."""
    config = _monorepo(tmp_path, fake)
    assert _main(capsys, "run", "--config", str(config), "--key", KEY).code == 0
    (tmp_path / "state" / "blog.json").unlink()
    every = _main(capsys, "state", "show", "--config", str(config))
    assert every.code == 0, every.err
    docs, _, blog = every.out.partition("== blog\n")
    assert "== docs\n" in docs and "3 URLs in 1 sitemap file" in docs and "no state yet" not in docs
    assert "blog.json: no state yet; the first `notify-changes run` records one" in blog


def test_state_show_json_gives_when_the_state_was_made_and_updated(site: Site, capsys: pytest.CaptureFixture[str]) -> None:
    """``state show --format json``: "created" and "updated" are the state's times (null only when it has
    none). Fails with ``_summary``'s ``state.created or None`` (or ``updated``'s) made ``and``, or its
    first side dropped (always null)."""
    import json

    from notifier.store import read_state

    site.write(urlset(pages(1)))
    assert site.run().code == 0
    state = read_state(site.state)
    assert state is not None and state.created and state.updated
    shown = _main(capsys, "state", "show", "--state", str(site.state), "--format", "json")
    summary = json.loads(shown.out)
    assert (summary["created"], summary["updated"]) == (state.created, state.updated), summary
