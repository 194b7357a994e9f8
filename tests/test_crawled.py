"""``notify-changes crawled`` (issue #42, item 4): real runs against the fake endpoint on an
injected clock, then generated access logs in both formats (combined, JSON lines gzipped)
joined with the ledger; forged crawler visits refused under ``--bot-ranges``."""

from __future__ import annotations

import argparse
import datetime as dt
import gzip
import io
import ipaddress
import json
from pathlib import Path
from typing import Any

import pytest

from notifier.cli import main
from notifier.commands.crawled import add_arguments, run_crawled
from tests.conftest import BASE, Site
from tests.fakeindexnow import FakeIndexNow
from tests.test_stats import DAY, T0, four_days

BING = "Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)"
YANDEX = "Mozilla/5.0 (compatible; YandexBot/3.0; +http://yandex.com/bots)"
BROWSER = "Mozilla/5.0 (X11; Linux x86_64) Firefox/140.0"


def combined(ip: str, at: dt.datetime, path: str, agent: str) -> str:
    return f'{ip} - - [{at.strftime("%d/%b/%Y:%H:%M:%S +0000")}] "GET {path} HTTP/1.1" 200 512 "-" "{agent}"\n'


def logs(root: Path) -> list[Path]:
    """Day 1: p/0 and p/1 announced at 12:00; day 2: p/2 and p/3; day 4: p/4 at 13:00."""
    h = dt.timedelta(hours=1)
    nginx = root / "access.log"
    nginx.write_text(
        combined("157.55.39.1", T0 + h / 2, "/p/0/", BING)  # 30 minutes after
        + combined("157.55.39.1", T0 + DAY + 2 * h, "/p/2/", BING)  # two hours after
        + combined("203.0.113.9", T0 + DAY + h, "/p/3/", BING)  # a forger with bingbot's name
        + combined("157.55.39.1", T0 + 3 * DAY + h / 2, "/p/4/", BING)  # before p/4 was announced: not counted
        + combined("157.55.39.1", T0 + 4 * DAY + h, "/p/4/", BING)  # a day after
        + combined("198.51.100.7", T0 + h, "/p/1/", BROWSER)
        + "a line of something else\n"
    )
    logpush = root / "logpush.json.gz"
    lines = [
        {"ClientIP": "5.255.253.1", "ClientRequestHost": "www.shop-site.org", "ClientRequestURI": "/p/1/",
         "ClientRequestUserAgent": YANDEX, "EdgeStartTimestamp": int((T0 + 3 * h).timestamp() * 1e9), "EdgeResponseStatus": 200},
        {"client_ip": "5.255.253.1", "url": f"{BASE}/p/0/", "user_agent": YANDEX, "timestamp": (T0 + DAY).isoformat(), "status_code": 200},
        {"ClientIP": "5.255.253.1", "ClientRequestHost": "other.example", "ClientRequestURI": "/p/2/",
         "ClientRequestUserAgent": YANDEX, "EdgeStartTimestamp": int((T0 + 2 * DAY).timestamp() * 1e9), "EdgeResponseStatus": 200},
    ]  # fmt: skip
    logpush.write_bytes(gzip.compress("".join(json.dumps(line) + "\n" for line in lines).encode()))
    return [nginx, logpush]


def crawled(site: Site, *args: str) -> dict[str, Any]:
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    out = io.StringIO()
    run_crawled(parser.parse_args([*args, "--state", str(site.state), "--format", "json"]), out, now=lambda: T0 + 6 * DAY)
    return dict(json.loads(out.getvalue()))


def test_each_crawlers_fetches_after_the_announcement_in_both_formats(site: Site) -> None:
    four_days(site)
    files = [str(each) for each in logs(site.root)]
    found = crawled(site, *files, "--since", "all")
    bing, yandex = found["engines"]["bingbot"], found["engines"]["YandexBot"]
    assert bing == {"announced": 5, "crawled": 4, "median_delay_s": 3600.0, "p90_delay_s": 86_400.0}  # the forger believed (3600 s)
    assert yandex == {
        "announced": 5,
        "crawled": 2,
        "median_delay_s": 3 * 3600.0,
        "p90_delay_s": 86_400.0,
    }  # not other.example's p/2
    assert found["engines"]["SeznamBot"] == {"announced": 5, "crawled": 0, "median_delay_s": None, "p90_delay_s": None}
    assert found["never"] == [] and found["unparsed_lines"] == 1
    assert found["visits"] == {"believed": 8, "refused_by_ranges": 0, "by_address": []}


