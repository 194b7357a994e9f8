"""Phase three of a run: send every endpoint its pending URLs, in batches, after the key
preflight, recording each acknowledged batch durably before the next is sent.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

from notifier.dates import format_utc
from notifier.environment import Environment
from notifier.errors import StateError
from notifier.indexnow import Batch, BatchResult, Client, RetryPolicy, make_batches, redact
from notifier.pipeline.context import Deliveries, Run
from notifier.report import plural
from notifier.settings import Settings
from notifier.store import State, StateStore
from notifier.store.durable import DeliveryNotRecorded
from notifier.store.ledger import LedgerEntry, entry
from notifier.urls import host_of
from notifier.waits import endpoint_key, wait_for


def submit_pending(run: Run, state: State, store: StateStore) -> Deliveries:
    """Send what is pending: each batch's outcome, and the URLs delivered (each recorded in
    ``store`` as it is acknowledged)."""
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
        notice=env.notice,
    )
    sent: list[LedgerEntry] = []
    unrecorded: list[str] = []
    problems: list[str] = []
    try:
        for result, batch in _Submissions(settings, client, state, run.endpoints, env):
            batches.append(result)
            at = format_utc(env.now())
            if batch is not None and result.attempts:  # sent: what the endpoint said goes to the ledger
                sent.append(
                    entry(at, result.endpoint, batch.host, result.status, result.http_status, result.attempts, result.message, batch.urls)
                )
            if batch is not None and result.status in ("delivered", "accepted"):
                delivered.extend(batch.urls)
                try:
                    store.record_delivered(state, result.endpoint, batch.urls, at)
                except DeliveryNotRecorded as error:  # received, not recorded: it stays pending, and no more is sent
                    unrecorded, problems = list(batch.urls), [str(error)]
                    break
    finally:
        if env.session is None:
            client.close()
        notes = _record_ledger(store, sent, settings.keep_batches)
    return Deliveries(batches, delivered, problems + _unusual_successes(batches) + notes, unrecorded)


def _unusual_successes(batches: list[BatchResult]) -> list[str]:
    """One note an endpoint and code for a success IndexNow does not document (Bing has
    answered 203): received like a 200, and said once, so that a change at an endpoint is seen."""
    unusual = Counter((batch.endpoint, batch.http_status) for batch in batches if batch.status == "delivered" and batch.http_status != 200)
    return [
        f"{host_of(endpoint)} answered HTTP {code} to {count} batch{'es' * (count != 1)}: an unusual success code, counted as received "
        "(every 2xx is a success); the ledger keeps the code"
        for (endpoint, code), count in unusual.items()
    ]


def _record_ledger(store: StateStore, sent: list[LedgerEntry], keep: int) -> list[str]:
    """The ledger is a record of what happened, nothing depends on it: a failure to add to
    it is one note, not a failed deploy."""
    if not sent:
        return []
    try:
        store.record_ledger(sent, keep)
    except (StateError, OSError) as error:
        return [f"the ledger of batches could not be written ({error}); the deliveries themselves are recorded"]
    return []


class _Submissions:
    """Iterate (result, batch) over every endpoint's pending URLs, after the key preflight."""

    def __init__(self, settings: Settings, client: Client, state: State, endpoints: list[str], env: Environment) -> None:
        self.settings, self.client, self.state, self.endpoints, self.env = settings, client, state, endpoints, env
        self.host_problems: dict[str, str | None] = {}

    def _preflight(self, batch: Batch) -> str | None:
        """Per host, once: the key file matches, and (--verify-live) changed pages are live."""
        if batch.host not in self.host_problems:
            scheme = "https" if batch.urls[0].startswith("https:") else "http"
            _, url = self.settings.keys.location_for(batch.host, scheme)
            if self.env.progress is not None:
                self.env.progress(redact(f"checking key file {url}", batch.key))
            problem = self.client.check_key_file(url, batch.key)
            if problem is None and self.settings.verify_live:
                problem = self._live_problem(batch.host)
            self.host_problems[batch.host] = problem
        return self.host_problems[batch.host]

    def _live_problem(self, host: str) -> str | None:
        """Up to --verify-live added or changed pages of ``host`` must be served already (CDNs lag)."""
        sample: dict[str, None] = {}
        for endpoint in self.endpoints:
            for loc, item in self.state.pending.get(endpoint, {}).items():
                if item["reason"] in ("added", "changed") and host_of(loc) == host:
                    sample[loc] = None
                if len(sample) >= self.settings.verify_live:
                    break
        for loc in sample:  # at most --verify-live: the walk stops there
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
        for endpoint in self.endpoints:
            pending = list(self.state.pending.get(endpoint, {}))
            batches, unsendable = make_batches(pending, self.settings.keys, self.settings.batch_size)
            grouped = Counter((host_of(loc), why) for loc, why in unsendable)
            for (host, why), count in grouped.items():
                yield BatchResult(endpoint, host, count, "skipped", None, why, 0), None
            name = host_of(endpoint)
            stop_reason = self._waiting(endpoint, name)
            for number, batch in enumerate(batches, start=1):
                problem = None if stop_reason is not None else self._preflight(batch)
                if problem is None and stop_reason is None:
                    label = f"batch {number}/{len(batches)} to {name}"
                    if self.env.step is not None and len(batches) > 1:  # one batch: a short run writes no step
                        self.env.step(f"sending {label}: {plural(len(batch.urls), 'URL')} of {batch.host}")
                    result = self.client.submit(endpoint, batch, label)
                    if result.http_status == 403:  # the key will not work for the other batches either
                        stop_reason = f"not sent after the 403 above: {result.message}"
                    elif result.not_before is not None:  # asked to wait past the budget: every run waits with it
                        key = endpoint_key(endpoint)
                        self.state.backoff[key] = max(result.not_before, self.state.backoff.get(key, ""))
                        stop_reason = f"not sent: {name} asked to wait until {result.not_before} (Retry-After); they stay pending"
                    elif result.exhausted:  # down for this run: its other batches must not each spend the budget
                        stop_reason = f"not sent: {name} failed {label} after its retries; they stay pending for the next run"
                    yield result, batch
                else:
                    message = problem or stop_reason or ""
                    yield BatchResult(endpoint, batch.host, len(batch.urls), "skipped", None, message, 0), batch
