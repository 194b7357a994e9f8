"""What notifier/settings/config_sites.py does that the mutation run found no test stating (#44):
``sites`` that is no array of tables, a site's own ``[sites.announce]``, a site name that is no
short name, a site's table that is no table over the top level's, and the command line's names
in the messages of ``state``'s commands. Each test names the edit it catches."""

from __future__ import annotations

from pathlib import Path

import pytest

from notifier.errors import UsageError
from notifier.settings.config_sites import build_runs, site_layers, site_states

TWO_SITES = (
    '[[sites]]\nname = "docs"\nsitemap = "docs/sitemap.xml"\nstate = "state/docs.json"\n\n'
    '[[sites]]\nname = "blog"\nsitemap = "blog/sitemap.xml"\nstate = "state/blog.json"\n'
)


def _config(tmp_path: Path, text: str) -> dict[str, str]:
    """A config file holding ``text``, as the command line names it."""
    path = tmp_path / "notify-changes.toml"
    path.write_text(text)
    return {"config": str(path)}


# -- _site_tables ------------------------------------------------------------------------------
@pytest.mark.parametrize("value", ["5", "true"])
def test_sites_that_is_a_number_or_a_flag_is_refused_in_a_line(tmp_path: Path, value: str) -> None:
    """fails if ``not isinstance(sites, list) or ...`` loses its first side in
    settings/config_sites.py::_site_tables (iterating a number is a TypeError's traceback)"""
    cli = _config(tmp_path, f"sites = {value}\n")
    with pytest.raises(UsageError, match=r"notify-changes\.toml: sites must be an array of tables, each \[\[sites\]\] with name"):
        build_runs("run", cli, {}, tmp_path)


def test_an_empty_sites_array_is_refused_not_a_run_of_no_site(tmp_path: Path) -> None:
    """fails if ``... or not sites or ...`` loses its second side in settings/config_sites.py::_site_tables
    (``sites = []`` would run no site at all, and say nothing)"""
    cli = _config(tmp_path, "sites = []\n")
    with pytest.raises(UsageError, match=r"sites must be an array of tables"):
        build_runs("run", cli, {}, tmp_path)
    with pytest.raises(UsageError, match=r"sites must be an array of tables"):
        site_states(cli, {}, tmp_path)


def test_a_sites_own_announce_table_is_its_policy(tmp_path: Path) -> None:
    """fails if ``key != "announce"`` names another key, or ``table.update(announce_table(...))`` is
    left out, in settings/config_sites.py::_site_tables"""
    cli = _config(tmp_path, TWO_SITES + '[sites.announce]\nper-run = 5\nexclude = ["/drafts/**"]\n')
    docs, blog = build_runs("run", cli, {}, tmp_path)
    assert docs.announce.per_run is None and docs.announce.exclude == ()
    assert blog.announce.per_run == 5 and blog.announce.exclude == ("/drafts/**",)


@pytest.mark.parametrize("name", ["my blog", "-blog", "blog/en", "b" * 65])
def test_a_site_name_is_a_short_name(tmp_path: Path, name: str) -> None:
    """fails if ``not isinstance(name, str) or not SITE_NAME.fullmatch(name)`` loses its second side
    in settings/config_sites.py::_site_tables"""
    cli = _config(tmp_path, f'[[sites]]\nname = "{name}"\nsitemap = "s.xml"\n')
    with pytest.raises(UsageError, match=r"\[\[sites\]\] number 1: name = '.*': give each site a short name"):
        build_runs("run", cli, {}, tmp_path)


# -- _site_layers ------------------------------------------------------------------------------
def test_a_sites_rules_that_is_no_table_is_refused_in_a_line(tmp_path: Path) -> None:
    """fails if ``key in MERGED_TABLES and isinstance(value, dict) and ...`` loses its second side in
    settings/config_sites.py::_site_layers (a text merged into the top level's [rules] is a
    TypeError's traceback)"""
    cli = _config(tmp_path, '[rules]\nlastmod-missing = "off"\n\n' + TWO_SITES.replace('name = "blog"', 'name = "blog"\nrules = "off"'))
    with pytest.raises(UsageError, match=r"rules"):
        build_runs("run", cli, {}, tmp_path)


def test_only_the_named_tables_merge_key_by_key(tmp_path: Path) -> None:
    """fails if ``key in MERGED_TABLES and ...`` loses its first side in
    settings/config_sites.py::_site_layers: a site's value of another setting takes the top
    level's place whole, even a table given by mistake (its message shows the site's value)"""
    sites = TWO_SITES.replace('name = "docs"', 'name = "docs"\nlock-timeout = 5')
    text = "lock-timeout = { top = 1 }\n\n" + sites.replace('name = "blog"', 'name = "blog"\nlock-timeout = { own = 2 }')
    cli = _config(tmp_path, text)
    with pytest.raises(UsageError, match=r"\[\[sites\]\] blog: lock-timeout: \{'own': 2\} is not a number of seconds$"):
        build_runs("run", cli, {}, tmp_path)


# -- site_layers: the command line's names -----------------------------------------------------
def test_state_commands_name_site_as_the_command_line_writes_it(tmp_path: Path) -> None:
    """fails if ``read_layers(..., api=False)`` becomes ``api=True`` in
    settings/config_sites.py::site_layers (the message would say ``site=``)"""
    cli = {**_config(tmp_path, TWO_SITES), "site": "blgo"}
    with pytest.raises(UsageError, match=r"^--site blgo: no such site in .*; did you mean blog\? the sites are docs, blog$"):
        site_layers(cli, {}, tmp_path)


def test_state_commands_name_a_sites_options_as_the_command_line_writes_them(tmp_path: Path) -> None:
    """fails if ``_site_layers(..., api=False)`` becomes ``api=True`` in
    settings/config_sites.py::site_layers (the message would say ``lock_timeout=``)"""
    cli = {**_config(tmp_path, TWO_SITES), "lock-timeout": "soon"}
    with pytest.raises(UsageError, match=r"^--lock-timeout: 'soon' is not a number of seconds$"):
        site_states(cli, {}, tmp_path)
