"""Calibrated match scores in [0, 1].

The score is coverage x strength, then nudged by corroborating evidence:
- coverage: the share of the template's literal characters found in order. When the input ends
  inside the message (a UI or a paste cut it off), the pieces after the cut cannot be checked:
  coverage is then the share of the *visible* literal text found, and that score is scaled by
  `0.6 + 0.4 x` the share of the whole template shown, so a cut message still ranks but
  reaches 0.8 only when at least half of the template's literal text is shown;
- strength: how much literal text that is in absolute terms; a message of a dozen characters
  found in full is weak evidence (`1 - exp(-chars / 12)`: 20 chars -> 0.81, 40 -> 0.96);
- the exception class named just before the message (`ValueError: ...`) closes up to 35% of the
  remaining gap, and a traceback frame pinning one of the error's raise sites up to 50%, both
  scaled by the score so far; another class named there (`TypeError: ...`) costs 15%;
- a traceback whose innermost frame lies outside the error's project (the same words raised by
  `vllm/...` or `transformers/...`, which copy or wrap such messages) costs 40%; one inside
  the project whose function raises none of the error's sites costs as much, but only when it
  pins another error that reads the same words (`matcher._frames_decide`): alone, it may be a
  release that moved the raise and was not ingested.

So >= 0.8 means most of a substantial literal text is present in order, and < 0.5 is a guess
(`WEAK_BELOW`: the answers call it a weak guess, and drop it when a match above it exists).
An error that only the project's own tests raise loses 40% (`TEST_CODE_PENALTY`) unless the
text's traceback runs in a test (`matcher._ranked`).

A traceback whose message is missing (or too cut to align) can still name its error: its
innermost frame points at a raise line. `frame_score` rates that evidence alone: 0.55 for the
file and line, +0.15 when the frame's function is the raise's too, +0.1 when the exception's
class is named after the frame (so 0.8 at most: no message was read); when several errors are
raised on those lines, the score is divided by the square root of their number.
"""

from __future__ import annotations

import math

_STRENGTH_SCALE = 12.0
_CLASS_BOOST = 0.35
_OTHER_CLASS_PENALTY = 0.85
_FRAME_BOOST = 0.5
_FOREIGN_FRAME_PENALTY = 0.6
OTHER_FUNCTION_PENALTY = 0.6
_CUT_FLOOR = 0.6
WEAK_BELOW = 0.5  # a score under this is a weak guess
TEST_CODE_PENALTY = 0.6


def match_score(
    *,
    matched: int,
    literal_len: int,
    visible_len: int | None = None,
    class_named: bool = False,
    other_class_named: bool = False,
    pinned: bool = False,
    foreign_frame: bool = False,
) -> float:
    """The calibrated score of one alignment; `visible_len` is set when the input was cut."""
    if literal_len <= 0 or matched <= 0:
        return 0.0
    strength = 1.0 - math.exp(-matched / _STRENGTH_SCALE)
    whole = min(1.0, matched / literal_len)
    score = _corroborated(whole * strength, class_named, other_class_named, pinned)
    if visible_len:
        visible = min(1.0, matched / visible_len)
        cut_factor = _CUT_FLOOR + (1.0 - _CUT_FLOOR) * whole
        seen = _corroborated(visible * strength, class_named, other_class_named, pinned)
        score = max(score, seen * cut_factor)
    if foreign_frame:
        score *= _FOREIGN_FRAME_PENALTY
    return round(min(1.0, score), 4)


def _corroborated(score: float, class_named: bool, other_class_named: bool, pinned: bool) -> float:
    # Corroboration helps in proportion to what it corroborates: a named class or a pinned
    # frame cannot turn a few shared characters into a confident match.
    if class_named:
        score += (1.0 - score) * _CLASS_BOOST * score
    elif other_class_named:
        score *= _OTHER_CLASS_PENALTY
    if pinned:
        score += (1.0 - score) * _FRAME_BOOST * score
    return score


_FRAME_LINE = 0.55
_FRAME_FUNCTION = 0.15
_FRAME_CLASS = 0.1


def frame_score(*, function_named: bool, class_named: bool, sharing: int = 1) -> float:
    """The score of a match whose only evidence is a traceback frame on a raise line."""
    score = _FRAME_LINE + _FRAME_FUNCTION * function_named + _FRAME_CLASS * class_named
    return round(score / math.sqrt(max(sharing, 1)), 4)
