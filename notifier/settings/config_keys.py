"""The config's keys: the default key, the [keys] table (hosts, ``derive`` and, for a
rotation, ``previous-env`` and ``derive-previous``), --key-location and --key-previous."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from notifier.errors import UsageError
from notifier.protocol import Keys, validate_key
from notifier.urls import key_host

ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
MIN_SECRET = 16  # characters: a key new's 32 hex digits, or any long random text


def keys_table(
    values: Mapping[str, Any],
    per_host: Any,
    environ: Mapping[str, str],
    *,
    blame: tuple[str, str],
    where: str,
    sends: bool,
    key_variable: str = "INDEXNOW_KEY",
) -> Keys:
    """The default key (checked, blamed on where it came from), the [keys] table (hosts, and
    ``derive``: the variable holding the secret every other host's key is derived from),
    --key-location. ``sends``: a run that sends, which needs the secret a derive names.
    A rotation's previous key: --key-previous, else the variable [keys] previous-env names
    (default INDEXNOW_KEY_PREVIOUS), else the file's key-previous; its previous secret: the
    variable [keys] derive-previous names."""
    key = values.get("key")
    if key is not None:
        key = str(key).strip()  # a key pasted into a secret with its newline is the same key
        validate_key(key, blame[0])
    if not isinstance(per_host, dict):
        raise UsageError(f"{where}: [keys] must be a table of host = key")
    per_host = dict(per_host)
    variable = per_host.pop("derive", None)
    previous = _previous_key(values, blame[1], per_host.pop("previous-env", None), environ, where)
    derive_previous = per_host.pop("derive-previous", None)
    for host, host_key in per_host.items():
        validate_key(str(host_key).strip(), f"{where} [keys] {host}")
    return Keys(
        default=key,
        per_host={key_host(str(host)): str(value).strip() for host, value in per_host.items()},
        key_location=values.get("key-location"),
        derive=_derive_secret(variable, environ, where=where, sends=sends),
        derive_variable=variable if isinstance(variable, str) else None,
        previous=previous,
        key_variable=key_variable,
        derive_previous=_derive_secret(derive_previous, environ, where=where, sends=False, name="derive-previous"),
    )


def _previous_key(values: Mapping[str, Any], blame: str, variable: Any, environ: Mapping[str, str], where: str) -> str | None:
    """The previous key of a rotation, checked (a bad one blamed on where it came from)."""
    previous = values.get("key-previous")
    if variable is not None:
        if not isinstance(variable, str) or not ENV_NAME.fullmatch(variable):
            raise UsageError(
                f"{where}: [keys] previous-env = {variable!r}: name the environment variable that holds the previous key, "
                'e.g. "OLD_INDEXNOW_KEY"'
            )
        if environ.get(variable, "").strip() and not blame.startswith("--"):  # the command line's --key-previous comes first
            previous, blame = environ[variable], variable
    if previous is None:
        return None
    previous = str(previous).strip()
    validate_key(previous, blame)
    return previous


def _derive_secret(variable: Any, environ: Mapping[str, str], *, where: str, sends: bool, name: str = "derive") -> str | None:
    """The secret ``[keys] derive = "VARIABLE"`` names, from the environment; never printed.
    (``name``: ``derive-previous``, the secret before a rotation, which may be unset.)"""
    if variable is None:
        return None
    if not isinstance(variable, str) or not ENV_NAME.fullmatch(variable):
        raise UsageError(
            f'{where}: [keys] {name} = {variable!r}: name the environment variable that holds the secret, e.g. "INDEXNOW_SECRET"'
        )
    secret = environ.get(variable, "").strip()
    if not secret:
        if sends:
            raise UsageError(
                f"{where}: [keys] derive = {variable!r}, but {variable} is not set: set it to the secret each host's key is "
                "derived from (a secret of your deploy, the same on every runner)"
            )
        return None  # check and a dry run need no key
    if len(secret) < MIN_SECRET:
        raise UsageError(
            f"{variable}: the secret keys are derived from must be at least {MIN_SECRET} characters; make one with `notify-changes key new`"
        )
    return secret
