"""A check that lives on under another message is not fixed by a version change."""

from __future__ import annotations

from errkb.knowledge.facts import TimelineFacts
from errkb.knowledge.fixes.versions import history_fixes, version_example
from errkb.knowledge.history.lineage import Kin, carried_by, with_lineage

# sglang 0.5.18 -> 0.5.19: the assert's message gained a placeholder, so its id changed
OLD = Kin(
    "aa86b42e8106993f",
    "AssertionError",
    "pp_max_micro_batch_size must be a positive integer or None (for auto-compute). Got: {}",
)
NEW = Kin(
    "9cf0172bd0a8a582",
    "AssertionError",
    "pp_max_micro_batch_size must be a positive integer or None (for auto-compute). "
    "Got: {cfg.pp_max_micro_batch_size}",
)
OTHER = Kin("1111111111111111", "ValueError", "--disable-cuda-graph-padding is incompatible")


def timeline() -> TimelineFacts:
    return TimelineFacts(
        points=(),
        present_in=("0.5.18",),
        first_seen="0.5.18",
        last_seen="0.5.18",
        gone_in="0.5.19",
        absent_before=None,
        changes=(),
        summary="Raised in 0.5.18; not raised since 0.5.19.",
    )


def test_a_reworded_message_in_the_same_function_carries_the_check_on() -> None:
    assert carried_by(OLD, [(OTHER, True), (NEW, False)]) == NEW.id
    assert carried_by(OLD, [(OTHER, True)]) is None


def test_an_assert_checking_the_same_thing_carries_it_on_whatever_its_words() -> None:
    a = Kin("a" * 16, "AssertionError", "", check="x.ndim  == 2")
    b = Kin("b" * 16, "AssertionError", "", check="x.ndim == 2")
    c = Kin("c" * 16, "AssertionError", "", check="x.ndim == 3")
    assert carried_by(a, [(c, True), (b, False)]) == b.id
    assert carried_by(a, [(c, True)]) is None


def test_no_upgrade_is_offered_when_the_check_lives_on() -> None:
    tl = timeline()
    ups, _ = history_fixes(tl, "sglang", ["0.5.18", "0.5.19"], "sglang")
    assert [u.kind for u in ups] == ["upgrade"]  # gone for good: upgrading helps
    carried = with_lineage(tl, NEW.id, None)
    ups, _ = history_fixes(carried, "sglang", ["0.5.18", "0.5.19"], "sglang")
    assert ups == []
    assert version_example(carried, "sglang", ["0.5.18", "0.5.19"], "unsupported") is None
    assert "still there" in carried.summary and NEW.id in carried.summary


def test_a_bare_raise_is_carried_on_only_by_the_same_files_function() -> None:
    a = Kin("a" * 16, "NotImplementedError", "")
    b = Kin("b" * 16, "NotImplementedError", "")
    assert carried_by(a, [(b, False)]) is None  # another `forward` somewhere else
    assert carried_by(a, [(b, True)]) == b.id
