"""Every rule fires on a crafted lying sitemap and stays silent on its honest twin."""

from __future__ import annotations

import array
import datetime as dt
import re

import pytest

from notifier.rules import _PLACEHOLDER_HOSTS, RULES, HostPattern, dev_host_reason
from tests.conftest import BASE, KEY, Result, Site, index, pages, recorded_urls, urlset


def fired(result: Result) -> set[str]:
    return set(re.findall(r"^(?:error|warn)\[([a-z-]+)\]", result.out, re.MULTILINE))


def levels(result: Result) -> set[str]:
    return set(re.findall(r"^((?:error|warn)\[[a-z-]+\])", result.out, re.MULTILINE))


def iso(moment: dt.datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def now() -> dt.datetime:
    """The wall clock when a test builds its dates, just before the run it checks reads its own: a
    value taken when the module was imported is minutes or hours old by then in a warm process
    (the mutation harness imports every test module once), and "minutes before the run" is not."""
    return dt.datetime.now(dt.UTC)


def record(site: Site, entries: dict[str, str | None]) -> bytes:
    """A first deploy that records ``entries`` as the state; returns the state's bytes."""
    site.write(urlset(entries))
    result = site.run()
    assert result.code == 0, result
    state = site.state_bytes()
    assert state is not None
    return state


# -- lastmod-regressed -------------------------------------------------------------------
def test_lastmod_regressed_fails_the_check_and_the_run_leaves_everything_alone(site: Site) -> None:
    before = record(site, {"/page/": "2024-03-05", "/other/": "2024-01-01"})
    site.write(urlset({"/page/": "2024-01-02", "/other/": "2024-01-01"}))
    check = site.check()
    assert check.code == 1 and fired(check) == {"lastmod-regressed"}
    today = now().strftime("%Y-%m-%d")
    assert f"error[lastmod-regressed] {BASE}/page/: lastmod 2024-01-02 is earlier than 2024-03-05 recorded on {today}" in check.out
    run = site.run()
    assert run.code == 1
    assert site.fake is not None and site.fake.posts == [] and site.fake.gets == []
    assert site.state_bytes() == before


def test_an_intended_rollback_goes_through_as_changed_with_the_rule_at_warn(site: Site) -> None:
    record(site, {"/page/": "2024-03-05", "/other/": "2024-01-01"})
    site.write(urlset({"/page/": "2024-01-02", "/other/": "2024-01-01"}))
    result = site.run("--rule", "lastmod-regressed=warn")
    assert result.code == 0 and "warn[lastmod-regressed]" in result.out
    assert site.fake is not None and site.fake.delivered() == [f"{BASE}/page/"]


def test_lastmod_moving_forward_is_honest(site: Site) -> None:
    record(site, {"/page/": "2024-03-05"})
    site.write(urlset({"/page/": "2024-04-01"}))
    assert site.check().code == 0 and fired(site.check()) == set()


# -- lastmod-future ----------------------------------------------------------------------
def test_lastmod_future(offline_site: Site) -> None:
    offline_site.write(urlset({"/a/": iso(now() + dt.timedelta(hours=3)), "/b/": "2024-01-01"}))
    result = offline_site.check()
    assert result.code == 1 and fired(result) == {"lastmod-future"}
    offline_site.write(urlset({"/a/": iso(now() + dt.timedelta(minutes=20)), "/b/": "2024-01-01"}))
    assert fired(offline_site.check()) == set()  # within the default 1 h clock skew
    offline_site.write(urlset({"/a/": iso(now() + dt.timedelta(hours=3)), "/b/": "2024-01-01"}))
    assert offline_site.check("--clock-skew", "4h").code == 0


# -- lastmod-bulk -------------------------------------------------------------------------
def test_lastmod_bulk_every_page_at_the_build_time_on_a_first_run(offline_site: Site) -> None:
    build_time = "2023-12-20T21:52:17.375Z"
    offline_site.write(urlset({f"/p/{n}/": build_time for n in range(59)}))
    result = offline_site.check()
    assert result.code == 1 and fired(result) == {"lastmod-bulk"}
    assert "59 of 59 added URLs share one lastmod 2023-12-20T21:52:17.375Z" in result.out


def test_lastmod_bulk_172_of_176_changed_in_one_second(site: Site) -> None:
    record(site, {f"/p/{n}/": f"2024-01-{1 + n % 28:02d}T10:{n % 60:02d}:00Z" for n in range(176)})
    stamped = {f"/p/{n}/": "2024-06-01T08:00:00Z" if n >= 4 else f"2024-01-{1 + n % 28:02d}T10:{n % 60:02d}:00Z" for n in range(176)}
    site.write(urlset(stamped))
    result = site.check()
    assert result.code == 1 and fired(result) == {"lastmod-bulk"}
    assert "172 of 172 changed URLs share one lastmod" in result.out


@pytest.mark.parametrize(
    "story",
    ["a commit touching a handful of pages", "a small site", "a few posts published the same day", "a big honest deploy"],
)
def test_lastmod_bulk_stays_silent_for_honest_cases(site: Site, story: str) -> None:
    if story == "a commit touching a handful of pages":
        record(site, pages(60))
        changed = pages(60)
        changed.update({f"/p/{n}/": "2024-06-01T08:00:00Z" for n in range(6)})
        site.write(urlset(changed))
    elif story == "a small site":
        site.write(urlset({f"/p/{n}/": "2025-06-06" for n in range(6)}))  # the MkDocs site of the corpus
    elif story == "a few posts published the same day":
        entries = pages(40)
        entries.update({f"/posts/{n}/": "2024-06-01" for n in range(5)})
        site.write(urlset(entries))
    else:  # one commit changed 15 of 400 pages together: many, but a small share of the site
        record(site, pages(400))
        changed = pages(400)
        changed.update({f"/p/{n}/": "2024-06-01T08:00:00Z" for n in range(15)})
        site.write(urlset(changed))
    result = site.check()
    assert "lastmod-bulk" not in fired(result), result.out
    assert result.code == 0


def test_lastmod_bulk_thresholds_are_configurable(offline_site: Site, tmp_path: object) -> None:
    offline_site.write(urlset({f"/p/{n}/": now().strftime("%Y-%m-%d") for n in range(6)}))  # the run's own day
    (offline_site.root / "notify-changes.toml").write_text("[bulk]\nmin-urls = 5\n")
    assert fired(offline_site.check()) == {"lastmod-bulk"}


# -- lastmod-invalid, lastmod-missing -------------------------------------------------------
def test_lastmod_invalid(offline_site: Site) -> None:
    offline_site.write(urlset({"/a/": "2024-13-01", "/b/": "01/02/2024", "/c/": "2024-01-01T10:00:00"}))
    result = offline_site.check()
    assert result.code == 1 and fired(result) == {"lastmod-invalid"}
    assert result.out.count("error[lastmod-invalid]") == 3
    offline_site.write(urlset({"/a/": "2024-12-01", "/b/": "2024-01-02", "/c/": "2024-01-01T10:00:00Z"}))
    assert fired(offline_site.check()) == set()


def test_lastmod_missing_is_a_warning(offline_site: Site) -> None:
    offline_site.write(urlset({"/a/": None, "/b/": "2024-01-01"}))
    result = offline_site.check()
    assert result.code == 0 and levels(result) == {"warn[lastmod-missing]"}
    offline_site.write(urlset({"/a/": "2024-01-01", "/b/": "2024-01-01"}))
    assert fired(offline_site.check()) == set()


def test_findings_are_capped_per_rule_with_a_count_of_the_rest(offline_site: Site) -> None:
    offline_site.write(urlset({f"/p/{n}/": None for n in range(25)} | {"/dated/": "2024-01-01"}))
    result = offline_site.check()
    assert result.out.count("warn[lastmod-missing] http") == 20
    assert "warn[lastmod-missing] … and 5 more like this" in result.out


# -- fingerprints ---------------------------------------------------------------------------
def build_pages(site: Site, bodies: dict[str, str]) -> None:
    for path, body in bodies.items():
        target = site.public / path.strip("/") / "index.html" if path != "/" else site.public / "index.html"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(body)


def test_lastmod_without_change(site: Site) -> None:
    build_pages(site, {"/a/": "A", "/b/": "B"})
    site.write(urlset({"/a/": "2024-01-01", "/b/": "2024-01-01"}))
    assert site.run("--site-dir", str(site.public)).code == 0
    assert "fingerprint" in recorded_urls(site.state)[f"{BASE}/a/"]
    site.write(urlset({"/a/": "2024-02-01", "/b/": "2024-02-01"}))
    build_pages(site, {"/b/": "B, edited"})
    result = site.check("--site-dir", str(site.public))
    assert result.code == 0 and levels(result) == {"warn[lastmod-without-change]"}
    assert f"{BASE}/a/" in result.out and f"{BASE}/b/" not in result.out


def test_change_without_lastmod_and_an_undated_page_that_changed_is_submitted(site: Site) -> None:
    build_pages(site, {"/a/": "A", "/undated/": "U", "/same/": "S"})
    site.write(urlset({"/a/": "2024-01-01", "/undated/": None, "/same/": None}))
    args = ("--site-dir", str(site.public), "--rule", "lastmod-missing=off")
    assert site.run(*args).code == 0
    build_pages(site, {"/a/": "A, edited", "/undated/": "U, edited"})
    result = site.run(*args)
    assert result.code == 0 and levels(result) == {"warn[change-without-lastmod]"}
    assert site.fake is not None and site.fake.delivered() == [f"{BASE}/undated/"]


# -- removals and empty sitemaps --------------------------------------------------------------
def test_mass_removal(site: Site) -> None:
    before = record(site, pages(100))
    site.write(urlset(dict(list(pages(100).items())[:70])))
    result = site.run()
    assert result.code == 1 and fired(result) == {"mass-removal"} and "30 of 100 recorded URLs vanished" in result.out
    assert site.state_bytes() == before
    site.write(urlset(dict(list(pages(100).items())[:85])))
    assert fired(site.check()) == set()
    assert site.check("--max-removed", "10%").code == 1


def test_an_empty_sitemap_fails_and_removes_nothing(site: Site) -> None:
    before = record(site, pages(5))
    site.write('<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"/>')
    result = site.run()
    assert result.code == 1 and fired(result) == {"sitemap-empty"}
    assert "0 removed" in result.out
    assert site.state_bytes() == before
    assert site.fake is not None and site.fake.posts == []


# -- URLs -----------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "loc",
    [
        "RELATIVE/docs/install/",
        "RELATIVEdocs/",
        "ftp://www.shop-site.org/a",
        f"{BASE}/a b/",
        f"{BASE}/интерактивна-карта/",
        f"{BASE}/{'x' * 2100}",
        f"{BASE}/100%/",
    ],
)
def test_url_invalid(offline_site: Site, loc: str) -> None:
    content = urlset({"/ok/": "2024-01-01", loc: "2024-01-01"})
    offline_site.write(content.replace(f"{BASE}RELATIVE", "").replace("RELATIVE", ""))  # raw relative locs
    result = offline_site.check()
    assert result.code == 1 and fired(result) == {"url-invalid"}


