"""Promises of the state at its edges: nothing lost, nothing stuck, nothing read unchecked.

Each test is one finding of issue #10 ("Keep every promise under the inputs people
actually produce"): a state missing a key or holding a wrong type, a file name SQLite's
URI syntax would cut, a symlinked state, a URL that can never be sent, endpoints that
leave the configuration, a disk that fills up after the deliveries.
"""

from __future__ import annotations

import json
import resource
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from notifier.store import read_state
from tests.conftest import BASE, Site, pages, recorded_pending, urlset
from tests.fakeindexnow import status

STORES = ["notify-changes.json", "notify-changes.sqlite"]


def recorded(site: Site, count: int = 3) -> Site:
    site.write(urlset(pages(count)))
    assert site.run().code == 0
    return site


def change_first_page(site: Site, count: int = 3) -> None:
    changed = pages(count)
    changed["/p/0/"] = "2025-01-01T00:00:00Z"
    site.write(urlset(changed))


# -- 1. pending URLs of an endpoint that left the configuration ---------------------------------
def test_pending_urls_of_an_endpoint_no_longer_configured_go_to_the_configured_ones(site: Site) -> None:
    assert site.fake is not None
    recorded(site)
    change_first_page(site)
    typo = site.fake.url + "/indexnwo"  # a mistyped endpoint: 404, not retried
    result = site.run("--endpoint", typo)
    assert result.code == 3, result
    assert list(recorded_pending(site.state)) == [typo]

    fixed = site.run()  # the endpoint fixed: the URL is announced there, said in one line
    assert fixed.code == 0, fixed
    assert site.fake.delivered() == [f"{BASE}/p/0/"]
    assert "1 submitted, 0 pending" in fixed.out
    assert f"1 URL pending for {typo}, which is no longer configured" in fixed.out
    assert recorded_pending(site.state) == {}
    assert site.run().code == 0 and len(site.fake.posts) == 2  # and never again


def test_a_check_counts_the_orphaned_pending_urls_without_writing(site: Site) -> None:
    assert site.fake is not None
    recorded(site)
    change_first_page(site)
    typo = site.fake.url + "/indexnwo"
    assert site.run("--endpoint", typo).code == 3
    before = site.state_bytes()
    result = site.check()
    assert result.code == 0 and "1 pending" in result.out and "no longer configured" in result.out
    assert site.state_bytes() == before


# -- 2. a state file is validated on load, both stores ------------------------------------------
def damaged_json(site: Site, edit: str) -> None:
    document = json.loads(site.state.read_bytes())
    exec(edit, {"document": document, "BASE": BASE})
    site.state.write_text(json.dumps(document))  # not the lazy layout: parsed whole


@pytest.mark.parametrize(
    "edit",
    [
        "del document['parts']",
        "del document['pending']",
        "del document['runs']",
        "document['parts'][0]['count'] = 'many'",
        "document['parts'][0]['origins'] = 'https://x'",
        "document['parts'][0]['index'] = '!!'",
        "document['parts'][0]['urls'][BASE + '/p/1/'][2] = 5",
        "document['parts'][0]['urls'][BASE + '/p/1/'][1] = {}",
        "document['parts'][0]['urls'][BASE + '/p/1/'][0] = 7",
        "document['runs'] = [{'at': 5}]",
        "document['runs'][0]['added'] = 'three'",
        "document['pending'] = {'https://e/': [{'reason': 'added', 'since': 1, 'urls': []}]}",
        "document['created'] = 3",
        "del document['parts'][0]['name']",
        "document['parts'][0]['digest'] = 5",
        "document['pending'] = {'https://e/': [{'reason': 'added', 'since': '2024-05-01T00:00:00Z', 'urls': ['']}]}",
        "document['pending'] = {'https://e/': [{'reason': 'added', 'since': '2024-05-01T00:00:00Z', 'urls': [BASE + '/p/1/', 5]}]}",
        "document['backoff'] = []",
        "del document['parts'][0]['urls'][BASE + '/p/1/']",  # fewer records than "count" says
        "document['parts'][0]['count'] += 1; document['parts'][0]['missing'] = 0",  # more URLs than the index has hashes
    ],
)
def test_a_state_file_off_its_documented_structure_is_exit_2_and_left_untouched(site: Site, edit: str) -> None:
    assert site.fake is not None
    recorded(site)
    damaged_json(site, edit)
    before = site.state_bytes()
    change_first_page(site)
    for result in (site.check(), site.run()):
        assert result.code == 2, (edit, result)
        assert "restore" in result.err and "Traceback" not in result.err
    assert site.state_bytes() == before and site.fake.posts == []


