"""Site histories and change events, as pure functions on hand-made occurrences."""

from __future__ import annotations

from errkb.knowledge.facts import Placement, SnapshotSites
from errkb.knowledge.history.timeline import timeline
from errkb.service.entries.histories import SlimOccurrence, runs, site_histories


def occ(
    snap: int, line: int, body: str = "b1", path: str = "a.py", fn: str = "f"
) -> SlimOccurrence:
    return SlimOccurrence(snap, path, line, line + 1, fn, body)


def test_one_site_over_snapshots_with_a_move_a_new_version_and_a_gap() -> None:
    [h] = site_histories([occ(0, 10), occ(1, 10), occ(2, 14), occ(4, 14, "b2")])
    assert h.snapshots == [0, 1, 2, 4]
    assert [(r.line, r.first, r.last) for r in h.lines] == [(10, 0, 1), (14, 2, 4)]
    assert [(b.body, b.first, b.last, b.count, b.last_line) for b in h.bodies] == [
        ("b1", 0, 2, 3, 14),
        ("b2", 4, 4, 1, 14),
    ]
    assert runs(h.snapshots, range(5)) == [(0, 2), (4, 4)]


def test_two_raises_in_one_function_stay_two_sites_and_a_move_starts_a_new_one() -> None:
    rows = [occ(0, 10), occ(0, 20), occ(1, 12), occ(1, 22), occ(2, 5, path="b.py")]
    histories = site_histories(rows)
    assert [(h.path, h.ordinal, [r.line for r in h.lines]) for h in histories] == [
        ("b.py", 0, [5]),
        ("a.py", 0, [10, 12]),
        ("a.py", 1, [20, 22]),
    ]


def test_changed_in_names_message_and_guard_changes_only_where_they_happen() -> None:
    def snap(label: str, *sites: Placement) -> SnapshotSites:
        return SnapshotSites(label, None, sites)

    tl = timeline(
        [
            snap("1"),
            snap("2", Placement("a.py", 10, "f", guard="if x", message="'m'")),
            snap("3", Placement("a.py", 30, "f", guard="if x", message="'m'")),  # moved only
            snap("4", Placement("a.py", 30, "f", guard="if x and y", message="'m'")),
            snap("5", Placement("a.py", 30, "f", guard="if x and y", message="f'm {v}'")),
            snap("6"),
        ]
    )
    assert [(e.snapshot, e.kinds) for e in tl.changed_in] == [
        ("4", ("guard",)),
        ("5", ("message",)),
    ]
    assert (tl.first_seen, tl.gone_in) == ("2", "6")
    assert "message or guard changed in 4, 5" in tl.summary
