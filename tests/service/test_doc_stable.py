"""The two pure parts of the doc plan: the stable inputs hash, and the docs a new error moves.

The stable hash decides which out-of-date docs a build may leave for later (only their version
lists and line numbers moved); the neighbour rule decides which docs whose inputs held must be
rebuilt all the same, because a new error may join their similar errors. The first may only
delay a build (a doc out of date is never served); the second must never miss a doc that moves.
"""

from __future__ import annotations

from types import SimpleNamespace

from errkb.service.docstore.inputs import (
    Timeline,
    neighbours_of_new,
    own_inputs,
    stable_inputs,
)
from errkb.service.entries.related import MAX_TEXT_CANDIDATES

ERROR = SimpleNamespace(
    id="e1", message="bad tile", title="Bad tile", exception="ValueError", form="f", template="t"
)


def _snapshots(n: int) -> list[SimpleNamespace]:
    return [
        SimpleNamespace(
            id=i, label=f"0.{i}", kind="pypi", commit=None, date=None, link_base=f"https://x/{i}"
        )
        for i in range(1, n + 1)
    ]


def _occ(snapshot: int, line: int = 3, body: str = "b1", path: str = "a.py") -> SimpleNamespace:
    return SimpleNamespace(
        snapshot_id=snapshot, path=path, line=line, end_line=line, qualname="f", body_hash=body
    )


def _hashes(n: int, occurrences: list[SimpleNamespace]) -> tuple[str, str]:
    timeline = Timeline(_snapshots(n))
    parts = (ERROR, "repo", occurrences, timeline, "variant")
    return own_inputs(*parts), stable_inputs(*parts)


def test_a_release_that_raises_it_as_before_keeps_the_stable_hash_only() -> None:
    own2, stable2 = _hashes(2, [_occ(1), _occ(2)])
    own3, stable3 = _hashes(3, [_occ(1), _occ(2), _occ(3)])
    assert own3 != own2 and stable3 == stable2
    shifted = _hashes(3, [_occ(1), _occ(2), _occ(3, line=9)])  # lines moved above it
    assert shifted[0] != own3 and shifted[1] == stable2


def test_new_code_a_new_place_or_a_gone_error_moves_the_stable_hash() -> None:
    _, stable2 = _hashes(2, [_occ(1), _occ(2)])
    assert _hashes(3, [_occ(1), _occ(2), _occ(3, body="b2")])[1] != stable2  # its code changed
    assert _hashes(3, [_occ(1), _occ(2), _occ(3, path="b.py")])[1] != stable2  # moved file
    assert _hashes(3, [_occ(1), _occ(2)])[1] != stable2  # gone in the new release
    assert _hashes(3, [_occ(1), _occ(3)])[1] != stable2  # gone, then back


def test_an_error_gone_long_ago_keeps_both_hashes() -> None:
    assert _hashes(3, [_occ(1)]) == _hashes(4, [_occ(1)])


def test_a_new_error_moves_the_docs_whose_similar_errors_it_may_join() -> None:
    doc = "the tile layout refuses a negative width"
    messages = {
        "doc": doc,
        "alike": "the tile layout refuses a negative height",  # shares most words
        "unlike": "width layout of the whole window was reset after a resize of the screen",
    }
    assert neighbours_of_new({"doc": doc}, messages, {"alike"}) == {"doc"}
    assert neighbours_of_new({"doc": doc}, messages, {"unlike"}) == set()  # answers, not alike
    assert neighbours_of_new({"doc": doc}, messages, set()) == set()
    # More answers than the related query keeps: a new answer may push one out, alike or not.
    crowd = {f"old{n}": f"layout width number {n}" for n in range(MAX_TEXT_CANDIDATES + 1)}
    assert neighbours_of_new({"doc": doc}, {**messages, **crowd}, {"unlike"}) == {"doc"}