def test_forged_visits_are_refused_under_the_published_ranges(site: Site) -> None:
    four_days(site)
    ranges = site.root / "bingbot.json"
    prefixes = [{"ipv4Prefix": "157.55.39.0/24"}, {"ipv6Prefix": "2620:ee:c000::/42"}]
    ranges.write_text(json.dumps({"creationTime": "2030-06-01T00:00:00", "prefixes": prefixes}))
    found = crawled(site, *(str(each) for each in logs(site.root)), "--since", "all", "--bot-ranges", str(ranges))
    assert found["engines"]["bingbot"] == {"announced": 5, "crawled": 3, "median_delay_s": 7200.0, "p90_delay_s": 86_400.0}
    assert found["never"] == [f"{BASE}/p/3/"]  # only the forger fetched it
    assert found["visits"]["refused_by_ranges"] == 1 and found["engines"]["YandexBot"]["crawled"] == 2  # Yandex: by agent
    assert found["visits"]["by_address"] == ["bingbot"]


def test_under_the_ranges_an_engine_is_known_by_its_address_whatever_its_agent(site: Site) -> None:
    """Bing's JSON for bingbot, a text file of CIDRs for YandexBot: each engine only by its
    addresses; Amazonbot, with no ranges given, still by its user agent."""
    four_days(site)
    (site.root / "bingbot.json").write_text(json.dumps({"prefixes": [{"ipv4Prefix": "157.55.39.0/24"}]}))
    (site.root / "yandex.txt").write_text("# YandexBot, as published\n5.255.253.0/24  # the main range\n\n2a02:6b8::/29\n")
    amazon = "Mozilla/5.0 (compatible; Amazonbot/0.1; +https://developer.amazon.com/support/amazonbot)"
    log = site.root / "access.log"
    h = dt.timedelta(hours=1)
    log.write_text(
        combined("157.55.39.8", T0 + DAY + 3 * h, "/p/3/", BROWSER)  # bingbot's address, a browser's agent: bingbot's
        + combined("203.0.113.9", T0 + h, "/p/0/", BING)  # bingbot's name from elsewhere: refused
        + combined("2a02:6b8:c0e::7", T0 + 2 * h, "/p/1/", "curl/8.0")  # YandexBot's address: YandexBot's
        + combined("198.51.100.7", T0 + 2 * h, "/p/0/", YANDEX)  # YandexBot's name from elsewhere: refused
        + combined("198.51.100.8", T0 + 5 * h, "/p/1/", amazon)  # no ranges for Amazonbot: believed by its agent
        + combined("198.51.100.9", T0 + 5 * h, "/p/2/", BROWSER)  # anybody: nobody's
    )
    ranges = ["--bot-ranges", str(site.root / "bingbot.json"), "--bot-ranges", f"yandexbot={site.root / 'yandex.txt'}"]
    found = crawled(site, str(log), "--since", "all", *ranges)
    engines = found["engines"]
    assert engines["bingbot"] == {"announced": 5, "crawled": 1, "median_delay_s": 3 * 3600.0, "p90_delay_s": 3 * 3600.0}
    assert engines["YandexBot"] == {"announced": 5, "crawled": 1, "median_delay_s": 2 * 3600.0, "p90_delay_s": 2 * 3600.0}
    assert engines["Amazonbot"] == {"announced": 5, "crawled": 1, "median_delay_s": 5 * 3600.0, "p90_delay_s": 5 * 3600.0}
    assert found["visits"] == {"believed": 3, "refused_by_ranges": 2, "by_address": ["bingbot", "YandexBot"]}
    assert found["never"] == [f"{BASE}/p/0/", f"{BASE}/p/2/", f"{BASE}/p/4/"]
    without = crawled(site, str(log), "--since", "all")  # the same log, believed by agent alone
    assert without["engines"]["bingbot"]["crawled"] == 1 and without["engines"]["YandexBot"]["crawled"] == 1  # the forgers'
    assert without["never"] == [f"{BASE}/p/2/", f"{BASE}/p/3/", f"{BASE}/p/4/"]
    out = io.StringIO()
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    run_crawled(parser.parse_args([str(log), "--state", str(site.state), "--since", "all", *ranges]), out, now=lambda: T0 + 6 * DAY)
    assert "believed by their published addresses: bingbot, YandexBot; the others by their user agents\n" in out.getvalue()
    assert "2 visits with a crawler's user agent from outside its published ranges: refused\n" in out.getvalue()


def test_since_keeps_only_the_urls_received_from_then_on(site: Site) -> None:
    four_days(site)
    found = crawled(site, *(str(each) for each in logs(site.root)), "--since", "3d")  # from T0+3d: p/4 alone
    assert found["engines"]["bingbot"]["announced"] == 1 and found["engines"]["bingbot"]["crawled"] == 1


