"""Related errors, ranked with a reason each: same function, shared flag, same class or file,
similar message. Candidates come from indexed queries in the service; this ranks them (pure).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from errkb.knowledge.facts import RelatedError

MAX_RELATED = 8
# Reason kinds in rank order, and how many of each are taken before the rest fill up the list,
# so one big file's siblings do not crowd out the errors sharing a flag.
QUOTAS = (
    ("same function", 8),
    ("shares", 3),
    ("same class", 2),
    ("same file", 2),
    ("similar message", 2),
)
_SEPARATORS = {c: " " for c in range(128) if not chr(c).isalnum()}
_STOP = frozenset("a an the of to in on for is are be not with and or by it this that".split())


def words(text: str) -> set[str]:
    """Lowercase alphanumeric words of a message, without placeholders and stop words."""
    literal = "".join(part.split("}", 1)[-1] for part in text.split("{"))
    folded = literal.lower().translate(_SEPARATORS)
    return {w for w in folded.split() if len(w) > 1 and w not in _STOP}


def similarity(a: str, b: str) -> float:
    """Jaccard similarity of two messages' words."""
    wa, wb = words(a), words(b)
    return len(wa & wb) / len(wa | wb) if wa and wb else 0.0


def reason_words(reason: str, *, before: bool | None = None, activity: str | None = None) -> str:
    """Why a related error is worth reading, as a sentence part: "raised just before this one,
    while initializing pools", "the same flag (--tp-size) also leads to it"."""
    if reason == "same function":
        where = {True: "just before this one", False: "just after this one", None: "nearby"}
        said = f"raised {where[before]} in the same function"
        return said + (f", while {activity}" if activity else "")
    if reason.startswith("shares "):
        flags = reason.removeprefix("shares ")
        one = "," not in flags
        return f"the same flag{'' if one else 's'} ({flags}) also lead{'s' if one else ''} to it"
    return {
        "same class": "raised by the same class, for another of its checks",
        "same file": "raised in the same file",
        "similar message": "its message is worded much like this one",
    }.get(reason, reason)


def _kind(reason: str) -> str:
    return reason.split(" ", 1)[0] if reason.startswith("shares") else reason


def rank_related(
    self_id: str, candidates: Iterable[RelatedError], limit: int = MAX_RELATED
) -> list[RelatedError]:
    """At most `limit` related errors, never `self_id`, best reason first, each error once."""
    order = [k for k, _ in QUOTAS]
    best: dict[str, RelatedError] = {}
    for c in candidates:
        if c.id == self_id:
            continue
        known = best.get(c.id)
        if known is None or order.index(_kind(c.reason)) < order.index(_kind(known.reason)):
            best[c.id] = c
    by_kind: dict[str, list[RelatedError]] = {k: [] for k in order}
    titles: set[str] = set()
    for c in best.values():  # insertion order = the caller's ranking within a kind
        if c.title in titles:
            continue  # distinct errors that read the same add nothing to the list
        titles.add(c.title)
        by_kind[_kind(c.reason)].append(c)
    picked: list[RelatedError] = []
    for kind, quota in QUOTAS:
        picked += by_kind[kind][:quota]
    rest = [c for k in order for c in by_kind[k] if c not in picked]
    picked += rest[: max(0, limit - len(picked))]
    picked = picked[:limit]
    return sorted(picked, key=lambda c: order.index(_kind(c.reason)))


SIMILAR = 0.3  # the word overlap (Jaccard) from which a message counts as similar


def similar(
    message: str, others: Sequence[tuple[str, str, str]], threshold: float = SIMILAR
) -> list[RelatedError]:
    """(id, title, message) candidates whose message is similar enough, most similar first."""
    scored = [(similarity(message, m), i, t) for i, t, m in others]
    return [
        RelatedError(i, t, "similar message", reason_words("similar message"))
        for s, i, t in sorted(scored, key=lambda x: -x[0])
        if s >= threshold
    ]
