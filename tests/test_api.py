"""The Python API: the same run, a Report back, nothing printed, one exception root."""

from __future__ import annotations

from pathlib import Path

import pytest

import notifier
from tests.conftest import BASE, KEY, Site, pages, urlset


def test_check_and_run_return_reports_and_print_nothing(site: Site, capsys: pytest.CaptureFixture[str]) -> None:
    assert site.fake is not None
    site.write(urlset(pages(3)))
    first = notifier.run(site.sitemap, state=site.state, key=KEY, endpoints=[site.fake.endpoint])
    assert first.exit_code == 0 and len(first.added) == 3 and first.submitted == []
    site.write(urlset(pages(4)))
    checked = notifier.check(site.sitemap, state=site.state)
    assert checked.exit_code == 0 and [change.loc for change in checked.added] == [f"{BASE}/p/3/"]
    report = notifier.run(site.sitemap, state=site.state, key=KEY, endpoints=[site.fake.endpoint], batch_size=1)
    assert report.exit_code == notifier.ExitCode.OK
    assert report.submitted == [f"{BASE}/p/3/"] and report.batches[0].status == "delivered"
    assert report.summary() == "1 added, 0 changed, 0 removed, 1 submitted, 0 pending"
    assert capsys.readouterr() == ("", "")


def test_a_lying_sitemap_is_exit_code_1_with_violations(offline_site: Site) -> None:
    offline_site.write(urlset({"http://localhost:4000/": "2024-01-01"}))
    report = notifier.check(offline_site.sitemap, state=offline_site.state)
    assert report.exit_code == 1
    assert [(v.rule, v.level) for v in report.violations] == [("url-dev-host", "error")]
    assert isinstance(report.violations[0], notifier.Violation)
    assert notifier.check(offline_site.sitemap, state=offline_site.state, rules={"url-dev-host": "off"}).exit_code == 0


def test_bad_input_raises_the_one_exception_root(offline_site: Site, tmp_path: Path) -> None:
    with pytest.raises(notifier.NotifierError) as caught:
        notifier.check(tmp_path / "missing.xml")
    assert caught.value.exit_code == 2
    offline_site.write(urlset(pages(1)))
    with pytest.raises(notifier.NotifierError, match="--batch-size"):
        notifier.run(offline_site.sitemap, batch_size=0)


def test_the_api_reads_the_environment_and_config_like_the_cli(site: Site, tmp_path: Path) -> None:
    assert site.fake is not None
    (tmp_path / "notify-changes.toml").write_text(f'endpoint = "{site.fake.endpoint}"\ninitial = "submit"\n')
    site.write(urlset(pages(2)))
    report = notifier.run(site.sitemap, state=site.state, environ={"INDEXNOW_KEY": KEY}, cwd=tmp_path)
    assert report.exit_code == 0 and len(report.submitted) == 2


def test_the_package_is_typed() -> None:
    assert (Path(notifier.__file__).parent / "py.typed").exists()
