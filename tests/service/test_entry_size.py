"""An entry's JSON stays small however long the history: on a busy synthetic project of 151
versions (its error gains a site every four, loses three for twenty, moves every version and
changes its guard every ten), the entry lists the newest sites, changes and code, counts the
rest, and grows from 40 versions to 151 by the versions' labels only."""

from __future__ import annotations

import pytest
from history_repo import BUSY_MESSAGE, ingest_busy_history, served_entry

from errkb.service.entries import build
from errkb.service.read.entries import Entry

# Measured 14,704 bytes on 2026-12-07; the same entry was 46,260 bytes before its lists were
# bounded and 53,678 with a timeline point per version (the contract before ranges).
LARGEST = 16 * 1024


@pytest.fixture(scope="module")
def grown(tmp_path_factory: pytest.TempPathFactory) -> tuple[int, Entry, int, Entry]:
    """The entry after 40 versions and after 151, with its JSON's size each time."""
    root = tmp_path_factory.mktemp("busy")
    url = f"sqlite:///{root / 'kb.sqlite3'}"
    ingest_busy_history(url, root / "repo", range(40))
    short, early = served_entry(url)
    ingest_busy_history(url, root / "repo", range(40, 151))
    long, late = served_entry(url)
    return short, early, long, late


def test_a_long_busy_history_gives_a_small_entry(grown: tuple[int, Entry, int, Entry]) -> None:
    _, _, size, entry = grown
    assert entry.message == BUSY_MESSAGE
    assert size <= LARGEST, size
    tl = entry.timeline
    assert len(tl.present_in) == 151
    # raised throughout: one run, however often its number of sites changed
    assert [(r.from_snapshot, r.to_snapshot, r.present) for r in tl.ranges] == [
        ("2.0.0", "2.0.150", True)
    ]
    assert tl.ranges[0].site_count == 38 and tl.ranges[0].sites == []  # too many to list
    # the newest of each list, and how many there are
    assert entry.sites_total == 38 and len(entry.sites) == build.SITES_LISTED
    assert all(s.last_snapshot == "2.0.150" for s in entry.sites)
    assert len(tl.changed_in) == build.CHANGED_IN_SHOWN < tl.changed_in_total
    newest = tl.changed_in[-1]  # the guard rewritten in 2.0.150
    assert (newest.snapshot, newest.kinds) == ("2.0.150", ["guard"])
    assert len(tl.changes) <= build.CHANGES_SHOWN < tl.changes_total
    code = sum(len(o.snippet.lines) for o in entry.occurrences) + sum(
        len(v.snippet.lines) for s in entry.sites for v in s.versions
    )
    assert code <= build.CODE_LINES and entry.occurrences and entry.sites[0].versions


def test_the_entry_grows_by_a_label_per_version(grown: tuple[int, Entry, int, Entry]) -> None:
    short, early, long, late = grown
    assert len(early.timeline.present_in) == 40 and early.sites_total == 10
    # 111 more versions add their labels to present_in (about 10 bytes each), and nothing per
    # version besides: no run, change, site or line run per version.
    assert long - short <= 111 * 16, (short, long)


def test_an_occurrence_shows_at_most_the_code_budget_ending_at_its_raise() -> None:
    from errkb.service.entries.schemas import OccurrenceOut, SnippetOut

    lines = [f"line {n}" for n in range(100, 164)]  # 64 lines, the raise on 160-161
    snippet = SnippetOut(start=100, lines=lines, raise_start=160, raise_end=161)
    occ = OccurrenceOut(
        snapshot="1.0",
        path="p.py",
        line=160,
        end_line=161,
        function="f",
        conditions=[],
        snippet=snippet,
    )
    shown = build._within(occ).snippet
    assert len(shown.lines) == build.CODE_LINES
    assert shown.start == 162 - build.CODE_LINES and shown.lines[-1] == "line 161"
    assert shown.lines[0] == f"line {shown.start}"
    short = occ.model_copy(update={"snippet": snippet.model_copy(update={"lines": lines[:10]})})
    assert build._within(short) is short
