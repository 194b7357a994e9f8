"""Messages that say only what is so on the path that prints them (issue 38, item 9): a short
run writes no progress step, one site is not "all 1 sites", every command is listed where the
user looks for it, and a run that waits for another run's lock says so once."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest

from notifier.cli import TOOLS, main, make_parser
from notifier.commands.key import KEY_ACTIONS
from notifier.commands.state_request import ACTIONS
from notifier.database import DatabaseURL
from notifier.environment import Environment
from notifier.errors import LockTimeout
from notifier.pipeline.loop import execute
from notifier.settings.settings import build_settings
from notifier.store import open_store
from tests.conftest import KEY, Site, pages, urlset
from tests.docs import page
from tests.fakeindexnow import FakeIndexNow
from tests.test_sites import _monorepo

CONFIGURATION = page("configuration.md")


def test_a_run_of_one_batch_writes_no_step_and_a_run_of_two_writes_each(site: Site) -> None:
    """The README: "short runs (one sitemap file or an index of one part, one batch an endpoint) write none"."""
    site.write(urlset(pages(2)))
    assert site.run().code == 0
    site.write(urlset(pages(4)))
    result = site.run()
    assert result.code == 0 and "2 submitted" in result.out, result.out
    assert result.err == ""  # was "notify-changes: sending batch 1/1 to 127.0.0.1: 2 URLs of ..."
    site.write(urlset(pages(6)))
    result = site.run("--batch-size", "1")
    assert re.findall(r"sending batch (\d/\d)", result.err) == ["1/2", "2/2"], result.err


def test_one_site_of_a_config_is_one_site_not_all_1_sites(tmp_path: Path, fake: FakeIndexNow, capsys: pytest.CaptureFixture[str]) -> None:
    config = _monorepo(tmp_path, fake)
    assert main(["check", "--config", str(config), "--key", KEY, "--site", "docs"]) == 0
    last = capsys.readouterr().out.rstrip().splitlines()[-1]
    assert last == "1 site: 3 added, 0 changed, 0 removed, 0 submitted, 0 pending", last
    assert main(["check", "--config", str(config), "--key", KEY]) == 0
    assert capsys.readouterr().out.rstrip().splitlines()[-1].startswith("all 2 sites: 6 added")


def _commands() -> list[str]:
    """Every command a user can type, from the code's own tables."""
    words = [f"key {action}" for action in KEY_ACTIONS] + [f"state {action}" for action in ACTIONS]
    return words + [tool for tool in TOOLS if tool not in ("key", "state")]


def test_every_command_is_in_the_readmes_command_list_and_the_top_level_help() -> None:
    listed = CONFIGURATION.split("\nCommands: ", 1)[1].split("\n\n", 1)[0].replace("\n", " ")
    described = " ".join(make_parser().description.split())  # type: ignore[union-attr]
    for command in _commands():
        group, _, action = command.partition(" ")
        for text, where in ((listed, "docs/configuration.md"), (described, "--help")):
            if action and group == "state":
                states = re.search(r"state ((?:[a-z]+\|)+[a-z]+)", text)
                assert states is not None and action in states.group(1).split("|"), (command, where)
            else:
                assert command in text, (command, where)


def _settings(site: Site, state: Path | str, *extra: str) -> object:
    cli: dict[str, object] = {"sitemap": str(site.sitemap), "state": state, "key": KEY, "lock-timeout": "5"}
    if site.fake is not None:
        cli["endpoint"] = [site.fake.endpoint]
    for name, value in zip(extra[::2], extra[1::2], strict=True):
        cli[name] = value
    return build_settings("run", cli, environ={})


class _Clock:
    """The injected monotonic clock and sleep of a run waiting for a lock; ``on_sleep`` runs at each sleep."""

    def __init__(self) -> None:
        self.now = 0.0
        self.sleeps = 0
        self.on_sleep: list[Callable[[], None]] = []

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps += 1
        self.now += seconds
        for call in self.on_sleep:
            call()


class _Holder:
    """Another run holding the lock: a store of the same state, opened and closed by the test."""

    def __init__(self, state: Path | DatabaseURL) -> None:
        self.store = open_store(state)

    def hold(self) -> None:
        self.store.acquire()

    def let_go(self) -> None:
        self.store.release()


class _PostgresHolder(_Holder):
    """A run on another machine: its connection holds the site's advisory lock, and lets go of
    it in a statement that returns when it is let go (a closed connection lets go later)."""

    def __init__(self, url: str, site: str) -> None:
        import psycopg

        self.connection = psycopg.connect(url, autocommit=True)
        self.name = f"notify-changes:{site}"

    def hold(self) -> None:
        self.connection.execute("SELECT pg_advisory_lock(hashtextextended(%s, 0))", (self.name,))

    def let_go(self) -> None:
        self.connection.execute("SELECT pg_advisory_unlock(hashtextextended(%s, 0))", (self.name,))
        self.connection.close()


