"""What the mutation run at HEAD (scripts/mutants-judged/) found no test stating: each test states
the behaviour a user relies on, and its docstring names the mutant (the edit) it fails with."""

from __future__ import annotations

import pytest

import notifier
from tests.conftest import Site, pages, urlset


def test_an_empty_config_path_is_refused_as_no_path_not_as_a_missing_file(offline_site: Site) -> None:
    """``--config ""`` (a CI variable never set) is "give the path of a TOML file", not a search for a
    file named "". Fails with ``find_config``'s ``or not explicit`` dropped (the folder is looked up
    as the file: "--config : no such file")."""
    offline_site.write(urlset(pages(1)))
    with pytest.raises(notifier.UsageError) as caught:
        notifier.check(offline_site.sitemap, state=offline_site.state, config="")
    assert "give the path of a TOML file" in str(caught.value) and caught.value.exit_code == 2
