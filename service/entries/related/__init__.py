"""Candidates for an entry's related errors, each from one indexed query.

- same function / class / file: occurrences of the shown snapshot in the same files
  (`ix_occurrences_snapshot_qualname` on snapshot, path, qualname);
- shared flag: `error_flags` by (snapshot, dest);
- similar message: the full-text index (`search_docs` with FTS5 or a GIN tsvector), any two of
  the message's five most distinctive words, then re-scored by word overlap.
`errkb.knowledge.history.related.rank_related` picks at most eight with a reason each.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from itertools import combinations

from errkb.core.search.terms import terms
from errkb.knowledge.facts import RelatedError
from errkb.knowledge.history.related import rank_related, reason_words, similar, words
from errkb.knowledge.words.wording import activity
from errkb.service.dialect import message_matches
from errkb.service.entries.related.queries import error_messages, same_file_rows, shared_flag_rows
from errkb.service.queries import DbSession as Session

MAX_FLAG_CANDIDATES = 40
MAX_TEXT_CANDIDATES = 30
MAX_QUERY_WORDS = 5


def _class_of(qualname: str) -> str | None:
    head = qualname.rsplit(".", 1)[0] if "." in qualname else ""
    return head if head[:1].isupper() and "<" not in head else None


def _site_candidates(
    session: Session, error_id: str, snapshot_id: int, sites: Sequence[tuple[str, int, str]]
) -> list[RelatedError]:
    """Same function, same class, same file, nearest lines first."""
    paths = sorted({p for p, _, _ in sites})
    rows = same_file_rows(session, error_id, snapshot_id, paths)
    funcs = {(p, q) for p, _, q in sites}
    classes = {(p, c) for p, _, q in sites if (c := _class_of(q))}
    lines = defaultdict(list)
    for p, line, _ in sites:
        lines[p].append(line)
    out = []
    for r in sorted(rows, key=lambda r: min(abs(r.line - x) for x in lines[r.path])):
        before = None
        if (r.path, r.qualname) in funcs:
            reason = "same function"
            nearest = min(lines[r.path], key=lambda x: abs(r.line - x))
            before = r.line < nearest if r.line != nearest else None
        elif (r.path, _class_of(r.qualname)) in classes:
            reason = "same class"
        else:
            reason = "same file"
        detail = reason_words(reason, before=before, activity=activity(r.qualname))
        out.append(RelatedError(r.error_id, r.title, reason, detail))
    return out


def _flag_candidates(
    session: Session, error_id: str, snapshot_id: int, flags: dict[str, str]
) -> list[RelatedError]:
    """Errors involving the same flags in the snapshot, most shared flags first."""
    if not flags:
        return []
    shared: dict[str, list[str]] = defaultdict(list)
    titles = {}
    for error, dest, title in shared_flag_rows(
        session, error_id, snapshot_id, sorted(flags), MAX_FLAG_CANDIDATES
    ):
        shared[error].append(flags[dest])
        titles[error] = title
    ranked = sorted(shared, key=lambda i: (-len(shared[i]), titles[i]))
    reasons = {i: "shares " + ", ".join(sorted(shared[i])) for i in ranked}
    return [RelatedError(i, titles[i], reasons[i], reason_words(reasons[i])) for i in ranked]


def query_words(message: str) -> list[str]:
    """The message's most distinctive words (longest first) in the indexed form."""
    counts = Counter(t for t in terms(" ".join(sorted(words(message)))) if len(t) > 2)
    return sorted(counts, key=lambda w: (-len(w), w))[:MAX_QUERY_WORDS]


def _text_candidates(
    session: Session, error_id: str, repo_id: int, message: str
) -> list[RelatedError]:
    """Errors of the same repo whose messages share the most distinctive words."""
    distinctive = query_words(message)
    # Any two of the distinctive words: as precise as a phrase search, and the index only
    # ranks documents sharing two words instead of every one sharing a common word.
    pairs: list[tuple[str, ...]] = list(combinations(distinctive, 2)) or [(w,) for w in distinctive]
    if not pairs:
        return []
    ids = [i for i in message_matches(session, pairs, MAX_TEXT_CANDIDATES + 1) if i != error_id]
    if not ids:
        return []
    return similar(message, error_messages(session, ids, repo_id))


def related_errors(
    session: Session,
    *,
    error_id: str,
    repo_id: int,
    message: str,
    snapshot_id: int,
    sites: Sequence[tuple[str, int, str]],
    flags: dict[str, str],
) -> list[RelatedError]:
    """At most eight related errors of one error in one snapshot, with a reason each."""
    candidates = _site_candidates(session, error_id, snapshot_id, sites)
    candidates += _flag_candidates(session, error_id, snapshot_id, flags)
    candidates += _text_candidates(session, error_id, repo_id, message)
    return rank_related(error_id, candidates)