def test_an_honest_state_in_any_layout_reads(site: Site) -> None:
    recorded(site)
    damaged_json(site, "pass")  # the same document, parsed whole
    change_first_page(site)
    assert site.run().code == 0


@pytest.mark.parametrize("stamp", [b"5", b"{}", b"[]", b"true"])
def test_a_damaged_record_in_an_unread_part_stops_the_run_before_its_first_request(site: Site, stamp: bytes) -> None:
    """The part holding a pending URL is not re-read (its file did not change); its records
    are checked before anything is sent, not when the delivery is recorded."""
    assert site.fake is not None
    recorded(site)
    change_first_page(site)
    site.fake.plan = [status(503)] * 20
    assert site.run().code == 3
    data = site.state.read_bytes()
    loc = f'"{BASE}/p/1/":['.encode()
    start = data.index(loc) + len(loc)
    end = data.index(b"]", start)
    fields = data[start:end].split(b",")
    fields[2] = stamp
    site.state.write_bytes(data[:start] + b",".join(fields) + data[end:])
    before = site.state_bytes()
    site.fake.plan = []
    posts = len(site.fake.posts)
    result = site.run()
    assert result.code == 2 and ("last_submitted" in result.err or "malformed" in result.err), result
    assert len(site.fake.posts) == posts and site.state_bytes() == before


def test_a_part_of_the_written_layout_with_fewer_records_than_its_count_is_exit_2(site: Site) -> None:
    """The state as a run writes it (each part's records read only when needed): a record cut
    out by hand is found when the part is read again, before anything is sent."""
    assert site.fake is not None
    recorded(site)
    data = site.state.read_bytes()
    loc = f'"{BASE}/p/1/":['.encode()
    start = data.index(loc)
    site.state.write_bytes(data[:start] + data[data.index(b"],", start) + 2 :])
    before = site.state_bytes()
    change_first_page(site)
    for result in (site.check(), site.run()):
        assert result.code == 2 and 'holds 2 URL records where its "count" says 3' in result.err, result
    assert site.state_bytes() == before and site.fake.posts == []


SQLITE_DAMAGE = [
    "UPDATE parts SET urls = '{}'",
    "UPDATE parts SET count = count + 1, missing = 0",
    "UPDATE parts SET origins = 'not json'",
    "UPDATE parts SET count = 'many'",
    "UPDATE parts SET fingerprints = x'0102'",
    "UPDATE parts SET urls = '{\"x\": 5}'",
    "INSERT INTO pending (endpoint, reason, since, urls) VALUES ('https://e/', 'added', '2024-01-01T00:00:00Z', '[oops')",
    "INSERT INTO pending (endpoint, reason, since, urls) VALUES ('https://e/', 'because', '2024-01-01T00:00:00Z', '[]')",
    "INSERT INTO delivered (endpoint, at, urls) VALUES ('https://e/', '2024-01-01T00:00:00Z', 'nope')",
    "INSERT INTO delivered (endpoint, at, urls) VALUES ('https://e/', '2024-01-01T00:00:00Z', '[5]')",
    "INSERT INTO runs (record) VALUES ('{bad')",
    "INSERT INTO runs (record) VALUES ('[1, 2]')",
    "UPDATE meta SET value = 'x' WHERE key = 'version'",
]


@pytest.mark.parametrize("statement", SQLITE_DAMAGE)
def test_a_damaged_sqlite_state_is_exit_2_and_left_untouched(site: Site, statement: str) -> None:
    assert site.fake is not None
    site.state = site.root / "state" / "notify-changes.sqlite"
    recorded(site)
    with sqlite3.connect(site.state) as connection:
        connection.execute(statement)
    connection.close()
    before = site.state_bytes()
    change_first_page(site)
    for result in (site.check(), site.run()):
        assert result.code == 2, (statement, result)
        assert "Traceback" not in result.err and site.state.name in result.err
    assert site.state_bytes() == before and site.fake.posts == []


