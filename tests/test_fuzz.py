"""The reader is total: any bytes give a result or the documented one-line error, never a traceback."""

from __future__ import annotations

import contextlib
import io
import os
import random
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from notifier.cli import main
from notifier.errors import NotifierError
from notifier.sitemap.reader import read_sitemap
from tests.conftest import CORPUS, NS

FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _check_bytes(data: bytes, name: str = "sitemap.xml") -> None:
    """Run the whole ``check`` on ``data``: exit 0, 1 or 2, and exit 2 is one clean line."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / name
        path.write_bytes(data)
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(["check", str(path), "--state", str(Path(folder) / "state.json")])
        assert code in (0, 1, 2), (code, err.getvalue())
        if code == 2:
            assert err.getvalue().startswith("notify-changes: error: ") and err.getvalue().count("\n") == 1
        with contextlib.suppress(NotifierError):
            read_sitemap(str(path))


# Inputs that once broke something; kept as regression tests.
@example(b"")
@example(b"\x1f\x8b")
@example(b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03")
@example(f'<urlset xmlns="{NS}"><url><loc>http://[::1</loc></url></urlset>'.encode())
@example(f'<urlset xmlns="{NS}"><url><loc>http://a.org:99999999/</loc></url></urlset>'.encode())
@example(f'<urlset xmlns="{NS}"><url><loc>http://a.org/</loc><lastmod>9999-12-31T23:59-14:00</lastmod></url></urlset>'.encode())
@example(f'<sitemapindex xmlns="{NS}"><sitemap><loc>http://[x/</loc></sitemap></sitemapindex>'.encode())
@example(b"<!-- unterminated")
@example(b"<?xml version='1.0'?><!DOCTYP")
@given(st.binary(max_size=600))
@FUZZ
def test_any_bytes(data: bytes) -> None:
    _check_bytes(data)


XML_PIECES = st.sampled_from(
    [
        f'<urlset xmlns="{NS}">',
        "</urlset>",
        "<url>",
        "</url>",
        "<loc>",
        "</loc>",
        "<lastmod>",
        "</lastmod>",
        f'<sitemapindex xmlns="{NS}">',
        "<sitemap>",
        "</sitemap>",
        "http://www.shop-site.org/a/",
        "https://[::1]:80/",
        "2024-01-01",
        "2024-13-45T99:00Z",
        "&amp;",
        "&nbsp;",
        "<![CDATA[x]]>",
        "<!-- c -->",
        "<?pi x?>",
        " ",
        "\n",
        "\x00",
        "/relative/",
        "http://localhost:1313/",
        "%zz",
        "é",
        "<!DOCTYPE x>",
        '<?xml version="1.0"?>',
        "\ufeff",
    ]
)


@given(st.lists(XML_PIECES, max_size=30).map("".join))
@FUZZ
def test_sitemap_shaped_text(text: str) -> None:
    _check_bytes(text.encode("utf-8", "surrogatepass"))


@given(st.lists(XML_PIECES, max_size=20).map("".join))
@FUZZ
def test_sitemap_shaped_text_as_a_plain_text_sitemap(text: str) -> None:
    _check_bytes(text.encode("utf-8"), name="sitemap.txt")


CORPUS_FILES = sorted(CORPUS.glob("*.xml*")) if CORPUS.is_dir() else []


@pytest.mark.skipif(not CORPUS_FILES and os.environ.get("CI") != "true", reason="../shared/corpus is not here (in CI it must be)")
@given(st.integers(min_value=0, max_value=10**9), st.integers(min_value=1, max_value=8))
@FUZZ
def test_mutated_corpus_files(seed: int, edits: int) -> None:
    assert CORPUS_FILES, f"{CORPUS} is missing: CI must run with ../shared beside the checkout"
    rng = random.Random(seed)
    source = CORPUS_FILES[seed % len(CORPUS_FILES)]
    data = bytearray(source.read_bytes())
    for _ in range(edits):
        if not data:
            break
        at = rng.randrange(len(data))
        action = rng.randrange(4)
        if action == 0:
            data[at] = rng.randrange(256)
        elif action == 1:
            del data[at : at + rng.randrange(1, 40)]
        elif action == 2:
            data[at:at] = rng.choice([b"&", b"<", b"]]>", b"\x00", b"\xff", b"<!DOCTYPE a>", b"<url>", b"</loc>"])
        else:
            del data[at:]
    _check_bytes(bytes(data), name=source.name)
