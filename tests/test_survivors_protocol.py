"""What notifier/protocol.py's Keys say that the mutation run found no test stating (#44): a
host with its own key has no previous one, a previous key equal to the current one is no
rotation, where the previous key's file is (and whether its keyLocation is sent), where a host's
own key comes from, and that a [keys] table or a derive alone is a configured key. Each test
names the edit it catches."""

from __future__ import annotations

from notifier.protocol import Keys, derive_key
from tests.conftest import BASE, HOST, KEY

OTHER = "other.example"
NEW = "fedcba9876543210fedc"
OLD = "aaaabbbbccccdddd"


def test_a_host_with_its_own_key_has_no_previous_key() -> None:
    """Its own [keys] entry is not rotated by INDEXNOW_KEY_PREVIOUS: it signs with its own key.
    fails if the first ``return None`` raises in protocol.py::Keys.previous_for"""
    keys = Keys(default=NEW, per_host={OTHER: KEY}, previous=OLD)
    assert keys.previous_for(OTHER) is None
    assert keys.previous_for(HOST) == OLD


def test_a_previous_key_equal_to_the_current_one_is_no_rotation() -> None:
    """INDEXNOW_KEY_PREVIOUS left at the new key after a rotation: nothing to fall back to.
    fails if ``old is not None and old != self.key_for(host)`` becomes ``or`` or loses its
    second side in protocol.py::Keys.previous_for"""
    assert Keys(default=KEY, previous=KEY).previous_for(HOST) is None
    secret = "one secret for both years"
    assert Keys(derive=secret, derive_previous=secret).previous_for(HOST) is None
    assert Keys(derive=secret, derive_previous="last year's").previous_for(HOST) == derive_key("last year's", HOST)


def test_the_previous_key_file_is_beside_the_new_one_and_sent_as_its_location_only_with_key_location() -> None:
    """fails if ``location is None`` becomes ``is not`` in protocol.py::Keys.previous_location"""
    plain = Keys(default=NEW, previous=OLD)
    assert plain.previous_location(HOST, "https") == (None, f"https://{HOST}/{OLD}.txt")
    placed = Keys(default=NEW, previous=OLD, key_location=f"{BASE}/keys/{NEW}.txt")
    assert placed.previous_location(HOST, "http") == (f"{BASE}/keys/{OLD}.txt", f"{BASE}/keys/{OLD}.txt")


def test_a_hosts_own_key_comes_from_its_keys_entry() -> None:
    """fails if ``return f'[keys] "{host}"'`` raises in protocol.py::Keys.source_of"""
    keys = Keys(default=NEW, per_host={OTHER: KEY})
    assert keys.source_of(OTHER) == f'[keys] "{OTHER}"'
    assert keys.source_of(HOST) == "INDEXNOW_KEY (or --key)"
    assert Keys(derive="a secret").source_of(HOST) == "[keys] derive"


def test_a_keys_table_or_a_derive_alone_is_a_configured_key() -> None:
    """A dry run says "no IndexNow key is set" only when no host can have one.
    fails if ``bool(self.per_host)`` or ``self.derive is not None`` is dropped from the ``or``
    in protocol.py::Keys.configured"""
    assert Keys(per_host={HOST: KEY}).configured
    assert Keys(derive="a secret").configured
    assert Keys(default=KEY).configured
    assert not Keys(derive_variable="SECRET").configured
