"""Parts whose bytes did not change since the recorded deploy are not parsed again."""

from __future__ import annotations

import json

import pytest

import notifier.sitemap
from tests.conftest import BASE, Site, index, pages, urlset


@pytest.fixture
def parsed(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The files the XML parser was run on."""
    seen: list[str] = []
    real = notifier.sitemap._parse_xml

    def spy(chunks, location, *args):  # type: ignore[no-untyped-def]
        seen.append(location.rsplit("/", 1)[-1])
        return real(chunks, location, *args)

    monkeypatch.setattr(notifier.sitemap, "_parse_xml", spy)
    return seen


def build(site: Site, parts: list[dict[str, str | None]]) -> None:
    for number, part in enumerate(parts):
        site.write(urlset(part), f"sitemaps/part-{number}.xml")
    site.write(index({f"/sitemaps/part-{number}.xml": None for number in range(len(parts))}))


def three_parts() -> list[dict[str, str | None]]:
    return [pages(5, prefix="/a/"), pages(5, prefix="/b/"), pages(5, prefix="/c/")]


def test_only_the_changed_part_is_parsed(site: Site, parsed: list[str]) -> None:
    parts = three_parts()
    build(site, parts)
    assert site.run().code == 0
    state = json.loads(site.state.read_text())
    assert [part["name"] for part in state["parts"]] == ["sitemaps/part-0.xml", "sitemaps/part-1.xml", "sitemaps/part-2.xml"]
    assert state["urls"][f"{BASE}/b/0/"]["part"] == 1
    parsed.clear()
    parts[2] |= {"/c/new/": "2024-09-01"}
    build(site, parts)
    result = site.run()
    assert result.code == 0, result
    assert parsed == ["sitemap.xml", "part-2.xml"]  # the index, and the one part that changed
    assert result.out.startswith("1 added, 0 changed, 0 removed, 1 submitted, 0 pending")
    parsed.clear()
    rerun = site.state_bytes()
    assert site.run().code == 0 and parsed == ["sitemap.xml"]
    assert site.state_bytes() == rerun


def test_removals_and_moves_between_changed_parts(site: Site, parsed: list[str]) -> None:
    parts = three_parts()
    build(site, parts)
    site.run()
    moved = f"/a/{0}/"
    parts[1][moved] = parts[0].pop(moved)  # moved from part 0 to part 1: both change
    del parts[1]["/b/4/"]  # removed
    build(site, parts)
    result = site.check()
    assert result.out.startswith("0 added, 0 changed, 1 removed")
    assert site.run().code == 0
    assert json.loads(site.state.read_text())["urls"][f"{BASE}{moved}"]["part"] == 1


def test_a_part_that_vanished_removes_its_urls(site: Site) -> None:
    parts = three_parts()
    build(site, parts)
    site.run()
    (site.public / "sitemaps" / "part-2.xml").unlink()
    site.write(index({f"/sitemaps/part-{number}.xml": None for number in range(2)}))
    result = site.check("--max-removed", "50%")
    assert result.out.startswith("0 added, 0 changed, 5 removed"), result.out


def test_duplicates_with_an_unchanged_part_are_still_seen(site: Site) -> None:
    parts = three_parts()
    build(site, parts)
    site.run()
    parts[2]["/a/1/"] = parts[0]["/a/1/"]  # part 2 now repeats a URL of the unchanged part 0
    build(site, parts)
    result = site.check()
    assert f"warn[url-duplicate] {BASE}/a/1/" in result.out
