"""No URL counts as delivered before its batch was acknowledged: a property over random answers."""

from __future__ import annotations

import datetime as dt
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from notifier.pipeline.loop import Environment, execute
from notifier.settings.settings import build_settings
from notifier.store import decode_state
from tests.conftest import BASE, HOST, KEY, recorded_pending, urlset
from tests.fakeindexnow import FakeIndexNow, Received, status

ANSWERS = st.sampled_from([200, 202, 400, 403, 422, 429, 500, 503])
NOW = dt.datetime(2024, 6, 1, tzinfo=dt.UTC)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    answers=st.lists(ANSWERS, max_size=12),
    count=st.integers(min_value=1, max_value=9),
    batch_size=st.integers(min_value=1, max_value=4),
    two_endpoints=st.booleans(),
)
def test_delivery_is_recorded_only_after_a_200_or_202(answers: list[int], count: int, batch_size: int, two_endpoints: bool) -> None:
    servers = [FakeIndexNow() for _ in range(2 if two_endpoints else 1)]
    try:
        with tempfile.TemporaryDirectory() as folder:
            root = Path(folder)
            sitemap = root / "sitemap.xml"
            state_path = root / "state.json"
            for server in servers:
                server.serve_key(HOST, KEY)
            servers[0].plan = [status(code, Retry_After="1") for code in answers]
            urls = [f"{BASE}/p/{n}/" for n in range(count)]
            sitemap.write_text(urlset({f"/p/{n}/": "2024-01-01" for n in range(count)}))
            violations: list[str] = []

            def snapshot(server: FakeIndexNow) -> Any:
                def on_post(record: Received) -> None:
                    # The state on disk while the POST is in flight: its URLs must still be pending.
                    pending = decode_state(state_path.read_bytes(), "state").pending.get(server.endpoint, {})
                    missing = [url for url in record.json["urlList"] if url not in pending]
                    if missing:
                        violations.append(f"{missing} left pending at {server.endpoint} before an answer")

                return on_post

            for server in servers:
                server.on_post = snapshot(server)
            proxy = {"HTTP_PROXY": servers[0].url, "NO_PROXY": "127.0.0.1"}
            cli = {
                "sitemap": str(sitemap),
                "state": str(state_path),
                "endpoint": [server.endpoint for server in servers],
                "key": KEY,
                "batch-size": batch_size,
                "initial": "submit",
                "retry-timeout": 3,
                "request-timeout": 2,
            }
            import os

            saved = {name: os.environ.get(name) for name in proxy}
            os.environ.update(proxy)
            try:
                sleeps: list[float] = []
                clock = [0.0]

                def sleep(seconds: float) -> None:
                    sleeps.append(seconds)
                    clock[0] += seconds

                report = execute(
                    build_settings("run", cli, environ={}, cwd=root),
                    Environment(now=lambda: NOW, sleep=sleep, clock=lambda: clock[0]),
                )
            finally:
                for name, value in saved.items():
                    if value is None:
                        os.environ.pop(name, None)
                    else:
                        os.environ[name] = value
            assert violations == []
            pending = recorded_pending(state_path)
            for server in servers:
                acknowledged = {url for post in server.posts if post.answer in (200, 202) for url in post.json["urlList"]}
                assert set(pending.get(server.endpoint, {})) == set(urls) - acknowledged
            assert report.exit_code == (3 if pending else 0)
    finally:
        for server in servers:
            server.close()