def _waits_once(site: Site, state: Path | str, holder: _Holder, expected: str, *extra: str) -> None:
    """A run while ``holder`` holds the lock: one line as the wait starts, then exit 4 after
    --lock-timeout; then, the holder letting go at the run's third sleep, the run goes on."""
    said: list[str] = []
    clock = _Clock()
    settings = _settings(site, state, *extra)
    holder.hold()
    with pytest.raises(LockTimeout):
        execute(settings, Environment(clock=clock.clock, sleep=clock.sleep, notice=said.append))  # type: ignore[arg-type]
    assert clock.sleeps > 10 and said == [expected], said  # said once, not once a try
    said.clear()
    clock.sleeps = 0

    def third_sleep() -> None:
        if clock.sleeps == 3:
            holder.let_go()

    clock.on_sleep.append(third_sleep)
    report = execute(settings, Environment(clock=clock.clock, sleep=clock.sleep, notice=said.append))  # type: ignore[arg-type]
    assert report.exit_code == 0 and clock.sleeps == 3 and said == [expected], said


def test_a_run_waiting_for_a_state_files_lock_says_once_what_it_waits_for(site: Site) -> None:
    site.write(urlset(pages(2)))
    expected = f"waiting for the state lock of {site.state}: another notify-changes run holds it; waiting up to 5 s (--lock-timeout)"
    _waits_once(site, site.state, _Holder(site.state), expected)


def test_a_run_waiting_for_a_sqlite_states_lock_says_so_too(site: Site) -> None:
    site.write(urlset(pages(2)))
    state = site.root / "state" / "deploys.sqlite"
    expected = f"waiting for the state lock of {state}: another notify-changes run holds it; waiting up to 5 s (--lock-timeout)"
    _waits_once(site, state, _Holder(state), expected)


def test_a_run_waiting_for_a_postgresql_sites_lock_names_the_site_not_the_password(site: Site, pg_url: str) -> None:
    pytest.importorskip("psycopg")
    site.write(urlset(pages(2)))
    secret = pg_url.replace("postgres@", "postgres:s3cret-pw@", 1)  # a password in the URI is never said
    where = DatabaseURL(pg_url, site="shop")
    expected = f"waiting for the lock of {where}: another notify-changes run holds it; waiting up to 5 s (--lock-timeout)"
    assert "(site shop)" in expected and "s3cret" not in expected
    _waits_once(site, secret, _PostgresHolder(pg_url, "shop"), expected, "site-name", "shop")


def test_the_program_says_the_wait_on_stderr(site: Site) -> None:
    """The CLI's notice printer carries it: one line on stderr, then the lock's exit 4."""
    site.write(urlset(pages(2)))
    with open_store(site.state):
        result = site.run("--lock-timeout", "0.1")
    assert result.code == 4, result
    lines = result.err.splitlines()
    assert lines[0] == (
        f"notify-changes: waiting for the state lock of {site.state}: another notify-changes run holds it; "
        "waiting up to 0.1 s (--lock-timeout)"
    )
    assert len(lines) == 2 and "after waiting 0.1 s" in lines[1]


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (("--dry-run",), "nothing was sent and the state is as it was"),
        ((), "the batch in flight stays pending and the state is consistent"),
    ],
)
def test_an_interrupt_says_what_it_left_for_the_command_it_cut(
    site: Site, monkeypatch: pytest.MonkeyPatch, args: tuple[str, ...], said: str
) -> None:
    """A check or a dry run sends nothing: its interrupt has no batch in flight to speak of."""
    import notifier.pipeline.loop

    def cancelled(*given: object, **options: object) -> None:
        raise KeyboardInterrupt

    site.write(urlset(pages(1)))
    monkeypatch.setattr(notifier.pipeline.loop, "execute", cancelled)
    result = site.run(*args)
    assert result.code == 130 and result.err == f"notify-changes: interrupted; {said}: run again\n", result.err
    result = site.check()
    assert result.code == 130 and "nothing was sent and the state is as it was" in result.err, result.err


def test_state_forget_waiting_for_a_runs_lock_says_so_once(site: Site) -> None:
    """``state forget`` takes the lock as a run does: the same one line while it waits."""
    site.write(urlset(pages(2)))
    assert site.run().code == 0
    with open_store(site.state):
        code = main(["state", "forget", "--state", str(site.state), "--backoff", "--yes", "--lock-timeout", "0.1"])
        err = site.capsys.readouterr().err
    assert code == 4, err
    lines = err.splitlines()
    assert lines[0] == (
        f"notify-changes: waiting for the state lock of {site.state}: another notify-changes run holds it; "
        "waiting up to 0.1 s (--lock-timeout)"
    )
    assert len(lines) == 2 and "after waiting 0.1 s" in lines[1], lines
