"""A throw-away PostgreSQL cluster for scripts/bench.py (the tests' own, tests/postgres.py):
the server ``NOTIFY_CHANGES_POSTGRES`` names, else one started in the bench's folder; None
(the PostgreSQL rows left out, said on stderr) when there is neither."""

from __future__ import annotations

import atexit
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.postgres import SERVER, database_url, start_cluster  # the repository's tests, beside scripts/


@dataclass
class Database:
    server: str
    name: str = "nc_bench"

    @property
    def url(self) -> str:
        return database_url(self.server, self.name)

    def empty(self) -> None:
        """A fresh database: the next run records a baseline in it."""
        import psycopg

        with psycopg.connect(self.server, autocommit=True) as admin:
            admin.execute(f"DROP DATABASE IF EXISTS {self.name} WITH (FORCE)")
            admin.execute(f"CREATE DATABASE {self.name}")


def start(folder: Path) -> Database | None:  # the bench's folder: the cluster needs one the postgres user can enter
    given = os.environ.get(SERVER)
    if given:
        return Database(given)
    cluster = Path(tempfile.mkdtemp(prefix="nc-bench-pg-"))  # in /tmp: the postgres user cannot enter the bench's own folder
    try:
        url, stop = start_cluster(cluster)
    except (FileNotFoundError, subprocess.CalledProcessError, OSError, LookupError) as error:
        print(f"no PostgreSQL server ({error}): the postgresql rows are left out", file=sys.stderr)
        return None
    atexit.register(shutil.rmtree, cluster, ignore_errors=True)
    atexit.register(subprocess.run, stop, capture_output=True, check=False)  # runs first: stop, then remove
    return Database(url)
