"""The GitHub Action's install step asks this which optional dependencies the job needs:
the ``extras`` input's, and the PostgreSQL driver when a site's state is a database (the
``state`` input, a ``--state`` in ``args``, or the config file's ``state``, of any of its
``[[sites]]``). It prints the requirements that are not installed yet, one a line, for the
step to give pip; an unknown extra is exit 2 with one line. ``python -m notifier.action``."""

from __future__ import annotations

import importlib.metadata
import os
import re
import shlex
import sys
from collections.abc import Mapping
from pathlib import Path

from notifier.database import is_database_url
from notifier.errors import NotifierError, UsageError
from notifier.settings.options import BY_NAME

DISTRIBUTION = "notify-changes"
DEVELOPMENT = ("test", "docs")  # extras for working on notify-changes (its tests, its own site), not for a deploy


def wanted_extras(inputs: Mapping[str, str], cwd: Path) -> list[str]:
    """The extras the job needs: the ``extras`` input's (comma- or space-separated), and
    ``postgres`` when any state it will use is a PostgreSQL database."""
    extras = importlib.metadata.metadata(DISTRIBUTION).get_all("Provides-Extra") or []
    provided = [extra for extra in extras if extra not in DEVELOPMENT]
    wanted: list[str] = []
    for word in re.split(r"[\s,]+", inputs.get("extras", "").strip()):
        if word and word not in provided:
            raise UsageError(f"the extras input names {word!r}; notify-changes provides {', '.join(sorted(provided))}")
        if word and word not in wanted:
            wanted.append(word)
    if "postgres" not in wanted and any(is_database_url(state) for state in _states(inputs, cwd)):
        wanted.append("postgres")
    return wanted


def _states(inputs: Mapping[str, str], cwd: Path) -> list[object]:
    """Every state the run may use, as written: the inputs' and the config's (each site's)."""
    states: list[object] = [inputs.get("state", "")]
    try:
        words = shlex.split(inputs.get("args", ""))
    except ValueError:  # the run step says so, in its own line
        words = []
    for number, word in enumerate(words):
        if word == "--state" and number + 1 < len(words):
            states.append(words[number + 1])
        elif word.startswith("--state="):
            states.append(word.partition("=")[2])
    from notifier.settings.config_sites import site_layers

    cli = {"config": inputs.get("config") or None, "site": inputs.get("site") or None}
    try:
        for _, layers in site_layers(cli, {}, cwd):
            states.append(layers.merged.get("state", ("", ""))[0])
    except NotifierError:  # a config the run itself refuses, with its own line and exit code
        pass
    return states


def missing_requirements(extras: list[str]) -> list[str]:
    """The requirements of ``extras`` whose distribution is not installed here."""
    missing: list[str] = []
    for requirement in importlib.metadata.requires(DISTRIBUTION) or []:
        spec, _, marker = requirement.partition(";")
        extra = re.search(r"""extra\s*==\s*["']([^"']+)["']""", marker)
        if extra is None or extra.group(1) not in extras:
            continue
        name = re.match(r"[A-Za-z0-9._-]+", spec.strip())
        try:
            importlib.metadata.distribution(name.group(0) if name else spec)
        except importlib.metadata.PackageNotFoundError:
            missing.append(spec.strip())
    return missing


def main(environ: Mapping[str, str] | None = None) -> int:
    environ = os.environ if environ is None else environ
    inputs = {name: environ.get(f"NC_{name.upper()}", "") for name in ("extras", "args")}  # the Action's own
    inputs |= {name: environ.get(BY_NAME[name].environment[0], "") for name in ("state", "config", "site")}  # options
    try:
        extras = wanted_extras(inputs, Path.cwd())
    except NotifierError as error:
        sys.stderr.write(f"{error}\n")
        return error.exit_code
    for requirement in missing_requirements(extras):
        sys.stdout.write(f"{requirement}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
