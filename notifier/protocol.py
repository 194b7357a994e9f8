"""The IndexNow protocol without the network: its limits, keys and where their files are, how
URLs are grouped into batches, and what a batch's outcome records. A leaf: no HTTP client,
so the settings and the plan can use it without loading one."""

from __future__ import annotations

import hashlib
import hmac
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Literal, NamedTuple

from notifier.errors import UsageError
from notifier.redaction import Secrets
from notifier.urls import by_origin, key_host, locate, origin, site, split_url

DEFAULT_ENDPOINT = "https://api.indexnow.org/indexnow"
MAX_BATCH = 10_000  # IndexNow: at most 10,000 URLs per POST
KEY_PATTERN = re.compile(r"[A-Za-z0-9-]{8,128}")  # IndexNow: 8 to 128 of a-z, A-Z, 0-9, '-'


class Batch(NamedTuple):
    """One POST: URLs of one host, with the key that host uses."""

    host: str
    key: str
    key_location: str | None
    urls: list[str]  # as the sitemap and the state write them
    spelled: tuple[str, ...] = ()  # origins among ``urls`` that spell ``host`` otherwise (``HTTPS://Shop.org:443``)

    def posted(self) -> list[str]:
        """The URLs as the POST sends them: each on ``host`` as the key and the batch name it, so an
        endpoint that compares a URL's host with ``host`` letter by letter accepts every spelling
        (the state keeps the URL as the sitemap wrote it)."""
        if not self.spelled:
            return self.urls
        posted = []
        for url in self.urls:
            head = origin(url)
            posted.append(f"{head[: head.index('://')].lower()}://{self.host}{url[len(head) :]}" if head in self.spelled else url)
        return posted


# "accepted": HTTP 202, the endpoint validates the key later; "skipped": not sent (no key, a
# preflight problem, or the endpoint failed earlier in this run)
BatchStatus = Literal["delivered", "accepted", "failed", "skipped"]


class BatchResult(NamedTuple):
    endpoint: str
    host: str
    url_count: int
    status: BatchStatus
    http_status: int | None
    message: str
    attempts: int
    exhausted: bool = False  # failed after its retries (or a Retry-After past the budget): the endpoint is down for this run
    not_before: str | None = None  # a 429 or 503 asked to wait past --retry-timeout: no batch goes there before this time
    moved_to: str | None = None  # --endpoint-mode first: this endpoint failed it, and the batch went on to that one


def derive_key(secret: str, host: str) -> str:
    """A host's key made from one secret ([keys] derive): HMAC-SHA256 keyed by the secret over
    the lowercase host name, its first 32 hex digits. Stable and the same on every runner, so
    nothing is stored; the key (which the host's key file publishes) does not give the secret away."""
    return hmac.new(secret.encode("utf-8"), host.lower().encode("utf-8"), hashlib.sha256).hexdigest()[:32]


DEFAULT_KEY_SOURCE = "INDEXNOW_KEY (or --key)"


