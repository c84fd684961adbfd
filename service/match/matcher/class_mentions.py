"""A project's own exception class named where no message of it was read: its few raise sites,
as weak guesses.

sglang's `KVTransferError` prints `KVTransferError(bootstrap_room=N): <reason>`, and the reason
is often text the code stored earlier and raised later from a variable, which no template
holds. The class's name is then the only thing the text shows of the error. When the project
raises that class at a few sites only, each is offered, the newest first, with a score that
says it is a guess (see `score`: < 0.5). Built-in classes (`OSError`, `KeyError`) name nothing
of the project's own, and a class raised at many sites tells too little apart: neither is
offered.
"""

from __future__ import annotations

import builtins
from collections.abc import Iterable
from typing import TYPE_CHECKING

from errkb.service.match.matcher.mentions import Mention

if TYPE_CHECKING:
    from errkb.service.match.matcher.index import MatchIndex

FEW = 3  # entries of a class at most, to offer them all
SCORE = 0.3  # the newest; each older one a little less (STEP), so the order is the newest first
STEP = 0.01


def class_mentions(
    index: MatchIndex, words: Iterable[bytes], text: str, shown: set[str]
) -> list[Mention]:
    """Entries of the project classes the text names (`Name(` or `Name:`), unless one of
    `shown` (the classes of what was already found)."""
    out: list[Mention] = []
    for word in sorted(words):  # in order: alike whatever the hash seed
        members = index.classes.get(word)
        if members is None or len(members) > FEW:
            continue
        name = index.entries[next(iter(members))].exception
        if name in shown or _builtin(name):
            continue
        at = _named_at(text, name)
        if at < 0:
            continue
        newest = sorted(members, key=lambda e: _newest(index, e), reverse=True)
        for rank, e in enumerate(newest):
            out.append(Mention(e, round(SCORE - STEP * rank, 4), at, at + len(name)))
    return out


def _named_at(text: str, name: str) -> int:
    """Where the text names the class as an exception is printed, or -1."""
    at = text.find(name)
    while at >= 0:
        after = text[at + len(name) : at + len(name) + 1]
        before = text[at - 1 : at] if at else ""
        if after in ("(", ":") and not (before.isalnum() or before == "_"):
            return at
        at = text.find(name, at + 1)
    return -1


def _newest(index: MatchIndex, e: int) -> tuple[str, str]:
    entry = index.entries[e]
    return (entry.sites[-1].sort_key if entry.sites else "", entry.id)


def _builtin(name: str) -> bool:
    found = getattr(builtins, name, None)
    return isinstance(found, type) and issubclass(found, BaseException)
