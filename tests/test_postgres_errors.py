"""Every PostgreSQL failure is an input or state error with its documented code, never exit 70
(issue #39 items 10 and 14), against the real server the suite starts: the run's connection
terminated by the server (``pg_terminate_backend``: a restart, a failover, an administrator)
at each moment the run talks to it, a connection text libpq cannot read, and a ledger table
that is gone."""

from __future__ import annotations

import contextlib
import io
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import notifier.store.postgres as postgres
from notifier.cli import main
from notifier.database import DatabaseURL
from tests.conftest import Site, index, pages, urlset

psycopg = pytest.importorskip("psycopg")

SITE = "shop"


@pytest.fixture(autouse=True)
def _crash_logs_here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A PostgreSQL state's crash log goes to the temporary folder: this test's own."""
    import tempfile

    (tmp_path / "tmp").mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))


def _terminate_the_runs_connection(pg_url: str) -> None:
    """What a server restart does to the run: its backend ends, its socket closes."""
    with psycopg.connect(pg_url, autocommit=True) as admin:
        ended = admin.execute(
            "SELECT pg_terminate_backend(pid, 10000) FROM pg_stat_activity "
            "WHERE application_name = 'notify-changes' AND pid <> pg_backend_pid() AND datname = current_database()"
        ).fetchall()
    assert ended and all(done for (done,) in ended), ended


def _indexed_site(site: Site, pg_url: str) -> Site:
    """A site of five parts recorded in PostgreSQL, then a deploy that changed every part:
    the diff reads each part's records from the server as it goes."""
    site.state = DatabaseURL(pg_url, site=SITE)  # type: ignore[assignment]
    site.write(index({f"/part-{n}.xml": None for n in range(5)}))
    for n in range(5):
        site.write(urlset(pages(3, prefix=f"/s{n}/")), f"part-{n}.xml")
    assert site.run().code == 0
    for n in range(5):
        site.write(urlset(pages(4, prefix=f"/s{n}/")), f"part-{n}.xml")
    return site


def _before(monkeypatch: pytest.MonkeyPatch, owner: Any, name: str, pg_url: str) -> list[bool]:
    """``owner.name`` (a store method) runs after the server has terminated the run's connection (once)."""
    real: Callable[..., Any] = getattr(owner, name)
    done: list[bool] = []

    def terminated_first(*args: Any, **kwargs: Any) -> Any:
        if not done:
            done.append(True)
            _terminate_the_runs_connection(pg_url)
        return real(*args, **kwargs)

    monkeypatch.setattr(owner, name, terminated_first)
    return done


def _no_crash(site: Site, code: int, err: str) -> None:
    assert code != 70 and "internal error" not in err and "Traceback" not in err, err
    assert not list(site.root.rglob("notify-changes-crash*.log"))  # beside a state file, or in the temporary folder (_crash_logs_here)


@pytest.mark.parametrize("command", ["run", "check"])
def test_a_connection_dropped_while_the_diff_reads_parts_is_exit_2(
    site: Site, pg_url: str, monkeypatch: pytest.MonkeyPatch, command: str
) -> None:
    """The attack's ``AdminShutdown`` (4 of 5 tries): the diff asks for a part's records on
    a connection the server has closed. One line, exit 2, and the state as it was."""
    _indexed_site(site, pg_url)
    real_blob = postgres._blob
    fetched: list[int] = []

    def dropped_before_the_first(connection: Any, location: DatabaseURL) -> Callable[[int], bytes]:
        fetch = real_blob(connection, location)

        def first_dropped(row: int) -> bytes:
            if not fetched:
                _terminate_the_runs_connection(pg_url)
            fetched.append(row)
            return fetch(row)

        return first_dropped

    monkeypatch.setattr(postgres, "_blob", dropped_before_the_first)
    before = site.state_bytes()
    result = site.run(command=command)
    assert fetched, "the diff read no part from the server"
    assert result.code == 2, result
    errors = [line for line in result.err.splitlines() if not line.startswith("notify-changes: reading part")]  # the step lines
    assert len(errors) == 1 and "the connection to the PostgreSQL state was lost" in errors[0], result.err
    _no_crash(site, result.code, result.err)
    assert site.state_bytes() == before
    assert site.run().code == 0  # the next run goes through


# (store method, the code the run ends with, what its one line says): every exchange of a run
MOMENTS = [
    ("shared_waits", 2, "the connection to the PostgreSQL state was lost"),  # every site's waits, read as the run begins
    ("load", 2, "the connection to the PostgreSQL state was lost"),
    ("save", 2, "the connection to the PostgreSQL state was lost"),  # the pending set, before anything is sent
    ("record_delivered", 5, "could not be recorded"),  # received by the endpoint, not recorded: sent again next run
    ("record_ledger", 5, "could not"),  # the ledger is a note; the final save then fails after deliveries
]


