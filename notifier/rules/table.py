"""The rules as data: each id, its default level and what it catches; a violation; the
settings and the context every rule reads. The rules themselves live beside this module,
by what they judge: ``urls``, ``dates``, ``site``.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Literal, NamedTuple

Level = Literal["error", "warn", "off"]  # a rule's level; a finding is "error" or "warn"
ERROR: Literal["error"] = "error"
WARN: Literal["warn"] = "warn"
OFF: Literal["off"] = "off"


LEVELS = (ERROR, WARN, OFF)
# found from what the endpoints answered (notifier/pipeline/refusals.py), after sending, not by a
# pass over the sitemap: "error" would claim a failed verification with nothing sent, so warn or off
SENT_RULES = frozenset({"key-refused"})


class Rule(NamedTuple):
    id: str
    level: Level  # the default level
    catches: str  # what it catches, for the README and --help


RULES: dict[str, Rule] = {
    rule.id: rule
    for rule in (
        Rule("lastmod-regressed", ERROR, "a URL's lastmod is earlier than the one recorded at the last deploy"),
        Rule("lastmod-future", ERROR, "a lastmod is later than now plus --clock-skew"),
        Rule(
            "lastmod-bulk",
            ERROR,
            "the dates came from the build: many changed pages proven unchanged, sharing one instant or the run's own day, "
            "or crowded into minutes just before the run",
        ),
        Rule("lastmod-invalid", ERROR, "a lastmod that is not a W3C Datetime"),
        Rule("lastmod-missing", WARN, "a URL without a lastmod"),
        Rule("lastmod-vs-history", ERROR, "a lastmod that is neither its source's front-matter date nor within its git history"),
        Rule("lastmod-without-change", WARN, "the lastmod moved but the built page file did not change (held back, not announced)"),
        Rule("change-without-lastmod", WARN, "the built page file changed but its lastmod did not"),
        Rule("mass-removal", ERROR, "more than --max-removed of the recorded URLs vanished at once"),
        Rule("url-invalid", ERROR, "a loc that is not an absolute, escaped http(s) URL of at most 2,048 characters, without userinfo"),
        Rule("url-out-of-scope", ERROR, "a loc off the sitemap's host or outside the sitemap's folder"),
        Rule("url-dev-host", ERROR, "a loc on a development, preview or placeholder host"),
        Rule("url-duplicate", WARN, "the same loc listed twice (an error when the two lastmods differ)"),
        Rule("sitemap-limits", ERROR, "over 50,000 URLs in a file or parts in an index, or an index inside an index"),
        Rule("sitemap-empty", ERROR, "the sitemap lists no URL at all"),
        Rule("xml-prolog", WARN, "a byte-order mark or whitespace before <?xml"),
        Rule("sitemap-namespace", WARN, "a <urlset> or <sitemapindex> without the sitemaps namespace (no xmlns)"),
        Rule("key-file-missing", ERROR, "the IndexNow key file is not in the build (--site-dir)"),
        Rule(
            "key-refused",
            WARN,
            "an endpoint answered 403 for a host on two runs in a row while another endpoint took that host's batches: "
            "it refuses the key itself (rotate it)",
        ),
        Rule("url-tracking-params", ERROR, "a loc with tracking parameters (utm_*, gclid, fbclid, msclkid, ...): a copy, not a page"),
        Rule(
            "page-noindex",
            ERROR,
            "the built page says noindex (robots meta), or _headers sends X-Robots-Tag: noindex for it, to every IndexNow engine",
        ),
        Rule("page-canonical-elsewhere", ERROR, 'the built page\'s <link rel="canonical"> names another URL'),
        Rule("page-redirect", ERROR, "the built page is a redirect stub (meta refresh), or _redirects redirects its path"),
        Rule("page-missing", WARN, "a listed URL with no built page file in the build"),
        Rule("url-robots-disallowed", ERROR, "the build's robots.txt keeps every IndexNow engine's crawler away from the URL"),
        Rule("hreflang-broken", WARN, "an hreflang alternate the sitemap does not list, or a pair that does not name each other"),
        Rule("sitemap-values", WARN, "a <changefreq> or <priority> outside what the protocol allows"),
        Rule("sitemap-encoding", ERROR, "an XML declaration naming an encoding other than UTF-8"),
    )
}


class Violation(NamedTuple):
    rule: str
    level: Literal["error", "warn"]
    url: str
    message: str


@dataclass(frozen=True)
class BulkThresholds:
    """When one shared lastmod instant means "the dates came from the build, not the content".

    The defaults, argued with numbers:
    - ``min_urls = 10``: an honest commit touches a handful of pages; 10 pages sharing
      one instant is where a hand-made change stops being the likely story. The small
      MkDocs site of the corpus (6 pages, one build date) stays silent; the Next.js site
      that stamped all 59 pages with the build time fires; so does the 172-of-176 case.
    - ``ratio = 0.5``: the shared instant must cover at least half of the changed URLs
      that carry a lastmod. Build stamps cover ~100 % (59/59, 172/176, 10/11 in the
      corpus' Hugo blogdown site); a deploy that mixes honest dates never gets there.
    - ``site_ratio = 0.2``: and at least a fifth of the whole sitemap. A large site
      where one honest commit changed 200 pages out of 10,000 (2 %) stays silent, while
      the generator that rewrites every file on every run covers the whole site.
    """

    min_urls: int = 10
    ratio: float = 0.5
    site_ratio: float = 0.2


@dataclass(frozen=True)
class RuleSettings:
    """What the rules need to know beyond the sitemap and the state."""

    clock_skew: dt.timedelta  # --clock-skew
    max_removed: float  # --max-removed: a fraction of the recorded URLs
    levels: dict[str, Level] = field(default_factory=dict)
    now: dt.datetime = field(default_factory=lambda: dt.datetime.now(dt.UTC))
    max_removed_min: int = 10  # never fire below this many removals
    bulk: BulkThresholds = BulkThresholds()
    sitemap_url: str | None = None
    own_hosts: frozenset[str] = frozenset()  # hosts the config gives a key of their own: the site's too (url-out-of-scope)

    def level(self, rule_id: str) -> Level:
        return self.levels.get(rule_id, RULES[rule_id].level)


Found = tuple[str, str, str, Literal["error", "warn"] | None]  # rule, url, message, level override
