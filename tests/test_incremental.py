"""Parts whose bytes did not change since the recorded deploy are not parsed again."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping, Sequence

import pytest

import notifier.sitemap.reader
import notifier.workers
from notifier.errors import InputError
from notifier.sitemap.reader import ReadOptions, read_sitemap
from notifier.sitemap.source import file_digest
from notifier.workers import Workers
from tests.conftest import BASE, Site, index, pages, recorded_urls, urlset


@pytest.fixture
def parsed(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The files the XML parser was run on."""
    seen: list[str] = []
    real = vars(notifier.sitemap.reader)["_parse_xml"]

    def spy(chunks, location, *args):  # type: ignore[no-untyped-def]
        seen.append(location.rsplit("/", 1)[-1])
        return real(chunks, location, *args)

    monkeypatch.setattr(notifier.sitemap.reader, "_parse_xml", spy)
    return seen


def build(site: Site, parts: Sequence[Mapping[str, str | None]]) -> None:
    for number, part in enumerate(parts):
        site.write(urlset(part), f"sitemaps/part-{number}.xml")
    site.write(index({f"/sitemaps/part-{number}.xml": None for number in range(len(parts))}))


def three_parts() -> list[dict[str, str | None]]:
    return [pages(5, prefix="/a/"), pages(5, prefix="/b/"), pages(5, prefix="/c/")]


def known(site: Site) -> dict[str, str]:
    return {part["name"]: part["digest"] for part in json.loads(site.state.read_text())["parts"]}


