"""The order of a search's hits within a relevance tier, computed from what the index stores.

It applies to a search with words or a flag filter; a listing by module, version or class alone
keeps the index's order (message, then id), read a page at a time.

A tier says which fields matched (the query as a phrase in the message, every phrase in the
message, paths or flags only). Within one, hits are ordered by:
- test code last: an error raised only in the project's own tests (every path, by knowledge's
  rule) follows every error of the code a server runs;
- how well the error matches: the query's words as a share of the message's words, so the
  message that is about the query comes before a long one that mentions it, with a bonus when
  the error involves the flag the query names;
- a message to read before none (a message-less assert says only its condition);
- the newest release that raises it, newest first;
- the index's global key (message, then id).
Every feature is read from the stored documents and occurrences, never from a backend's own
score, so SQLite and PostgreSQL order alike.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

from errkb.core.search.terms import Phrase

_FLAG_BONUS = 1.0  # a share of the message is at most 1: the flag named outranks any share


@dataclass(frozen=True)
class Hit:
    """One hit as the ranking reads it."""

    error_id: str
    tier: int
    sort_key: int
    has_message: bool
    message_terms: str = ""  # read only when the query has words to weigh
    flag_key: str = ""


@dataclass(frozen=True)
class Places:
    """Where an error is raised, as the order reads it."""

    test_only: bool  # every path is in the project's own tests
    newest: int  # the newest release raising it, as its rank among the snapshots


def relevance(phrases: tuple[Phrase, ...], hit: Hit, flags: Iterable[str]) -> float:
    """How much of the message the query's words make up (each of the message's words counted
    once per query word it equals), plus a bonus when the error involves a flag it names."""
    words = hit.message_terms.split()
    asked = {w for p in phrases for w in p.words}
    score = 0.0
    if words:
        shown = sum(1 for w in words if w in asked)
        score = round(shown / math.sqrt(len(words)) / math.sqrt(max(len(asked), 1)), 6)
    if any(f"|{flag}|" in hit.flag_key for flag in flags):
        score += _FLAG_BONUS
    return score


def ranked(
    hits: list[Hit],
    phrases: tuple[Phrase, ...],
    places: dict[str, Places],
    flags: tuple[str, ...] = (),
) -> list[Hit]:
    """The hits in the documented order (see the module's docstring)."""
    nowhere = Places(False, -1)
    weigh = bool(phrases or flags)

    def key(hit: Hit) -> tuple[bool, int, float, bool, int, int]:
        where = places.get(hit.error_id, nowhere)
        return (
            where.test_only,
            hit.tier,
            -relevance(phrases, hit, flags) if weigh else 0.0,
            not hit.has_message,
            -where.newest,
            hit.sort_key,
        )

    return sorted(hits, key=key)


def query_flags(phrases: tuple[Phrase, ...]) -> tuple[str, ...]:
    """The flag names a query may mean: each phrase as `--words-joined-by-dashes`."""
    return tuple(dict.fromkeys("--" + "-".join(p.words) for p in phrases if p.words))
