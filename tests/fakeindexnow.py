"""A fake IndexNow endpoint on 127.0.0.1 that enforces the protocol and injects faults.

It also plays the live web site for key files: tests point ``HTTP_PROXY`` at it, so a
GET of ``http://www.shop-site.org/KEY.txt`` arrives here as a proxy request and is
answered from :attr:`FakeIndexNow.sites`. Nothing leaves the machine.
"""

from __future__ import annotations

import contextlib
import json
import socket
import struct
import threading
import time
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MAX_URLS = 10_000


@dataclass
class Fault:
    """One scripted answer, used up by one POST: a status, a reset, or a hang."""

    kind: str  # "status" | "reset" | "hang" | "drip" | "flood"
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    body: str = ""
    seconds: float = 0.0


def status(code: int, body: str = "", **headers: str) -> Fault:
    return Fault("status", code, {name.replace("_", "-"): value for name, value in headers.items()}, body)


def reset() -> Fault:
    return Fault("reset")


def hang(seconds: float) -> Fault:
    return Fault("hang", seconds=seconds)


def drip(seconds_per_byte: float, size: int) -> Fault:
    """A 200 whose body of ``size`` bytes arrives one byte every ``seconds_per_byte``."""
    return Fault("drip", 200, {"Content-Length": str(size)}, seconds=seconds_per_byte)


def flood(size: int) -> Fault:
    """A 200 whose body of ``size`` bytes (spaces) comes 64 KiB every 10 ms, until the client
    hangs up: a server that answers a key file's URL with a video."""
    return Fault("flood", 200, {"Content-Length": str(size)}, seconds=0.01)


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: bytes
    json: Any
    answer: int | None
    dripped: int = 0  # bytes of a dripping answer sent
    cut: bool = False  # the client closed the connection before a dripping answer was complete


