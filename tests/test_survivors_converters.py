"""What notifier/settings/converters.py does that the mutation run found no test stating (#44):
a flag is no whole number, ``since:`` is the only prefix of a window, a duration of exactly
100 years is allowed, and how a share reads (``20``, ``20%``, ``0.2``, ``1``, ``0``, ``100%``).
Each test names the edit it catches."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest

from notifier.dates import MAX_DURATION_SECONDS
from notifier.errors import UsageError
from notifier.settings.converters import duration, fraction, initial_mode, whole_number


# -- whole_number ------------------------------------------------------------------------------
def test_true_is_not_a_whole_number() -> None:
    """fails if ``isinstance(value, (bool, float)) or ...`` loses its first side in
    settings/converters.py::whole_number.convert (True would be read as 1)"""
    with pytest.raises(UsageError, match=r"^batch_size=: True is not a whole number; use 1\.\.500$"):
        whole_number("batch_size=", 1, 500)(True)


# -- initial_mode ------------------------------------------------------------------------------
def test_a_window_is_written_since_and_nothing_else() -> None:
    """fails if ``value.startswith("since:") and ...`` loses its first side in
    settings/converters.py::initial_mode.convert (``later:14d`` would be a window)"""
    with pytest.raises(UsageError, match=r"^--initial: 'later:14d' is not baseline, submit, since:DURATION"):
        initial_mode("--initial")("later:14d")


def test_a_window_of_one_digit_is_read_whole() -> None:
    """fails if ``value[6:]`` becomes ``value[7:]`` in settings/converters.py::initial_mode.convert
    (``since:5d`` would lose its 5 and be refused)"""
    assert initial_mode("--initial")("since:5d") == "since:5d"


# -- duration ----------------------------------------------------------------------------------
def test_a_duration_of_exactly_the_longest_allowed_is_allowed() -> None:
    """fails if ``0 <= value <= MAX_DURATION_SECONDS`` becomes ``value < MAX_DURATION_SECONDS`` in
    settings/converters.py::duration.convert"""
    assert duration("min_interval=")(MAX_DURATION_SECONDS) == dt.timedelta(seconds=MAX_DURATION_SECONDS)
    with pytest.raises(UsageError, match="must be a number of seconds from 0 to 100 years"):
        duration("min_interval=")(MAX_DURATION_SECONDS + 1)


# -- fraction ----------------------------------------------------------------------------------
def test_a_share_is_a_text_or_a_plain_number_not_a_decimal() -> None:
    """fails if ``isinstance(value, bool) or not isinstance(value, (str, int, float))`` becomes
    ``and``, or loses its second side, in settings/converters.py::fraction.convert (a Decimal would
    be read through its text)"""
    with pytest.raises(UsageError, match=r"^max_removed=: Decimal\('0\.2'\) is not a share such as 20% or 0\.2$"):
        fraction("max_removed=")(Decimal("0.2"))


def test_a_flag_is_not_a_share() -> None:
    """states that True is refused with the share's own message (the bool test and the text's
    parse both refuse it, so the two sides of the first check name the same line)"""
    with pytest.raises(UsageError, match=r"^max_removed=: True is not a share such as 20% or 0\.2$"):
        fraction("max_removed=")(True)


def test_a_number_over_one_is_a_percentage() -> None:
    """fails if ``number = number / 100`` is left out, its ``100`` becomes ``101``, or
    ``not text.endswith("%")`` loses its ``not``, in settings/converters.py::fraction.convert"""
    assert fraction("--max-removed")("20") == 0.2
    assert fraction("--max-removed")(20) == 0.2


def test_two_is_two_percent() -> None:
    """fails if ``number > 1`` becomes ``number > 2`` in settings/converters.py::fraction.convert"""
    assert fraction("--max-removed")("2") == 0.02


def test_one_is_the_whole_not_one_percent() -> None:
    """fails if ``number > 1`` becomes ``number >= 1`` in settings/converters.py::fraction.convert"""
    assert fraction("--max-removed")("1") == 1.0
    assert fraction("--max-removed")(1) == 1.0


def test_a_percentage_over_a_hundred_is_refused() -> None:
    """fails if ``number > 1 and not text.endswith("%")`` loses its second side (150% would be read
    as 1.5%), or ``0 <= number <= 1`` becomes ``<= 2``, in settings/converters.py::fraction.convert"""
    with pytest.raises(UsageError, match=r"^--max-removed: '150%' must be between 0% and 100%$"):
        fraction("--max-removed")("150%")


def test_the_bounds_of_a_share_are_allowed() -> None:
    """fails if ``0 <= number <= 1`` becomes ``0 < number`` (or ``number < 1``) in
    settings/converters.py::fraction.convert"""
    assert fraction("--max-removed")("0") == 0.0
    assert fraction("--max-removed")("0%") == 0.0
    assert fraction("--max-removed")("100%") == 1.0
