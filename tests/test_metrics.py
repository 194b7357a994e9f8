"""``--metrics FILE`` (issue #42, item 3): real runs against the fake endpoint on an injected
clock, then the file read back with prometheus_client's own parser."""

from __future__ import annotations

import datetime as dt
import shutil
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from notifier.cli import main
from notifier.errors import ExitCode
from notifier.metrics import metrics_text
from notifier.settings.settings import Settings
from tests.conftest import BASE, KEY, Site, pages, urlset
from tests.fakeindexnow import FakeIndexNow, status
from tests.test_sites import _grow, _monorepo
from tests.test_stats import DAY, T0, deploy, four_days


def samples(path: Path) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample of the file: (name, sorted labels) -> value, as Prometheus reads it."""
    found: dict[tuple[str, tuple[tuple[str, str], ...]], float] = {}
    for family in text_string_to_metric_families(path.read_text(encoding="utf-8")):
        for sample in family.samples:
            key = (sample.name, tuple(sorted(sample.labels.items())))
            assert key not in found, key
            found[key] = sample.value
    return found


def test_the_counters_are_the_states_and_the_last_run_is_this_one(site: Site) -> None:
    assert site.fake is not None
    four_days(site)
    metrics = site.root / "metrics" / "notify-changes.prom"
    metrics.parent.mkdir()
    later = T0 + 5 * DAY
    assert deploy(site, later, 6, metrics=str(metrics)).exit_code == 0  # one page more: one batch received
    found = samples(metrics)
    where = (("endpoint", site.fake.endpoint), ("site", "default"))
    assert found[("notify_changes_urls_received_total", where)] == 6
    assert found[("notify_changes_urls_refused_total", where)] == 1
    assert found[("notify_changes_urls_failed_total", where)] == 1
    assert found[("notify_changes_pending_urls", (("site", "default"),))] == 0
    assert found[("notify_changes_last_run_timestamp_seconds", (("site", "default"),))] == later.timestamp()
    assert found[("notify_changes_last_run_exit_code", (("site", "default"),))] == 0
    assert [name for name, _ in found if name == "notify_changes_findings"] == []
    assert [each.name for each in metrics.parent.iterdir()] == ["notify-changes.prom"]  # no temporary file left


def test_the_counters_survive_a_runner_that_starts_empty(site: Site, capsys: pytest.CaptureFixture[str]) -> None:
    """Only the state file is carried to the next runner (a CI cache): no ledger, no old
    metrics file. The counters go on from where the state says."""
    assert site.fake is not None
    four_days(site)
    fresh = site.root / "runner-2"
    fresh.mkdir()
    shutil.copy(site.state, fresh / "notify-changes.json")
    site.state = fresh / "notify-changes.json"
    assert not Path(f"{site.state}.ledger").exists()
    metrics = fresh / "metrics.prom"
    site.fake.plan = [status(500)] * 10
    result = site.run("--metrics", str(metrics), "--retry-timeout", "0")  # nothing new: nothing is sent
    assert result.code == 0, result.err
    found = samples(metrics)
    where = (("endpoint", site.fake.endpoint), ("site", "default"))
    assert (found[("notify_changes_urls_received_total", where)], found[("notify_changes_urls_failed_total", where)]) == (5, 1)
    site.write(urlset(pages(7)))
    assert site.run("--metrics", str(metrics), "--retry-timeout", "0").code == 3  # two new pages, a 500
    found = samples(metrics)
    assert found[("notify_changes_urls_failed_total", where)] == 3 and found[("notify_changes_urls_received_total", where)] == 5
    assert found[("notify_changes_pending_urls", (("site", "default"),))] == 2
    assert found[("notify_changes_last_run_exit_code", (("site", "default"),))] == 3


def test_a_check_writes_its_findings_and_exit_code(site: Site) -> None:
    assert deploy(site, T0, 3).exit_code == 0
    site.write(urlset({**pages(3), "/p/1/": "2024-01-01T00:00:00Z"}))  # a lastmod gone backwards
    metrics = site.root / "check.prom"
    result = site.check("--metrics", str(metrics))
    assert result.code == 1
    found = samples(metrics)
    assert found[("notify_changes_findings", (("level", "error"), ("rule", "lastmod-regressed"), ("site", "default")))] == 1
    assert found[("notify_changes_last_run_exit_code", (("site", "default"),))] == 1


def test_the_counters_come_from_the_state_the_run_holds(site: Site, monkeypatch: pytest.MonkeyPatch) -> None:
    """--metrics reads no state of its own after a check or a run (a JSON state is scanned
    whole to be read: #45 item 5); a run that stopped on an error holds none, and its counters
    are read from the store."""
    import notifier.metrics

    assert deploy(site, T0, 3).exit_code == 0
    reads: list[object] = []
    state_of = notifier.metrics._state

    def read(settings: Settings) -> object:
        reads.append(settings.state)
        return state_of(settings)

    monkeypatch.setattr(notifier.metrics, "_state", read)
    metrics = site.root / "check.prom"
    assert site.check("--metrics", str(metrics)).code == 0
    assert site.run("--metrics", str(metrics)).code == 0
    assert reads == [] and samples(metrics)[("notify_changes_pending_urls", (("site", "default"),))] == 0
    site.write("<urlset")
    assert site.run("--metrics", str(metrics)).code == 2
    assert reads == [site.state] and samples(metrics)[("notify_changes_last_run_exit_code", (("site", "default"),))] == 2


def test_a_run_that_stops_on_an_error_says_its_exit_code(site: Site) -> None:
    site.write("<urlset")
    metrics = site.root / "broken.prom"
    result = site.run("--metrics", str(metrics))
    assert result.code == 2 and "Traceback" not in result.err
    found = samples(metrics)
    assert found[("notify_changes_last_run_exit_code", (("site", "default"),))] == 2
    assert found[("notify_changes_pending_urls", (("site", "default"),))] == 0


def test_a_metrics_file_that_cannot_be_written_is_one_line_and_exit_74_the_run_stands(site: Site) -> None:
    site.write(urlset(pages(2)))
    result = site.run("--metrics", str(site.root / "no-such-folder" / "m.prom"), "--initial", "submit")
    assert result.code == ExitCode.OUTPUT_FAILED, result.out + result.err
    assert "the metrics file could not be written" in result.out + result.err and "Traceback" not in result.err
    assert site.fake is not None and sorted(site.fake.delivered()) == [f"{BASE}/p/0/", f"{BASE}/p/1/"]
    assert site.run().code == 0 and site.fake.delivered() == [f"{BASE}/p/0/", f"{BASE}/p/1/"]  # recorded: not sent again


def test_every_site_of_a_config_in_one_file(tmp_path: Path, fake: FakeIndexNow, capsys: pytest.CaptureFixture[str]) -> None:
    config = _monorepo(tmp_path, fake)
    metrics = tmp_path / "sites.prom"
    assert main(["run", "--config", str(config), "--key", KEY, "--initial", "submit", "--metrics", str(metrics)]) == 0
    _grow(tmp_path, lie=False)
    assert main(["run", "--config", str(config), "--key", KEY, "--metrics", str(metrics)]) == 0
    found = samples(metrics)
    received = {dict(labels)["site"]: value for (name, labels), value in found.items() if name == "notify_changes_urls_received_total"}
    assert received == {"docs": 4, "blog": 4}
    assert {dict(labels)["site"] for (name, labels) in found if name == "notify_changes_last_run_exit_code"} == {"docs", "blog"}


def test_label_values_are_escaped_as_the_format_says() -> None:
    settings = Settings(site='a "quoted"\\site\nname', state=Path("none.json"))
    text = metrics_text([(settings, None, 0)], dt.datetime(2030, 1, 1, tzinfo=dt.UTC))
    families = {family.name: family for family in text_string_to_metric_families(text)}
    assert families["notify_changes_last_run_exit_code"].samples[0].labels == {"site": 'a "quoted"\\site\nname'}
    assert families["notify_changes_urls_received"].type == "counter"
