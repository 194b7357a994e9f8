"""Talk to IndexNow: batches by host, the key file preflight, POSTs with retries.

Every retry decision lives here: which answers are retried (:class:`RetryPolicy`), how
long to wait (exponential backoff with jitter, or the server's ``Retry-After``), and
when to give up and leave a batch pending for the next run (the ``--retry-timeout``
budget). Sleeping and the clocks are injected, so tests run in milliseconds.
"""

from __future__ import annotations

import datetime as dt
import email.utils
import random
import time
from collections.abc import Callable
from dataclasses import dataclass

import orjson
import requests
import tenacity

from notifier.dates import format_utc
from notifier.http import exchange
from notifier.protocol import (
    DEFAULT_ENDPOINT,
    KEY_PATTERN,
    MAX_BATCH,
    Batch,
    BatchResult,
    Keys,
    key_scope,
    make_batches,
    redact_all,
    validate_key,
)
from notifier.redaction import redact
from notifier.waits import MAX_WAIT

_ANSWER_LIMIT = 64 * 1024  # an endpoint's answer or a key file: more is never needed
MAX_BACKOFF = MAX_WAIT.total_seconds()  # a Retry-After of a year is a server's mistake; a week at most is kept

#: Exceptions that mean "the network hiccuped, try again". Nothing else is retried:
#: KeyboardInterrupt and every programming error propagate at once.
RETRYABLE_EXCEPTIONS: tuple[type[BaseException], ...] = (
    requests.ConnectionError,
    requests.Timeout,
    requests.exceptions.ChunkedEncodingError,
)


@dataclass(frozen=True, kw_only=True)
class RetryPolicy:
    """Which answers are retried, the backoff, and the budget for one batch."""

    budget: float  # --retry-timeout (its default is the option's): never sleep past this, counted from the first try
    retry_statuses: frozenset[int] = frozenset({408, 429})  # and every 5xx (server_error)
    initial_wait: float = 1.0
    max_wait: float = 60.0
    jitter: float = 1.0  # up to this many seconds added at random to each backoff


def received(status: int) -> bool:
    """A 2xx answer: the request was received and accepted (RFC 9110, section 15.3). 200 and
    202 are what IndexNow documents; Bing has been seen answering 203, and any other 2xx is a
    success too, never a failure that keeps the URLs pending for ever."""
    return 200 <= status <= 299


def server_error(status: int) -> bool:
    """A 5xx answer: the server's trouble, worth another try (500 to 599, nothing above)."""
    return 500 <= status <= 599


class _RetryableAnswer(Exception):
    def __init__(self, response: requests.Response) -> None:
        self.response = response


def parse_retry_after(value: str | None, now: dt.datetime) -> float | None:
    """Seconds to wait from a Retry-After header (seconds or an HTTP-date), or None if unusable."""
    if value is None:
        return None
    value = value.strip()
    if value.isascii() and value.isdigit():  # "²" is a digit to str.isdigit, and no number
        return float(value)  # a value of 5,000 digits is inf, never an int of 5,000 digits
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if when is None:
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.UTC)
    return max(0.0, float((when - now).total_seconds()))


