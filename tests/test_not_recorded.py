"""Delivered but not recorded (issue #39, item 11): a batch the endpoint received that the
state could not record, or a final save that failed after deliveries, is exit 5 (never 2,
"nothing submitted"), and the report (text or JSON) is printed with what was delivered."""

from __future__ import annotations

import json
import resource
from collections.abc import Callable

from notifier.errors import EXIT_CODE_MEANINGS, ExitCode
from notifier.pipeline.sites import SEVERITY
from tests.conftest import BASE, Site, pages, recorded_pending, urlset


def test_a_final_save_that_fails_after_deliveries_is_exit_5_with_the_json_report(
    site: Site, file_size_limit: Callable[[int], None]
) -> None:
    assert site.fake is not None
    site.write(urlset(pages(200)))
    assert site.run().code == 0
    site.write(urlset(pages(202)))
    site.fake.after_answer = lambda _: file_size_limit(4096)  # the disk fills once the batch is answered
    result = site.run("--format", "json")
    file_size_limit(resource.RLIM_INFINITY)
    assert result.code == ExitCode.NOT_RECORDED and int(result.code) == 5, result
    report = json.loads(result.out)
    assert report["exit_code"] == 5 and report["submitted"] == 2 and report["pending"] == 0
    assert [(batch["status"], batch["count"]) for batch in report["batches"]] == [("delivered", 2)]
    assert any("the endpoints acknowledged 2 URLs" in note and "folds those deliveries in" in note for note in report["notes"])
    site.fake.after_answer = None
    assert site.run().code == 0 and len(site.fake.posts) == 1  # the journal is folded in: nothing sent twice


def test_a_batch_received_but_not_recorded_is_exit_5_reported_and_sent_again(site: Site) -> None:
    """The journal cannot take the first batch's line: that batch stays pending on disk (the
    report says so), the second is not sent, and the next run sends both."""
    assert site.fake is not None
    site.write(urlset(pages(1)))
    assert site.run().code == 0
    site.write(urlset(pages(5)))
    journal = site.state.with_name(site.state.name + ".journal")
    site.fake.on_post = lambda _: journal.mkdir(exist_ok=True)  # before the answer: nothing can be appended there once it is received
    result = site.run("--batch-size", "2", "--format", "json")
    assert result.code == 5, result
    report = json.loads(result.out)
    first = [f"{BASE}/p/1/", f"{BASE}/p/2/"]
    assert report["exit_code"] == 5 and report["submitted"] == 2 and len(site.fake.posts) == 1
    assert sorted(report["urls"]["pending"]) == [f"{BASE}/p/{n}/" for n in range(1, 5)]  # the received batch too
    assert any("acknowledged a batch of 2 URLs, but it could not be recorded" in note for note in report["notes"])
    journal.rmdir()
    assert sorted(recorded_pending(site.state)[site.fake.endpoint]) == [f"{BASE}/p/{n}/" for n in range(1, 5)]
    site.fake.on_post = None
    again = site.run("--batch-size", "2")
    assert again.code == 0 and site.fake.delivered()[2:4] == first  # sent again: at least once, never lost


def test_exit_5_has_its_meaning_and_its_place_among_the_sites_codes() -> None:
    assert "next run sends that part again" in EXIT_CODE_MEANINGS[ExitCode.NOT_RECORDED]
    assert SEVERITY.index(ExitCode.LOCKED) < SEVERITY.index(ExitCode.NOT_RECORDED) < SEVERITY.index(ExitCode.SUBMISSION_INCOMPLETE)
