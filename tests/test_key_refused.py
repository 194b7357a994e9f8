"""Burned keys (issue #41, item 2): an endpoint that answers 403 for a host on two consecutive
runs while another endpoint took that host's batches is a ``key-refused`` finding (warn) that
names the endpoint and the fix; the state keeps the streak per host and endpoint, in every
store, and a state written before reads unchanged. A 403 on the first run of a new key says
that engines may remember a failed key check."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterator
from typing import Any

import pytest

from notifier.cli import main
from notifier.database import DatabaseURL
from notifier.pipeline.loop import Environment, execute
from notifier.pipeline.refusals import key_digest
from notifier.report import Report
from notifier.settings.settings import build_settings
from notifier.store import read_state
from tests.conftest import HOST, KEY, Site, pages, urlset
from tests.fakeindexnow import FakeIndexNow, status
from tests.faketime import FakeTime

T0 = dt.datetime(2030, 6, 1, 12, 0, tzinfo=dt.UTC)
OTHER = "fedcba9876543210fedc"


@pytest.fixture
def refusing() -> Iterator[FakeIndexNow]:
    """A second endpoint that cannot find the host's key file (its own view of the site is
    empty): it answers every batch 403, while the first endpoint takes them."""
    server = FakeIndexNow()
    yield server
    server.close()


def _deploy(site: Site, endpoints: list[str], hour: int, count: int, options: dict[str, Any] | None = None) -> Report:
    site.write(urlset(pages(count)))
    cli: dict[str, Any] = {
        "sitemap": str(site.sitemap),
        "endpoint": endpoints,
        "key": KEY,
        "retry-timeout": "30",
        "initial": "submit",
        **(options or {}),
    }
    cli["state"] = site.state.dsn if isinstance(site.state, DatabaseURL) else str(site.state)
    if isinstance(site.state, DatabaseURL):
        cli["site-name"] = site.state.site
    clock = FakeTime(T0 + dt.timedelta(hours=hour))
    return execute(build_settings("run", cli, cwd=site.root), Environment(now=clock.now, sleep=clock.sleep, clock=clock.clock))


def _refused(report: Report) -> list[Any]:
    return [violation for violation in report.violations if violation.rule == "key-refused"]


def test_two_runs_of_403_while_another_endpoint_takes_the_batches_is_a_finding(site_in_every_store: Site, refusing: FakeIndexNow) -> None:
    site = site_in_every_store
    assert site.fake is not None
    endpoints = [site.fake.endpoint, refusing.endpoint]
    first = _deploy(site, endpoints, 0, 2)
    assert first.exit_code == 3 and len(site.fake.delivered()) == 2 and _refused(first) == []
    refused_answer = next(batch for batch in first.batches if batch.endpoint == refusing.endpoint)
    assert refused_answer.http_status == 403 and "first run with this key" in refused_answer.message  # engines may cache it
    recorded = read_state(site.state)
    assert recorded is not None and recorded.key_checks == {
        HOST: {"key": key_digest(KEY), "refused": {refusing.endpoint: {"runs": 1, "elsewhere": True}}}
    }
    second = _deploy(site, endpoints, 1, 3)  # the next deploy: one page more
    [finding] = _refused(second)
    assert finding.level == "warn" and finding.url == refusing.endpoint
    assert f"answered 403 for {HOST} on 2 runs in a row" in finding.message and "notify-changes key rotate" in finding.message
    assert "first run with this key" not in next(batch.message for batch in second.batches if batch.endpoint == refusing.endpoint)
    assert second.exit_code == 3  # as any 403: its URLs stay pending there
    recorded = read_state(site.state)
    assert recorded is not None and recorded.key_checks[HOST].get("refused") == {refusing.endpoint: {"runs": 2, "elsewhere": True}}


def test_the_streak_holds_across_a_run_that_sends_only_the_refused_endpoint(site: Site, refusing: FakeIndexNow) -> None:
    assert site.fake is not None
    endpoints = [site.fake.endpoint, refusing.endpoint]
    _deploy(site, endpoints, 0, 2)
    again = _deploy(site, endpoints, 1, 2)  # nothing new: only what the refusing endpoint still waits for
    assert len(site.fake.posts) == 1 and len(refusing.posts) == 2
    assert [finding.url for finding in _refused(again)] == [refusing.endpoint]
    text = json.dumps(again.to_json())
    assert '"rule": "key-refused"' in text and KEY not in text


def test_with_one_endpoint_a_403_twice_is_no_finding(site: Site) -> None:
    """Nobody else took the batches: the key file may be missing, not the key refused."""
    assert site.fake is not None
    site.fake.plan = [status(403, '{"code":"UserForbiddedToAccessSite"}')] * 2
    _deploy(site, [site.fake.endpoint], 0, 1)
    second = _deploy(site, [site.fake.endpoint], 1, 2)
    assert second.exit_code == 3 and [batch.http_status for batch in second.batches] == [403] and _refused(second) == []
    recorded = read_state(site.state)
    assert recorded is not None and recorded.key_checks[HOST].get("refused") == {site.fake.endpoint: {"runs": 2, "elsewhere": False}}


def test_a_success_there_ends_the_streak(site: Site, refusing: FakeIndexNow) -> None:
    assert site.fake is not None
    endpoints = [site.fake.endpoint, refusing.endpoint]
    _deploy(site, endpoints, 0, 1)
    refusing.serve_key(HOST, KEY)  # it found the key file after all
    assert _deploy(site, endpoints, 1, 2).exit_code == 0
    recorded = read_state(site.state)
    assert recorded is not None and recorded.key_checks == {HOST: {"key": key_digest(KEY)}}
    refusing.sites.clear()
    assert _refused(_deploy(site, endpoints, 2, 3)) == []  # one 403 again: a streak of one


def test_a_new_key_starts_the_streak_over_and_says_engines_may_cache_a_failed_check(site: Site, refusing: FakeIndexNow) -> None:
    assert site.fake is not None
    endpoints = [site.fake.endpoint, refusing.endpoint]
    _deploy(site, endpoints, 0, 1)
    site.fake.serve_key(HOST, OTHER)
    rotated = _deploy(site, endpoints, 1, 2, {"key": OTHER})
    assert _refused(rotated) == []
    assert "first run with this key" in next(batch.message for batch in rotated.batches if batch.endpoint == refusing.endpoint)
    recorded = read_state(site.state)
    assert recorded is not None and recorded.key_checks[HOST] == {
        "key": key_digest(OTHER),
        "refused": {refusing.endpoint: {"runs": 1, "elsewhere": True}},
    }


def test_the_rule_can_be_off_and_cannot_be_an_error(site: Site, refusing: FakeIndexNow) -> None:
    assert site.fake is not None
    endpoints = [site.fake.endpoint, refusing.endpoint]
    _deploy(site, endpoints, 0, 1)
    assert _refused(_deploy(site, endpoints, 1, 2, {"rule": ["key-refused=off"]})) == []
    result = site.run("--rule", "key-refused=error")
    assert result.code == 2 and "rule key-refused is found after sending" in result.err


def test_the_state_keeps_a_digest_of_the_key_never_the_key(site: Site, refusing: FakeIndexNow) -> None:
    assert site.fake is not None
    _deploy(site, [site.fake.endpoint, refusing.endpoint], 0, 1)
    written = site.state.read_text()
    assert KEY not in written and f'"key_checks":{{"{HOST}":{{"key":"{key_digest(KEY)}"' in written
    assert len(key_digest(KEY)) == 8 and key_digest(KEY) != key_digest(OTHER)


def test_a_state_written_before_reads_unchanged(site: Site) -> None:
    """A state without key_checks (every state before this release) reads as before, and a
    run that sends nothing leaves its bytes alone."""
    assert site.fake is not None
    site.write(urlset(pages(2)))
    assert site.run().code == 0  # a baseline: nothing sent, no key_checks
    before = site.state.read_bytes()
    assert b"key_checks" not in before
    recorded = read_state(site.state)
    assert recorded is not None and recorded.key_checks == {}
    assert site.run().code == 0 and site.state.read_bytes() == before


def test_a_damaged_key_checks_is_one_line_and_exit_2(site: Site) -> None:
    site.write(urlset(pages(1)))
    assert site.run().code == 0
    document = json.loads(site.state.read_text())
    document["key_checks"] = {HOST: {"key": KEY}}  # a key where a digest belongs
    site.state.write_text(json.dumps(document))
    result = site.run()
    assert result.code == 2 and '"key_checks" is not an object of host' in result.err and "Traceback" not in result.err


def _show(site: Site, capsys: pytest.CaptureFixture[str], *options: str) -> str:
    capsys.readouterr()
    assert main(["state", "show", "--state", str(site.state), *options]) == 0
    return capsys.readouterr().out


def test_state_show_names_each_403_streak(site: Site, refusing: FakeIndexNow, capsys: pytest.CaptureFixture[str]) -> None:
    """Between the first 403 and the finding, the streak is visible: ``state show`` says which
    endpoint answered 403 for which host, on how many runs, and JSON has it as data; an endpoint
    that takes the batches again leaves the list. Faulty edit: the summary without ``refused``."""
    assert site.fake is not None
    _deploy(site, [site.fake.endpoint, refusing.endpoint], 0, 2)
    text = _show(site, capsys)
    heading = "403 answers, runs in a row (key-refused after 2 while another endpoint takes the host; `key rotate` ends them):\n"
    assert f"{heading}  {refusing.endpoint} for {HOST}: 1 run, another endpoint took the same batches\n" in text  # under its heading
    shown = json.loads(_show(site, capsys, "--format", "json"))["refused"]
    assert shown == [{"host": HOST, "endpoint": refusing.endpoint, "runs": 1, "elsewhere": True}]
    refusing.serve_key(HOST, KEY)  # the endpoint finds the key file now, and takes the batches
    _deploy(site, [site.fake.endpoint, refusing.endpoint], 1, 2)
    assert json.loads(_show(site, capsys, "--format", "json"))["refused"] == []
    assert "403 answers" not in _show(site, capsys)
