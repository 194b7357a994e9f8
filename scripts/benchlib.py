"""What the benchmarks share: a command measured in a fresh process, and the floor they are held to."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

KEY = "bench0123456789abcdef"  # the key every benchmark runs with


def installed_tool() -> tuple[list[str], dict[str, str]]:
    """The notify-changes beside this Python, and its environment: the benchmarks' key, and no
    CI variable, so that a run measured under CI runs as a deploy on any machine does."""
    env = dict(os.environ, INDEXNOW_KEY=KEY)
    env.pop("CI", None)
    return [str(Path(sys.executable).parent / "notify-changes")], env


MEASURE = textwrap.dedent(
    """
    import json, resource, subprocess, sys, time
    started = time.perf_counter()
    done = subprocess.run(json.loads(sys.argv[1]), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    elapsed = time.perf_counter() - started
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    peak, written = usage.ru_maxrss / 1024, usage.ru_oublock * 512 / 2**20
    tail = done.stderr.decode()[-400:]
    print(json.dumps({"seconds": elapsed, "peak_mib": peak, "written_mib": written, "code": done.returncode, "stderr": tail}))
    """
)


def measure(command: list[str], env: dict[str, str], ok: tuple[int, ...] = (0,)) -> dict[str, float]:
    """Wall time, peak RSS and MiB written to disk of ``command``, run in a fresh process."""
    done = subprocess.run([sys.executable, "-c", MEASURE, json.dumps(command)], env=env, capture_output=True, text=True, check=True)
    result: dict[str, float] = json.loads(done.stdout)
    if result["code"] not in ok:
        raise SystemExit(f"{command[:3]} exited {result['code']}: {result['stderr']}")
    return result


FLOOR = textwrap.dedent(
    """
    import gzip, sys
    from pathlib import Path
    from lxml import etree
    NS = "{http://www.sitemaps.org/schemas/sitemap/0.9}"
    found = {}
    for path in sorted(Path(sys.argv[1]).glob("sitemaps/*.xml.gz")):
        with gzip.open(path) as handle:
            for _, url in etree.iterparse(handle, events=("end",), tag=NS + "url"):
                found[url.findtext(NS + "loc")] = url.findtext(NS + "lastmod")
                url.clear()
                while url.getprevious() is not None:
                    del url.getparent()[0]
    print(len(found))
    """
)
