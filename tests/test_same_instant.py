"""When two lastmods are the same (``notifier/changes.py::same_instant``): a page is changed
when its lastmod names another instant, however it is written (#44)."""

from __future__ import annotations

import pytest

from notifier.changes import same_instant


@pytest.mark.parametrize(
    ("old", "new", "same"),
    [
        ("2024-05-01T10:00:00Z", "2024-05-01T10:00:00Z", True),
        ("2024-05-01T10:00:00Z", "2024-05-01T12:00:00+02:00", True),  # one instant, two offsets
        ("2024-05-01T10:00:00Z", "2024-05-01T10:00:01Z", False),
        (None, None, True),
        (None, "2024-05-01", False),
        ("2024-05-01", None, False),
        ("soon", "later", False),  # two texts that name no date name no instant: a change of text is a change
        ("soon", "2024-05-01", False),
        ("2024-05-01", "soon", False),
    ],
)
def test_two_lastmods_are_the_same_when_they_name_one_instant(old: str | None, new: str | None, same: bool) -> None:
    """Kills ``old_instant is not None and`` dropped: "soon" then "later" was no change (both None)."""
    assert same_instant(old, new) is same
