"""``notify-changes key new``: a fresh IndexNow key and its key file, written where the
build will publish it (the site's static folder), never beside another key's file;
``key file``: the key file of the key a host uses; ``key rotate``: a new key whose file is
written beside the current one's, and the steps of the overlap."""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import secrets
from collections.abc import Mapping
from typing import Any, TextIO

from notifier.errors import NotifierError, UsageError
from notifier.paths import cannot
from notifier.protocol import KEY_PATTERN, Keys, redact_all
from notifier.settings.config_sites import site_layers
from notifier.settings.options import add_options, given
from notifier.settings.settings import key_options, keys_from
from notifier.urls import key_host

KEY_ACTIONS = ("new", "file", "rotate")
OVERLAP_DAYS = 7  # keep the old key file this long: an endpoint that answered 202 checks the key file later, at its own pace


def new_key() -> str:
    """A fresh key: 32 hexadecimal characters from the system's secure random source."""
    return secrets.token_hex(16)


def write_key_file(key: str, folder: str, *, reuse: bool = False, source: str | None = None, beside: str | None = None) -> str:
    """Write ``KEY.txt`` holding the key into ``folder``; returns its path. The folder must
    exist (a typo would hide the file outside the build), and hold no other key file (two
    keys published: which one is in use?). ``reuse``: the same key's file there already is
    fine (writing a host's key file on every build)."""
    if not os.path.isdir(folder):
        raise UsageError(
            f"--write {folder}: no such folder; name your site's static folder (e.g. static/ for Hugo, public/ for Eleventy), "
            "or create it first"
        )
    for existing in existing_key_files(folder):
        if (reuse and existing == key) or existing == beside:  # `key rotate`: the current key's file stays for the overlap
            continue
        if source is not None:  # `key file`: the key is configured; the file there is another one's
            raise UsageError(
                f"--write {folder}: it already holds the key file {existing[:4]}….txt, not the key of {source}; "
                "delete that file (a host publishes one key) and run again"
            )
        raise UsageError(
            f"--write {folder}: it already holds the key file {existing[:4]}….txt; keep using that key, or delete the file "
            "to replace the key (and update INDEXNOW_KEY)"
        )
    path = os.path.join(folder, f"{key}.txt")
    try:
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(key)
    except OSError as error:
        raise UsageError(f"--write {folder}: {cannot('write the key file', error)}") from None
    return path


def existing_key_files(folder: str) -> list[str]:
    """The keys of the IndexNow key files in ``folder``: ``KEY.txt`` files holding ``KEY``."""
    found = []
    with contextlib.suppress(OSError):
        for entry in os.scandir(folder):
            stem = entry.name[:-4]
            if entry.name.endswith(".txt") and KEY_PATTERN.fullmatch(stem) and entry.is_file():
                with contextlib.suppress(OSError), open(entry.path, encoding="utf-8", errors="replace") as handle:
                    if handle.read(200).strip() == stem:
                        found.append(stem)
    return sorted(found)


_HOST = re.compile(r"[a-z0-9.-]+(:[0-9]{1,5})?|\[[0-9a-f:.]+\](:[0-9]{1,5})?")


def host_argument(given: str) -> str:
    """``key file --host``'s host as a run names it (``key_host``), or the one line that says
    why no run would use a key file made for it."""
    text = given.strip()
    if not text:
        raise UsageError("key file: give --host HOST and --write DIR, e.g. `notify-changes key file --host www.example.org --write public`")
    if "/" in text or "@" in text:
        raise UsageError(f"key file --host {text}: give the host name alone, as its URLs carry it (www.example.org), not a URL or a path")
    if not text.isascii():
        try:
            shown = text.encode("idna").decode("ascii")
        except UnicodeError:
            shown = "its punycode (IDNA) form"
        raise UsageError(f"key file --host {text}: a run knows a host by its IDNA form, as its URLs carry it: {shown}")
    if not _HOST.fullmatch(text.lower()):
        raise UsageError(f"key file --host {text}: not a host name (letters, digits, dots and hyphens, and a port)")
    return key_host(text)


def host_key(host: str, cli: Mapping[str, Any]) -> tuple[str, Keys]:
    """The key ``host`` uses, and the keys it is one of (to cut from what is printed): the
    top level's, or with ``[[sites]]`` the site's ``--site`` names, else the one key the sites
    agree on for it (sites that give it two keys: name one with ``--site``)."""
    found: dict[str, tuple[str, Keys]] = {}  # key -> the first site that gives it
    problems: list[NotifierError] = []
    sites = site_layers(cli)
    for name, layers in sites:
        try:
            keys = keys_from(layers, None)
        except NotifierError as error:  # a site whose secret is not set here: its hosts are not this one's
            problems.append(error)
            continue
        key = keys.key_for(host)
        if key is not None:
            found.setdefault(key, (str(name), keys))
    if len(found) > 1:
        names = " and ".join(name for name, _ in found.values())
        raise UsageError(f"key file: the sites {names} give {host} different keys; name one with --site NAME")
    if found:
        key, (_, keys) = next(iter(found.items()))
        return key, keys
    if problems and len(problems) == len(sites):
        raise problems[0]
    raise UsageError(f"key file: no key for {host}: set [keys] derive (and its variable), a [keys] entry for the host, or INDEXNOW_KEY")


