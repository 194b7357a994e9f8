"""The command line: arguments -> Settings -> run -> report -> exit code.

This is the one error boundary: every NotifierError becomes one line on stderr and its
exit code; an interrupt becomes exit 130. Nothing here decides what to submit.
"""

from __future__ import annotations

import argparse
import contextlib
import difflib
import functools
import os
import re
import sys
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, NoReturn

from notifier import __version__, interrupts
from notifier.commands import state_request
from notifier.commands.key import key_command
from notifier.commands.state import run_state_sites
from notifier.crash import caused_by_a_cancel, report_crash
from notifier.database import DatabaseURL
from notifier.errors import ExitCode, NotifierError, UsageError
from notifier.github import mask_secrets, write_github, write_github_error
from notifier.output import LOST, OutputFailed, guarded_streams, lost_code, silence
from notifier.protocol import Keys
from notifier.redaction import Secrets, gathered
from notifier.report import Report, printable, render_json, render_text
from notifier.settings.config_sites import build_runs, site_states
from notifier.settings.options import add_options, given
from notifier.terminal import notice_printer, on_a_terminal, progress_printer, use_colour, write_quietly

COMMANDS = ("run", "check")
_INVALID_CHOICE = re.compile(r"argument \S+: invalid choice: '(?P<given>[^']*)' \(choose from (?P<choices>.*)\)")
TOOLS = ("key", "state", "stamp", "deploy-hook", "crawled")  # the commands beside a run, each with its own options


class _Parser(argparse.ArgumentParser):
    def __init__(self, **options: Any) -> None:
        # no abbreviations: `--site docs` once was taken as `--site-name docs`; a prefix means nothing
        super().__init__(allow_abbrev=False, **options)

    def error(self, message: str) -> NoReturn:  # one line, our exit code, no usage dump
        raise UsageError(f"{message}{self._did_you_mean(message)}; see `{self.prog} --help`")

    def _did_you_mean(self, message: str) -> str:
        """For a mistyped option (``--dyr-run``) or choice (``state shwo``), what it most likely meant."""
        choice = _INVALID_CHOICE.match(message)
        if choice is not None:
            near = difflib.get_close_matches(choice["given"], re.findall(r"'([^']*)'", choice["choices"]), n=1, cutoff=0.6)
            return f" (did you mean {near[0]}?)" if near else ""
        if not message.startswith("unrecognized arguments: "):
            return ""
        options = [option for action in self._actions for option in action.option_strings if option.startswith("--")]
        for word in message.removeprefix("unrecognized arguments: ").split():
            if word.startswith("--"):
                near = difflib.get_close_matches(word.split("=", 1)[0], options, n=1, cutoff=0.6)
                if near:
                    return f" (did you mean {near[0]}?)"
        return ""


_DESCRIPTIONS = {
    None: (
        "Tell IndexNow (Bing, Yandex, Seznam, Naver, Yep) exactly which pages of a freshly built sitemap "
        "were added, changed or removed since the last deploy, and fail the deploy when the sitemap's "
        "dates lie. Commands: run (the default; check, submit, record), check (verify only), "
        "key new [--write DIR] (make an IndexNow key and its key file), key file --host HOST --write DIR (write the "
        "key file of the key HOST uses), key rotate --write DIR (a new key beside the current one, and the steps), "
        "deploy-hook (print the deploy hook script), "
        "stamp (rewrite the built sitemap's dates from the content's history), "
        f"and state {'|'.join(state_request.ACTIONS)} (inspect and repair the state; history: the batches the endpoints "
        "answered; stats [--since 30d]: what they received, refused or failed per day; report --html FILE: as a page), "
        "crawled LOG... [--since 14d] [--bot-ranges FILE] (did the engines' crawlers fetch what was announced, and how soon). "
        "`notify-changes COMMAND --help` describes each. The config file (notify-changes.toml) also takes [history] "
        '(preset = "hugo", jekyll, mkdocs, eleventy, astro, docusaurus, sphinx or pelican: lastmods checked against '
        "each page's front matter and git history) and [bulk] (the lastmod-bulk thresholds); see the README."
    ),
    "run": "Check the built sitemap, tell IndexNow what the deploy added, changed or removed, and record it in the state.",
    "check": (
        "Parse, diff and verify the built sitemap against the state: exit 1 when its dates lie. Never contacts an "
        "endpoint, never writes the state. It accepts run's options too, and ignores those it does not use."
    ),
}