def test_url_invalid_honest_twin(offline_site: Site) -> None:
    offline_site.write(urlset({f"{BASE}/%D0%B8%D0%BD/": "2024-01-01", f"{BASE}/a?b=1&c=2": "2024-01-01", f"{BASE}/~me/": None}))
    assert fired(offline_site.check("--rule", "lastmod-missing=off")) == set()


def test_url_out_of_scope(offline_site: Site) -> None:
    offline_site.write(urlset({"/blog/a/": "2024-01-01", "/shop/b/": "2024-01-01", "http://cdn.shop-site.org/x": "2024-01-01"}))
    result = offline_site.check("--sitemap-url", f"{BASE}/blog/sitemap.xml")
    assert result.code == 1 and fired(result) == {"url-out-of-scope"}
    assert result.out.count("error[url-out-of-scope]") == 2
    offline_site.write(urlset({"/blog/a/": "2024-01-01", "/blog/b/": "2024-01-01"}))
    assert fired(offline_site.check("--sitemap-url", f"{BASE}/blog/sitemap.xml")) == set()


def test_a_local_sitemap_takes_its_scope_from_the_first_url(offline_site: Site) -> None:
    offline_site.write(urlset({"/a/": "2024-01-01", "http://elsewhere.org/b/": "2024-01-01"}))
    assert fired(offline_site.check()) == {"url-out-of-scope"}


