"""A check's workers compare the recorded parts they parse (#20, item 3: notifier/pipeline/condensed.py):
only the rows that differ reach the main process. Whatever the deploy did to the parts, the report is
the one comparing every row in the main process gives (``--jobs 1``), and the files a worker compared
are the ones that could be: a URL listed by two files, or by a file that lists it as new while another
still lists it as recorded, is compared row by row, and named with its file and line."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from notifier.pipeline import diff
from tests.conftest import BASE, Site, index, pages
from tests.fakeindexnow import status

pytestmark = pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs two cores to start workers")

Parts = list[dict[str, str | None]]


def _write(site: Site, parts: Parts, alternates: dict[str, dict[str, str]] | None = None) -> None:
    site.write(index({f"/part-{n}.xml": None for n in range(len(parts))}))
    for number, part in enumerate(parts):
        site.write(_urlset(part, alternates or {}), f"part-{number}.xml")


def _urlset(part: dict[str, str | None], alternates: dict[str, dict[str, str]]) -> str:
    rows = []
    for loc, lastmod in part.items():
        links = "".join(
            f'<xhtml:link rel="alternate" hreflang="{language}" href="{BASE}{href}"/>' for language, href in alternates.get(loc, {}).items()
        )
        date = f"<lastmod>{lastmod}</lastmod>" if lastmod is not None else ""
        rows.append(f"<url><loc>{BASE}{loc}</loc>{date}{links}</url>")
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" '
        'xmlns:xhtml="http://www.w3.org/1999/xhtml">\n' + "\n".join(rows) + "\n</urlset>\n"
    )


def _three_parts() -> Parts:
    listed = pages(1200)
    locs = list(listed)
    return [{loc: listed[loc] for loc in locs[start : start + 400]} for start in range(0, 1200, 400)]


@pytest.fixture(params=["json", "sqlite", "postgresql"])
def recorded(request: pytest.FixtureRequest, site: Site, forking: None) -> Site:
    if request.param == "sqlite":
        site.state = site.root / "state" / "notify-changes.sqlite"
    if request.param == "postgresql":  # each worker reads its parts' rows over a connection of its own
        from notifier.database import DatabaseURL

        site.state = DatabaseURL(request.getfixturevalue("pg_url"), site="shop")  # type: ignore[assignment]
    return site


@pytest.fixture
def taken(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[bool]]:
    """What ``DiffBuilder.take`` answered, each file a worker compared, in order."""
    answers: list[bool] = []
    real = diff.DiffBuilder.take

    def take(self: diff.DiffBuilder, info: Any, condensed: object) -> bool:
        answers.append(real(self, info, condensed))
        return answers[-1]

    monkeypatch.setattr(diff.DiffBuilder, "take", take)
    yield answers


def _both(site: Site, taken: list[bool], code: int = 0) -> tuple[dict[str, Any], list[bool]]:
    """The JSON report of a check on two workers, which it must share with one in this process."""
    several = site.check("--format", "json", "--jobs", "2")
    answers = list(taken)
    one = site.check("--format", "json", "--jobs", "1")
    assert taken == answers  # one process: nothing condensed
    assert several.code == one.code == code, several.err
    assert _said(several.err) == _said(one.err)
    assert json.loads(several.out) == json.loads(one.out)
    return json.loads(one.out), answers


def _said(err: str) -> list[str]:
    """stderr without the progress lines (they name the parts read on workers, or here)."""
    return [line for line in err.splitlines() if not line.startswith(("notify-changes: read part", "notify-changes: reading"))]


def _baseline(site: Site, parts: Parts, **extra: Any) -> None:
    _write(site, parts, **extra)
    assert site.run().code == 0


def test_changed_lastmods_in_every_part_are_compared_on_the_workers(recorded: Site, taken: list[bool]) -> None:
    parts = _three_parts()
    _baseline(recorded, parts)
    for part in parts:
        first = next(iter(part))
        part[first] = "2024-07-01T10:00:00Z"
    _write(recorded, parts)
    report, answers = _both(recorded, taken)
    assert answers == [True, True, True]
    assert sorted(report["urls"]["changed"]) == sorted(BASE + next(iter(part)) for part in parts)
    assert report["unchanged"] == 1197, report


def test_urls_moved_between_parts_removed_and_added_are_named_as_here(recorded: Site, taken: list[bool]) -> None:
    parts = _three_parts()
    _baseline(recorded, parts)
    locs = [list(part) for part in parts]
    parts[2][locs[0][5]] = parts[0].pop(locs[0][5])  # moved to a later part
    parts[0][locs[2][7]] = parts[2].pop(locs[2][7])  # and to an earlier one
    del parts[1][locs[1][9]]  # removed
    parts[1]["/new/"] = "2024-07-01T10:00:00Z"  # added
    parts[1][locs[1][0]] = None  # its lastmod dropped: lastmod-missing
    _write(recorded, parts)
    report, answers = _both(recorded, taken)
    assert answers == [True, True, True]
    assert report["urls"]["added"] == [BASE + "/new/"]
    assert report["urls"]["removed"] == [BASE + locs[1][9]]


@pytest.mark.parametrize("where", ["later", "earlier"])
def test_a_url_listed_in_two_parts_is_compared_here_and_named(recorded: Site, taken: list[bool], where: str) -> None:
    """A recorded URL another part now lists too: its second listing is named with file and
    line, whichever part the worker handed in first."""
    parts = _three_parts()
    _baseline(recorded, parts)
    for part in parts:  # every part read
        part[list(part)[-1]] = "2024-07-01T10:00:00Z"
    if where == "later":
        twice = next(iter(parts[0]))
        parts[2][twice] = parts[0][twice]
    else:
        twice = next(iter(parts[2]))
        parts[0][twice] = parts[2][twice]
    _write(recorded, parts)
    report, answers = _both(recorded, taken)
    assert False in answers  # that part was compared here
    messages = " ".join(violation["message"] for violation in report["violations"])
    assert ("part-2.xml line 403" if where == "later" else "part-2.xml line 3") in messages, messages


def test_a_part_listing_a_url_twice_hands_over_its_rows(recorded: Site, taken: list[bool]) -> None:
    parts = _three_parts()
    _baseline(recorded, parts)
    for part in parts:
        part[next(iter(part))] = "2024-07-01T10:00:00Z"
    _write(recorded, parts)
    path = recorded.public / "part-1.xml"
    text = path.read_text()
    first = text.index("<url>")
    row = text[first : text.index("</url>", first) + len("</url>")]
    path.write_text(text.replace("</urlset>", row + "\n</urlset>"))  # its first URL listed again, last
    report, answers = _both(recorded, taken)
    assert answers == [True, True]  # part 1's worker handed its rows over
    assert any("part-1.xml" in violation["message"] for violation in report["violations"]), report["violations"]


def test_urls_waiting_at_an_endpoint_are_pending_as_here(recorded: Site, taken: list[bool]) -> None:
    parts = _three_parts()
    _write(recorded, parts)
    assert recorded.fake is not None
    assert recorded.run().code == 0
    parts[1][next(iter(parts[1]))] = "2024-07-01T10:00:00Z"
    parts[2][next(iter(parts[2]))] = "2024-07-01T10:00:00Z"
    _write(recorded, parts)
    recorded.fake.plan = [status(500)] * 100
    assert recorded.run().code == 3  # the two changes wait
    recorded.fake.plan = []
    for part in parts:  # every part read again
        part[list(part)[-1]] = "2024-07-01T10:00:00Z"
    _write(recorded, parts)
    report, answers = _both(recorded, taken)
    assert answers == [True, True, True]
    assert sorted(report["urls"]["pending"]) == sorted(BASE + next(iter(part)) for part in parts[1:])
    assert sorted(report["urls"]["changed"]) == sorted(BASE + list(part)[-1] for part in parts)


def test_an_alternate_a_worker_left_out_is_still_listed(recorded: Site, taken: list[bool]) -> None:
    """hreflang-broken asks whether an unchanged URL of another part is listed: the diff's
    listed URLs include those a worker did not hand over."""
    parts = _three_parts()
    changed, other = next(iter(parts[0])), next(iter(parts[2]))
    alternates = {changed: {"de": other}}
    _baseline(recorded, parts, alternates=alternates)
    parts[0][changed] = "2024-07-01T10:00:00Z"
    parts[1][next(iter(parts[1]))] = "2024-07-01T10:00:00Z"
    parts[2][list(parts[2])[1]] = "2024-07-01T10:00:00Z"
    _write(recorded, parts, alternates=alternates)
    report, answers = _both(recorded, taken)
    assert answers == [True, True, True]
    messages = [violation["message"] for violation in report["violations"] if violation["rule"] == "hreflang-broken"]
    assert messages == [f"its de alternate {BASE}{other} declares no alternates; list each page in the other's alternates"], messages


def test_a_state_replaced_after_it_was_loaded_is_not_read_by_the_workers(tmp_path: Path) -> None:
    """A worker reads a part's records again from the state file only while it is the file
    loaded: a run that saved meanwhile replaced it, and the main process then reads the part."""
    from notifier.store import JsonStore, RecordedPart, State

    path = tmp_path / "state.json"
    store = JsonStore(path)
    state = State(updated="2024-05-01T00:00:00Z")
    state.parts.append(RecordedPart("part.xml", "0" * 32, {f"{BASE}/{n}/": ["2024-05-01", None, None] for n in range(3)}))
    store.save(state)
    loaded = store.load()
    assert loaded is not None
    part = loaded.parts[0]
    assert isinstance(part, RecordedPart)
    reader = part.reader()
    assert reader is not None
    assert reader.records() == part.urls()
    part.unload()
    store.save(loaded)  # replaced: another inode
    assert reader.records() is None
    assert part.urls()[f"{BASE}/1/"][0] == "2024-05-01"  # this process reads the file it loaded


def _sqlite_reader(path: Path) -> Callable[[], object]:
    from notifier.store.sqlite import SqliteStore

    loaded = SqliteStore(path).load()
    assert loaded is not None
    reader = loaded.parts[0].reader()  # type: ignore[attr-defined]
    assert reader is not None
    return reader.records  # type: ignore[no-any-return]


def test_an_sqlite_part_saved_again_is_not_read_by_the_workers(tmp_path: Path) -> None:
    from notifier.store import RecordedPart, State
    from notifier.store.sqlite import SqliteStore

    path = tmp_path / "state.sqlite"
    state = State(updated="2024-05-01T00:00:00Z")
    state.parts.append(RecordedPart("part.xml", "0" * 32, {f"{BASE}/{n}/": ["2024-05-01", None, None] for n in range(3)}))
    SqliteStore(path).save(state)
    records = _sqlite_reader(path)
    assert records() == {f"{BASE}/{n}/": ["2024-05-01", None, None] for n in range(3)}
    again = State(updated="2024-05-02T00:00:00Z")
    again.parts.append(RecordedPart("part.xml", "1" * 32, {f"{BASE}/{n}/": ["2024-05-02", None, None] for n in range(3)}))
    SqliteStore(path).save(again)  # another digest in that row
    assert records() is None


def _in_a_worker(read: Callable[[], object]) -> object:
    """What ``read`` returns in a forked process, as a worker comparing a part calls it."""
    import multiprocessing

    with multiprocessing.get_context("fork").Pool(1) as pool:
        return pool.apply(read)


def test_a_postgresql_part_is_read_by_a_worker_from_the_snapshot_the_state_was_read_in(pg_url: str) -> None:
    """A worker reads a part's row over a connection of its own, in the snapshot the check read
    the state in (``pg_export_snapshot``): a run that saves meanwhile does not mix in. The
    process that read the state reads the row itself (its workers died)."""
    from notifier.database import DatabaseURL
    from notifier.store import RecordedPart, State
    from notifier.store.postgres import PostgresStore, read_postgres_state

    location = DatabaseURL(pg_url, site="shop")
    records = {f"{BASE}/{n}/": ["2024-05-01", None, None] for n in range(3)}
    state = State(updated="2024-05-01T00:00:00Z")
    state.parts.append(RecordedPart("part.xml", "0" * 32, dict(records)))
    with PostgresStore(location) as store:
        store.save(state)
    loaded = read_postgres_state(location)
    assert loaded is not None
    reader = loaded.parts[0].reader()  # type: ignore[attr-defined]
    assert reader is not None
    again = State(updated="2024-05-02T00:00:00Z")
    again.parts.append(RecordedPart("part.xml", "0" * 32, {loc: ["2024-05-02", None, None] for loc in records}))
    with PostgresStore(location) as store:
        store.save(again)  # the same part's row, other records
    assert _in_a_worker(reader.records) == records
    assert reader.records() is None
    assert loaded.parts[0].urls() == records


def test_a_new_part_listing_a_url_a_compared_part_lists_names_it_twice(recorded: Site, taken: list[bool]) -> None:
    """A part new to the state lists a URL an earlier part lists as recorded (its worker left it
    out): the new part's listing is the second, with the lastmod the first one records."""
    parts = _three_parts()
    _baseline(recorded, parts)
    for part in parts:
        part[list(part)[-1]] = "2024-07-01T10:00:00Z"
    twice = list(parts[1])[3]
    _write(recorded, [*parts, {"/fresh/": "2024-07-02T10:00:00Z", twice: parts[1][twice]}])
    report, answers = _both(recorded, taken)
    assert answers == [True, True, True]  # the new part has no records to compare with: its rows came here
    assert report["urls"]["added"] == [BASE + "/fresh/"]
    duplicates = [violation for violation in report["violations"] if BASE + twice == violation["url"]]
    assert duplicates and "part-3.xml line 4" in duplicates[0]["message"], report["violations"]


