"""``--bot-ranges`` files (``notifier/bot_ranges.py``) on their edges: spans that touch or
overlap, the first and last address of a range, a file whose name holds ``=``, prefixes with
host bits, and where an error is. Each test names the mutants of scripts/mutate.py it kills
(#44); the crawled tests give one /24 each, so merging was nobody's."""

from __future__ import annotations

import ipaddress
import json
from pathlib import Path

import pytest

from notifier.bot_ranges import Ranges, read_ranges
from notifier.errors import InputError


def ranges(*prefixes: str) -> Ranges:
    return Ranges.of([ipaddress.ip_network(each) for each in prefixes])


def test_touching_and_overlapping_prefixes_are_one_span_and_a_gap_stays_a_gap() -> None:
    """Kills ``start <= merged[-1][1] + 1`` made ``<``, its ``+ 1`` moved, the ``merged and``
    side dropped, and ``max`` made ``min`` or removed (a /24 inside a /16 shrank the span)."""
    touching = ranges("10.0.0.0/24", "10.0.1.0/24")  # 10.0.0.255 and 10.0.1.0: adjacent
    assert touching.spans[4] == ((int(ipaddress.ip_address("10.0.0.0")),), (int(ipaddress.ip_address("10.0.1.255")),))
    inside = ranges("10.0.0.0/16", "10.0.5.0/24")
    assert inside.holds("10.0.200.1") and inside.holds("10.0.255.255") and not inside.holds("10.1.0.0")
    gap = ranges("10.0.0.0/24", "10.0.2.0/24")
    assert len(gap.spans[4][0]) == 2 and not gap.holds("10.0.1.7") and gap.holds("10.0.2.0")
    mixed = ranges("2620:ee:c000::/42", "157.55.39.0/24")
    assert mixed.holds("[2620:ee:c000::1]") and mixed.holds("157.55.39.255") and not mixed.holds("157.55.40.0")


def test_the_first_and_last_address_of_a_range_are_inside_it() -> None:
    one = ranges("157.55.39.0/24")
    assert [one.holds(each) for each in ("157.55.38.255", "157.55.39.0", "157.55.39.255", "157.55.40.0", "not an ip")] == [
        False,
        True,
        True,
        False,
        False,
    ]


def test_a_prefix_with_host_bits_is_its_network(tmp_path: Path) -> None:
    """Kills ``strict=False`` made True: published lists and hand-written ones say 157.55.39.1/24."""
    (tmp_path / "bing.txt").write_text("157.55.39.1/24\n")
    assert read_ranges([str(tmp_path / "bing.txt")])["bingbot"].holds("157.55.39.200")


def test_an_error_names_the_line_counted_from_one_with_comments_and_blanks(tmp_path: Path) -> None:
    """Kills ``enumerate(lines, 1)`` and ``enumerate(prefixes, 1)`` moved by one."""
    (tmp_path / "yandex.txt").write_text("# Yandex\n\n5.255.253.0/24\n5.45.x/24\n")
    with pytest.raises(InputError, match=r"line 4: '5\.45\.x/24' is not a CIDR prefix"):
        read_ranges([f"yandexbot={tmp_path / 'yandex.txt'}"])
    (tmp_path / "bing.json").write_text(json.dumps({"prefixes": [{"ipv4Prefix": "157.55.39.0/24"}, {"ipv6Prefix": "nope"}]}))
    with pytest.raises(InputError, match="prefix 2: 'nope'"):
        read_ranges([str(tmp_path / "bing.json")])


def test_a_file_whose_name_holds_an_equals_sign_is_a_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``ENGINE=FILE`` only when the part before ``=`` names no folder and the whole is no file:
    kills each side of ``equals and "/" not in named and not Path(each).exists()`` dropped,
    and the ``"/"`` widened."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "ranges=2024.txt").write_text("157.55.39.0/24\n")
    assert list(read_ranges(["ranges=2024.txt"])) == ["bingbot"]  # an existing file, not an engine called "ranges"
    (tmp_path / "v=1").mkdir()
    (tmp_path / "v=1" / "bing.txt").write_text("157.55.39.0/24\n")
    assert list(read_ranges(["v=1/bing.txt"])) == ["bingbot"]  # a folder's "=", the file not there yet
    (tmp_path / "yandex.txt").write_text("5.255.253.0/24\n")
    found = read_ranges(["YandexBot=yandex.txt", "bingbot=v=1/bing.txt"])
    assert sorted(found) == ["YandexBot", "bingbot"] and found["YandexBot"].holds("5.255.253.9")
    assert list(read_ranges([str(tmp_path / "yandex.txt")])) == ["bingbot"]  # no "=": bingbot's
    with pytest.raises(InputError, match=r"--bot-ranges missing/a=b\.txt: cannot read it"):
        read_ranges(["missing/a=b.txt"])  # a folder's "=", no such file: the file is missing, not an engine
    with pytest.raises(InputError, match=r"--bot-ranges nothere\.txt: cannot read it"):
        read_ranges(["nothere.txt"])  # no "=" at all: a file, never an engine
