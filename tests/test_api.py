"""The Python API: the same run, a Report back, nothing printed, one exception root."""

from __future__ import annotations

from pathlib import Path
from typing import Any

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
    with pytest.raises(notifier.NotifierError, match="batch_size="):
        notifier.run(offline_site.sitemap, batch_size=0)


def test_the_api_reads_the_environment_and_config_like_the_cli(site: Site, tmp_path: Path) -> None:
    assert site.fake is not None
    (tmp_path / "notify-changes.toml").write_text(f'endpoint = "{site.fake.endpoint}"\ninitial = "submit"\n')
    site.write(urlset(pages(2)))
    report = notifier.run(site.sitemap, state=site.state, environ={"INDEXNOW_KEY": KEY}, cwd=tmp_path)
    assert report.exit_code == 0 and len(report.submitted) == 2


def test_the_package_is_typed() -> None:
    assert (Path(notifier.__file__).parent / "py.typed").exists()


def test_check_takes_every_setting_run_takes(offline_site: Site) -> None:
    offline_site.write(urlset(pages(2)))
    report = notifier.check(
        offline_site.sitemap,
        state=offline_site.state,
        batch_size=10,
        endpoints=["https://api.indexnow.org/indexnow"],
        initial="submit",
        retry_timeout=5,
        key=KEY,
        clock_skew=3600,
    )
    assert report.exit_code == 0
    assert "check does not use batch_size, retry_timeout, initial (they apply to run)" in report.notes


def test_one_endpoint_as_text_is_one_endpoint(site: Site) -> None:
    assert site.fake is not None
    site.write(urlset(pages(2)))
    report = notifier.run(site.sitemap, state=site.state, key=KEY, endpoints=site.fake.endpoint, initial="submit")
    assert report.exit_code == 0 and [batch.endpoint for batch in report.batches] == [site.fake.endpoint]


@pytest.mark.parametrize(
    ("options", "blamed"),
    [
        ({"rules": ["url-dev-host=off"]}, "rules="),
        ({"rules": {"no-such-rule": "off"}}, "no-such-rule"),
        ({"environ": ["INDEXNOW_KEY=x"]}, "environ="),
        ({"clock_skew": float("inf")}, "clock_skew="),
        ({"clock_skew": float("nan")}, "clock_skew="),
        ({"batch_size": "many"}, "batch_size="),
        ({"batch_size": 2.5}, "batch_size="),
        ({"endpoints": 5}, "endpoints="),
        ({"endpoints": ["ftp://x"]}, "endpoints="),
        ({"retry_timeout": -1}, "retry_timeout="),
        ({"state": 7}, "state="),
        ({"cwd": 7}, "cwd="),
        ({"config": 7}, "--config"),
        ({"max_removed": [1]}, "max_removed="),
        ({"initial": 3}, "initial="),
        ({"bogus": 1}, "bogus="),
    ],
)
def test_a_bad_setting_raises_a_usage_error_naming_it(offline_site: Site, options: dict[str, Any], blamed: str) -> None:
    offline_site.write(urlset(pages(1)))
    for call in (notifier.run, notifier.check):
        with pytest.raises(notifier.UsageError) as caught:
            given: dict[str, Any] = {"state": offline_site.state, "dry_run": True} | options
            call(offline_site.sitemap, **given)
        assert blamed in str(caught.value) and caught.value.exit_code == 2


def test_a_sitemap_that_is_not_a_path_is_a_usage_error() -> None:
    with pytest.raises(notifier.UsageError):
        notifier.check(123)  # type: ignore[arg-type]