def test_articles_leaving_a_news_part_are_not_removals_as_here(recorded: Site, taken: list[bool]) -> None:
    """A news part compared on its worker: the articles that left it are counted as having
    left the news sitemap, not removed, and its recorded articles count as news."""
    from tests.test_news import news_sitemap

    parts = _three_parts()
    articles = {f"/news/{n}/": f"2026-06-{n + 1:02d}T08:00:00Z" for n in range(30)}
    recorded.write(index({**{f"/part-{n}.xml": None for n in range(3)}, "/news.xml": None}))
    for number, part in enumerate(parts):
        recorded.write(_urlset(part, {}), f"part-{number}.xml")
    recorded.write(news_sitemap(articles), "news.xml")
    assert recorded.run().code == 0
    parts[0][next(iter(parts[0]))] = "2024-07-01T10:00:00Z"
    recorded.write(_urlset(parts[0], {}), "part-0.xml")
    recorded.write(news_sitemap(dict(list(articles.items())[20:]) | {"/news/new/": "2026-06-30T08:00:00Z"}), "news.xml")
    report, answers = _both(recorded, taken)
    assert answers == [True, True]  # parts 1 and 2 were not read
    assert report["urls"]["removed"] == [] and report["urls"]["added"] == [BASE + "/news/new/"], report["urls"]
    assert any("20 URLs left the news sitemap" in note for note in report["notes"]), report["notes"]


