"""Score calibration: what 0.8 and 0.5 mean, and how corroborating evidence moves a score."""

from __future__ import annotations

from errkb.service.match.matcher.score import match_score


def test_a_long_message_shown_in_full_is_confident() -> None:
    assert match_score(matched=60, literal_len=60) >= 0.95
    assert match_score(matched=25, literal_len=25) >= 0.8


def test_a_few_characters_are_a_guess_even_in_full() -> None:
    assert match_score(matched=7, literal_len=7) < 0.5
    assert match_score(matched=12, literal_len=12) < 0.8


def test_most_literal_text_is_needed_for_0_8() -> None:
    assert match_score(matched=80, literal_len=100) >= 0.79
    assert match_score(matched=60, literal_len=100) < 0.65
    assert match_score(matched=30, literal_len=100) < 0.5


def test_score_grows_with_matched_text() -> None:
    scores = [match_score(matched=m, literal_len=100) for m in range(0, 101, 5)]
    assert scores == sorted(scores) and scores[0] == 0.0 and scores[-1] <= 1.0


def test_a_cut_message_scores_its_visible_part_but_stays_below_a_full_one() -> None:
    plain = match_score(matched=40, literal_len=200)
    cut = match_score(matched=40, literal_len=200, visible_len=42)
    full = match_score(matched=200, literal_len=200)
    assert plain < 0.25 < cut < 0.8 < full
    most = match_score(matched=150, literal_len=200, visible_len=150)
    assert most >= 0.8


def test_named_class_and_pinned_frame_raise_and_other_class_lowers() -> None:
    base = match_score(matched=20, literal_len=24)
    named = match_score(matched=20, literal_len=24, class_named=True)
    other = match_score(matched=20, literal_len=24, other_class_named=True)
    pinned = match_score(matched=20, literal_len=24, class_named=True, pinned=True)
    assert other < base < named < pinned <= 1.0
    weak = match_score(matched=5, literal_len=40)
    assert match_score(matched=5, literal_len=40, class_named=True, pinned=True) < 0.2 + weak


def test_a_frame_from_another_project_costs_confidence() -> None:
    full = match_score(matched=100, literal_len=100)
    assert match_score(matched=100, literal_len=100, foreign_frame=True) < 0.8 <= full