@pytest.mark.parametrize(("method", "code", "says"), MOMENTS, ids=[moment[0] for moment in MOMENTS])
def test_a_connection_dropped_at_any_moment_of_a_run_is_a_documented_exit_code(
    site: Site, pg_url: str, monkeypatch: pytest.MonkeyPatch, method: str, code: int, says: str
) -> None:
    site.state = DatabaseURL(pg_url, site=SITE)  # type: ignore[assignment]
    site.write(urlset(pages(2)))
    assert site.run().code == 0
    site.write(urlset(pages(4)))
    done = _before(monkeypatch, postgres.PostgresStore, method, pg_url)
    result = site.run()
    assert done, f"the run never reached {method}"
    _no_crash(site, result.code, result.err)
    assert result.code == code, result
    assert says in result.out + result.err, result.out + result.err
    if method == "record_delivered":  # the batch is not recorded: no note may say the deliveries are
        assert "the deliveries themselves are recorded" not in result.out
    again = site.run()
    assert again.code == 0, again


@pytest.mark.parametrize(
    "dsn",
    [
        "postgresql://u:pw-secret@[::1:5432/db",  # an IPv6 literal never closed
        "postgresql://u:pw-secret@h:99999/db",  # a port out of range
        "postgresql://u:pw-secret@h:abc/db",
        "postgresql://u:%zz-secret@h/db",  # a percent sign that is no escape
        "postgresql://u:pw-secret@h/db?connect_timeout=soon",
        "postgresql://u:pw-secret@h/db?no_such_parameter=1",
        "postgresql:///db?host=%00&password=pw-secret",
    ],
)
@pytest.mark.parametrize("words", [["check"], ["run"], ["state", "show"], ["state", "history"], ["state", "export"], ["state", "pending"]])
def test_a_connection_text_libpq_cannot_read_is_one_line_and_exit_2(site: Site, dsn: str, words: list[str]) -> None:
    site.write(urlset(pages(1)))
    argv = [*words, *([str(site.sitemap)] if words[0] in ("check", "run") else []), "--state", dsn, "--site-name", SITE]
    code, out, err = _main(argv)
    assert code == 2, (out, err)
    assert err.count("\n") == 1 and err.startswith("notify-changes: error: "), err
    assert "secret" not in out + err and "pw-" not in out + err
    _no_crash(site, code, err)


@pytest.mark.parametrize("text", ["host=h password='never-closed", "host=h dbname=x password"])
def test_a_keyword_connection_string_libpq_cannot_read_is_refused_never_a_file(site: Site, text: str) -> None:
    """A ``key=value`` string with an unclosed quote (or a keyword without its value) is a
    connection string gone wrong: one line, exit 2, no file made under the password's name."""
    site.write(urlset(pages(1)))
    code, out, err = _main(["run", str(site.sitemap), "--state", text, "--site-name", SITE])
    assert code == 2 and err.count("\n") == 1, (out, err)
    assert "never-closed" not in out + err and "key=value" in err
    assert not [path for path in Path.cwd().iterdir() if "host=" in path.name]


def _main(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue(), err.getvalue()


# -- item 14: a ledger table that is gone ---------------------------------------------------------
def test_a_missing_ledger_table_is_made_again_and_the_run_goes_on(site: Site, pg_url: str) -> None:
    """Nothing depends on the ledger: dropped (by hand, a partial restore), it is made again
    by the next run, which sends and records as ever; state history says what it holds."""
    site.state = DatabaseURL(pg_url, site=SITE)  # type: ignore[assignment]
    site.write(urlset(pages(2)))
    assert site.run().code == 0
    with psycopg.connect(pg_url, autocommit=True) as admin:
        admin.execute("DROP TABLE notify_changes_ledger")
    assert _main(["state", "history", *site.state_args])[0] == 0  # read-only: nothing to show, no error
    site.write(urlset(pages(3)))
    checked = site.check()
    assert checked.code == 0, checked
    result = site.run()
    assert result.code == 0 and "restore" not in result.out + result.err, result
    assert site.fake is not None and site.fake.delivered()
    with psycopg.connect(pg_url, autocommit=True) as admin:
        (rows,) = admin.execute("SELECT count(*) FROM notify_changes_ledger WHERE site = %s", (SITE,)).fetchone()
    assert rows == 1  # the batch this run sent
    code, out, _ = _main(["state", "history", *site.state_args])
    assert code == 0 and "1 URL" in out, out