def make_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser of ``command`` (None: the top level, which is ``run`` with an overview)."""
    parser = _Parser(
        prog="notify-changes" + (f" {command}" if command else ""),
        description=_DESCRIPTIONS[command],
        epilog="Exit codes: 0 done, 1 verification failed, 2 usage or input error, 3 submission incomplete, "
        "4 state locked by another run, 5 delivered but not all recorded, 70 internal error (a bug), "
        "74 the output could not be written, 130 interrupted.",
    )
    parser.add_argument("sitemap", nargs="?", help="the built sitemap: a path (.xml, .xml.gz, .txt) or an http(s) URL")
    add_options(parser, command or "run")
    parser.add_argument("--version", action="version", version=f"notify-changes {__version__}")
    return parser


@functools.cache
def _flags() -> frozenset[str]:
    """The options that take no value, as the parser defines them."""
    return frozenset(option for action in make_parser()._actions if action.nargs == 0 for option in action.option_strings)


def split_command(args: list[str]) -> tuple[str | None, list[str]]:
    """The command word wherever it stands before the sitemap (``--dry-run run S`` too), and
    the rest. None: no command word, so ``run``; a typo of one is a UsageError that says so."""
    position = 0
    while position < len(args):
        word = args[position]
        if word == "--":
            break
        if word.startswith("-"):
            position += 1 if word in _flags() or "=" in word else 2  # an option, and its value
            continue
        if word in (*COMMANDS, *TOOLS):
            return word, args[:position] + args[position + 1 :]
        rest = [each for each in args[position + 1 :] if not each.startswith("-")]
        guess = difflib.get_close_matches(word, [*COMMANDS, *TOOLS], n=1, cutoff=0.6)
        if guess and rest and "/" not in word and "." not in word:
            raise UsageError(
                f"{word!r} is not a command; did you mean `notify-changes {guess[0]} {rest[0]}`? "
                f"(commands: {', '.join((*COMMANDS, *TOOLS))})"
            )
        break
    return None, args


class _Current:
    """What the boundary knows of the command in progress: first from its words, then from its settings."""

    def __init__(self) -> None:
        self.reset([])

    def reset(self, args: list[str]) -> None:
        self.args, self.keys = args, list[Keys]()  # what no output may show: the keys each site uses
        self.state: Path | str | DatabaseURL | None = None  # the crash log goes beside a state file
        self.sitemaps: list[str] = []  # a config file's SITEMAP URL may hold a basic-auth password
        given = [word.split("=", 1)[1] for word in args if word.startswith("--format=")]
        given += [args[n + 1] for n, word in enumerate(args[:-1]) if word == "--format"]
        style = given[-1] if given else ("github" if os.environ.get("GITHUB_ACTIONS") == "true" else None)
        self.github = style == "github"  # errors as annotations and in the job summary too
        self.report: Report | None = None  # the last one, let go only when the process ends (see _launch._leave)
        self.sends = False  # a run that may have sent (not check, not a dry run): what an interrupt leaves behind

    def secrets(self) -> Secrets:
        return gathered((key for keys in self.keys for key in keys.secrets), [*self.args, *self.sitemaps], os.environ, self.state)


_current = _Current()


def _failed(error: NotifierError) -> int:
    """The one error boundary's output: what went before on stdout, then one line on stderr
    (and under ``--format github`` an annotation and a line of the job summary), each secret cut."""
    message = _current.secrets().redact(str(error))
    try:
        sys.stdout.flush()
        if _current.github:
            write_github_error(message, error.exit_code, sys.stdout, os.environ)
    except BrokenPipeError:
        silence(sys.stdout)
    write_quietly(sys.stderr, f"notify-changes: error: {printable(message)}\n")
    return error.exit_code


def _output_lost(error: OutputFailed, reached: int) -> int:
    """Only the output failed: one line, and the code the command reached (output.lost_code)."""
    write_quietly(sys.stderr, LOST.format(reason=error))
    silence(sys.stdout)
    return lost_code(reached)


INTERRUPTED = "notify-changes: interrupted; the batch in flight stays pending and the state is consistent: run again\n"
UNSENT = "notify-changes: interrupted; nothing was sent and the state is as it was: run again\n"  # check, a dry run


def _interrupted() -> str:
    return INTERRUPTED if _current.sends else UNSENT


def main(argv: Sequence[str] | None = None) -> int:
    """The ``notify-changes`` program. Returns the exit code.

    Expected failures are NotifierErrors (one line, their exit code); a closed stdout ends
    the command quietly with the code it reached; anything else is a bug: exit 70, the
    traceback in a log file (``crash.py``)."""
    args = list(sys.argv[1:] if argv is None else argv)
    _current.reset(args)
    try:
        with guarded_streams() as stdout:  # a closed or full stdout: said once below, never a crash
            code = _dispatch(args)
            sys.stdout.flush()  # here, not at the interpreter's exit, where a closed pipe is exit 120
            lost = stdout.lost()
            return code if lost is None else _output_lost(lost, code)
    except BrokenPipeError:
        silence(sys.stdout)
        return ExitCode.OK
    except Exception as error:  # the boundary for bugs: never exit 1, never a bare traceback
        if caused_by_a_cancel(error):  # a cancel Python wrapped on its way out (class creation: "Error calling __set_name__")
            write_quietly(sys.stderr, _interrupted())
            return ExitCode.INTERRUPTED
        line = report_crash(error, args, _current.state, sys.stderr, _current.secrets())
        if _current.github:
            with contextlib.suppress(OSError, OutputFailed):
                write_github_error(line, ExitCode.INTERNAL_ERROR, sys.stdout, os.environ)
        return ExitCode.INTERNAL_ERROR


def _dispatch(args: list[str]) -> int:
    try:
        word, args = split_command(args)
    except UsageError as error:
        return _failed(error)
    if word == "key":
        return _key_command(args)
    if word == "state":
        return _state_command(args)
    if word == "stamp":
        return _stamp_command(args)
    if word == "deploy-hook":
        return _deploy_hook_command(args)
    if word == "crawled":
        return _crawled_command(args)
    command = word or "run"
    with interrupts.handled():  # Python's handlers are back after the message below
        try:
            code = _main(command, args, word)
            if not interrupts.received:
                return code
            raise KeyboardInterrupt  # a signal came, and its exception was lost on the way
        except KeyboardInterrupt:
            interrupts.ignore_more()
            write_quietly(sys.stderr, _interrupted())
            return ExitCode.INTERRUPTED


def _main(command: str, args: list[str], word: str | None = None) -> int:
    try:
        namespace = make_parser(word if word in COMMANDS else None).parse_args(args)
        cli = {name.replace("_", "-"): value for name, value in vars(namespace).items()}
        runs = build_runs(command, cli)  # one site, or each of the config's [[sites]]
        settings = runs[0]
        _current.state, _current.github, _current.keys = settings.state, settings.format == "github", [each.keys for each in runs]
        _current.sitemaps = [str(each.sitemap) for each in runs]
        _current.sends = settings.command == "run" and not settings.dry_run
        if settings.format == "github":  # before anything else is printed: GitHub hides it in logs
            for each in runs:
                mask_secrets(each.keys, sys.stdout)
        progress, step = progress_printer(sys.stderr, os.environ)
        try:
            from notifier.pipeline.loop import Environment, execute  # here: the parser and --help need neither lxml nor requests
            from notifier.pipeline.sites import execute_sites

            env = Environment(progress=progress, step=step, notice=notice_printer(sys.stderr))
            report = execute(settings, env) if settings.site is None else execute_sites(runs, env)
            _current.report = report
        finally:
            if on_a_terminal(sys.stderr, os.environ):
                write_quietly(sys.stderr, "\r\x1b[K")
    except NotifierError as error:
        return _failed(error)
    try:
        _print_report(report, settings.format)
        sys.stdout.flush()
    except BrokenPipeError:  # the run is done and recorded; only its report had no reader
        silence(sys.stdout)
    except OutputFailed as error:  # the job summary's files: a run's delivery is never undone by its report
        return _output_lost(error, report.exit_code)
    return report.exit_code


def _print_report(report: Report, style: str) -> None:
    if style == "json":
        sys.stdout.write(render_json(report) + "\n")
    elif style == "github":
        write_github(report, sys.stdout, os.environ)
    else:
        sys.stdout.write(render_text(report, colour=use_colour(sys.stdout, os.environ)) + "\n")


def _crawled_command(args: list[str]) -> int:
    """``notify-changes crawled LOG...``: whether the engines' crawlers fetched what was announced."""
    from notifier.commands import crawled

    try:
        namespace = crawled.parse(args, _Parser(prog="notify-changes crawled", description=crawled.DESCRIPTION, epilog=crawled.EPILOG))
        crawled.run_crawled(namespace, sys.stdout, err=sys.stderr)
    except NotifierError as error:
        return _failed(error)
    return ExitCode.OK


