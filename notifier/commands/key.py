"""``notify-changes key new``: a fresh IndexNow key and its key file, written where the
build will publish it (the site's static folder), never beside another key's file."""

from __future__ import annotations

import contextlib
import os
import secrets

from notifier.config_sites import site_layers
from notifier.errors import NotifierError, UsageError
from notifier.protocol import KEY_PATTERN, Keys
from notifier.settings import keys_from


def new_key() -> str:
    """A fresh key: 32 hexadecimal characters from the system's secure random source."""
    return secrets.token_hex(16)


def write_key_file(key: str, folder: str, *, reuse: bool = False, source: str | None = None) -> str:
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
        if reuse and existing == key:
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
        raise UsageError(f"--write {folder}: cannot write the key file ({error.strerror})") from None
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


def host_key(host: str, cli: dict[str, str | None]) -> tuple[str, Keys]:
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