def test_index_parts_take_the_index_scope(offline_site: Site) -> None:
    offline_site.write(urlset({"/a/": "2024-01-01"}), "sitemaps/part.xml")
    offline_site.write(index({"/sitemaps/part.xml": None}))
    assert fired(offline_site.check("--sitemap-url", f"{BASE}/sitemap.xml")) == set()


@pytest.mark.parametrize(
    "base",
    [
        "http://localhost:1313",
        "http://localhost:4000",
        "https://adcert.local",
        "https://example.com",
        "http://127.0.0.1:8000",
        "http://192.168.1.20",
        "https://www.example.org",
        "https://blog.test",
        "https://gatsbystarterdefaultsource.gatsbyjs.io",
        "https://deploy-preview-12--mysite.netlify.app",
        "https://quirky-meitner6297.on.getshifter.io",
        "http://bashtage.github.io/sphinx-material",
        "http://[::1]:8080",
    ],
)
def test_url_dev_host(offline_site: Site, base: str) -> None:
    offline_site.write(urlset({f"{base}/": "2024-01-01", f"{base}/a/": "2024-01-01"}))
    result = offline_site.check()
    assert result.code == 1 and fired(result) == {"url-dev-host"}, result.out


def test_url_dev_host_honest_twins(offline_site: Site) -> None:
    honest = ("https://www.example-bakery.net", "https://mysite.netlify.app", "https://elegant-nightingale-894b88.netlify.app")
    for base in (*honest, "https://mysite.pages.dev", "https://octocat.github.io", "https://bashtage.github.io/other", "https://8.8.8.8"):
        offline_site.write(urlset({f"{base}/": "2024-01-01", f"{base}/a/": "2024-01-02"}))
        assert fired(offline_site.check()) == set(), base


