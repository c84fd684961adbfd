"""Sites a text names in prose, with no traceback frame: an assert quoted, a loader named.

People retell errors as often as they paste them. An issue title like "AssertionError: assert
self.being_chunked_req is None", or a sentence like "Assertion `assert self.chunked_req is None`
in line 1839 of scheduler.py is triggered", names a message-less assert by its source, which is
all a traceback would have shown of it. A `KeyError: 'model.layers.0.k_scale'` whose text says
it happened in `Gemma3ForCausalLM.load_weights` names the missing-key lookup by its function.
Neither has a frame for `frame_matches` to read, so they are found here: long enough assert
statements by their squeezed source, lookups by the qualified name of their function.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from errkb.service.match.matcher.normalize import Prepared
from errkb.service.match.matcher.statements import unquoted

if TYPE_CHECKING:
    from errkb.service.match.matcher.index import CompiledTemplate

_ASSERT = "assert"
_HEAD = len(_ASSERT) + 12  # squeezed characters an assert statement is looked up by
_MIN_STATEMENT = _HEAD + 4  # shorter checks (`assertx>0`) tell too little apart
_MAX_LOOKS = 64  # occurrences of "assert" read at most per text
_MAX_KEY_ERRORS = 8  # KeyError lines whose surroundings are read for a loader's name
_QUALNAME_REACH = 3000  # characters around a KeyError line searched for a loader's name
_ASSERT_SCORE = 0.7
_LOOKUP_SCORE = 0.6
_CLASS_NAMED = 0.1  # the exception's class named anywhere in the text
_IDENT = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.")


@dataclass(frozen=True)
class Mentions:
    """Lookup tables of the sites that prose can name."""

    # First `_HEAD` characters of an assert statement -> (statement, entry) of those asserts.
    asserts: Mapping[str, tuple[tuple[str, int], ...]]
    # A missing-key lookup's qualified function name (`Gemma3ForCausalLM.load_weights`) ->
    # the lookup entries raised there.
    lookups: Mapping[str, tuple[int, ...]]


@dataclass(frozen=True, slots=True)
class Mention:
    """An entry named in prose, with how sure that is and where in the input."""

    entry: int
    score: float
    start: int  # input offsets of what names it
    end: int


def build_mentions(entries: Sequence[CompiledTemplate]) -> Mentions:
    """The tables for `mentions`, from the compiled entries."""
    asserts: dict[str, set[tuple[str, int]]] = {}
    lookups: dict[str, set[int]] = {}
    for e, entry in enumerate(entries):
        statement = entry.statement
        if statement.startswith(_ASSERT) and len(statement) >= _MIN_STATEMENT:
            asserts.setdefault(statement[:_HEAD], set()).add((statement, e))
        elif statement and entry.exception == "KeyError":
            for site in entry.sites:
                if "." in site.qualname:
                    lookups.setdefault(site.qualname, set()).add(e)
    return Mentions(
        asserts={k: tuple(sorted(v)) for k, v in asserts.items()},
        lookups={k: tuple(sorted(v)) for k, v in lookups.items()},
    )


def mentions(table: Mentions, entries: Sequence[CompiledTemplate], prep: Prepared) -> list[Mention]:
    """The entries the text names in prose, best first; each entry once."""
    found = _assert_mentions(table, entries, prep) + _lookup_mentions(table, prep.text)
    best: dict[int, Mention] = {}
    for m in found:
        if m.entry not in best or best[m.entry].score < m.score:
            best[m.entry] = m
    return sorted(best.values(), key=lambda m: (-m.score, m.start, m.entry))


def _in_named_files(
    found: list[tuple[str, int]], entries: Sequence[CompiledTemplate], text: str
) -> list[tuple[str, int]]:
    """Those of `found` raised in a file whose name the text mentions."""
    return [
        (statement, e)
        for statement, e in found
        if any(s.module_path.rsplit("/", 1)[-1] in text for s in entries[e].sites)
    ]


def _assert_mentions(
    table: Mentions, entries: Sequence[CompiledTemplate], prep: Prepared
) -> list[Mention]:
    if not table.asserts:
        return []
    squeezed = prep.squeezed
    named = "AssertionError" in squeezed
    out: list[Mention] = []
    at = squeezed.find(_ASSERT)
    for _ in range(_MAX_LOOKS):
        if at < 0:
            break
        # Compared without quotes, as `statements` stores them (authors and `ast` quote apart).
        plain = unquoted(squeezed[at : at + 4 * _HEAD + 400])
        candidates = table.asserts.get(plain[:_HEAD], ())
        same = [(statement, e) for statement, e in candidates if plain.startswith(statement)]
        if len(same) > 1:  # the text may name the file: "in line 1839 of .../scheduler.py"
            same = _in_named_files(same, entries, prep.text) or same
        if same:
            # One statement in several files: the text cannot tell which (twins in one file's
            # functions are one check repeated, and the page lists each of them).
            files = {s.module_path for _, e in same for s in entries[e].sites}
            score = round((_ASSERT_SCORE + _CLASS_NAMED * named) / math.sqrt(len(files)), 4)
            end = prep.end_to_input(_past(squeezed, at, len(same[0][0])))
            out += [Mention(e, score, prep.to_input(at), end) for _, e in same]
        at = squeezed.find(_ASSERT, at + len(_ASSERT))
    return out


def _past(squeezed: str, at: int, length: int) -> int:
    """The squeezed offset just past `length` characters from `at`, quotes not counted."""
    k = at
    while length > 0 and k < len(squeezed):
        if squeezed[k] not in "'\"":
            length -= 1
        k += 1
    return k


def _lookup_mentions(table: Mentions, text: str) -> list[Mention]:
    if not table.lookups:
        return []
    out: list[Mention] = []
    at = text.find("KeyError")
    for _ in range(_MAX_KEY_ERRORS):
        if at < 0:
            break
        window = text[max(0, at - _QUALNAME_REACH) : at + _QUALNAME_REACH]
        line_end = text.find("\n", at)
        end = len(text) if line_end < 0 else line_end
        for name in _dotted_names(window):
            hits = table.lookups.get(name, ())
            for e in hits:
                score = round((_LOOKUP_SCORE + _CLASS_NAMED) / math.sqrt(len(hits)), 4)
                out.append(Mention(e, score, at, end))
        at = text.find("KeyError", at + 8)
    return out


def _dotted_names(window: str) -> set[str]:
    """The dotted identifiers of a stretch of text (`Gemma3ForCausalLM.load_weights`)."""
    names: set[str] = set()
    start = -1
    for i, ch in enumerate(window + " "):
        if ch in _IDENT:
            if start < 0:
                start = i
            continue
        if start >= 0:
            word = window[start:i].strip(".")
            if "." in word:
                parts = word.split(".")
                names.update(".".join(parts[k:]) for k in range(len(parts) - 1))
            start = -1
    return names