class FakeIndexNow:
    """The server. ``plan`` is consumed one fault per POST; then the protocol decides."""

    def __init__(self) -> None:
        self.plan: list[Fault] = []
        self.sites: dict[str, dict[str, bytes]] = {}  # host -> path -> content
        self.redirects: dict[str, str] = {}  # "host/path" -> Location, answered 301
        self.get_faults: dict[str, Fault] = {}  # path -> a drip for every GET of it
        self.posts: list[Received] = []
        self.gets: list[str] = []
        self.get_auth: list[str] = []  # each GET's Authorization header ("" without one), as gets
        self.success_status = 200  # what a good POST is answered: any code (Bing has answered 203)
        self.get_status = 200  # what a GET of a file the site serves (a key file) is answered
        self.on_post: Callable[[Received], None] | None = None  # called as a POST arrives, before the answer
        self.after_answer: Callable[[Received], None] | None = None  # called once the answer is sent
        self._lock = threading.Lock()
        self._stop = threading.Event()
        handler = _make_handler(self)
        self.server = _Server(("127.0.0.1", 0), handler)
        self.port = self.server.server_address[1]
        self._thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def endpoint(self) -> str:
        return f"{self.url}/indexnow"

    def serve_key(self, host: str, key: str, path: str | None = None) -> None:
        self.sites.setdefault(host, {})[path or f"/{key}.txt"] = key.encode()

    def delivered(self) -> list[str]:
        """Every URL of every accepted POST, in order."""
        return [url for post in self.posts if post.answer is not None and 200 <= post.answer <= 299 for url in post.json["urlList"]]

    def close(self) -> None:
        self._stop.set()
        self.server.shutdown()
        self.server.server_close()
        self.server.close_connections()

    # -- protocol ------------------------------------------------------------------
    def next_fault(self) -> Fault | None:
        with self._lock:
            return self.plan.pop(0) if self.plan else None

    def judge(self, headers: dict[str, str], body: bytes) -> tuple[int, str]:
        """What a strict IndexNow endpoint answers to this POST."""
        content_type = headers.get("content-type", "").replace(" ", "").lower()
        if not content_type.startswith("application/json") or "charset=utf-8" not in content_type:
            return 400, "Content-Type must be application/json; charset=utf-8"
        try:
            document = json.loads(body.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            return 400, "Invalid JSON"
        if not isinstance(document, dict) or not {"host", "key", "urlList"} <= set(document):
            return 400, "host, key and urlList are required"
        urls, host, key = document["urlList"], document["host"], document["key"]
        if not isinstance(urls, list) or not urls or len(urls) > MAX_URLS:
            return 400, f"urlList must hold 1 to {MAX_URLS} URLs"
        if not isinstance(key, str) or not (8 <= len(key) <= 128) or not all(c.isalnum() or c == "-" for c in key):
            return 422, "key does not match the schema"
        for url in urls:
            if urllib.parse.urlsplit(url).netloc.lower() != host:  # as strict as an endpoint may be: the host exactly as the batch names it
                return 422, f"URL {url} does not belong to host {host}"
        location = document.get("keyLocation") or f"http://{host}/{key}.txt"
        split = urllib.parse.urlsplit(location)
        if split.netloc.lower() != host:
            return 422, "keyLocation is not on the host"
        served = self.sites.get(host, {}).get(split.path)
        if served is None:
            return 403, '{"code":"KeyNotFound","message":"key file not found"}'
        if served.decode().strip() != key:
            return 403, '{"code":"UserForbiddedToAccessSite","message":"key mismatch"}'
        return self.success_status, ""


def _make_handler(fake: FakeIndexNow) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _send(self, code: int, body: str = "", headers: dict[str, str] | None = None) -> None:
            data = body.encode()
            self.send_response(code)
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:  # a proxied request for the live site: key files
            fake.gets.append(self.path)
            fake.get_auth.append(self.headers.get("Authorization", ""))
            split = urllib.parse.urlsplit(self.path)
            host = split.netloc or self.headers.get("Host", "")  # proxied (absolute URI) or direct
            content = fake.sites.get(host.lower(), {}).get(split.path)
            moved = fake.redirects.get(host.lower() + split.path)
            fault = fake.get_faults.get(split.path)
            if fault is not None:
                self._drip(Received(self.path, {}, b"", None, None), fault)
            elif moved is not None:
                self._send(301, "", {"Location": moved})
            elif content is None:
                self._send(404, "not found")
            else:
                self.send_response(fake.get_status)
                kind = "application/xml" if split.path.endswith(".xml") else "text/plain; charset=utf-8"
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(content)))
                self.end_headers()
                self.wfile.write(content)

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            body = self.rfile.read(length)
            headers = {name.lower(): value for name, value in self.headers.items()}
            try:
                parsed = json.loads(body)
            except ValueError:
                parsed = None
            record = Received(self.path, headers, body, parsed, None)
            fake.posts.append(record)
            if fake.on_post is not None:
                fake.on_post(record)
            fault = fake.next_fault()
            if fault is not None:
                if fault.kind == "reset":
                    self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                    self.connection.close()
                    self.close_connection = True
                    return
                if fault.kind in ("drip", "flood"):
                    self._drip(record, fault)
                    return
                if fault.kind == "hang":
                    fake._stop.wait(fault.seconds)
                    self.close_connection = True
                    return
                record.answer = fault.status
                self._send(fault.status, fault.body, fault.headers)
                self._answered(record)
                return
            if urllib.parse.urlsplit(self.path).path != "/indexnow":
                record.answer = 404
                self._send(404, "no such endpoint")
                return
            code, message = fake.judge(headers, body)
            record.answer = code
            self._send(code, message)
            self._answered(record)

        def _drip(self, record: Received, fault: Fault) -> None:
            record.answer = fault.status
            self.send_response(fault.status)
            for name, value in fault.headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.close_connection = True
            try:
                self.wfile.flush()
                step = 65_536 if fault.kind == "flood" else 1
                for start in range(0, int(fault.headers["Content-Length"]), step):
                    if fake._stop.wait(fault.seconds):
                        return
                    chunk = min(step, int(fault.headers["Content-Length"]) - start)
                    self.wfile.write(b" " * chunk)
                    self.wfile.flush()
                    record.dripped += chunk
            except OSError:
                record.cut = True

        def _answered(self, record: Received) -> None:
            self.wfile.flush()
            if fake.after_answer is not None:
                fake.after_answer(record)

    return Handler


class _Server(ThreadingHTTPServer):
    """A threading server that, closed, also ends the connections it still serves: a client's
    idle keep-alive connection would keep its handler thread alive into later tests, and a
    program with threads running gets no worker processes (notifier.workers). Its handler
    threads are daemons, joined when it closes."""

    def __init__(self, address: tuple[str, int], handler: type[BaseHTTPRequestHandler]) -> None:
        super().__init__(address, handler)
        self._serving: dict[threading.Thread, socket.socket] = {}
        self._serving_lock = threading.Lock()

    def process_request(self, request: Any, client_address: Any) -> None:
        thread = threading.Thread(target=self.process_request_thread, args=(request, client_address), daemon=True)
        with self._serving_lock:
            self._serving[thread] = request
        thread.start()

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            with self._serving_lock:
                self._serving.pop(threading.current_thread(), None)

    def close_connections(self) -> None:
        with self._serving_lock:
            serving = list(self._serving.items())
        for thread, connection in serving:
            with contextlib.suppress(OSError):
                connection.shutdown(socket.SHUT_RDWR)
            thread.join(10)


def wait_until(predicate: Any, timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.01)
    return False