@pytest.mark.parametrize("shape", _PLACEHOLDER_HOSTS, ids=lambda shape: shape.what)
def test_every_placeholder_host_pattern_has_a_true_and_a_false_example(shape: HostPattern) -> None:
    assert dev_host_reason(f"https://{shape.example}/") is not None
    assert dev_host_reason(f"https://{shape.twin}/") is None, shape.twin


@pytest.mark.parametrize(
    ("host", "preview"),
    [
        ("5f9a1c2b3d4e5f60708090a1--mysite.netlify.app", True),
        ("staging--mysite.netlify.app", True),
        ("mysite.netlify.app", False),
        ("brave-curie-1a2b3c.netlify.app", False),
        ("feature-x.mysite.pages.dev", True),
        ("mysite.pages.dev", False),
        ("shop-git-main-acme.vercel.app", True),
        ("shop-acme.vercel.app", False),
        ("octocat.github.io", False),
    ],
)
def test_hosting_production_addresses_pass_and_previews_fail(host: str, preview: bool) -> None:
    assert (dev_host_reason(f"https://{host}/") is not None) is preview


def test_url_duplicate(offline_site: Site) -> None:
    twice = urlset({"/a/": "2024-01-01", "/b/": "2024-01-01"}).replace(
        "</urlset>", f"<url><loc>{BASE}/a/</loc><lastmod>2024-01-01</lastmod></url></urlset>"
    )
    offline_site.write(twice)
    result = offline_site.check()
    assert result.code == 0 and levels(result) == {"warn[url-duplicate]"}
    offline_site.write(twice.replace("<lastmod>2024-01-01</lastmod></url></urlset>", "<lastmod>2024-05-01</lastmod></url></urlset>"))
    result = offline_site.check()
    assert result.code == 1 and levels(result) == {"error[url-duplicate]"}
    assert offline_site.check("--rule", "url-duplicate=warn").code == 0


# -- the sitemap itself --------------------------------------------------------------------------
def test_sitemap_limits_50001_urls(offline_site: Site) -> None:
    offline_site.write("\n".join(f"{BASE}/p/{n}" for n in range(50_001)), "sitemap.txt")
    result = offline_site.run(sitemap=str(offline_site.public / "sitemap.txt"), command="check")
    assert result.code == 1 and "sitemap-limits" in fired(result) and "50001 URLs in one file" in result.out


def test_sitemap_limits_an_index_of_too_many_parts(offline_site: Site, monkeypatch: pytest.MonkeyPatch) -> None:
    import notifier.sitemap.reader

    monkeypatch.setattr(notifier.sitemap.reader, "MAX_URLS_PER_FILE", 3)  # the rule's count, not 50,001 files on disk
    for number in range(4):
        offline_site.write(urlset(pages(1, prefix=f"/{number}/")), f"part-{number}.xml")
    offline_site.write(index({f"/part-{number}.xml": None for number in range(4)}))
    result = offline_site.check()
    assert result.code == 1 and fired(result) == {"sitemap-limits"} and "4 parts in one file, over the limit of 3" in result.out


def test_sitemap_limits_an_index_inside_an_index(offline_site: Site) -> None:
    offline_site.write(urlset(pages(2)), "leaf.xml")
    offline_site.write(index({"/leaf.xml": None}), "inner.xml")
    offline_site.write(index({"/inner.xml": None}))
    result = offline_site.check()
    assert result.code == 1 and fired(result) == {"sitemap-limits"} and "an index inside an index" in result.out


