"""The PostgreSQL store's decisions the whole suite let a mutant past (store/postgres.py, #44):
``state forget --backoff``'s clearing of the shared waits, in the database and in the state the
run goes on with. Each test names the edit it fails with."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from notifier.database import DatabaseURL
from notifier.store import State
from notifier.store.postgres import PostgresStore

pytest.importorskip("psycopg")

BING, YANDEX = "https://www.bing.com/indexnow", "https://yandex.com/indexnow"


def _endpoints(*names: str) -> Iterator[str]:
    yield from names


def test_clearing_a_wait_clears_it_in_the_database_and_in_the_state(pg_url: str) -> None:
    """The wait goes from every site's table and from this state, which the run saves after
    (edits: ``state.backoff.pop`` left out, which the next save writes back; ``list(endpoints)``
    removed, which an iterator passed spends on the state before the database sees it)."""
    location = DatabaseURL(pg_url, site="shop")
    state = State(updated="2030-01-01T12:00:00Z", backoff={BING: "2030-01-01T13:00:00Z", YANDEX: "2030-01-01T14:00:00Z"})
    with PostgresStore(location) as store:
        store.save(state)
        assert store.shared_waits() == state.backoff
        store.clear_waits(state, _endpoints(BING))
        assert state.backoff == {YANDEX: "2030-01-01T14:00:00Z"}
        assert store.shared_waits() == {YANDEX: "2030-01-01T14:00:00Z"}
