"""--jobs N / NOTIFY_CHANGES_JOBS (#18, item 4): how many worker processes a run starts, 1 meaning
none; the report is the same with any number."""

from __future__ import annotations

import json
import os
import subprocess
from typing import Any

import pytest

from tests.conftest import BASE, Site, index, pages, program_python, urlset


def _big_site(site: Site) -> None:
    """An index of three parts and 1,500 built pages: enough for the parts and the pages to go to workers."""
    listed = pages(1500, lastmod="2024-05-{day:02d}T10:{minute:02d}:00Z")
    locs = list(listed)
    chunks = [dict((loc, listed[loc]) for loc in locs[start : start + 500]) for start in range(0, 1500, 500)]
    site.write(index({f"/part-{n}.xml": None for n in range(3)}))
    for number, chunk in enumerate(chunks):
        site.write(urlset(chunk), f"part-{number}.xml")
    site.build_pages(["/", *locs[:1400]])  # 100 pages missing: page-missing findings too


_COUNTED = """
import json, sys
from notifier import workers
from notifier.cli import main
started = []
real = workers.fork_pool
def counted(count):
    started.append(count)
    return real(count)
workers.fork_pool = counted
code = main(sys.argv[1:])
print(json.dumps({"code": int(code), "started": started}), file=sys.stderr)
"""


def _report(site: Site, jobs: str, code: int = 0) -> tuple[dict[str, object], list[int]]:
    """A check in a fresh process (one thread, as a run from the command line has), and the pools it forked."""
    argv = ["check", str(site.sitemap), "--state", str(site.state), "--site-dir", str(site.public), "--format", "json", "--jobs", jobs]
    done = subprocess.run([program_python(), "-c", _COUNTED, *argv], capture_output=True, text=True, check=False, cwd=site.root)
    counted = json.loads(done.stderr.strip().splitlines()[-1])
    assert counted["code"] == code, done.stderr
    return json.loads(done.stdout), counted["started"]


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs two cores to start workers")
def test_the_report_is_the_same_with_one_worker_or_several(offline_site: Site) -> None:
    _big_site(offline_site)
    several, started = _report(offline_site, "2")
    assert started and all(count == 2 for count in started)  # workers were used
    one, started = _report(offline_site, "1")
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


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs two cores to start workers")
def test_a_run_forks_one_pool_for_every_step_that_uses_workers(offline_site: Site) -> None:
    """A first check without --site-dir reads the index's parts on workers, then the heads of
    its 2,100 new pages (the sitemap's folder holds the home page): one pool does both."""
    listed = pages(2100, lastmod="2024-05-{day:02d}T10:{minute:02d}:00Z")
    locs = list(listed)
    offline_site.write(index({f"/part-{n}.xml": None for n in range(3)}))
    for number in range(3):
        offline_site.write(urlset({loc: listed[loc] for loc in locs[number * 700 : (number + 1) * 700]}), f"part-{number}.xml")
    offline_site.build_pages(["/", *locs])
    argv = ["check", str(offline_site.sitemap), "--state", str(offline_site.state), "--format", "json", "--jobs", "2"]
    done = subprocess.run([program_python(), "-c", _COUNTED, *argv], capture_output=True, text=True, check=False, cwd=offline_site.root)
    counted = json.loads(done.stderr.strip().splitlines()[-1])
    assert counted["code"] == 0, done.stderr
    assert counted["started"] == [2]


def test_jobs_in_a_threaded_program_is_one_process_and_says_so(offline_site: Site) -> None:
    """A program using the API runs other threads: fork could copy a lock one of them holds,
    so the run works in its own process; asked for --jobs 2, the report says why it did not."""
    import threading

    import notifier

    offline_site.write(urlset({"/": "2024-05-01"}))
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        asked = notifier.check(str(offline_site.sitemap), state=str(offline_site.state), jobs=2)
        default = notifier.check(str(offline_site.sitemap), state=str(offline_site.state))
    finally:
        stop.set()
        other.join()
    assert any(note.startswith("--jobs 2: this process runs other threads") for note in asked.notes), asked.notes
    assert not any("--jobs" in note for note in default.notes)


def _mixed_index(site: Site) -> None:
    """An index of an XML part, a text part and an XML part, 900 pages: one URL listed by two
    parts (each file and line named), one with a space (it fails the check, exit 1)."""
    listed = pages(900, lastmod="2024-05-{day:02d}T10:{minute:02d}:00Z")
    locs = list(listed)
    site.write(index({"/part-0.xml": None, "/part-1.txt": None, "/part-2.xml": None}))
    site.write(urlset({loc: listed[loc] for loc in locs[:300]}), "part-0.xml")
    text = [BASE + loc for loc in [*locs[300:600], locs[10]]]
    site.write("\n".join([*text, BASE + "/a page"]) + "\n", "part-1.txt")
    site.write(urlset({loc: listed[loc] for loc in [*locs[600:], locs[400]]}), "part-2.xml")


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs two cores to start workers")
def test_an_index_of_xml_and_text_parts_reads_the_same_on_workers(offline_site: Site) -> None:
    """A worker numbers a part's files and rows where they sit in the whole sitemap: a URL that
    two parts list is named by each file and line, a text part's lines included."""
    _mixed_index(offline_site)
    several, started = _report(offline_site, "2", code=1)  # the URL with a space fails it
    assert started and all(count == 2 for count in started)
    one, _ = _report(offline_site, "1", code=1)
    assert one == several
    messages = " ".join(violation["message"] for violation in one["violations"])  # type: ignore[attr-defined]
    assert "part-1.txt line 301" in messages and "part-2.xml line 1203" in messages, messages


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs two cores to start workers")
def test_an_api_caller_reading_an_index_on_workers_gets_the_report_read_here(offline_site: Site, monkeypatch: pytest.MonkeyPatch) -> None:
    """The API in a one-thread program forks workers for an index's parts, as the command line
    does: what they hand back (each part's rows, their files and lines, its findings) makes the
    report that reading every part in this process makes."""
    import threading

    import notifier
    from notifier import workers

    _mixed_index(offline_site)
    started: list[int] = []
    real = workers.fork_pool

    def counted(count: int) -> Any:
        started.append(count)
        return real(count)

    monkeypatch.setattr(workers, "fork_pool", counted)

    def report(jobs: int) -> tuple[int, list[Any], list[Any], int]:
        done = notifier.check(str(offline_site.sitemap), state=str(offline_site.state), jobs=jobs)
        return int(done.exit_code), list(done.added), sorted(done.violations), done.unchanged

    assert threading.active_count() == 1, threading.enumerate()  # a one-thread program (no test's server left running)
    several = report(2)
    assert started == [2]  # the parts were read on workers
    one = report(1)
    assert started == [2]  # and here, this time
    assert several == one
    assert len(several[1]) == 901 and several[0] == 1  # every URL once; the one with a space fails it
    messages = " ".join(violation.message for violation in several[2])
    assert "part-1.txt line 301" in messages and "part-2.xml line 1203" in messages, messages
