"""``--wait-live SECONDS``: before the first batch, wait until the deploy is live.

An endpoint that is told of a page before the page (or the key file) is served fetches the
old page, or fails the key check and may remember that (Bing does, for a while). A CDN can
take a minute to propagate a deploy, which deploy scripts paper over with ``sleep 60``.
Instead, each host's key file, and with ``--site-dir`` up to ``SAMPLE`` of the changed pages,
are asked for until each serves the key / the bytes the build holds (their fingerprint),
with a backoff bounded by ``--wait-live``. A host not live by then sends nothing: its URLs
stay pending (exit 3) and the next run tries again.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import NamedTuple

from notifier.indexnow import Client
from notifier.pipeline.context import NO_HOLDS, Holds
from notifier.protocol import MAX_BATCH, make_batches
from notifier.report import plural
from notifier.settings.settings import Settings
from notifier.site.folder import SiteFolder
from notifier.site.pages import PAGE_LIMIT, file_fingerprint, fingerprint_bytes
from notifier.store import State

FIRST_WAIT = 1.0  # seconds before the second look, doubled at each look after
LONGEST_WAIT = 15.0  # the backoff's bound: a CDN that propagates in a minute is seen live within 15 s of it
SAMPLE = 10  # changed pages looked at, at most: enough to see a stale CDN, few enough for a deploy


class Target(NamedTuple):
    """What must be live before ``host`` is sent anything: a key file or a built page."""

    host: str
    url: str  # what is fetched
    key: str | None = None  # a key file: the key it must serve
    previous: tuple[str, str] | None = None  # during a rotation, the previous key's file and key: served, it signs
    fingerprint: str | None = None  # a page: the fingerprint of the build's bytes


def live_targets(settings: Settings, state: State, endpoints: list[str], holds: Holds = NO_HOLDS) -> list[Target]:
    """Each host's key file (of the hosts with something to send), then with ``--site-dir``
    up to ``SAMPLE`` added or changed pending pages whose file is in the build. What
    ``holds`` keeps back this run ([announce]) is not sent, so not waited for (an endpoint
    whose day is used up still sends its URLs on through another under ``--endpoint-mode first``)."""
    passed_over = holds.full if settings.endpoint_mode != "first" else {}
    pending = {
        loc: item
        for endpoint in endpoints
        if endpoint not in passed_over
        for loc, item in state.pending.get(endpoint, {}).items()
        if loc not in holds.at(endpoint)
    }
    batches, _ = make_batches(pending, settings.keys, MAX_BATCH)
    targets: dict[str, Target] = {}
    for batch in batches:
        if batch.host not in targets:
            _, url = settings.keys.location_for(batch.host, "https" if batch.urls[0].startswith("https:") else "http")
            old = settings.keys.previous_for(batch.host)
            previous = (settings.keys.previous_location(batch.host, url.split(":", 1)[0])[1], old) if old else None
            targets[batch.host] = Target(batch.host, url, key=batch.key, previous=previous)
    found = list(targets.values())
    if settings.site_dir is None:
        return found
    folder = SiteFolder.unscanned(settings.site_dir, settings.base_path)
    sendable = {loc: batch.host for batch in batches for loc in batch.urls}
    for loc, item in pending.items():
        if len(found) - len(targets) >= SAMPLE:
            break
        relative = folder.page_file(loc) if item["reason"] in ("added", "changed") and loc in sendable else None
        path = str(folder.path_of(relative)) if relative is not None else None
        fingerprint = file_fingerprint(path) if path is not None and _small(path) else None
        if fingerprint is not None:
            found.append(Target(sendable[loc], loc, fingerprint=fingerprint))
    return found


def _small(path: str) -> bool:
    """A page the live answer can be compared with: one read whole (a video is not a page)."""
    try:
        return os.path.getsize(path) < PAGE_LIMIT
    except OSError:
        return False


def wait_until_live(
    targets: list[Target],
    client: Client,
    *,
    bound: float,
    sleep: Callable[[float], None],
    clock: Callable[[], float],
    notice: Callable[[str], None] | None = None,
) -> list[tuple[Target, str]]:
    """Ask for each target until it is live, waiting ``FIRST_WAIT`` doubling to ``LONGEST_WAIT``
    between looks, never past ``bound`` seconds in all; the targets still not live, each
    with what it served at the last look (empty: all live)."""
    started = clock()
    waiting, delay = list(targets), FIRST_WAIT
    while True:
        problems = [(target, problem) for target in waiting if (problem := _problem(client, target)) is not None]
        left = bound - (clock() - started)
        if not problems or left <= 0:
            return problems
        waiting = [target for target, _ in problems]
        step = min(delay, left)
        if notice is not None:
            notice(f"--wait-live: {plural(len(waiting), 'file')} not live yet ({problems[0][1]}); looking again in {step:.0f} s")
        sleep(step)
        delay = min(delay * 2, LONGEST_WAIT)


def _problem(client: Client, target: Target) -> str | None:
    if target.key is not None:
        problem = client.check_key_file(target.url, target.key, polled=True)
        if problem is not None and target.previous is not None and client.check_key_file(*target.previous, polled=True) is None:
            return None  # a rotation whose new key's file is not served yet: the previous key signs
        return problem
    served, problem = client.live_page(target.url, PAGE_LIMIT)
    if served is None:
        return problem
    if fingerprint_bytes(served) != target.fingerprint:
        return f"{target.url} serves other bytes than the build holds (the last deploy's page, or a cache not updated yet)"
    return None


def not_live_line(missing: list[tuple[Target, str]], bound: float) -> str:
    """The one line a run says when the deploy was not live in time."""
    hosts = list(dict.fromkeys(target.host for target, _ in missing))
    shown = "; ".join(problem for _, problem in missing[:3]) + (f"; and {len(missing) - 3} more" if len(missing) > 3 else "")
    return (
        f"not live within --wait-live {bound:g} s: {shown}; nothing was sent for {', '.join(hosts)}, its URLs stay pending "
        "(publish the deploy, or wait longer, and run again)"
    )