class Client:
    """An IndexNow client over one requests session. The only class that does HTTP."""

    def __init__(
        self,
        *,
        policy: RetryPolicy,
        request_timeout: float,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
        wall_clock: Callable[[], dt.datetime] = lambda: dt.datetime.now(dt.UTC),
        rng: random.Random | None = None,
        session: requests.Session | None = None,
        user_agent: str = "notify-changes",
        notice: Callable[[str], None] | None = None,
    ) -> None:
        self.policy = policy
        self.request_timeout = request_timeout  # the whole request, connect to last byte (see http.exchange)
        self.timeout = request_timeout  # each socket operation too: the thread exchange leaves behind a late answer ends by then
        self._notice = notice
        self._sleep = sleep
        self._clock = clock
        self._wall_clock = wall_clock
        self._rng = rng or random.Random()
        self.session = session or requests.Session()
        self.session.headers["User-Agent"] = user_agent

    def close(self) -> None:
        self.session.close()

    # -- retries -------------------------------------------------------------------
    def _with_retries(
        self,
        send: Callable[[], requests.Response],
        label: str = "",
        *,
        fail_over: bool = False,
        polled: bool = False,
        limit: int = _ANSWER_LIMIT,
    ) -> tuple[requests.Response | None, str, int]:
        """Run ``send`` until a final answer; (response or None, why it ended, attempts).
        Before each wait, one line to ``notice``: ``label``, what went wrong, the wait, the budget left.
        ``fail_over``: another endpoint is next (``--endpoint-mode first``), so what would be
        retried here ends the try at once, with no wait; ``polled``: the caller asks again after
        its own wait (``--wait-live``), so the same. ``limit``: the bytes of an answer read."""
        policy = self.policy
        started = self._clock()
        attempts = 0
        last_problem = ""

        def attempt() -> requests.Response:
            nonlocal attempts
            attempts += 1
            response = exchange(send, self.request_timeout, limit=limit)
            if response.status_code in policy.retry_statuses or server_error(response.status_code):
                raise _RetryableAnswer(response)
            return response

        def next_wait(state: tenacity.RetryCallState) -> float:
            exc = state.outcome.exception() if state.outcome is not None else None
            backoff: float = min(policy.max_wait, policy.initial_wait * 2.0 ** (state.attempt_number - 1))
            backoff += self._rng.uniform(0, policy.jitter)
            if isinstance(exc, _RetryableAnswer):
                after = parse_retry_after(exc.response.headers.get("Retry-After"), self._wall_clock())
                if after is not None:
                    # the server said when: honour it (the budget check follows), but never
                    # sooner than the backoff: "Retry-After: 0" must not become a tight loop
                    return max(after, backoff)
            return backoff

        def before_sleep(state: tenacity.RetryCallState) -> None:
            if self._notice is None:
                return
            exc = state.outcome.exception() if state.outcome is not None else None
            if isinstance(exc, _RetryableAnswer):
                what = f"HTTP {exc.response.status_code}"
            else:
                what = "timed out" if isinstance(exc, requests.Timeout) else "connection failed"
            left = max(0.0, policy.budget - (self._clock() - started) - state.upcoming_sleep)
            budget = f"{left:.0f} s of --retry-timeout left after it" if left >= 1 else "the last try --retry-timeout leaves time for"
            self._notice(f"{label or 'request'}: {what}, retrying in {state.upcoming_sleep:.0f} s, {budget}")

        def stop(state: tenacity.RetryCallState) -> bool:
            # tenacity computes the wait first; give up rather than sleep past the budget
            return fail_over or polled or self._clock() - started + state.upcoming_sleep > policy.budget

        retrying = tenacity.Retrying(
            retry=tenacity.retry_if_exception_type((*RETRYABLE_EXCEPTIONS, _RetryableAnswer)),
            stop=stop,
            wait=next_wait,
            before_sleep=before_sleep,
            sleep=self._sleep,
            reraise=True,
        )
        gave_up = (
            "not retried here: the next endpoint takes it"
            if fail_over
            else "asked again after a wait"
            if polled
            else f"gave up within --retry-timeout {policy.budget:g} s"
        )
        try:
            return retrying(attempt), "", attempts
        except _RetryableAnswer as error:
            response = error.response
            after = response.headers.get("Retry-After")
            last_problem = f"HTTP {response.status_code}" + (f" (Retry-After: {after[:40]})" if after else "")
            return response, f"{last_problem}; {gave_up}", attempts
        except RETRYABLE_EXCEPTIONS as error:
            kind = "timed out" if isinstance(error, requests.Timeout) else "connection failed"
            return None, f"{kind} ({type(error).__name__}); {gave_up}", attempts

    def _not_before(self, response: requests.Response) -> str | None:
        """When a 429 or 503 asked to be left alone past --retry-timeout: the time it named
        (every later run waits for it, so a shared egress does not keep hammering)."""
        wall = self._wall_clock()
        after = parse_retry_after(response.headers.get("Retry-After"), wall)
        if after is None or after <= self.policy.budget:
            return None
        return format_utc(wall + dt.timedelta(seconds=min(after, MAX_BACKOFF)))

    # -- the key file --------------------------------------------------------------
    def check_key_file(self, url: str, key: str, *, polled: bool = False) -> str | None:
        """None when ``url`` serves ``key``; otherwise what is wrong, in one line (the key redacted).
        ``polled``: asked again after a wait (``--wait-live``), so not retried here."""
        problem = self._check_key_file(url, key, polled=polled)
        return redact(problem, key) if problem is not None else None

    def _get(
        self, url: str, label: str, *, polled: bool = False, limit: int = _ANSWER_LIMIT, **options: object
    ) -> tuple[requests.Response | None, str | None]:
        """A GET under the retry policy: (the final response, None) or (None, what went wrong)."""
        try:
            response, problem, _ = self._with_retries(
                lambda: self.session.get(url, timeout=self.timeout, stream=True, **options),  # type: ignore[arg-type]
                label,
                polled=polled,
                limit=limit,
            )
        except (requests.RequestException, ValueError) as error:  # ValueError: a redirect's Location Python cannot split
            return None, f"{label} could not be fetched ({type(error).__name__})"
        if response is None or problem:
            return None, f"{label} could not be fetched: {problem}"
        return response, None

    def _check_key_file(self, url: str, key: str, *, polled: bool = False) -> str | None:
        # the key file's URL names the key: the retry lines and every problem show four characters
        response, problem = self._get(url, redact(f"key file {url}", key), polled=polled, allow_redirects=False)
        if response is None:
            return problem
        with response:
            if 300 <= response.status_code < 400:
                return f"key file {url} redirects to {response.headers.get('Location', '?')}; serve it at that URL directly"
            if not received(response.status_code):
                return f"key file {url} answered HTTP {response.status_code}; publish {key[:4]}….txt with the key as its content"
            served = response.content.decode("utf-8", "replace").strip()  # at most _ANSWER_LIMIT and a chunk
        if served != key:
            shown = (served[:4] + "…") if served else "nothing"
            return f"key file {url} serves {shown!r}, not the key {key[:4]}…; publish the right key file and run again"
        return None

    # -- the live site ---------------------------------------------------------------
    def check_live(self, url: str) -> str | None:
        """None when the live site serves ``url`` (2xx, redirects followed); else what is wrong."""
        response, problem = self._get(url, url)
        if response is None:
            return problem
        with response:
            if not 200 <= response.status_code < 300:
                return f"{url} answers HTTP {response.status_code}"
        return None

    def live_page(self, url: str, limit: int) -> tuple[bytes | None, str | None]:
        """What the live site serves at ``url`` (redirects followed, at most about ``limit``
        bytes), or None and what is wrong. Not retried: ``--wait-live`` asks again after its wait."""
        response, problem = self._get(url, url, polled=True, limit=limit)
        if response is None:
            return None, problem
        with response:
            if not received(response.status_code):
                return None, f"{url} answers HTTP {response.status_code}"
            return response.content, None

    # -- submissions ---------------------------------------------------------------
    def submit(self, endpoint: str, batch: Batch, label: str = "", *, fail_over: bool = False) -> BatchResult:
        """POST one batch and map the answer to a result; never raises for a server's answer.
        ``label`` names the batch in the lines said before each retry wait. ``fail_over``: a
        429, 5xx, timeout or connection failure is not retried at this endpoint but ends the
        try at once (``exhausted``), for the next endpoint to take the batch."""
        body: dict[str, object] = {"host": batch.host, "key": batch.key}
        if batch.key_location is not None:
            body["keyLocation"] = batch.key_location
        body["urlList"] = batch.posted()
        data = orjson.dumps(body)  # UTF-8 JSON, as json.dumps(ensure_ascii=False) writes it, compact
        headers = {"Content-Type": "application/json; charset=utf-8"}

        def send() -> requests.Response:
            return self.session.post(endpoint, data=data, headers=headers, timeout=self.timeout, allow_redirects=False, stream=True)

        try:
            response, problem, attempts = self._with_retries(send, label, fail_over=fail_over)
        except (requests.RequestException, ValueError) as error:  # an invalid endpoint URL, a Location Python cannot split: not retryable
            return BatchResult(endpoint, batch.host, len(batch.urls), "failed", None, f"request failed: {error}", 1)
        if response is None:
            return BatchResult(endpoint, batch.host, len(batch.urls), "failed", None, problem, attempts, exhausted=True)
        with response:
            status = response.status_code
            text = redact(response.text, batch.key) if response.content else ""
        count = len(batch.urls)
        if problem:
            not_before = self._not_before(response) if status in (429, 503) else None
            return BatchResult(endpoint, batch.host, count, "failed", status, problem, attempts, exhausted=True, not_before=not_before)
        if status == 202:
            return BatchResult(
                endpoint, batch.host, count, "accepted", status, "accepted; the endpoint will validate the key later", attempts
            )
        if received(status):  # the exact code stays in the result, so in the report and the ledger
            message = "OK" if status == 200 else f"HTTP {status}: received (every 2xx is a success)"
            return BatchResult(endpoint, batch.host, count, "delivered", status, message, attempts)
        message = redact(explain(status, text, response, batch), batch.key)
        return BatchResult(endpoint, batch.host, count, "failed", status, message, attempts)


