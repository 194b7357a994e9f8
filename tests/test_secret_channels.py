"""A secret that reaches one output reaches the others (issue #39): the key and a database
password, on every channel — stderr lines, annotations, the job summary, `state show`, the
crash log the user is asked to attach to a public issue. PostgreSQL against the real server."""

from __future__ import annotations

import os
import stat
import urllib.parse
from pathlib import Path

import pytest

import notifier.pipeline.loop
from notifier.cli import main
from notifier.crash import LOG_NAME
from notifier.database import DatabaseURL, is_database_url, passwords, without_password
from tests.conftest import KEY, Site, pages, urlset

PASSWORD = "hunter2-database-pw"


def _with_password(url: str, password: str) -> str:
    """The test server's URI (trust authentication: any password connects) with ``password`` in its userinfo."""
    scheme, _, rest = url.partition("://")
    user, _, host = rest.partition("@")
    return f"{scheme}://{user}:{password}@{host}"


def _keyword_form(url: str, password: str) -> str:
    """The test server as a libpq ``key=value`` connection string."""
    split = urllib.parse.urlsplit(url)
    query = dict(urllib.parse.parse_qsl(split.query))
    return f"host={query['host']} port={query['port']} dbname={split.path.lstrip('/')} user=postgres password='{password}'"


class _Bug(Exception):
    pass


def test_a_crash_log_holds_no_key_and_no_password_is_0600_and_follows_no_link(
    site: Site, pg_url: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """An internal error whose text holds the key and the connection URI (a driver's message
    can): the log redacts the command line and the traceback, is its owner's only, and a
    link planted under its name in the shared temporary folder is left alone."""
    import tempfile

    shared = tmp_path / "tmp"
    shared.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(shared))  # a PostgreSQL state's crash log goes there
    target = tmp_path / "victim"
    target.write_text("keep me\n")
    (shared / LOG_NAME).symlink_to(target)
    dsn = _with_password(pg_url, PASSWORD)

    def bug(*args: object, **kwargs: object) -> None:
        raise _Bug(f"could not use {dsn} with key {KEY}")

    monkeypatch.setattr(notifier.pipeline.loop, "execute", bug)
    site.write(urlset(pages(1)))
    site.state = DatabaseURL(dsn, site="shop")  # type: ignore[assignment]
    result = site.run()  # --key KEY on its command line
    assert result.code == 70
    assert "(keys and passwords redacted)" in result.err and PASSWORD not in result.err and KEY not in result.err
    assert target.read_text() == "keep me\n"  # never written through the link
    logs = [path for path in shared.iterdir() if path.name != LOG_NAME]
    assert len(logs) == 1 and logs[0].name.startswith("notify-changes-crash-") and f"the traceback is in {logs[0]}" in result.err
    text = logs[0].read_text()
    assert "_Bug: could not use postgresql://postgres:•••@" in text and f"with key {KEY[:4]}…" in text  # the traceback, redacted
    assert "'--key', '0123…'" in text and "--state" in text  # the command line, to reproduce it
    assert KEY not in text and PASSWORD not in text
    assert stat.S_IMODE(logs[0].stat().st_mode) == 0o600


def test_a_second_crash_beside_the_state_takes_a_fresh_name(site: Site, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("INDEXNOW_KEY", KEY)

    def bug(*args: object, **kwargs: object) -> None:
        raise _Bug(f"the key was {KEY}")

    site.write(urlset(pages(1)))
    assert site.run().code == 0
    monkeypatch.setattr(notifier.pipeline.loop, "execute", bug)
    assert site.run(key=False).code == 70
    assert site.run(key=False).code == 70
    logs = sorted(site.state.parent.glob("notify-changes-crash*.log"))
    assert len(logs) == 2 and (site.state.parent / LOG_NAME) in logs
    for log in logs:
        assert KEY not in log.read_text() and stat.S_IMODE(log.stat().st_mode) == 0o600


@pytest.mark.parametrize("password", ["50%off-sale", "pass%00word"])
def test_a_malformed_password_is_never_printed(
    site: Site, pg_url: str, password: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """libpq quotes a percent sign that is no escape, or an escaped NUL, whole in its error:
    the error line, the annotation and the job summary show neither."""
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    site.write(urlset(pages(1)))
    site.state = DatabaseURL(_with_password(pg_url, password), site="shop")  # type: ignore[assignment]
    result = site.run("--format", "github")
    assert result.code == 2, result
    assert "::error title=notify-changes::" in result.out and "cannot connect to the PostgreSQL state" in result.err, result.err
    shown = result.out + result.err + summary.read_text()
    assert password not in shown and password.replace("%00", "\x00") not in shown
    assert result.err.count("\n") == 1


def test_a_keyword_connection_string_is_a_postgresql_state(site: Site, pg_url: str) -> None:
    """``host=… dbname=… password=…`` is libpq's other form: a database, never a file named
    after the password; --site-name holds; the password shows nowhere."""
    dsn = _keyword_form(pg_url, PASSWORD)
    assert is_database_url(dsn) and not is_database_url("state/site=shop.json")
    site.write(urlset(pages(2)))
    site.state = DatabaseURL(dsn, site="shop")  # type: ignore[assignment]
    result = site.run()
    assert result.code == 0, result.err
    assert not list(site.root.glob("*password*")) and not list(Path.cwd().glob("*password*"))
    shown = _state_show(dsn, "shop")
    assert "(PostgreSQL store" in shown and "(site shop)" in shown and PASSWORD not in shown
    assert f"dbname={urllib.parse.urlsplit(pg_url).path.lstrip('/')} user=postgres (site shop)" in shown


def test_a_password_in_a_percent_encoded_parameter_name_is_never_printed(site: Site, pg_url: str) -> None:
    """libpq decodes a query parameter's name: ``?pass%77ord=`` is the password, and
    ``state show`` shows the URI without it (redacted by parsing, not by its shape)."""
    dsn = f"{pg_url}&pass%77ord={PASSWORD}"
    site.write(urlset(pages(1)))
    site.state = DatabaseURL(dsn, site="shop")  # type: ignore[assignment]
    assert site.run().code == 0
    shown = _state_show(dsn, "shop")
    assert "(PostgreSQL store" in shown and PASSWORD not in shown and "pass%77ord" not in shown


def _state_show(dsn: str, site: str) -> str:
    import contextlib
    import io

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["state", "show", "--state", dsn, "--site-name", site])
    assert code == 0, err.getvalue()
    return out.getvalue() + err.getvalue()


@pytest.mark.parametrize(
    ("dsn", "shown", "secrets"),
    [
        ("postgresql://u:50%off@h/db", "postgresql://u@h/db", ["50%off"]),
        ("postgresql://u:pw@[::1:5432/db", "postgresql://u@[::1:5432/db", ["pw"]),
        ("postgres://u@h/db?sslmode=require&PASS%77ORD=s3&sslpassword=s4", "postgres://u@h/db?sslmode=require", ["s3", "s4"]),
        ("postgresql://u:a%40b@h/d", "postgresql://u@h/d", ["a%40b", "a@b"]),
        ("postgresql://u:p@ss@h/d", "postgresql://u@h/d", ["p@ss", "p"]),  # libpq ends the userinfo at the first "@"
        ("host=h password='s p\\'c' dbname=x", "host=h dbname=x", ["s p\\'c", "s p'c"]),
    ],
)
def test_a_connection_text_is_shown_without_its_passwords(dsn: str, shown: str, secrets: list[str]) -> None:
    assert without_password(dsn) == shown
    assert sorted(passwords(dsn)) == sorted(secrets)
    assert os.sep not in without_password("host=h")  # a keyword string is never a path