def test_stamp_dates_pages_from_their_history_given_as_a_mapping(tmp_path: Path) -> None:
    """notifier.stamp: the [history] table as a mapping (a plugin's preset); its keys take the
    place of the config file's one by one, so the file's own fields still count."""
    from tests.test_history import Repo

    root = tmp_path / "site"
    repo = Repo(root)
    repo.commit({"docs/a.md": "# A\n", "docs/b.md": "---\nrevised: 2024-06-02\n---\n# B\n"}, "2024-03-01T08:00:00Z")
    (root / "notify-changes.toml").write_text('[history]\nfields = ["revised"]\n')
    public = root / "public"
    public.mkdir()
    sitemap = public / "sitemap.xml"
    sitemap.write_text(urlset({"/a/": "2030-01-01", "/b/": "2030-01-01"}))
    history = {"sources": ["docs/{path}.md"], "repo": str(root)}
    planned = notifier.stamp(sitemap, dry_run=True, history=history, cwd=root)
    assert isinstance(planned, notifier.StampResult) and [change.new for change in planned.changes] == [
        "2024-03-01T08:00:00Z",
        "2024-06-02",
    ]
    assert "2030-01-01" in sitemap.read_text()  # a dry run writes nothing
    assert planned.lines(dry_run=True)[-1].startswith("stamp: would rewrite 2 date(s) in 1 file(s)")
    done = notifier.stamp(sitemap, history=history, cwd=root)
    assert [change.new for change in done.changes] == ["2024-03-01T08:00:00Z", "2024-06-02"] and "2030" not in sitemap.read_text()
    assert done.lines()[-1] == "stamp: rewrote 2 date(s) in 1 file(s); 0 already named their content's date"  # not a dry run's words
    assert notifier.check(sitemap, history=history, cwd=root, state=tmp_path / "s.json").exit_code == 0


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            lambda path: notifier.stamp(path, history="mkdocs"),  # type: ignore[arg-type]
            "history='mkdocs': give a mapping like the config's [history] table",
        ),
        (lambda path: notifier.stamp(path, history={"preset": "nope"}), "history=: [history] preset = 'nope' is not one of"),
        (lambda path: notifier.check(path, history={"colour": "red"}), "history=: [history] unknown setting 'colour'"),
        (lambda path: notifier.stamp(path), "stamp takes each page's date from its source file: configure [history] first"),
        (lambda path: notifier.stamp(path, dry_run="yes"), "dry_run='yes': give True or False"),  # type: ignore[arg-type]
    ],
)
def test_a_bad_history_or_stamp_setting_is_a_usage_error(offline_site: Site, call: Any, message: str) -> None:
    offline_site.write(urlset(pages(1)))
    with pytest.raises(notifier.UsageError) as caught:
        call(offline_site.sitemap)
    assert message in str(caught.value), str(caught.value)


def test_a_run_leaves_the_callers_garbage_collector_as_it_found_it(offline_site: Site) -> None:
    """A run switches the cyclic collector off while it works, and back on after, even when it fails."""
    import gc

    offline_site.write(urlset(pages(2)))
    assert gc.isenabled()
    notifier.check(str(offline_site.sitemap), state=str(offline_site.state))
    assert gc.isenabled()
    with pytest.raises(notifier.NotifierError):
        notifier.check(str(offline_site.root / "missing.xml"), state=str(offline_site.state))
    assert gc.isenabled()
    gc.disable()
    try:
        notifier.check(str(offline_site.sitemap), state=str(offline_site.state))
        assert not gc.isenabled()  # a caller that had it off keeps it off
    finally:
        gc.enable()


def test_a_run_hands_the_collector_back_with_its_objects_out_of_the_youngest_generation(offline_site: Site) -> None:
    """Made while the collector was off, a run's objects would all be walked by the first
    collection after it (a quarter of a second at a million URLs): they are handed back in the
    oldest generation. A caller's own frozen objects stay frozen."""
    import gc

    from notifier.pipeline.loop import without_cycle_collection

    gc.collect()
    with without_cycle_collection():
        made = [[n] for n in range(3000)]  # containers the collector tracks, as a run's records are
    young = len(gc.get_objects(generation=0)) + len(gc.get_objects(generation=1))
    assert young < 200, young  # not the 3,000 lists, which the next collections would walk
    assert gc.get_freeze_count() == 0  # and none left frozen: the caller froze nothing
    del made
    offline_site.write(urlset(pages(30)))
    kept = [[n] for n in range(100)]
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        notifier.check(str(offline_site.sitemap), state=str(offline_site.state))
        assert gc.get_freeze_count() > 0.9 * frozen  # left frozen (but for the few frozen objects the run let go)
        assert gc.isenabled()
    finally:
        gc.unfreeze()
    del kept
