"""Burned keys: the ``key-refused`` finding, from what the endpoints answered.

An endpoint that answers 403 for a host while another endpoint takes the same host's
batches, signed with the same key, refuses the key itself (the key file is served: the other
endpoint checked it). Once is a hiccup, or an endpoint still validating; on two runs in a row
it is a finding that names the endpoint and the fix (``key rotate``). The state keeps, per
host, a digest of the key that last signed its batches and each endpoint's streak of 403s
(``State.key_checks``): a new key starts the streaks over.
"""

from __future__ import annotations

import hashlib

from notifier.protocol import BatchResult
from notifier.rules import RULES, Violation
from notifier.rules.table import OFF, Level
from notifier.store.checks import KeyCheck, Refusal
from notifier.store.model import State

STREAK = 2  # runs in a row: one 403 can be an endpoint still validating a new key file
_DIGEST_SIZE = 4  # bytes: 8 hex digits say the key changed; too few to tell a key, however short


def key_digest(key: str) -> str:
    """What the state keeps of a key: never the key, a short digest of it."""
    return hashlib.blake2b(key.encode("utf-8"), digest_size=_DIGEST_SIZE, person=b"notify-keys").hexdigest()


def is_new_key(state: State, host: str, key: str) -> bool:
    """Whether ``key`` did not sign ``host``'s batches at the last run that sent it any (or none did)."""
    check = state.key_checks.get(host)
    return check is None or check.get("key") != key_digest(key)


def new_key_hint(host: str) -> str:
    """Said with a 403 on the first run of a new key."""
    return (
        f"this is the first run with this key for {host}: engines may remember a failed key check for a while, "
        "so send only once the key file is served (--wait-live SECONDS waits for it)"
    )


def record_answers(state: State, answers: list[tuple[BatchResult, str]], level: Level | None) -> list[Violation]:
    """Fold one run's answers (each sent batch's result and the key that signed it) into the
    streaks; the ``key-refused`` findings at ``level`` (None: the rule's default)."""
    outcomes: dict[str, dict[str, set[str]]] = {}  # host -> endpoint -> "refused" / "took"
    signed: dict[str, str] = {}
    for result, key in answers:
        signed[result.host] = key
        seen = outcomes.setdefault(result.host, {}).setdefault(result.endpoint, set())
        if result.status in ("delivered", "accepted"):
            seen.add("took")
        elif result.http_status == 403:
            seen.add("refused")
    effective = level or RULES["key-refused"].level
    found: list[Violation] = []
    for host, endpoints in outcomes.items():
        check = state.key_checks.get(host)
        digest = key_digest(signed[host])
        refused = dict(check.get("refused", {})) if check is not None and check.get("key") == digest else {}
        takers = {endpoint for endpoint, seen in endpoints.items() if "took" in seen}
        for endpoint, seen in endpoints.items():
            if "refused" in seen:
                before = refused.get(endpoint, Refusal(runs=0, elsewhere=False))
                refused[endpoint] = Refusal(runs=before["runs"] + 1, elsewhere=before["elsewhere"] or bool(takers - {endpoint}))
                streak = refused[endpoint]
                if streak["runs"] >= STREAK and streak["elsewhere"] and effective != OFF:
                    found.append(Violation("key-refused", "warn", endpoint, _finding(endpoint, host, streak["runs"])))
            elif "took" in seen:
                refused.pop(endpoint, None)
        state.key_checks[host] = KeyCheck(key=digest, refused=refused) if refused else KeyCheck(key=digest)
    return found


def _finding(endpoint: str, host: str, runs: int) -> str:
    return (
        f"{endpoint} answered 403 for {host} on {runs} runs in a row while another endpoint took {host}'s batches with the same "
        "key: this endpoint refuses the key itself; rotate it: `notify-changes key rotate --write DIR` (README: Running it for months)"
    )
