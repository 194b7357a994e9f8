"""What the files a run did not read know: the parts of the state whose files' bytes did
not change, consulted through their URL-hash indexes for the few URLs the diff asks about
(those that appeared, vanished or still wait) without decoding the rest."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass

from notifier.store import Part, Record, RecordedPart
from notifier.urlhash import loc_hash


@dataclass
class Known:
    """What the unread files know (``look_up``)."""

    records: dict[str, Record]  # URL -> the record an unread file's part holds
    listed: dict[str, RecordedPart]  # URL an unread file lists while another part held its record
    uncounted: int = 0  # URLs an unread file lists that its part's count leaves out (a check)


def consult(
    kept: list[Part], appeared: Iterable[str], vanished: Mapping[str, Record], waiting: Iterable[str], listed: Collection[str]
) -> Known:
    """What the unread files (``kept``) know of the URLs that appeared in the files read, of
    those that vanished from them, and of those still waiting, unless the files read list them."""
    if not kept:
        return Known({}, {})
    candidates = [loc for loc in appeared if loc not in vanished]
    candidates += [loc for loc in vanished if loc not in listed]
    candidates += [loc for loc in waiting if loc not in listed]
    return Known(*look_up(candidates, kept))


def look_up(locs: Iterable[str], parts: list[Part]) -> tuple[dict[str, Record], dict[str, RecordedPart]]:
    """What ``parts`` (unread files) know of ``locs``: the records they hold, and, for a URL
    whose file lists it while none of them holds its record (a second listing, whose record
    stayed with the first), the part of the first file that lists it. Each part's URL-hash
    index is consulted first; only the parts it points to are decoded."""
    hashed = [(loc, loc_hash(loc)) for loc in dict.fromkeys(locs)]
    found: dict[str, Record] = {}
    listed: dict[str, RecordedPart] = {}
    for part in parts:
        assert isinstance(part, RecordedPart), "an unread file's part comes from the state"
        hits = [loc for loc in part.may_list_among(hashed) if loc not in found]
        if not hits:
            continue
        urls = part.urls()
        for loc in hits:
            record = urls.get(loc)
            if record is not None:
                found[loc] = record
            else:
                listed.setdefault(loc, part)
        part.unload()
    return found, {loc: part for loc, part in listed.items() if loc not in found}
