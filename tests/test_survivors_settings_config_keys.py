"""What notifier/settings/config_keys.py checks that the mutation run found no test stating
(#44): a [keys] host's key is validated, previous-env and derive must name a variable (a
number or a bad name is a usage error, never a crash), an unset previous-env leaves the
file's previous key, and a previous key pasted with its newline is the same key. Each test
names the edit it catches."""

from __future__ import annotations

from typing import Any

import pytest

from notifier.errors import UsageError
from notifier.protocol import Keys
from notifier.settings.config_keys import keys_table

WHERE = "notify-changes.toml"
KEY = "0123456789abcdef"
OLD = "aaaabbbbccccdddd"


def _keys(per_host: Any, environ: dict[str, str] | None = None, **values: Any) -> Keys:
    values = {name.replace("_", "-"): value for name, value in values.items()}
    return keys_table(values, per_host, environ or {}, blame=("INDEXNOW_KEY", f"{WHERE}: key-previous"), where=WHERE, sends=True)


def test_a_hosts_own_key_is_validated() -> None:
    """fails if ``validate_key(str(host_key).strip(), f"{where} [keys] {host}")`` is left out in
    settings/config_keys.py::keys_table"""
    with pytest.raises(UsageError) as raised:
        _keys({"docs.example": "short"})
    assert str(raised.value).startswith(f"{WHERE} [keys] docs.example: an IndexNow key is 8 to 128 characters")
    assert _keys({"docs.example": f" {KEY}\n"}).per_host == {"docs.example": KEY}


@pytest.mark.parametrize("variable", [5, "old key", ""])
def test_previous_env_must_name_a_variable(variable: object) -> None:
    """fails if ``not isinstance(variable, str) or not ENV_NAME.fullmatch(variable)`` becomes
    ``and`` or loses either side in settings/config_keys.py::_previous_key (a TypeError for a
    number, or a bad name let through)"""
    with pytest.raises(UsageError) as raised:
        _keys({"previous-env": variable}, key=KEY)
    assert str(raised.value) == (
        f'{WHERE}: [keys] previous-env = {variable!r}: name the environment variable that holds the previous key, e.g. "OLD_INDEXNOW_KEY"'
    )


def test_an_unset_previous_env_leaves_the_files_previous_key() -> None:
    """fails (a KeyError) if ``environ.get(variable, "").strip()`` is dropped from the ``and`` in
    settings/config_keys.py::_previous_key"""
    assert _keys({"previous-env": "OLD_KEY"}, key=KEY, key_previous=OLD).previous == OLD
    assert _keys({"previous-env": "OLD_KEY"}, {"OLD_KEY": " "}, key=KEY, key_previous=OLD).previous == OLD
    assert _keys({"previous-env": "OLD_KEY"}, {"OLD_KEY": "1111222233334444"}, key=KEY, key_previous=OLD).previous == "1111222233334444"


def test_a_previous_key_pasted_with_its_newline_is_the_same_key() -> None:
    """fails if ``previous = str(previous).strip()`` is removed in settings/config_keys.py::_previous_key"""
    assert _keys({"previous-env": "OLD_KEY"}, {"OLD_KEY": f"{OLD}\n"}, key=KEY).previous == OLD


def test_derive_must_name_a_variable_a_number_is_a_usage_error() -> None:
    """fails (a TypeError) if ``not isinstance(variable, str)`` is dropped from the ``or`` in
    settings/config_keys.py::_derive_secret"""
    with pytest.raises(UsageError) as raised:
        _keys({"derive": 5})
    assert str(raised.value) == (f'{WHERE}: [keys] derive = 5: name the environment variable that holds the secret, e.g. "INDEXNOW_SECRET"')