# -- 3. any legal file name, both stores -----------------------------------------------------------
@pytest.mark.parametrize("name", ["deploy #1?x.sqlite", "a%20b.sqlite", "deploy #1?x.json", "plain ;?&=.db"])
def test_any_legal_file_name_holds_the_state(site: Site, name: str) -> None:
    assert site.fake is not None
    site.state = site.root / "st" / name
    recorded(site)
    assert sorted(path.name for path in site.state.parent.iterdir() if not path.name.endswith(".lock")) == [name]
    change_first_page(site)
    result = site.run()
    assert result.code == 0 and "1 changed" in result.out and "baseline" not in result.out
    assert site.fake.delivered() == [f"{BASE}/p/0/"]


# -- 4. a symlinked state path -----------------------------------------------------------------------
@pytest.mark.parametrize("store", STORES)
def test_a_symlinked_state_is_written_through_the_link(site: Site, store: str, tmp_path: Path) -> None:
    volume = tmp_path / "volume"
    volume.mkdir()
    target = volume / store
    link = site.root / "state" / store
    link.parent.mkdir(parents=True)
    link.symlink_to(target)
    site.state = link
    recorded(site)
    change_first_page(site)
    assert site.run().code == 0
    assert link.is_symlink() and link.resolve() == target and target.is_file()
    assert (volume / f"{store}.lock").exists() and not (link.parent / f"{store}.lock").exists()
    state = read_state(link)
    assert state is not None and state.url_count() == 3 and state.runs[-1]["changed"] == 1


def test_a_dangling_state_link_creates_its_target(site: Site, tmp_path: Path) -> None:
    target = tmp_path / "volume" / "notify-changes.json"
    target.parent.mkdir()
    site.state.parent.mkdir(parents=True)
    site.state.symlink_to(target)
    recorded(site)
    assert site.state.is_symlink() and target.is_file()


# -- 5. a URL that can never be sent ---------------------------------------------------------------
def test_an_unsendable_url_let_through_is_reported_and_never_queued(site: Site) -> None:
    assert site.fake is not None
    recorded(site)
    listed = pages(3)
    listed["javascript:alert(1)"] = "2024-05-01T00:00:00Z"
    site.write(urlset(listed))
    result = site.run("--rule", "url-invalid=warn")
    assert result.code == 0, result
    assert "can never be sent to IndexNow and were not queued" in result.out or "can never be sent" in result.out
    assert recorded_pending(site.state) == {}
    site.write(urlset(pages(3)))  # it leaves the sitemap, the override goes: nothing holds the deploy
    assert site.run().code == 0


def test_a_url_an_older_version_queued_that_can_never_be_sent_is_dropped_with_a_note(site: Site) -> None:
    assert site.fake is not None
    recorded(site)
    document = json.loads(site.state.read_bytes())
    stuck = ["javascript:alert(1)", "https://x.org/" + "a" * 2100, "mailto:a@b.c"]
    document["pending"] = {site.fake.endpoint: [{"reason": "added", "since": "2024-01-01T00:00:00Z", "urls": stuck}]}
    site.state.write_text(json.dumps(document))
    result = site.run()
    assert result.code == 0, result
    assert "dropped 3 pending URLs that no endpoint can accept" in result.out
    assert recorded_pending(site.state) == {} and site.fake.posts == []


def test_an_honest_site_has_nothing_refused(site: Site) -> None:
    recorded(site)
    change_first_page(site)
    result = site.run()
    assert result.code == 0 and "never" not in result.out and "dropped" not in result.out


# -- 6. the disk fills up at the final save, after every batch was delivered -------------------------
def test_a_full_disk_at_the_final_save_says_what_was_delivered_and_where_it_is_kept(
    site: Site, file_size_limit: Callable[[int], None]
) -> None:
    assert site.fake is not None
    recorded(site, 200)  # a state file of some kilobytes; a journal line of a few hundred bytes
    change_first_page(site, 200)
    site.fake.after_answer = lambda _: file_size_limit(4096)  # the disk fills once the batch is answered
    result = site.run()
    file_size_limit(resource.RLIM_INFINITY)
    assert result.code == 5, result  # delivered, not all recorded: never 2, "nothing submitted"
    assert result.out.startswith("0 added, 1 changed, 0 removed, 1 submitted, 0 pending\n"), result.out  # the report, as delivered
    assert "acknowledged 1 URL" in result.out and "notify-changes.json.journal" in result.out
    assert "folds those deliveries in" in result.out and "left as it was" not in result.out
    assert site.fake.delivered() == [f"{BASE}/p/0/"]

    site.fake.after_answer = None
    again = site.run()  # the journal is folded in: nothing is sent twice
    assert again.code == 0 and len(site.fake.posts) == 1
    assert recorded_pending(site.state) == {}
