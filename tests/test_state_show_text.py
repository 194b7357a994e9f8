"""``state show``'s text as a whole: every section under its heading, in order, so that a
reader (and a script that greps it) finds each where it was. The other tests look for one
line each; these name the mutants of scripts/mutate.py they kill (#44): every heading left out."""

from __future__ import annotations

import datetime as dt
import json

from notifier.store.jsonfile import JsonStore
from tests.conftest import Site, pages, urlset
from tests.test_backoff_seen import _deploy, _now, _state, _told_to_wait


def headings(text: str) -> list[str]:
    return [line.split(" (")[0].split(":")[0] for line in text.splitlines() if not line.startswith(" ")]


def test_state_show_puts_each_section_under_its_heading(site: Site) -> None:
    assert site.fake is not None
    now = _now()
    _told_to_wait(site, now)
    shown = _state(site, "show")
    assert shown.code == 0, shown.err
    lines = shown.out.splitlines()
    assert lines[0] == f"{site.state} (JSON store, format {lines[0].rsplit(' ', 1)[1]}"
    assert lines[1].startswith("  created 20") and ", last updated 20" in lines[1]
    assert headings(shown.out)[1:] == ["pending", "waits", "last runs"]
    assert "  1 run(s)" not in shown.out and lines[-1].lstrip().split(" ", 1)[1].startswith("run: 2 added")
    site.fake.plan = []
    assert _deploy(site, now + dt.timedelta(hours=2)).exit_code == 0  # the wait over: sent
    after = _state(site, "show")
    assert "pending: nothing" in after.out.splitlines() and headings(after.out)[1:] == ["pending", "last runs"]


def test_a_state_without_its_times_says_unknown_and_null(site: Site) -> None:
    """A state some older version wrote without "created" and "updated": the text says unknown,
    the JSON null (kills ``state.created or None`` / ``state.updated or None`` losing ``None``,
    the two survivors of the last report, and the text line left out)."""
    site.write(urlset(pages(1)))
    assert site.run().code == 0
    store = JsonStore(site.state)
    state = store.load()
    assert state is not None
    state.created, state.updated = "", ""
    store.save(state)
    assert json.loads(site.state.read_text()).get("created", "") == ""
    shown = _state(site, "show")
    assert "  created unknown, last updated unknown" in shown.out.splitlines(), shown.out
    summary = json.loads(_state(site, "show", "--format", "json").out)
    assert (summary["created"], summary["updated"]) == (None, None)