def test_a_damaged_record_read_on_a_worker_is_the_state_error_read_here(site: Site, forking: None) -> None:
    """The worker checks a part's records as a load does: a damaged one is exit 2, with the
    line reading the part here gives, and the state is left as it was."""
    parts = _three_parts()
    _baseline(site, parts)
    text = site.state.read_text()
    assert text.count(",null]") > 1000
    site.state.write_text(text.replace(",null]", ',"soon"]', 1))
    damaged = site.state.read_bytes()
    for part in parts:
        part[list(part)[-1]] = "2024-07-01T10:00:00Z"
    _write(site, parts)
    several = site.check("--jobs", "2")
    one = site.check("--jobs", "1")
    assert several.code == one.code == 2
    assert _said(several.err) == _said(one.err) and "last_submitted that is not a timestamp" in several.err, several.err
    assert site.state.read_bytes() == damaged


def test_many_urls_waiting_in_one_part_are_pending_as_here(recorded: Site, taken: list[bool]) -> None:
    """Thirty waiting URLs against a part of 400: they are looked up in one set of its hashes."""
    parts = _three_parts()
    _write(recorded, parts)
    assert recorded.fake is not None and recorded.run().code == 0
    waiting = list(parts[1])[:30]
    for loc in waiting:
        parts[1][loc] = "2024-07-01T10:00:00Z"
    _write(recorded, parts)
    recorded.fake.plan = [status(500)] * 100
    assert recorded.run().code == 3
    recorded.fake.plan = []
    for part in parts:
        part[list(part)[-1]] = "2024-07-02T10:00:00Z"
    _write(recorded, parts)
    report, answers = _both(recorded, taken)
    assert answers == [True, True, True]
    assert sorted(report["urls"]["pending"]) == sorted(BASE + loc for loc in waiting)


