"""One HTTP exchange bounded as a whole: connect to last byte within ``--request-timeout``.

requests' timeouts bound each socket operation, so a server that drips one byte a second
never trips them and can hold a deploy for hours. Every exchange here runs in a worker
thread that sends the request and reads the whole answer (up to a cap); the caller waits
at most the bound, then closes the answer and treats the request as timed out, which the
retry policy handles like any other timeout. A body still dripping is cut (its socket shut
down); a worker still waiting for headers is a daemon thread: it never keeps the process
alive, and it ends with its socket's own timeout.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Callable

import requests


class WholeRequestTimeout(requests.Timeout):
    """The answer did not arrive in full within the bound."""


def exchange(send: Callable[[], requests.Response], timeout: float, *, limit: int) -> requests.Response:
    """``send()`` (a request made with ``stream=True``) and its body, read to at most ``limit``
    bytes, within ``timeout`` seconds in all. Raises what ``send`` raises, or WholeRequestTimeout."""
    outcome: dict[str, object] = {}
    done = threading.Event()

    def work() -> None:
        try:
            response = send()
            outcome["response"] = response
            body = bytearray()
            for chunk in response.iter_content(65_536):
                body += chunk
                if len(body) > limit:
                    break  # the caller sees more than it accepts, and says so
            response._content = bytes(body)  # what requests keeps a read body in
            response._content_consumed = True  # type: ignore[attr-defined]
            response.close()
        except BaseException as error:  # handed to the caller, whatever it is
            outcome["error"] = error
        finally:
            done.set()

    worker = threading.Thread(target=work, name="notify-changes-http", daemon=True)
    worker.start()
    if not done.wait(timeout):
        late = outcome.get("response")
        if isinstance(late, requests.Response):  # the headers came, the body drips: cut it
            with contextlib.suppress(Exception):  # wakes the worker's blocked read, tells the server
                late.raw.connection.sock.shutdown(socket.SHUT_RDWR)  # type: ignore[union-attr]
            with contextlib.suppress(Exception):
                late.close()
        raise WholeRequestTimeout(f"no complete answer within --request-timeout {timeout:g} s")
    error = outcome.get("error")
    if isinstance(error, BaseException):
        raise error
    response = outcome["response"]
    assert isinstance(response, requests.Response)
    return response
