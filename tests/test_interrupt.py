"""A cancelled deploy (SIGINT, or SIGTERM as CI sends) stops fast, exit 130, the batch still pending."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from tests.conftest import KEY, Site, pages, recorded_pending, urlset
from tests.fakeindexnow import hang, wait_until


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_during_a_request_is_exit_130_with_the_batch_pending(site: Site, signum: int) -> None:
    site.write(urlset(pages(2)))
    site.run()
    site.write(urlset(pages(5)))
    assert site.fake is not None
    site.fake.plan = [hang(60)]
    env = dict(os.environ, INDEXNOW_KEY=KEY)
    process = subprocess.Popen(
        [sys.executable, "-m", "notifier", str(site.sitemap), "--state", str(site.state), "--endpoint", site.fake.endpoint],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert wait_until(lambda: len(site.fake.posts) == 1, timeout=20)  # type: ignore[union-attr]
        started = time.monotonic()
        process.send_signal(signum)
        _, err = process.communicate(timeout=5)
        assert time.monotonic() - started < 5
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 130
    assert "interrupted" in err and "Traceback" not in err
    pending = recorded_pending(site.state)[site.fake.endpoint]
    assert sorted(pending) == sorted(f"http://www.shop-site.org/p/{n}/" for n in (2, 3, 4))