def key_command(parser: argparse.ArgumentParser, args: list[str], out: TextIO) -> int:
    """``notify-changes key new|file|rotate``, parsed by ``parser`` (which raises UsageError)."""
    parser.add_argument(
        "action",
        choices=KEY_ACTIONS,
        help="new: make a key (and with --write, its key file); file: write HOST's key file into DIR; "
        "rotate: a new key, its file written into DIR beside the current key's (INDEXNOW_KEY), and the steps",
    )
    parser.add_argument("--write", metavar="DIR", help="write KEY.txt into DIR (the site's static folder)")
    parser.add_argument("--host", metavar="HOST", help="file: the host whose key ([keys] derive, [keys] HOST, or INDEXNOW_KEY) to write")
    add_options(parser, "key")  # --config (file, rotate), --site (file): the table's
    if not [each for each in args if not each.startswith("-")] and not {"-h", "--help"} & set(args):
        raise UsageError("key: say what to do: `notify-changes key new` makes a key, `--write DIR` also its key file")
    namespace = parser.parse_args(args)
    if namespace.action == "file":
        return key_file(namespace.host, namespace.write, given(namespace, "key"), out)
    if namespace.action == "rotate":
        return rotate(namespace.write, given(namespace, "key"), out)
    key = new_key()
    if namespace.write is not None:
        path = write_key_file(key, namespace.write)
        out.write(f"wrote {path}; publish it with the site\n")
    out.write(f"INDEXNOW_KEY={key}\n")
    out.write("set INDEXNOW_KEY as a secret in your deploy environment (never commit it elsewhere than the key file)\n")
    return 0


def key_file(host: str | None, folder: str | None, cli: Mapping[str, Any], out: TextIO) -> int:
    if host is None or folder is None:
        raise UsageError("key file: give --host HOST and --write DIR, e.g. `notify-changes key file --host www.example.org --write public`")
    host = host_argument(host)
    key, keys = host_key(host, cli)
    path = write_key_file(key, folder, reuse=True, source=keys.source_of(host))
    out.write(f"{redact_all(path, keys)}: the key file of {host}; publish it with the site\n")
    return 0


def rotate(folder: str | None, cli: Mapping[str, Any], out: TextIO) -> int:
    """A new key, its file written into ``folder`` beside the current key's, and the steps:
    publish both, swap the variables, keep the old file for the overlap."""
    if folder is None:
        raise UsageError("key rotate: give --write DIR, the folder that holds the current key file (e.g. public/ or static/)")
    keys = key_options({**cli, "site": None})  # the top level's key: rotate knows no site
    if keys.derive is not None:
        raise UsageError(
            f"key rotate: [keys] derive makes every host's key from {keys.derive_variable}; rotate the secret instead: "
            f"name a variable in [keys] derive-previous and set it to the current secret, set {keys.derive_variable} to a new one "
            "(`notify-changes key new`), and write each host's new key file with `notify-changes key file --host HOST --write DIR`"
        )
    current = keys.default
    if current is None:
        raise UsageError("key rotate: INDEXNOW_KEY is not set: set it to the key in use (the one to rotate away from), and run again")
    key = new_key()
    path = write_key_file(key, folder, beside=current)
    if current in existing_key_files(folder):
        beside = f"beside {os.path.join(folder, current[:4])}….txt"
    else:
        beside = f"({folder} does not hold the current key's file {current[:4]}….txt: put it back, it must stay published)"
    out.write(
        f"wrote {path} {beside}\n"
        f"INDEXNOW_KEY={key}\n"
        f"1. publish both key files with the next deploy ({key[:4]}….txt and {current[:4]}….txt)\n"
        f"2. set INDEXNOW_KEY to the new key above and INDEXNOW_KEY_PREVIOUS to the current one ({current[:4]}…), "
        "or name another variable in [keys] previous-env; until the new key's file is served, a run signs with the previous key\n"
        f"3. keep {current[:4]}….txt published for {OVERLAP_DAYS} days (endpoints check a key file again later), "
        "then delete it and unset INDEXNOW_KEY_PREVIOUS\n"
    )
    return 0
