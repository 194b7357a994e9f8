"""What the rules look at: the sitemap read, the diff, the state, the build, and the dates parsed once."""

from __future__ import annotations

import array
from collections.abc import Sequence
from dataclasses import dataclass, field

from notifier.changes import Change, Diff
from notifier.rules.table import Violation
from notifier.site.pages import BuiltSite
from notifier.sitemap.files import Sitemap
from notifier.store import State


@dataclass
class Dated:
    """The added and changed URLs' lastmods, parsed once (a first run has a million)."""

    added: Sequence[Change]
    changed: Sequence[Change]
    stamps: array.array[float]  # one per added, then changed, URL: its POSIX timestamp, NaN if none
    invalid: list[Change]  # a lastmod that is not a W3C Datetime

    def change(self, number: int) -> Change:
        first_changed = len(self.added)
        return self.added[number] if number < first_changed else self.changed[number - first_changed]


@dataclass
class Context:
    """Everything the rules look at."""

    sitemap: Sitemap
    diff: Diff
    state: State
    first_run: bool
    key_file_missing: list[tuple[str, str]] = field(default_factory=list)  # (key file expected in the build, what is wrong)
    backed_by_history: set[str] = field(default_factory=set)  # lastmod is a commit time of the source
    current_by_history: set[str] = field(default_factory=set)  # a kept lastmod whose source has no commit after it
    extra: list[Violation] = field(default_factory=list)  # from history and fingerprints
    dated: Dated | None = None  # the added and changed lastmods, parsed (by _dated)
    built: BuiltSite | None = None  # the build and its pages, for the page rules
    notes: list[str] = field(default_factory=list)  # what the rules say that is no finding (one line each, per run)