def explain(status: int, body: str, response: requests.Response, batch: Batch) -> str:
    """What a final, non-success answer means and what to do about it."""
    if 300 <= status < 400:
        return (
            f"HTTP {status}: the endpoint redirects to {response.headers.get('Location', '?')}; redirects are not "
            "followed for submissions: set --endpoint to the final URL"
        )
    if status == 400:
        return f"HTTP 400 Bad Request: the endpoint rejected the request body; {_body_hint(body)}"
    if status == 403:
        if "UserForbiddedToAccessSite" in body:
            return (
                "HTTP 403 UserForbiddedToAccessSite: the key is not accepted for this site; check that the key file "
                f"is published at the key location for {batch.host} and has not been revoked"
            )
        if "SiteVerificationNotCompleted" in body:
            return (
                "HTTP 403 SiteVerificationNotCompleted: the endpoint has not verified the key file yet; make sure "
                f"{batch.host} serves it and run again later (the URLs stay pending)"
            )
        if "key" in body.lower():  # KeyNotFound, or a message about the key
            return (
                f"HTTP 403 KeyNotFound: the endpoint could not find the key file for {batch.host}; publish KEY.txt "
                "at the site root (or pass --key-location) and run again"
            )
        return f"HTTP 403 Forbidden: key file not found, not matching, or site not verified for {batch.host}; {_body_hint(body)}"
    if status == 422:
        return f"HTTP 422 Unprocessable Entity: a URL is not on {batch.host}, or the key does not match the schema; {_body_hint(body)}"
    if status == 404:
        return "HTTP 404: no IndexNow endpoint at this URL; check --endpoint"
    return f"HTTP {status}: not a success; {_body_hint(body)}"


def _body_hint(body: str) -> str:
    compact = " ".join(body.split())[:160]
    return f"the endpoint said: {compact}" if compact else "the endpoint gave no details"


__all__ = [
    "DEFAULT_ENDPOINT",
    "KEY_PATTERN",
    "MAX_BATCH",
    "RETRYABLE_EXCEPTIONS",
    "Batch",
    "BatchResult",
    "Client",
    "Keys",
    "RetryPolicy",
    "explain",
    "key_scope",
    "make_batches",
    "parse_retry_after",
    "received",
    "redact",
    "redact_all",
    "server_error",
    "validate_key",
]