def _key_command(args: list[str]) -> int:
    """``notify-changes key new|file|rotate``: make a key, write a host's key file, rotate the key."""
    parser = _Parser(prog="notify-changes key", description="Make an IndexNow key, write a host's key file, or rotate the key.")
    try:
        return key_command(parser, args, sys.stdout)
    except NotifierError as error:
        return _failed(error)


def _state_command(args: list[str]) -> int:
    """``notify-changes state ACTION`` (state_request.ACTIONS): inspect and repair the state."""
    parser = _Parser(prog="notify-changes state", description=state_request.DESCRIPTION, epilog=state_request.EPILOG)
    state_request.add_arguments(parser)
    from notifier.stats import since_attached  # here: a run never loads the ledger's counting

    try:
        namespace = parser.parse_args(since_attached(args))
        notice = notice_printer(sys.stderr)
        requests = [
            replace(each, notice=notice) for each in state_request.state_requests(namespace, site_states(given(namespace, "state")))
        ]
        _current.state = requests[0].state
        run_state_sites(requests, sys.stdout)
    except NotifierError as error:
        return _failed(error)
    return ExitCode.OK


def _stamp_command(args: list[str]) -> int:
    """``notify-changes stamp [SITEMAP] [--dry-run]``: rewrite the lastmods from the content's history."""
    parser = _Parser(
        prog="notify-changes stamp",
        description=(
            "Rewrite a built sitemap's lastmods (its parts, plain or .gz, its index and feeds) from the content's history: "
            "a modification date in the front matter of each page's source file (lastmod, last_modified_at, ...), else the "
            "author time of its last commit, else its publication date (date, the file name's). Needs "
            '[history] in the config (e.g. preset = "hugo"). Only the dates change; each file is replaced atomically.'
        ),
        epilog="Exit codes: 0 done, 2 usage or input error (no [history], a malformed sitemap, a file it cannot write).",
    )
    parser.add_argument("sitemap", nargs="?", help="the built sitemap (default: found in public/, _site/, site/, dist/, build/, out/)")
    parser.add_argument("--dry-run", action="store_true", help="print the dates it would change, as a diff; write nothing")
    add_options(parser, "stamp")  # --site-dir, --config, --sitemap-url, --site: the table's
    try:
        namespace = parser.parse_args(args)
        runs = build_runs(
            "check", {"sitemap": namespace.sitemap, **given(namespace, "stamp")}
        )  # one site, or each of the config's [[sites]]
        from notifier.commands.stamp import describe, stamp_sitemap

        for number, settings in enumerate(runs):
            result = stamp_sitemap(settings, dry_run=namespace.dry_run)
            if settings.site is not None and len(runs) > 1:
                sys.stdout.write(("\n" if number else "") + f"== {settings.site}\n")
            for line in describe(result, dry_run=namespace.dry_run):
                sys.stdout.write(printable(line) + "\n")
    except NotifierError as error:
        return _failed(error)
    return ExitCode.OK


def _deploy_hook_command(args: list[str]) -> int:
    """``notify-changes deploy-hook``: print the deploy hook script that ships with the program."""
    parser = _Parser(
        prog="notify-changes deploy-hook",
        description=(
            "Print the deploy hook, a POSIX shell script that runs `notify-changes check`, then your publish command, then "
            "`notify-changes run`. Save it into your project: notify-changes deploy-hook > deploy-hook.sh"
        ),
    )
    try:
        parser.parse_args(args)
    except NotifierError as error:
        return _failed(error)
    from importlib.resources import files

    sys.stdout.write(files("notifier").joinpath("deploy-hook.sh").read_text(encoding="utf-8"))
    sys.stdout.flush()
    return ExitCode.OK