def test_key_file_missing(site: Site) -> None:
    site.write(urlset(pages(2)))
    site.build_pages(pages(2))
    assert fired(site.check("--site-dir", str(site.public))) == set()
    (site.public / f"{KEY}.txt").unlink()
    result = site.check("--site-dir", str(site.public))
    assert result.code == 1 and fired(result) == {"key-file-missing"}


def test_rules_can_be_turned_off_in_config(offline_site: Site) -> None:
    offline_site.write(urlset({"http://localhost:1313/": "2024-01-01"}))
    (offline_site.root / "notify-changes.toml").write_text('[rules]\n"url-dev-host" = "off"\n')
    assert offline_site.check().code == 0


def test_check_exits_1_only_for_errors() -> None:
    assert {rule.level for rule in RULES.values()} == {"error", "warn"}


def test_the_most_shared_instant_is_found_with_a_few_counters() -> None:
    from notifier.rules.bulk import _most_shared

    spread = array.array("d", [float(n) for n in range(1000)])
    assert _most_shared(spread, 0.5)[1] == 1  # no instant is shared: every counter was knocked out
    stamped = array.array("d", [7.0 if n % 2 else float(n) for n in range(1000)])
    assert _most_shared(stamped, 0.5) == (7.0, 500)  # exactly half still counts
    assert _most_shared(stamped, 0.2) == (7.0, 500)


def test_lastmod_invalid_says_which_format_was_meant(offline_site: Site) -> None:
    offline_site.write(urlset({"/a/": "2024-13-01", "/b/": "Mon, 32 May 2024 10:00:00 GMT", "/c/": "yesterday"}))
    result = offline_site.check()
    said = dict(re.findall(r"^error\[lastmod-invalid\] (\S+): (.*)$", result.out, re.MULTILINE))
    assert "is not a W3C Datetime" in said[f"{BASE}/a/"]
    assert "a valid RFC 822 date" in said[f"{BASE}/b/"] and "a valid RFC 822 date" in said[f"{BASE}/c/"]


def test_one_foreign_url_listed_first_is_the_one_out_of_scope(offline_site: Site) -> None:
    """The sitemap's host is the one most of its URLs are on, not the first URL's."""
    listed = {"https://cdn.other-site.net/promo/": "2024-05-01"} | {f"/p/{n}/": "2024-05-01" for n in range(5)}
    offline_site.write(urlset(listed))
    result = offline_site.check()
    assert result.code == 1
    flagged = re.findall(r"^error\[url-out-of-scope\] (\S+):", result.out, re.MULTILINE)
    assert flagged == ["https://cdn.other-site.net/promo/"], result.out
    assert "not on the sitemap's host www.shop-site.org" in result.out


def test_the_recorded_site_outweighs_a_deploy_that_adds_foreign_urls(offline_site: Site) -> None:
    offline_site.write(urlset({f"/p/{n}/": "2024-05-01" for n in range(6)}))
    assert offline_site.run().code == 0
    offline_site.write(
        urlset({f"https://cdn.other-site.net/{n}/": "2024-05-01" for n in range(3)} | {f"/p/{n}/": "2024-05-01" for n in range(7)})
    )
    result = offline_site.check()
    flagged = re.findall(r"^error\[url-out-of-scope\] (\S+):", result.out, re.MULTILINE)
    assert sorted(flagged) == [f"https://cdn.other-site.net/{n}/" for n in range(3)], result.out


def test_a_host_listed_first_but_not_counted_is_not_the_sitemaps_host(offline_site: Site) -> None:
    """A file of two hosts, recorded: the host of this deploy's one change outweighs one listed
    before it whose URLs are all unchanged (counted none, not one: a tie would go to the first)."""
    foreign = "https://cdn.other-site.net/promo/"
    listed = {foreign: "2024-05-01"} | {f"/p/{n}/": "2024-05-01" for n in range(3)}
    offline_site.write(urlset(listed))
    assert offline_site.run("--rule", "url-out-of-scope=off").code == 0
    offline_site.write(urlset(listed | {"/p/0/": "2024-06-01"}))
    result = offline_site.check()
    assert result.code == 0 and "url-out-of-scope" not in result.out, result.out


def test_urls_that_are_not_http_do_not_decide_the_sitemaps_host(offline_site: Site) -> None:
    """Three ftp:// URLs and two of the site's: the ftp ones are invalid, and the site's own are
    not out of scope for being fewer."""
    listed = {f"ftp://files.shop-site.org/{n}.zip": "2024-05-01" for n in range(3)} | {f"/p/{n}/": "2024-05-01" for n in range(2)}
    offline_site.write(urlset(listed))
    result = offline_site.check()
    assert result.code == 1 and fired(result) == {"url-invalid"}, result.out