def test_a_url_listed_twice_among_many_new_urls_is_named(recorded: Site, taken: list[bool]) -> None:
    """A later part gains thirty new URLs and one an earlier part still lists: the earlier
    part's hashes are looked up as one set, and the second listing is named."""
    parts = _three_parts()
    _baseline(recorded, parts)
    for part in parts:
        part[list(part)[-1]] = "2024-07-01T10:00:00Z"
    twice = list(parts[0])[2]
    parts[2].update({f"/new/{n}/": "2024-07-03T10:00:00Z" for n in range(30)})
    parts[2][twice] = parts[0][twice]
    _write(recorded, parts)
    report, answers = _both(recorded, taken)
    assert answers == [True, True, False]
    assert len(report["urls"]["added"]) == 30
    assert any(violation["url"] == BASE + twice and "part-2.xml line 433" in violation["message"] for violation in report["violations"])


def test_a_new_url_added_to_two_parts_at_once_is_named_twice(recorded: Site, taken: list[bool]) -> None:
    parts = _three_parts()
    _baseline(recorded, parts)
    for part in parts:
        part[list(part)[-1]] = "2024-07-01T10:00:00Z"
    parts[0]["/both/"] = "2024-07-04T10:00:00Z"
    parts[2]["/both/"] = "2024-07-04T10:00:00Z"
    _write(recorded, parts)
    report, answers = _both(recorded, taken)
    assert answers == [True, True, False]
    assert report["urls"]["added"] == [BASE + "/both/"]
    assert any(violation["url"] == BASE + "/both/" and "part-2.xml line 403" in violation["message"] for violation in report["violations"])


def test_what_a_compared_part_found_is_reported_as_here(recorded: Site, taken: list[bool]) -> None:
    """A part its worker compared still hands over what the reader found in it (a changefreq
    the protocol does not know)."""
    parts = _three_parts()
    _baseline(recorded, parts)
    for part in parts:
        part[list(part)[-1]] = "2024-07-01T10:00:00Z"
    _write(recorded, parts)
    path = recorded.public / "part-1.xml"
    path.write_text(path.read_text().replace("</url>", "<changefreq>sometimes</changefreq></url>", 1))
    report, answers = _both(recorded, taken)
    assert answers == [True, True, True]
    assert any(violation["rule"] == "sitemap-values" and "sometimes" in violation["message"] for violation in report["violations"])
