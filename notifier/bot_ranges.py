"""``--bot-ranges [ENGINE=]FILE``: an engine's published crawler addresses, and which engine
made a visit. A user agent is one header anyone can send; an engine whose ranges are given is
believed only by its address (any user agent from inside counts, its name from outside is a
forgery), and an engine without ranges is still believed by its user agent.

A file is the JSON Bing publishes for bingbot (and Google, in the same shape, for its
crawlers): ``{"creationTime": …, "prefixes": [{"ipv4Prefix": "157.55.39.0/24"}, {"ipv6Prefix":
"2620:ee:c000::/42"}]}``, or plain text: one CIDR prefix a line, ``#`` starting a comment.
Neither names its engine, so the option does (``yandexbot=yandex.txt``); unnamed, bingbot.
"""

from __future__ import annotations

import bisect
import functools
import ipaddress
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from notifier.errors import InputError, UsageError
from notifier.paths import cannot

# engine -> the token its crawler's user agent carries (case-insensitive)
CRAWLERS = {
    "bingbot": "bingbot",
    "YandexBot": "yandexbot",
    "SeznamBot": "seznambot",
    "Yeti": "yeti/",
    "YepBot": "yepbot",
    "Amazonbot": "amazonbot",
}
_BY_FOLDED = {engine.casefold(): engine for engine in CRAWLERS}
ADDRESSES_CACHED = 65_536  # distinct addresses whose engine is remembered: a log has few crawlers' and many others'
Network = ipaddress.IPv4Network | ipaddress.IPv6Network
Identify = Callable[[str, str], tuple[str | None, str | None]]  # (address, agent) -> (engine believed, engine refused)


def crawler_of(agent: str) -> str | None:
    """The engine whose crawler ``agent`` names, or None."""
    folded = agent.casefold()
    return next((engine for engine, token in CRAWLERS.items() if token in folded), None)


@dataclass(frozen=True)
class Ranges:
    """An engine's published addresses, as sorted, merged integer spans per IP version."""

    spans: Mapping[int, tuple[tuple[int, ...], tuple[int, ...]]]  # version -> (starts, ends)

    @classmethod
    def of(cls, networks: Sequence[Network]) -> Ranges:
        pairs: dict[int, list[tuple[int, int]]] = {}
        for network in networks:
            pairs.setdefault(network.version, []).append((int(network.network_address), int(network.broadcast_address)))
        spans = {}
        for version, each in pairs.items():
            merged: list[list[int]] = []
            for start, end in sorted(each):
                if merged and start <= merged[-1][1] + 1:
                    merged[-1][1] = max(merged[-1][1], end)
                else:
                    merged.append([start, end])
            spans[version] = (tuple(start for start, _ in merged), tuple(end for _, end in merged))
        return cls(spans)

    def holds(self, address: str) -> bool:
        try:
            ip = ipaddress.ip_address(address.strip("[]"))
        except ValueError:
            return False
        if ip.version == 6 and ip.ipv4_mapped is not None:  # ::ffff:157.55.39.1: IPv4 as a dual-stack server logs it
            ip = ip.ipv4_mapped
        starts, ends = self.spans.get(ip.version, ((), ()))
        at = bisect.bisect_right(starts, int(ip)) - 1
        return at >= 0 and int(ip) <= ends[at]


def read_ranges(given: Sequence[str]) -> dict[str, Ranges]:
    """Each ``[ENGINE=]FILE`` of ``--bot-ranges``, read: engine -> its ranges (one engine's
    files joined). An unknown engine is a UsageError, an unreadable or malformed file an
    InputError (both exit 2)."""
    networks: dict[str, list[Network]] = {}
    for each in given:
        named, equals, rest = each.partition("=")
        if equals and "/" not in named and not Path(each).exists():
            engine = _BY_FOLDED.get(named.casefold())
            if engine is None:
                raise UsageError(f"--bot-ranges {each}: {named!r} is not one of {', '.join(CRAWLERS)}")
            name = rest
        else:
            engine, name = "bingbot", each
        try:
            text = Path(name).read_text(encoding="utf-8")
        except OSError as error:
            raise InputError(f"--bot-ranges {name}: {cannot('read it', error)}") from None
        except UnicodeDecodeError:
            raise InputError(f"--bot-ranges {name}: not text; give the published JSON or one CIDR prefix a line") from None
        found = _networks(text, name)
        if not found:
            raise InputError(f"--bot-ranges {name}: no address prefix in it (every {engine} visit would be refused)")
        networks.setdefault(engine, []).extend(found)
    return {engine: Ranges.of(each) for engine, each in networks.items()}


def _networks(text: str, name: str) -> list[Network]:
    if text.lstrip().startswith("{"):
        try:
            prefixes = json.loads(text)["prefixes"]
            texts = [(f"prefix {number}", prefix.get("ipv4Prefix") or prefix["ipv6Prefix"]) for number, prefix in enumerate(prefixes, 1)]
        except (ValueError, KeyError, TypeError, AttributeError):
            raise InputError(
                f'--bot-ranges {name}: not the published ranges ({{"prefixes": [{{"ipv4Prefix": "…"}}, {{"ipv6Prefix": "…"}}]}})'
            ) from None
    else:
        lines = (line.split("#", 1)[0].strip() for line in text.splitlines())
        texts = [(f"line {number}", line) for number, line in enumerate(lines, 1) if line]
    found = []
    for where, prefix in texts:
        try:
            found.append(ipaddress.ip_network(str(prefix), strict=False))
        except ValueError:
            raise InputError(f"--bot-ranges {name}: {where}: {str(prefix)[:60]!r} is not a CIDR prefix such as 157.55.39.0/24") from None
    return found


def identifier(ranges: Mapping[str, Ranges]) -> Identify:
    """``(address, agent) -> (engine believed, engine refused)``: an address inside an engine's
    ranges is that engine's, whatever its agent says; an agent naming an engine with ranges
    from outside them is refused; an engine without ranges is believed by its agent."""

    @functools.lru_cache(maxsize=ADDRESSES_CACHED)
    def by_address(address: str) -> str | None:
        return next((engine for engine, each in ranges.items() if each.holds(address)), None)

    def identify(address: str, agent: str) -> tuple[str | None, str | None]:
        claimed = crawler_of(agent)
        owner = by_address(address) if ranges else None
        if owner is not None:
            return owner, None
        if claimed in ranges:
            return None, claimed
        return claimed, None

    return identify
