"""A real PostgreSQL server for the tests: the one ``NOTIFY_CHANGES_POSTGRES`` names (``.ci/run``
starts a throw-away cluster and sets it), else a cluster of its own started here from the
installed binaries (as the ``postgres`` user when the tests run as root: PostgreSQL refuses
root). Each test gets a database of its own. Without a server the tests skip, saying why;
under ``CI=true`` they fail instead."""

from __future__ import annotations

import fcntl
import glob
import hashlib
import os
import random
import shutil
import subprocess
import tempfile
import urllib.parse
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

SERVER = "NOTIFY_CHANGES_POSTGRES"  # a libpq URI of a server where the tests may create databases
# where the lock that lets a test have the server to itself lives: the machine's temporary folder
# when this module is imported, before a test gives itself a folder of its own (conftest.py)
_LOCKS = Path(tempfile.gettempdir())


def _unavailable(reason: str) -> None:
    if os.environ.get("CI") == "true":
        pytest.fail(f"{reason}: CI must run the PostgreSQL tests (.ci/run starts a server)")
    pytest.skip(reason)


def _bindir() -> Path | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    if found:
        return Path(found[-1]).parent
    initdb = shutil.which("initdb")
    return Path(initdb).parent if initdb else None


def start_cluster(folder: Path) -> tuple[str, list[str]]:
    """initdb and start a cluster in ``folder`` on a Unix socket there; its URI, and the stop command."""
    bindir = _bindir()
    if bindir is None:
        raise FileNotFoundError("PostgreSQL is not installed (Debian: apt-get install postgresql)")
    as_user = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
    if as_user:
        shutil.chown(folder, "postgres")
    data, port = folder / "data", random.randint(40000, 60000)
    quiet = {"capture_output": True, "text": True, "check": True}
    subprocess.run([*as_user, str(bindir / "initdb"), "-D", str(data), "-A", "trust", "-U", "postgres", "--no-sync"], **quiet)  # type: ignore[call-overload]
    options = f"-k {folder} -p {port} -c listen_addresses='' -c fsync=off"
    subprocess.run([*as_user, str(bindir / "pg_ctl"), "-D", str(data), "-o", options, "-l", str(folder / "log"), "-w", "start"], **quiet)  # type: ignore[call-overload]
    stop = [*as_user, str(bindir / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop"]
    return f"postgresql://postgres@/postgres?host={folder}&port={port}", stop


@pytest.fixture(scope="session")
def pg_server() -> Iterator[str]:
    given = os.environ.get(SERVER)
    if given:
        yield given
        return
    folder = Path(tempfile.mkdtemp(prefix="nc-pg-"))
    try:
        url, stop = start_cluster(folder)
    except (FileNotFoundError, subprocess.CalledProcessError, OSError, LookupError) as error:
        shutil.rmtree(folder, ignore_errors=True)
        _unavailable(f"no PostgreSQL server for the tests ({error}); set {SERVER} to one")
        return
    try:
        yield url
    finally:
        subprocess.run(stop, capture_output=True, check=False)
        shutil.rmtree(folder, ignore_errors=True)


def database_url(server: str, name: str) -> str:
    split = urllib.parse.urlsplit(server)
    return urllib.parse.urlunsplit((split.scheme, split.netloc, f"/{name}", split.query, ""))


class ServerShare:
    """A test's share of the server, among the processes whose tests use it at once (the mutation
    harness runs two; the suite alone, one): shared by every test with a database, taken whole by
    a test that stops the server itself (``alone``), which would fail the others' tests for them."""

    def __init__(self, server: str) -> None:
        digest = hashlib.sha256(server.encode()).hexdigest()[:12]
        self.fd = os.open(_LOCKS / f"nc-pg-{digest}.lock", os.O_RDWR | os.O_CREAT, 0o666)
        fcntl.flock(self.fd, fcntl.LOCK_SH)

    def alone(self) -> None:
        fcntl.flock(self.fd, fcntl.LOCK_EX)  # converted: the shared lock is let go, then the whole taken

    def close(self) -> None:
        os.close(self.fd)  # and the lock with it


@pytest.fixture
def pg_share(pg_server: str) -> Iterator[ServerShare]:
    share = ServerShare(pg_server)
    try:
        yield share
    finally:
        share.close()


@pytest.fixture
def pg_url(pg_server: str, pg_share: ServerShare) -> Iterator[str]:
    """A fresh database on the test server, dropped after the test."""
    psycopg = pytest.importorskip("psycopg")
    name = f"nc_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(pg_server, autocommit=True) as admin:
        admin.execute(f"CREATE DATABASE {name}")
    try:
        yield database_url(pg_server, name)
    finally:
        with psycopg.connect(pg_server, autocommit=True) as admin:
            admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


@pytest.fixture
def pg_alone(pg_url: str, pg_share: ServerShare) -> str:
    """``pg_url``, with no other process's test on the server while this one runs (it stops the
    server: every other connection would wait, and its test fail, for this test's doing)."""
    pg_share.alone()
    return pg_url


def site_rows(location: object) -> bytes | None:
    """Every row a PostgreSQL site holds, in a stable order, as bytes (None: none, or no tables):
    what "the state was left as it was" compares for this store."""
    import psycopg

    from notifier.database import DatabaseURL

    assert isinstance(location, DatabaseURL)
    with psycopg.connect(location.dsn) as connection:
        tables = connection.execute("SELECT count(*) FROM information_schema.tables WHERE table_name = 'notify_changes_meta'").fetchone()
        if tables == (0,):
            return None
        dump = []
        for table, order in (("meta", "key"), ("parts", "n"), ("pending", "id"), ("delivered", "id"), ("runs", "id")):
            for row in connection.execute(f"SELECT * FROM notify_changes_{table} WHERE site = %s ORDER BY {order}", (location.site,)):
                dump.append(repr((table, [bytes(value) if isinstance(value, memoryview) else value for value in row])))
    return "\n".join(dump).encode() if dump else None
