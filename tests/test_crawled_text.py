"""``notify-changes crawled``'s own decisions beyond the join: the 14-day window by default,
the text's list of pages never fetched (20, then a count), one site of a config, and every
store. Each test names the mutants of scripts/mutate.py it kills (#44)."""

from __future__ import annotations

import argparse
import io
import json
from pathlib import Path
from typing import Any

import pytest

from notifier.commands.crawled import add_arguments, run_crawled
from notifier.database import DatabaseURL
from notifier.errors import UsageError
from tests.conftest import Site
from tests.test_crawled import BING, combined
from tests.test_stats import DAY, T0, deploy


def crawled(site: Site, *args: str, days: int = 6) -> str:
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    state = [site.state.dsn, "--site-name", str(site.state.site)] if isinstance(site.state, DatabaseURL) else [str(site.state)]
    out = io.StringIO()
    run_crawled(parser.parse_args([*args, "--state", *state]), out, now=lambda: T0 + days * DAY)
    return out.getvalue()


def log(site: Site, *paths: str) -> str:
    path = site.root / "access.log"
    path.write_text("".join(combined("157.55.39.1", T0 + DAY, each, BING) for each in paths))
    return str(path)


def test_the_text_lists_twenty_pages_never_fetched_then_counts_the_rest(site: Site) -> None:
    """Kills the "never fetched" lines left out, ``[:20]`` unbounded or moved, and ``> 20`` made ``>= 20``."""
    assert deploy(site, T0, 25).exit_code == 0
    text = crawled(site, log(site, "/p/0/", "/p/1/", "/p/2/", "/p/3/"), "--since", "all")
    lines = text.splitlines()
    at = lines.index("never fetched by any of them (21):")
    listed = lines[at + 1 : at + 21]
    assert len(listed) == 20 and all(line.startswith("  http://www.shop-site.org/p/") for line in listed)
    assert lines[at + 21] == "  ... and 1 more (--format json lists them all)"
    assert len(json.loads(crawled(site, log(site, "/p/0/"), "--since", "all", "--format", "json"))["never"]) == 24
    exactly = crawled(site, log(site, *(f"/p/{n}/" for n in range(5))), "--since", "all")
    assert "never fetched by any of them (20):" in exactly and "more (--format json" not in exactly


def test_the_window_is_the_last_fourteen_days_unless_since_says(site: Site) -> None:
    """Kills ``namespace.since or "14d"`` losing its default."""
    assert deploy(site, T0, 3).exit_code == 0
    assert crawled(site, log(site, "/p/0/"), days=13).startswith("3 URLs received from ")
    assert crawled(site, log(site, "/p/0/"), days=15).startswith("0 URLs received from ")
    assert crawled(site, log(site, "/p/0/"), "--since", "all", days=15).startswith("3 URLs received from ")


def test_a_config_of_two_sites_asks_which(site: Site, tmp_path: Path) -> None:
    """Kills ``len(sites) > 1`` made ``> 2``: two sites' ledgers are never joined as one."""
    config = tmp_path / "sites.toml"
    config.write_text(
        f'[[sites]]\nname = "docs"\nsitemap = "d.xml"\nstate = "{tmp_path / "d.json"}"\n'
        f'[[sites]]\nname = "blog"\nsitemap = "b.xml"\nstate = "{tmp_path / "b.json"}"\n'
    )
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    with pytest.raises(UsageError, match=r"the config lists 2 sites \(docs, blog\): name one with --site NAME"):
        run_crawled(parser.parse_args([log(site, "/p/0/"), "--config", str(config)]), io.StringIO())


def test_crawled_reads_every_store(site_in_every_store: Site) -> None:
    """Kills ``isinstance(location, Path) and`` dropped (a database has no file to look for)."""
    site = site_in_every_store
    assert deploy(site, T0, 3).exit_code == 0
    found: dict[str, Any] = json.loads(crawled(site, log(site, "/p/1/"), "--since", "all", "--format", "json"))
    assert (found["engines"]["bingbot"]["announced"], found["engines"]["bingbot"]["crawled"]) == (3, 1)