@pytest.mark.parametrize(("new", "flagged"), [(1, [f"{BASE}/p/0/"]), (2, [])])
def test_a_recorded_file_of_one_host_counts_its_urls_against_new_ones_listed_first(
    offline_site: Site, new: int, flagged: list[str]
) -> None:
    """New URLs on a host listed first, two recorded on another: each new URL counts one, as
    each recorded one does. One is fewer (it is out of scope); two tie, and a tie goes to the
    host listed first (counting the recorded file as three would put the new pages out)."""
    other = "http://cdn.example-shop.org"
    offline_site.write(index({"/b.xml": None}))
    offline_site.write(urlset({f"{other}/a/": "2024-05-01", f"{other}/b/": "2024-05-01"}), "b.xml")
    assert offline_site.run("--rule", "url-out-of-scope=off").code == 0
    offline_site.write(index({"/a.xml": None, "/b.xml": None}))
    offline_site.write(urlset(pages(new)), "a.xml")
    result = offline_site.check()
    found = re.findall(r"^error\[url-out-of-scope\] (\S+):", result.out, re.MULTILINE)
    assert result.code == (1 if flagged else 0) and found == flagged, result.out


def test_a_recorded_url_let_through_once_is_judged_again_when_it_changes(offline_site: Site) -> None:
    """A URL recorded while url-invalid was off passes no rule for ever: when its lastmod moves,
    the deploy judges it again, beside URLs that need no look."""
    listed = {"/p/0/": "2024-05-01", "/café/": "2024-05-01", "/p/1/": "2024-05-01"}
    offline_site.write(urlset(listed))
    assert offline_site.run("--rule", "url-invalid=off").code == 0
    offline_site.write(urlset(listed | {"/café/": "2024-06-01", "/p/1/": "2024-06-01"}))
    result = offline_site.check()
    assert result.code == 1 and re.findall(r"^error\[url-invalid\] (\S+):", result.out, re.MULTILINE) == [f"{BASE}/café/"], result.out


def test_a_url_listed_twice_in_one_file_names_that_file_and_line(offline_site: Site) -> None:
    once = urlset({"/p/0/": "2024-05-01", "/p/1/": "2024-05-01"})
    offline_site.write(once.replace("</urlset>", f"<url><loc>{BASE}/p/0/</loc><lastmod>2024-05-01</lastmod></url></urlset>"))
    result = offline_site.check()
    assert f"url-duplicate] {BASE}/p/0/: listed twice ({offline_site.sitemap} line 11); keep one" in result.out, result.out
    offline_site.write(once.replace("</urlset>", f"<url><loc>{BASE}/p/0/</loc></url></urlset>"))  # the second without a lastmod
    result = offline_site.check()
    assert "listed twice with different lastmods 2024-05-01 and (none) (" in result.out, result.out


def test_a_feeds_own_link_names_its_site(offline_site: Site) -> None:
    """An RSS channel's <link> says whose feed it is, whatever its items link to."""
    items = "".join(
        f"<item><link>https://mirror.other-site.net/{n}/</link><pubDate>Wed, 01 May 2024 10:00:00 +0000</pubDate></item>" for n in range(2)
    )
    feed = (
        f'<?xml version="1.0"?><rss version="2.0"><channel><title>t</title><link>{BASE}/</link>{items}'
        f"<item><link>{BASE}/posts/tea/</link><pubDate>Wed, 01 May 2024 10:00:00 +0000</pubDate></item></channel></rss>"
    )
    path = offline_site.write(feed, "feed.xml")
    result = offline_site.run(command="check", sitemap=str(path))
    flagged = re.findall(r"^error\[url-out-of-scope\] (\S+):", result.out, re.MULTILINE)
    assert sorted(flagged) == [f"https://mirror.other-site.net/{n}/" for n in range(2)], result.out


def test_every_rule_has_a_finder_and_every_finder_names_rules_that_exist() -> None:
    """rules.CHECKS binds each rule to the pass that finds it (verify refuses a finding a pass does not name)."""
    from notifier.rules import CHECKS
    from notifier.rules.table import SENT_RULES

    named = [rule for check in CHECKS for rule in check.rules]
    assert set(named) == set(RULES) - SENT_RULES, (set(RULES) - SENT_RULES) ^ set(named)