@dataclass(frozen=True)
class Keys:
    """Which key each host uses and where its key file is: its own ([keys] by host), else one
    derived from the secret ([keys] derive), else the default (INDEXNOW_KEY, --key)."""

    default: str | None = None
    per_host: dict[str, str] = field(default_factory=dict)
    key_location: str | None = None  # --key-location: applies to the host it names
    derive: str | None = field(default=None, repr=False)  # the secret each host's key is derived from
    derive_variable: str | None = None  # the variable [keys] derive names, set or not (a name, no secret)
    key_variable: str = "INDEXNOW_KEY"  # the default key's variable ([[sites]] key-env: a site's own)
    previous: str | None = field(default=None, repr=False)  # INDEXNOW_KEY_PREVIOUS: the default key before a rotation
    derive_previous: str | None = field(default=None, repr=False)  # [keys] derive-previous: the secret before a rotation
    _derived: dict[str, str] = field(default_factory=dict, repr=False, compare=False)  # host -> its key, as asked for
    _previous: dict[str, str] = field(default_factory=dict, repr=False, compare=False)  # host -> its previous key, as asked for

    def key_for(self, host: str) -> str | None:
        host = key_host(host)
        if host in self.per_host:
            return self.per_host[host]
        if self.derive is None:
            return self.default
        key = self._derived.get(host)
        if key is None:
            key = self._derived[host] = derive_key(self.derive, host)
        return key

    def previous_for(self, host: str) -> str | None:
        """The key ``host`` used before a rotation (INDEXNOW_KEY_PREVIOUS, or derived from
        [keys] derive-previous), which signs while the new key's file is not live yet; None:
        no rotation (a host with its own [keys] entry has none)."""
        if host in self.per_host:
            return None
        if self.derive is None:
            old = self.previous
        elif self.derive_previous is None:
            return None
        else:
            old = self._previous.get(host)
            if old is None:
                old = self._previous[host] = derive_key(self.derive_previous, host)
        return old if old is not None and old != self.key_for(host) else None

    def previous_location(self, host: str, scheme: str) -> tuple[str | None, str]:
        """(keyLocation to send or None, URL to fetch) of the previous key's file: beside the new one's."""
        location, url = self.location_for(host, scheme)
        name = f"{self.previous_for(host) or ''}.txt"
        folder = url[: url.rfind("/") + 1]
        return (None if location is None else folder + name), folder + name

    def source_of(self, host: str) -> str:
        """Where the key ``host`` uses comes from, as the user configured it (``key_for``'s order)."""
        if key_host(host) in self.per_host:
            return f'[keys] "{host}"'
        return "[keys] derive" if self.derive is not None else DEFAULT_KEY_SOURCE

    def missing(self) -> str:
        """What to set when a host has no key: the derive's variable when one is named and unset."""
        if self.derive is None and self.derive_variable is not None:
            return f"set {self.derive_variable}, the secret [keys] derive names"
        return f"set {self.key_variable} (or --key, or [keys] in the config)"

    @property
    def configured(self) -> bool:
        """Whether any host can have a key."""
        return self.default is not None or bool(self.per_host) or self.derive is not None

    @property
    def secrets(self) -> list[str]:
        """Every key, and the secret the derived ones come from, once: what no message may show whole."""
        every = [self.default, *self.per_host.values(), self.derive, *self._derived.values()]
        every += [self.previous, self.derive_previous, *self._previous.values()]
        return [key for key in dict.fromkeys(every) if key]

    def location_for(self, host: str, scheme: str) -> tuple[str | None, str]:
        """(keyLocation to send or None, URL to fetch the key file from)."""
        if self.key_location is not None:
            split = split_url(self.key_location)
            if key_host(split.netloc) == key_host(host):
                return self.key_location, self.key_location
        key = self.key_for(host) or ""
        return None, f"{scheme}://{host}/{key}.txt"


def validate_key(key: str, where: str) -> None:
    if not KEY_PATTERN.fullmatch(key):
        raise UsageError(
            f"{where}: an IndexNow key is 8 to 128 characters of a-z, A-Z, 0-9 and '-'; make one with `notify-changes key new`"
        )


def redact_all(text: str, keys: Keys) -> str:
    """``text`` with every configured key cut to its first four characters (a key file's path
    names its key: ``public/KEY.txt``): the redactor of every channel (``redaction.py``)."""
    return Secrets(keys=tuple(keys.secrets)).redact(text) if keys.secrets else text


def key_scope(key_location: str | None) -> str:
    """The folder a key file covers: URLs outside it cannot use that key."""
    if key_location is None:
        return "/"
    path = split_url(key_location).path
    return path[: path.rfind("/") + 1] or "/"


def make_batches(urls: Iterable[str], keys: Keys, batch_size: int) -> tuple[list[Batch], list[tuple[str, str]]]:
    """Group URLs by host (in first-seen order) into batches of at most ``batch_size``.

    Returns the batches and the URLs that cannot be sent, each with the reason.
    """
    by_host: dict[tuple[str, str], list[str]] = {}
    spelled: dict[tuple[str, str], list[str]] = {}
    unsendable: list[tuple[str, str]] = []
    for each, group in by_origin(urls).items():
        where = site(each)
        if where.scheme not in ("http", "https") or not where.host:
            unsendable.extend((url, "not an absolute http(s) URL") for url in group)
            continue
        named = (key_host(where.host, where.scheme), where.scheme)
        by_host.setdefault(named, []).extend(group)  # one batch for every spelling of a host
        if each != f"{where.scheme}://{named[0]}":
            spelled.setdefault(named, []).append(each)
    batches: list[Batch] = []
    for (host, scheme), host_urls in by_host.items():
        key = keys.key_for(host)
        if key is None:
            unsendable.extend((url, f"no IndexNow key for {host}; {keys.missing()}") for url in host_urls)
            continue
        key_location, _ = keys.location_for(host, scheme)
        scope = key_scope(key_location)
        inside: list[str] = host_urls
        if scope != "/":  # a key file in a folder covers only the URLs under that folder
            inside = []
            for url in host_urls:
                if locate(url).path.startswith(scope):
                    inside.append(url)
                else:
                    unsendable.append((url, f"outside {scope}, the folder its key file {key_location} covers"))
        for start in range(0, len(inside), batch_size):
            batches.append(Batch(host, key, key_location, inside[start : start + batch_size], tuple(spelled.get((host, scheme), ()))))
    return batches, unsendable
