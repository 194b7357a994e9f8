"""Phase three of a run: send every endpoint its pending URLs, in batches, after the key
preflight, recording each acknowledged batch durably before the next is sent.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator

from notifier.dates import format_utc
from notifier.environment import Environment
from notifier.errors import StateError
from notifier.indexnow import Batch, BatchResult, Client, RetryPolicy, make_batches, redact, redact_all
from notifier.pipeline.context import NO_HOLDS, Deliveries, Holds, Run
from notifier.pipeline.live import Target, live_targets, not_live_line, wait_until_live
from notifier.pipeline.policy import count_sent
from notifier.pipeline.refusals import is_new_key, new_key_hint, record_answers
from notifier.protocol import Keys
from notifier.report import plural
from notifier.settings.settings import Settings
from notifier.store import State, Store
from notifier.store.durable import DeliveryNotRecorded
from notifier.store.ledger import LedgerEntry, entry
from notifier.urls import host_of
from notifier.waits import endpoint_key, wait_for


def submit_pending(run: Run, state: State, store: Store, holds: Holds = NO_HOLDS) -> Deliveries:
    """Send what is pending but what ``holds`` keeps back ([announce]): each batch's outcome,
    and the URLs delivered (each recorded in ``store`` as it is acknowledged)."""
    settings, env = run.settings, run.env
    batches: list[BatchResult] = []
    delivered: list[str] = []
    client = Client(
        policy=RetryPolicy(budget=settings.retry_timeout),
        request_timeout=settings.request_timeout,
        sleep=env.sleep,
        clock=env.clock,
        wall_clock=env.now,
        session=env.session,
        notice=_redacting(env.notice, settings.keys),
    )
    unwritten: list[LedgerEntry] = []  # the ledger entries of the batches sent, not yet written
    unrecorded: list[str] = []
    problems: list[str] = []
    submissions = _Submissions(settings, client, state, run.endpoints, env, holds)
    not_live = _wait_live(run, state, client, submissions)
    answers: list[tuple[BatchResult, str]] = []  # each sent batch's result and the key that signed it
    try:
        for result, batch in submissions:
            batches.append(result)
            at = format_utc(env.now())
            if batch is not None and result.attempts:  # sent: what the endpoint said goes to the ledger
                answers.append((result, batch.key))
                unwritten.append(
                    entry(at, result.endpoint, batch.host, result.status, result.http_status, result.attempts, result.message, batch.urls)
                )
            if batch is not None and result.status in ("delivered", "accepted"):
                delivered.extend(batch.urls)
                if settings.announce.per_day is not None:
                    count_sent(state, result.endpoint, len(batch.urls), at)
                try:
                    first, ledger = settings.endpoint_mode == "first", (unwritten, settings.keep_batches)
                    if _record_delivered(store, state, result.endpoint, batch.urls, at, first=first, ledger=ledger):
                        unwritten = []  # written with the batch, in one commit
                except DeliveryNotRecorded as error:  # received, not recorded: it stays pending, and no more is sent
                    unrecorded, problems = list(batch.urls), [str(error)]
                    break
    finally:
        if env.session is None:
            client.close()
        notes = _record_ledger(store, unwritten, settings.keep_batches, recorded=not unrecorded)
    said = [not_live_line(not_live, settings.wait_live)] if not_live else []
    said += submissions.rotation_line()
    findings = record_answers(state, answers, settings.rule_levels.get("key-refused"))
    return Deliveries(
        batches,
        delivered,
        said + problems + _unusual_successes(batches) + notes,
        unrecorded,
        [target.url for target, _ in not_live],
        list(submissions.previous),
        findings,
    )


def _wait_live(run: Run, state: State, client: Client, submissions: _Submissions) -> list[tuple[Target, str]]:
    """``--wait-live``: wait until the deploy is live; a host that is not sends nothing this run."""
    settings, env = run.settings, run.env
    if not settings.wait_live:
        return []
    missing = wait_until_live(
        live_targets(settings, state, run.endpoints, submissions.holds),
        client,
        bound=settings.wait_live,
        sleep=env.sleep,
        clock=env.clock,
        notice=_redacting(env.notice, settings.keys),
    )
    for target, _ in missing:
        submissions.host_problems[target.host] = f"not sent: {target.host} was not live in time (--wait-live)"
    return missing


def _redacting(notice: Callable[[str], None] | None, keys: Keys) -> Callable[[str], None] | None:
    """``notice`` with every key cut to four characters: a retry line names what it waits for."""
    if notice is None or not keys.secrets:
        return notice
    return lambda line: notice(redact_all(line, keys))


def _record_delivered(
    store: Store, state: State, endpoint: str, urls: list[str], at: str, *, first: bool, ledger: tuple[list[LedgerEntry], int]
) -> bool:
    """An acknowledged batch leaves ``endpoint``'s pending set; with ``--endpoint-mode first``
    it leaves every endpoint's (a URL one endpoint took is delivered: they share what they
    receive), each set giving up the URLs it holds (the batch is made of every set's URLs),
    so that each record is a slice of its set, as ``State.settle`` counts on. The ``ledger``'s
    entries (and how many batches it keeps) go with the first record, where the store writes
    both at once: whether it did."""
    entries, keep = ledger
    if not first:
        return store.record_delivered(state, endpoint, urls, at, entries, keep)
    written = False
    for each, items in list(state.pending.items()):
        held = [loc for loc in urls if loc in items]  # never a URL the set lacks: settle counts on slices
        if held:
            written = store.record_delivered(state, each, held, at, [] if written else entries, keep) or written
    return written


def _unusual_successes(batches: list[BatchResult]) -> list[str]:
    """One note an endpoint and code for a success IndexNow does not document (Bing has
    answered 203): received like a 200, and said once, so that a change at an endpoint is seen."""
    unusual = Counter((batch.endpoint, batch.http_status) for batch in batches if batch.status == "delivered" and batch.http_status != 200)
    return [
        f"{host_of(endpoint)} answered HTTP {code} to {count} batch{'es' * (count != 1)}: an unusual success code, counted as received "
        "(every 2xx is a success); the ledger keeps the code"
        for (endpoint, code), count in unusual.items()
    ]


def _record_ledger(store: Store, sent: list[LedgerEntry], keep: int, *, recorded: bool = True) -> list[str]:
    """The ledger is a record of what happened, nothing depends on it: a failure to add to
    it is one note, not a failed deploy."""
    if not sent:
        return []
    try:
        store.record_ledger(sent, keep)
    except (StateError, OSError) as error:
        kept = "the deliveries themselves are recorded" if recorded else "it is a record only, nothing depends on it"
        return [f"the ledger of batches could not be written ({error}); {kept}"]
    return []


class _Submissions:
    """Iterate (result, batch) over every endpoint's pending URLs, after the key preflight."""

    def __init__(self, settings: Settings, client: Client, state: State, endpoints: list[str], env: Environment, holds: Holds) -> None:
        self.settings, self.client, self.state, self.endpoints, self.env = settings, client, state, endpoints, env
        self.holds = holds
        self.host_problems: dict[str, str | None] = {}
        self.previous: dict[str, tuple[str, str | None, str]] = {}  # host -> the previous key, its keyLocation, why it signs

    def _preflight(self, batch: Batch) -> str | None:
        """Per host, once: the key file matches, and (--verify-live) changed pages are live.
        During a rotation, a host whose new key's file is not live yet signs with the previous key."""
        if batch.host not in self.host_problems:
            scheme = "https" if batch.urls[0].startswith("https:") else "http"
            _, url = self.settings.keys.location_for(batch.host, scheme)
            if self.env.progress is not None:
                self.env.progress(redact(f"checking key file {url}", batch.key))
            problem = self.client.check_key_file(url, batch.key)
            if problem is not None and self.settings.keys.previous_for(batch.host) is not None:
                problem = self._previous_key(batch.host, scheme, problem)
            if problem is None and self.settings.verify_live:
                problem = self._live_problem(batch.host)
            self.host_problems[batch.host] = problem
        return self.host_problems[batch.host]

    def _previous_key(self, host: str, scheme: str, problem: str) -> str | None:
        """The new key's file is not live (``problem``): the previous key signs if its file is."""
        keys = self.settings.keys
        old = keys.previous_for(host) or ""
        location, url = keys.previous_location(host, scheme)
        if (also := self.client.check_key_file(url, old)) is not None:
            return f"{problem}; the previous key's file is not served either: {also}"
        self.previous[host] = (old, location, problem)
        return None

    def signed(self, batch: Batch) -> Batch:
        """``batch`` signed with the key its host's preflight chose."""
        previous = self.previous.get(batch.host)
        return batch if previous is None else batch._replace(key=previous[0], key_location=previous[1])

    def rotation_line(self) -> list[str]:
        """One line for the hosts that signed with the previous key, or none."""
        if not self.previous:
            return []
        hosts = list(self.previous)
        return [
            f"the new key's file is not live yet at {', '.join(hosts)} ({self.previous[hosts[0]][2]}); signed with the previous key "
            "there: publish the new key's file (a run signs with the new key once it is served), and keep the old one until then"
        ]

    def _live_problem(self, host: str) -> str | None:
        """Up to --verify-live added or changed pages of ``host`` must be served already (CDNs lag)."""
        new_pages = (
            loc
            for endpoint in self.endpoints
            for loc, item in self.state.pending.get(endpoint, {}).items()
            if item["reason"] in ("added", "changed") and host_of(loc) == host
        )
        fetched: set[str] = set()
        for loc in new_pages:
            if loc in fetched:  # pending at two endpoints: one page
                continue
            if len(fetched) >= self.settings.verify_live:  # N pages, however many endpoints: the walk stops there
                break
            fetched.add(loc)
            problem = self.client.check_live(loc)
            if problem is not None:
                return f"the live site is not serving the new pages yet: {problem}; the URLs stay pending, run again later"
        return None

    def _waiting(self, endpoint: str, name: str) -> str | None:
        """Why nothing goes to ``endpoint`` now: an earlier run (or, in PostgreSQL, another site)
        was asked to wait until a time still ahead. A wait that is over is forgotten."""
        until = wait_for(self.state.backoff, endpoint)
        if until is None:
            return None
        if until <= format_utc(self.env.now()):
            self.state.backoff.pop(endpoint_key(endpoint), None)
            return None
        return f"not sent: {name} asked to wait until {until} (Retry-After, at an earlier run); they stay pending"

    def __iter__(self) -> Iterator[tuple[BatchResult, Batch | None]]:
        if self.settings.endpoint_mode == "first":
            yield from self._first_taker()
        else:
            yield from self._every_endpoint()

    def _step(self, label: str, batch: Batch, count: int) -> None:
        if self.env.step is not None and count > 1:  # one batch: a short run writes no step
            self.env.step(f"sending {label}: {plural(len(batch.urls), 'URL')} of {batch.host}")

    def _submit(self, endpoint: str, batch: Batch, label: str, *, fail_over: bool = False) -> BatchResult:
        """Send ``batch``; a 403 on the first run of a new key says that engines may remember it."""
        result = self.client.submit(endpoint, batch, label, fail_over=fail_over)
        if result.http_status == 403 and is_new_key(self.state, batch.host, batch.key):
            result = result._replace(message=f"{result.message}; {new_key_hint(batch.host)}")
        return result

    def _stops(self, endpoint: str, label: str, result: BatchResult, *, retried: bool = True) -> str | None:
        """Why ``endpoint`` gets no more batches this run after ``result``, or None."""
        name = host_of(endpoint)
        if result.http_status == 403:  # the key will not work for the other batches either
            return f"not sent after the 403 above: {result.message}"
        if result.not_before is not None:  # asked to wait past the budget: every run waits with it
            key = endpoint_key(endpoint)
            self.state.backoff[key] = max(result.not_before, self.state.backoff.get(key, ""))
            return f"not sent: {name} asked to wait until {result.not_before} (Retry-After); they stay pending"
        if result.exhausted:  # down for this run: its other batches must not each spend the budget
            how = "after its retries" if retried else "(--endpoint-mode first: not retried while another endpoint is next)"
            return f"not sent: {name} failed {label} {how}; they stay pending for the next run"
        return None

    def _every_endpoint(self) -> Iterator[tuple[BatchResult, Batch | None]]:
        """``--endpoint-mode all``: every endpoint is sent its own pending URLs."""
        for endpoint in self.endpoints:
            held = self.holds.at(endpoint)  # [announce]: unset, nothing is looked at
            pending = (
                [loc for loc in self.state.pending.get(endpoint, {}) if loc not in held]
                if held
                else list(self.state.pending.get(endpoint, {}))
            )
            batches, unsendable = make_batches(pending, self.settings.keys, self.settings.batch_size)
            grouped = Counter((host_of(loc), why) for loc, why in unsendable)
            for (host, why), count in grouped.items():
                yield BatchResult(endpoint, host, count, "skipped", None, why, 0), None
            name = host_of(endpoint)
            stop_reason = self._waiting(endpoint, name)
            for number, batch in enumerate(batches, start=1):
                problem = None if stop_reason is not None else self._preflight(batch)
                if problem is None and stop_reason is None:
                    batch = self.signed(batch)
                    label = f"batch {number}/{len(batches)} to {name}"
                    self._step(label, batch, len(batches))
                    result = self._submit(endpoint, batch, label)
                    stop_reason = self._stops(endpoint, label, result)
                    yield result, batch
                else:
                    message = problem or stop_reason or ""
                    yield BatchResult(endpoint, batch.host, len(batch.urls), "skipped", None, message, 0), batch

    def _first_taker(self) -> Iterator[tuple[BatchResult, Batch | None]]:
        """``--endpoint-mode first``: the URLs pending at any endpoint (a URL an endpoint took
        left every set), each batch to the endpoints in configured order until one takes it."""
        endpoints = self.endpoints
        held = self.holds.at(endpoints[0])  # the same at every endpoint in this mode
        union = dict.fromkeys(loc for endpoint in endpoints for loc in self.state.pending.get(endpoint, {}))
        if held:
            union = {loc: None for loc in union if loc not in held}
        batches, unsendable = make_batches(union, self.settings.keys, self.settings.batch_size)
        grouped = Counter((host_of(loc), why) for loc, why in unsendable)
        for (host, why), count in grouped.items():
            yield BatchResult(endpoints[0], host, count, "skipped", None, why, 0), None
        out: dict[str, str] = dict(self.holds.full)  # endpoint -> why it gets no more batches this run
        for endpoint in endpoints:
            waiting = self._waiting(endpoint, host_of(endpoint))
            if waiting is not None:
                out[endpoint] = waiting
        for number, batch in enumerate(batches, start=1):
            chain = [endpoint for endpoint in endpoints if endpoint not in out]
            problem = self._preflight(batch) if chain else "; ".join(dict.fromkeys(out.values()))
            if problem is not None:
                yield BatchResult(endpoints[0], batch.host, len(batch.urls), "skipped", None, problem, 0), batch
                continue
            batch = self.signed(batch)
            for place, endpoint in enumerate(chain):
                label = f"batch {number}/{len(batches)} to {host_of(endpoint)}"
                self._step(label, batch, len(batches))
                following = chain[place + 1] if place + 1 < len(chain) else None
                result = self._submit(endpoint, batch, label, fail_over=following is not None)
                stop_reason = self._stops(endpoint, label, result, retried=following is None)
                if stop_reason is not None:
                    out[endpoint] = stop_reason
                if following is None or not result.exhausted:  # taken, or refused for a reason every endpoint shares
                    yield result, batch
                    break
                yield result._replace(message=f"{result.message}; sent on to {host_of(following)}", moved_to=following), batch