def test_the_text_says_the_same(site: Site, capsys: pytest.CaptureFixture[str]) -> None:
    four_days(site)
    files = [str(each) for each in logs(site.root)]
    capsys.readouterr()
    assert main(["crawled", *files, "--state", str(site.state), "--since", "all"]) == 0
    out, err = capsys.readouterr()
    assert "5 URLs received from" in out and "  bingbot: 4 of 5, median 1.0 h, 90% within 24.0 h" in out and "  SeznamBot: none" in out
    assert err == "notify-changes: note: 1 log line not in a format read here: passed over\n"  # on stderr, once
    assert main(["crawled", *files, "--state", str(site.state), "--since", "all", "--format", "json"]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["unparsed_lines"] == 1 and err.count("\n") == 1 and "1 log line not in a format" in err
    assert main(["crawled", files[1], "--state", str(site.state), "--since", "all"]) == 0
    assert capsys.readouterr().err == ""  # the log with no such line: nothing said


def test_bad_input_is_one_line_and_exit_2(site: Site, capsys: pytest.CaptureFixture[str]) -> None:
    four_days(site)
    log = logs(site.root)[0]
    broken = site.root / "broken.gz"
    broken.write_bytes(b"\x1f\x8b" + b"not gzip at all")
    damaged = bytearray(gzip.compress(b"x" * 50 + b"\n") * 2)
    damaged[10:12] = b"\xff\xff"  # the first deflate block's type: invalid (zlib.error, not a cut stream)
    (site.root / "damaged.log.gz").write_bytes(bytes(damaged))
    (site.root / "ranges.json").write_text('{"prefixes": [{"ipv4Prefix": "not an address"}]}')
    (site.root / "bad.txt").write_text("# Yandex\n5.255.253.0/24\nbing.com\n")
    (site.root / "empty.txt").write_text("# nothing yet\n\n")
    (site.root / "shape.json").write_text('{"creationTime": "2030-06-01", "prefixes": [{"prefix": "157.55.39.0/24"}]}')
    (site.root / "binary.txt").write_bytes(b"\xff\xfe\x00garbage")
    for args, said in (
        ([], "name the access logs"),
        ([str(site.root / "missing.log")], "cannot read the log"),
        ([str(broken)], "cannot read the log"),
        ([str(site.root / "damaged.log.gz")], "cannot read the log"),
        ([str(log), "--bot-ranges", str(site.root / "ranges.json")], "prefix 1: 'not an address' is not a CIDR prefix"),
        ([str(log), "--bot-ranges", "googlebot=x.json"], "'googlebot' is not one of"),
        ([str(log), "--bot-ranges", str(site.root / "missing.json")], "missing.json: cannot read it"),
        ([str(log), "--bot-ranges", f"yandexbot={site.root / 'bad.txt'}"], "bad.txt: line 3: 'bing.com' is not a CIDR prefix"),
        ([str(log), "--bot-ranges", str(site.root / "empty.txt")], "empty.txt: no address prefix in it"),
        ([str(log), "--bot-ranges", str(site.root / "shape.json")], "shape.json: not the published ranges"),
        ([str(log), "--bot-ranges", str(site.root / "binary.txt")], "binary.txt: not text"),
        ([str(log), "--since", "whenever"], "--since 'whenever'"),
        ([str(log), "--since", "-1d"], "--since '-1d': not a duration"),  # a minus typed: the value, not an option
        ([str(log), "--state", str(site.root / "typo.json")], "typo.json: no state yet"),
        ([str(log), "--state", str(site.root / "typo.sqlite")], "typo.sqlite: no state yet"),
    ):
        capsys.readouterr()
        assert main(["crawled", "--state", str(site.state), *args]) == 2, args
        err = capsys.readouterr().err
        assert said in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err, (args, err)


def test_every_option_is_on_the_reports_page() -> None:
    from tests.docs import page
    from tests.docs import section as part

    section = part(page("reports.md"), "Did the engines crawl it?")
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    options = [opt for action in parser._actions for opt in action.option_strings if opt.startswith("--") and opt != "--help"]
    assert [opt for opt in options if f"`{opt}" not in section and f", `{opt}`" not in section] == []


def test_the_plain_function_returns_a_frozen_value_the_json_is_made_of(site: Site) -> None:
    """The report page (item 2) shows ``crawled``'s value; the command prints the same."""
    import dataclasses

    from notifier.crawled import crawled as join_logs

    four_days(site)
    files = logs(site.root)
    result = join_logs(site.state, files, dt.datetime.min.replace(tzinfo=dt.UTC), T0 + 6 * DAY)
    assert result.as_dict() == crawled(site, *(str(each) for each in files), "--since", "all")
    assert result.announced == 5 and [each.engine for each in result.engines][:2] == ["bingbot", "YandexBot"]
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.engines[0].crawled = 0  # type: ignore[misc]


def test_a_dual_stack_servers_mapped_ipv4_address_is_held_to_the_ipv4_ranges() -> None:
    from notifier.bot_ranges import Ranges

    inside = Ranges.of([ipaddress.ip_network("157.55.39.0/24"), ipaddress.ip_network("2620:ee:c000::/42")]).holds
    assert inside("::ffff:157.55.39.7") and inside("157.55.39.7") and inside("2620:ee:c000::1") and inside("157.55.39.255")
    assert not inside("::ffff:203.0.113.9") and not inside("203.0.113.9") and not inside("157.55.40.0") and not inside("nobody")


def reannounced(site: Site) -> None:
    """Day 1: p/0 and p/1 announced. Day 5: p/0 changed and announced again, and again 30
    minutes later (changed once more: the same announcement, under the hour)."""
    from tests.conftest import pages, run_at, urlset

    site.write(urlset(pages(2)))
    assert run_at(site, T0).exit_code == 0
    for when, lastmod in ((T0 + 4 * DAY, "2030-06-05T11:00:00Z"), (T0 + 4 * DAY + dt.timedelta(minutes=30), "2030-06-05T11:30:00Z")):
        site.write(urlset({**pages(2), "/p/0/": lastmod}))
        report = run_at(site, when)
        assert report.exit_code == 0 and report.submitted == [f"{BASE}/p/0/"]


def test_a_page_announced_again_counts_from_its_latest_announcement(site: Site) -> None:
    reannounced(site)
    log = site.root / "access.log"
    log.write_text(combined("157.55.39.1", T0 + DAY, "/p/0/", BING) + combined("157.55.39.1", T0 + DAY, "/p/1/", BING))
    found = crawled(site, str(log), "--since", "all")
    # p/1: fetched a day after its one announcement; p/0: fetched on day 2, then changed and announced on day 5: never since
    assert found["engines"]["bingbot"] == {"announced": 2, "crawled": 1, "median_delay_s": 86_400.0, "p90_delay_s": 86_400.0}
    assert found["never"] == [f"{BASE}/p/0/"]


def test_a_fetch_after_the_latest_announcement_is_timed_from_it(site: Site) -> None:
    reannounced(site)
    log = site.root / "access.log"
    fetches = [(T0 + DAY, "/p/0/"), (T0 + DAY, "/p/1/"), (T0 + 4 * DAY + dt.timedelta(minutes=10), "/p/0/")]
    log.write_text("".join(combined("157.55.39.1", at, path, BING) for at, path in fetches))
    found = crawled(site, str(log), "--since", "all")
    # p/0: 10 minutes after day 5's announcement (the resend 30 minutes later is the same one), p/1: a day
    assert found["engines"]["bingbot"] == {"announced": 2, "crawled": 2, "median_delay_s": 600.0, "p90_delay_s": 86_400.0}
    assert found["never"] == []


def test_an_endpoint_taking_it_on_a_later_run_is_the_same_announcement(site: Site, second: FakeIndexNow) -> None:
    """Day 1: both pages to two endpoints, the second refuses (422); day 2, unchanged, the
    second takes them: no new announcement, so bingbot's fetch between the two counts."""
    from tests.conftest import pages, run_at, urlset
    from tests.fakeindexnow import status

    assert site.fake is not None
    both = [site.fake.endpoint, second.endpoint]
    site.write(urlset(pages(2)))
    second.plan = [status(422, "key not valid for this host")]
    assert run_at(site, T0, endpoint=both).exit_code in (0, 3)
    assert run_at(site, T0 + DAY, endpoint=both).exit_code == 0 and second.delivered() == [f"{BASE}/p/0/", f"{BASE}/p/1/"]
    log = site.root / "access.log"
    log.write_text(combined("157.55.39.1", T0 + 2 * dt.timedelta(hours=1), "/p/0/", BING))
    found = crawled(site, str(log), "--since", "all")
    assert found["engines"]["bingbot"] == {"announced": 2, "crawled": 1, "median_delay_s": 7200.0, "p90_delay_s": 7200.0}
    assert found["never"] == [f"{BASE}/p/1/"]
