"""--jobs N / NOTIFY_CHANGES_JOBS (#18, item 4): how many worker processes a run starts, 1 meaning
none; the report is the same with any number."""

from __future__ import annotations

import concurrent.futures
import json
import os
import threading

import pytest

from notifier import workers
from tests.conftest import Site, index, pages, urlset
from tests.fakeindexnow import wait_until


def _big_site(site: Site) -> None:
    """An index of three parts and 1,500 built pages: enough for the parts and the pages to go to workers."""
    listed = pages(1500, lastmod="2024-05-{day:02d}T10:{minute:02d}:00Z")
    locs = list(listed)
    chunks = [dict((loc, listed[loc]) for loc in locs[start : start + 500]) for start in range(0, 1500, 500)]
    site.write(index({f"/part-{n}.xml": None for n in range(3)}))
    for number, chunk in enumerate(chunks):
        site.write(urlset(chunk), f"part-{number}.xml")
    site.build_pages(["/", *locs[:1400]])  # 100 pages missing: page-missing findings too


def _report(site: Site, *args: str) -> dict[str, object]:
    result = site.check("--site-dir", str(site.public), "--format", "json", *args)
    report = json.loads(result.out)
    assert isinstance(report, dict)
    return report


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs two cores to start workers")
def test_the_report_is_the_same_with_one_worker_or_several(offline_site: Site, monkeypatch: pytest.MonkeyPatch) -> None:
    _big_site(offline_site)
    # a thread another test left behind (a pool's manager thread ending) would make this process
    # "threaded", where a run starts no workers at all: wait for it to end
    assert wait_until(lambda: threading.active_count() == 1, timeout=20), threading.enumerate()
    started: list[int] = []
    real = workers.fork_pool

    def counted(count: int) -> concurrent.futures.ProcessPoolExecutor:
        started.append(count)
        return real(count)

    monkeypatch.setattr(workers, "fork_pool", counted)
    several = _report(offline_site, "--jobs", "2")
    assert started and all(count == 2 for count in started)  # workers were used
    started.clear()
    one = _report(offline_site, "--jobs", "1")
    assert started == []  # none at all
    assert one == several
    assert any(violation["rule"] == "page-missing" for violation in one["violations"])  # type: ignore[attr-defined]


def test_jobs_comes_from_the_environment_and_is_checked(offline_site: Site, monkeypatch: pytest.MonkeyPatch) -> None:
    offline_site.write(urlset({"/": "2024-05-01"}))
    monkeypatch.setenv("NOTIFY_CHANGES_JOBS", "1")
    assert offline_site.check().code == 0
    monkeypatch.setenv("NOTIFY_CHANGES_JOBS", "0")
    result = offline_site.check()
    assert result.code == 2 and "NOTIFY_CHANGES_JOBS: '0' is out of range; use 1..64" in result.err, result.err
    result = offline_site.check("--jobs", "many")
    assert result.code == 2 and "--jobs: 'many' is not a whole number" in result.err