def test_only_the_changed_part_is_parsed(site: Site, parsed: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(notifier.workers, "usable_cores", lambda: 1)  # in this process, where the spy sees it
    parts = three_parts()
    build(site, parts)
    assert site.run().code == 0
    state = json.loads(site.state.read_text())
    assert [part["name"] for part in state["parts"]] == ["sitemaps/part-0.xml", "sitemaps/part-1.xml", "sitemaps/part-2.xml"]
    assert recorded_urls(site.state)[f"{BASE}/b/0/"]["part"] == 1
    parsed.clear()
    parts[2] |= {"/c/new/": "2024-09-01"}
    build(site, parts)
    result = site.run()
    assert result.code == 0, result
    assert parsed == ["sitemap.xml", "part-2.xml"]  # the index, and the one part that changed
    assert result.out.startswith("1 added, 0 changed, 0 removed, 1 submitted, 0 pending")
    parsed.clear()
    rerun = site.state_bytes()
    assert site.run().code == 0 and parsed == ["sitemap.xml"]
    assert site.state_bytes() == rerun


def test_parts_read_in_parallel_are_skipped_alike(site: Site) -> None:
    parts = three_parts()
    build(site, parts)
    site.run()
    parts[1] |= {"/b/new/": "2024-09-01"}
    build(site, parts)
    sitemap = read_sitemap(str(site.sitemap), known=known(site))
    assert [(info.key, info.skipped) for info in sitemap.files] == [
        ("sitemap.xml", False),
        ("sitemaps/part-0.xml", True),
        ("sitemaps/part-1.xml", False),
        ("sitemaps/part-2.xml", True),
    ]
    assert [entry.loc for entry in sitemap.entries] == [f"{BASE}/b/{n}/" for n in range(5)] + [f"{BASE}/b/new/"]


@pytest.mark.filterwarnings("ignore:This process .* is multi-threaded:DeprecationWarning")  # Python 3.12+
@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs two cores to start workers")
@pytest.mark.parametrize("sink", [False, True])  # entries kept in the Sitemap; handed to a sink file by file (a run)
@pytest.mark.usefixtures("forking")
def test_the_parallel_and_the_serial_reader_agree(offline_site: Site, monkeypatch: pytest.MonkeyPatch, sink: bool) -> None:
    for number in (0, 1, 3):
        offline_site.write(urlset(pages(30, prefix=f"/s{number}/") | {"/dup/": "2024-01-01"}), f"sitemaps/part-{number}.xml")
    part_1 = urlset(pages(30, prefix="/s1/") | {"/dup/": "2024-01-01", "/bad/": "2024-01-01"})
    offline_site.write(part_1.replace("</lastmod>", "</lastmod><priority>7</priority>", 1), "sitemaps/part-1.xml")
    offline_site.write(urlset({"/one/": "2024-01-01"}), "sitemaps/part-2.xml")
    offline_site.write("not-xml at all", "sitemaps/broken.xml")
    offline_site.write(urlset(pages(7, prefix="/nested/")), "sitemaps/leaf.xml")
    offline_site.write(urlset(pages(5, prefix="/nested-too/")), "sitemaps/leaf-2.xml")
    offline_site.write(urlset(pages(4, prefix="/nested-three/")), "sitemaps/leaf-3.xml")
    leaves = {"/sitemaps/leaf.xml": None, "/sitemaps/leaf-2.xml": None, "/sitemaps/leaf-3.xml": None}
    offline_site.write(index(leaves), "sitemaps/inner.xml")  # a part that is an index
    parts = ["/sitemaps/part-0.xml", "/sitemaps/inner.xml", "/sitemaps/part-1.xml", "/sitemaps/part-2.xml", "/sitemaps/part-3.xml"]
    offline_site.write(index(dict.fromkeys(parts)))
    calls: list[int] = []
    real = notifier.sitemap.reader._Walk._read_parts_in_parallel

    def spy(walk, workers, resolved, *args):  # type: ignore[no-untyped-def]
        calls.append(len(resolved))
        return real(walk, workers, resolved, *args)

    monkeypatch.setattr(notifier.sitemap.reader._Walk, "_read_parts_in_parallel", spy)
    handed: dict[str, list[tuple[str, object]]] = {"parallel": [], "serial": []}

    def sink_of(name: str):  # type: ignore[no-untyped-def]
        def keep(info, rows):  # type: ignore[no-untyped-def]
            handed[name].append((info.key, None if rows is None else [tuple(row) for row in rows]))

        return keep if sink else None

    said: dict[str, list[str]] = {"parallel": [], "serial": []}
    unchanged = ("sitemaps/part-3.xml", "sitemaps/leaf.xml")  # the bytes of last deploy: not parsed (one of the inner index's two)
    known = {key: file_digest(str(offline_site.public / key)) for key in unchanged}

    def options(name: str, workers: Workers | None = None) -> ReadOptions:
        return ReadOptions(workers=workers, progress=said[name].append, step=said[name].append)

    with Workers(2) as workers:
        parallel = read_sitemap(str(offline_site.sitemap), options("parallel", workers), sink_of("parallel"), known=known)
    assert calls == [5]
    serial = read_sitemap(str(offline_site.sitemap), options("serial"), sink_of("serial"), known=known)
    if sink:  # each urlset once, in document order, with its own entries (the index's parts renumbered after the inner index)
        assert handed["parallel"] == handed["serial"] and parallel.entries == serial.entries == []
        assert sum(len(rows) for _, rows in handed["parallel"] if isinstance(rows, list)) == 73
    else:
        assert parallel.entries == serial.entries and len(parallel.entries) == 73
        assert [entry.file for entry in parallel.entries][-1] == len(parallel.files) - 2  # the last file, part-3, was not parsed
    part = str((offline_site.public / "sitemaps").resolve()) + "/"
    assert said["parallel"] == [
        f"reading {offline_site.sitemap}",
        "reading 5 parts on 2 cores",
        f"read part 1/5: {part}part-0.xml, 31 URLs",
        f"read part 2/5: {part}inner.xml, 9 URLs",
        f"read part 3/5: {part}part-1.xml, 32 URLs",
        f"read part 4/5: {part}part-2.xml, 1 URL",
        f"read part 5/5: {part}part-3.xml, unchanged since the last deploy",
    ]
    assert said["serial"][0] == f"reading {offline_site.sitemap}" and not any(line.startswith("reading /") for line in said["serial"][1:])
    assert [finding.rule for finding in parallel.findings] == ["sitemap-limits", "sitemap-values"]  # on workers
    assert [(f.key, f.kind, f.url_count, f.digest) for f in parallel.files] == [
        (f.key, f.kind, f.url_count, f.digest) for f in serial.files
    ]
    assert parallel.findings == serial.findings


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs two cores to start workers")
@pytest.mark.parametrize("jobs", [1, 2])
@pytest.mark.usefixtures("forking")
def test_an_index_listing_a_part_twice_is_refused(offline_site: Site, jobs: int) -> None:
    offline_site.write(urlset(pages(3)), "sitemaps/a.xml")
    offline_site.write(urlset(pages(3, prefix="/b/")), "sitemaps/b.xml")
    offline_site.write(index({"/sitemaps/a.xml": None, "/sitemaps/b.xml": None, "/sitemaps/a.xml?again": None}))
    with Workers(jobs) as workers, pytest.raises(InputError, match=r"a\.xml: the sitemap index lists this file twice"):
        read_sitemap(str(offline_site.sitemap), ReadOptions(workers=workers))


def test_a_broken_part_read_in_parallel_is_one_clear_error(offline_site: Site) -> None:
    for number in range(3):
        offline_site.write(urlset(pages(3, prefix=f"/s{number}/")), f"sitemaps/part-{number}.xml")
    offline_site.write("<urlset><url>", "sitemaps/part-1.xml")
    offline_site.write(index({f"/sitemaps/part-{number}.xml": None for number in range(3)}))
    result = offline_site.check()
    assert result.code == 2 and "part-1.xml" in result.err and "not well-formed" in result.err
    # the parts read before it: "read part 1/3" (a log's steps), "reading part 1/3" (a terminal's, one core)
    said = [line for line in result.err.splitlines() if not re.search(r"\bread(ing)? part \d+/3\b", line)]
    assert len(said) == 1 and said[0].startswith("notify-changes: error: ") and "Traceback" not in result.err


def test_removals_and_moves_between_changed_parts(site: Site, parsed: list[str]) -> None:
    parts = three_parts()
    build(site, parts)
    site.run()
    moved = f"/a/{0}/"
    parts[1][moved] = parts[0].pop(moved)  # moved from part 0 to part 1: both change
    del parts[1]["/b/4/"]  # removed
    build(site, parts)
    result = site.check()
    assert result.out.startswith("0 added, 0 changed, 1 removed")
    assert site.run().code == 0
    assert recorded_urls(site.state)[f"{BASE}{moved}"]["part"] == 1


def test_a_part_that_vanished_removes_its_urls(site: Site) -> None:
    parts = three_parts()
    build(site, parts)
    site.run()
    (site.public / "sitemaps" / "part-2.xml").unlink()
    site.write(index({f"/sitemaps/part-{number}.xml": None for number in range(2)}))
    result = site.check("--max-removed", "50%")
    assert result.out.startswith("0 added, 0 changed, 5 removed"), result.out


def test_duplicates_with_an_unchanged_part_are_still_seen(site: Site) -> None:
    parts = three_parts()
    build(site, parts)
    site.run()
    parts[2]["/a/1/"] = parts[0]["/a/1/"]  # part 2 now repeats a URL of the unchanged part 0
    build(site, parts)
    result = site.check()
    assert f"warn[url-duplicate] {BASE}/a/1/" in result.out


@pytest.mark.parametrize(("first", "level"), [("as recorded", "error"), ("changed", "error"), ("same", "warn")])
def test_a_repeat_in_a_later_part_is_judged_against_the_first_listings_lastmod(site: Site, first: str, level: str) -> None:
    """A check holds a first listing whose lastmod is as recorded by its part, not by its text:
    the repeat is still judged against that lastmod (different: an error; the same: a warning)."""
    parts = three_parts()
    build(site, parts)
    site.run()
    parts[0]["/a/5/"] = "2024-06-01"  # part 0 is read again (its bytes changed), compared in bulk
    if first == "changed":
        parts[0]["/a/1/"] = "2024-06-02"
    parts[2]["/a/1/"] = parts[0]["/a/1/"] if first == "same" else "2023-01-01"
    build(site, parts)
    result = site.check()
    said = [line for line in result.out.splitlines() if "url-duplicate" in line]
    assert said and said[0].startswith(f"{level}[url-duplicate] {BASE}/a/1/"), result.out
    if level == "error":
        assert f"different lastmods {parts[0]['/a/1/']} and 2023-01-01" in said[0]


_REAL_JOB = notifier.sitemap.reader._read_part_job


def _dying_job(walk, location, *args):  # type: ignore[no-untyped-def]
    if location.endswith("part-1.xml"):
        os._exit(9)  # as if the kernel had killed the worker
    return _REAL_JOB(walk, location, *args)


@pytest.mark.filterwarnings("ignore:This process .* is multi-threaded:DeprecationWarning")  # Python 3.12+
@pytest.mark.usefixtures("forking")
def test_a_worker_that_dies_falls_back_to_reading_here(offline_site: Site, monkeypatch: pytest.MonkeyPatch) -> None:
    for number in range(3):
        offline_site.write(urlset(pages(4, prefix=f"/s{number}/")), f"sitemaps/part-{number}.xml")
    offline_site.write(urlset(pages(2, prefix="/leaf/")), "sitemaps/leaf.xml")
    offline_site.write(index({"/sitemaps/leaf.xml": None}), "sitemaps/inner.xml")  # read here as a part, one level down
    offline_site.write(index({f"/sitemaps/part-{number}.xml": None for number in range(3)} | {"/sitemaps/inner.xml": None}))
    monkeypatch.setattr(notifier.sitemap.reader, "_read_part_job", _dying_job)
    with Workers(2) as workers:
        sitemap = read_sitemap(str(offline_site.sitemap), ReadOptions(workers=workers))
        assert not workers.started  # the pool broke: the rest was read here
    assert len(sitemap.entries) == 14
    parts = [f"sitemaps/part-{n}.xml" for n in range(3)]
    assert [info.key for info in sitemap.files][1:] == [*parts, "sitemaps/inner.xml", "sitemaps/leaf.xml"]


def test_an_unchanged_part_still_has_its_pages_fingerprinted(site: Site) -> None:
    """A part's bytes can stay the same while a page it lists changes (no lastmod): still announced."""
    parts: list[dict[str, str | None]] = [{"/a/": None, "/b/": "2024-01-01"}, {"/c/": "2024-01-02"}]
    build(site, parts)
    for path, body in (("a", "A"), ("b", "B"), ("c", "C")):
        (site.public / path).mkdir(exist_ok=True)
        (site.public / path / "index.html").write_text(body)
    args = ("--site-dir", str(site.public), "--rule", "lastmod-missing=off")
    assert site.run(*args).code == 0
    (site.public / "a" / "index.html").write_text("A, edited")  # the sitemap does not change at all
    result = site.run(*args)
    assert result.code == 0, result
    assert site.fake is not None and site.fake.delivered() == [f"{BASE}/a/"]


def test_an_unread_part_is_consulted_for_urls_that_appear_or_vanish_elsewhere(
    site: Site, parsed: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(notifier.workers, "usable_cores", lambda: 1)
    parts = three_parts()
    parts[0]["/shared/"] = "2024-01-01"  # listed by part 0 and, later, by part 2 as well
    build(site, parts)
    assert site.run().code == 0
    parsed.clear()
    parts[2]["/shared/"] = "2024-01-01"
    build(site, parts)
    result = site.check()
    assert parsed == ["sitemap.xml", "part-2.xml"]
    assert result.out.startswith("0 added, 0 changed, 0 removed"), result.out  # not added: part 0 still lists it
    text = (site.public / "sitemaps" / "part-2.xml").read_text().splitlines()
    loc = next(number for number, each in enumerate(text) if "/shared/" in each)
    line = next(number for number in range(loc, -1, -1) if "<url>" in text[number]) + 1  # its <url>, counted from 1
    where = f"listed twice ({site.public / 'sitemaps' / 'part-2.xml'} line {line})"
    assert where in result.out, result.out  # the second listing's file and line
    ran = site.run()
    assert ran.code == 0 and where in ran.out, ran.out  # a run finds it the same way
    # now part 2 drops it again: still listed by (unread) part 0, so not removed
    del parts[2]["/shared/"]
    build(site, parts)
    parsed.clear()
    result = site.run()
    assert parsed == ["sitemap.xml", "part-2.xml"], result.err
    assert result.out.startswith("0 added, 0 changed, 0 removed"), result.out
    assert recorded_urls(site.state)[f"{BASE}/shared/"]["part"] == 0


def test_a_pending_url_of_an_unread_part_is_sent_and_stamped_in_that_part(site: Site) -> None:
    from tests.fakeindexnow import status

    parts = three_parts()
    build(site, parts)
    assert site.run().code == 0
    parts[1]["/b/0/"] = "2024-12-01"  # changed, but the endpoint fails: it stays pending
    build(site, parts)
    assert site.fake is not None
    site.fake.plan = [status(500)] * 40
    assert site.run("--retry-timeout", "0").code == 3
    site.fake.plan = []
    result = site.run()  # part 1 is unread now: its bytes are as recorded
    assert result.code == 0 and "1 submitted, 0 pending" in result.out, result.out
    record = recorded_urls(site.state)[f"{BASE}/b/0/"]
    assert record["part"] == 1 and record["lastmod"] == "2024-12-01" and record.get("last_submitted")


@pytest.mark.parametrize("store", ["notify-changes.json", "notify-changes.sqlite"])
def test_a_url_still_listed_by_an_unread_part_is_not_removed_when_its_first_part_goes(site: Site, store: str) -> None:
    """a.xml and b.xml both list /x/; its record lives with a.xml's (the first listing). When
    a.xml leaves the index and b.xml is unchanged (not read), /x/ is still listed: not removed,
    not announced, and b.xml's part takes its record, so a later deploy does not call it new."""
    assert site.fake is not None
    site.state = site.root / "state" / store
    shared = {"/x/": "2024-03-03T10:00:00Z"}
    parts = [pages(4, prefix="/a/") | shared, pages(4, prefix="/b/") | shared]
    build(site, parts)
    assert site.run("--rule", "url-duplicate=off").code == 0
    (site.public / "sitemaps" / "part-0.xml").unlink()
    site.write(index({"/sitemaps/part-1.xml": None}))
    checked = site.check("--max-removed", "80%", "--rule", "url-duplicate=off")
    assert checked.code == 0 and checked.out.startswith("0 added, 0 changed, 4 removed"), checked.out
    result = site.run("--max-removed", "80%", "--rule", "url-duplicate=off")
    assert result.code == 0, result
    removed = [url for post in site.fake.posts for url in post.json["urlList"]]
    assert sorted(removed) == sorted(f"{BASE}/a/{n}/" for n in range(4))
    assert f"{BASE}/x/" in recorded_urls(site.state)
    parts[1]["/b/0/"] = "2024-09-09T09:00:00Z"  # b.xml changes: /x/ is known, not added
    site.write(urlset(parts[1]), "sitemaps/part-1.xml")
    again = site.run()
    assert again.code == 0 and again.out.startswith("0 added, 1 changed, 0 removed"), again.out


def test_a_check_counts_the_urls_still_waiting_as_pending_not_unchanged(site: Site) -> None:
    """Their lastmods are as recorded, so the sweep that passes over unchanged URLs would take
    them too; a URL that waits for an endpoint is pending, whatever its lastmod."""
    from tests.fakeindexnow import status

    site.write(urlset(pages(6)))
    assert site.run().code == 0
    site.write(urlset(pages(6) | pages(4, lastmod="2024-06-{day:02d}T10:{minute:02d}:00Z")))  # 4 changed, 2 as they were
    assert site.fake is not None
    site.fake.plan = [status(503)] * 20
    assert site.run("--retry-timeout", "1").code == 3  # the 4 stay pending
    site.write(urlset(pages(6) | pages(4, lastmod="2024-06-{day:02d}T10:{minute:02d}:00Z") | {"/new/": "2024-06-20"}))  # read again
    report = json.loads(site.check("--format", "json").out)
    assert (report["added"], report["changed"], report["pending"], report["unchanged"]) == (1, 0, 4, 2), report


def test_a_check_of_a_recorded_file_says_which_urls_have_no_lastmod(offline_site: Site) -> None:
    offline_site.write(urlset(pages(3) | {"/bare/": None}))
    assert offline_site.run("--rule", "lastmod-missing=off").code == 0
    offline_site.write(urlset(pages(4) | {"/bare/": None}))  # one page more: the file is read again
    result = offline_site.check()
    missing = [line.split()[1].rstrip(":") for line in result.out.splitlines() if line.startswith("warn[lastmod-missing]")]
    assert missing == [f"{BASE}/bare/"], result.out
