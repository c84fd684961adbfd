"""Candidates for an entry's related errors, each from one indexed query.

- same function / class / file: occurrences of the shown snapshot in the same files
  (`ix_occurrences_snapshot_qualname` on snapshot, path, qualname);
- shared flag: `error_flags` by (snapshot, dest);
- similar message: the full-text index (`search_docs` with FTS5 or a GIN tsvector), any two of
  the message's five most distinctive words, then re-scored by word overlap.
`ingest.knowledge.related.rank_related` picks at most eight with a reason each.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from itertools import combinations

from sqlalchemy import func, select, text
from sqlalchemy.orm import Session

from errkb.core.models import Error, ErrorFlag, Occurrence
from errkb.core.search.terms import terms
from errkb.knowledge.facts import RelatedError
from errkb.knowledge.related import rank_related, similar, words

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
    rows = session.execute(
        select(
            Occurrence.error_id, Occurrence.path, Occurrence.line, Occurrence.qualname, Error.title
        )
        .join(Error, Error.id == Occurrence.error_id)
        .where(
            Occurrence.snapshot_id == snapshot_id,
            Occurrence.path.in_(paths),
            Occurrence.error_id != error_id,
        )
    ).all()
    funcs = {(p, q) for p, _, q in sites}
    classes = {(p, c) for p, _, q in sites if (c := _class_of(q))}
    lines = defaultdict(list)
    for p, line, _ in sites:
        lines[p].append(line)
    out = []
    for r in sorted(rows, key=lambda r: min(abs(r.line - x) for x in lines[r.path])):
        if (r.path, r.qualname) in funcs:
            reason = "same function"
        elif (r.path, _class_of(r.qualname)) in classes:
            reason = "same class"
        else:
            reason = "same file"
        out.append(RelatedError(r.error_id, r.title, reason))
    return out


def _flag_candidates(
    session: Session, error_id: str, snapshot_id: int, flags: dict[str, str]
) -> list[RelatedError]:
    """Errors involving the same flags in the snapshot, most shared flags first."""
    if not flags:
        return []
    where = (
        ErrorFlag.snapshot_id == snapshot_id,
        ErrorFlag.dest.in_(sorted(flags)),
        ErrorFlag.error_id != error_id,
    )
    shared_count = func.count().label("n")
    top = session.execute(
        select(ErrorFlag.error_id, shared_count)
        .where(*where)
        .group_by(ErrorFlag.error_id)
        .order_by(shared_count.desc(), ErrorFlag.error_id)
        .limit(MAX_FLAG_CANDIDATES)
    ).all()
    if not top:
        return []
    ids = [r.error_id for r in top]
    shared: dict[str, list[str]] = defaultdict(list)
    titles = {}
    rows = session.execute(
        select(ErrorFlag.error_id, ErrorFlag.dest, Error.title)
        .join(Error, Error.id == ErrorFlag.error_id)
        .where(*where, ErrorFlag.error_id.in_(ids))
    ).all()
    for r in rows:
        shared[r.error_id].append(flags[r.dest])
        titles[r.error_id] = r.title
    ranked = sorted(shared, key=lambda i: (-len(shared[i]), titles[i]))
    return [RelatedError(i, titles[i], "shares " + ", ".join(sorted(shared[i]))) for i in ranked]


def _query_words(message: str) -> list[str]:
    """The message's most distinctive words (longest first) in the indexed form."""
    counts = Counter(t for t in terms(" ".join(sorted(words(message)))) if len(t) > 2)
    return sorted(counts, key=lambda w: (-len(w), w))[:MAX_QUERY_WORDS]


def _text_candidates(
    session: Session, error_id: str, repo_id: int, message: str
) -> list[RelatedError]:
    """Errors of the same repo whose messages share the most distinctive words."""
    query_words = _query_words(message)
    # Any two of the distinctive words: as precise as a phrase search, and the index only
    # ranks documents sharing two words instead of every one sharing a common word.
    pairs: list[tuple[str, ...]] = list(combinations(query_words, 2)) or [(w,) for w in query_words]
    if not pairs:
        return []
    if session.get_bind().dialect.name == "postgresql":
        q = " | ".join("(" + " & ".join(f"{w}:A" for w in pair) + ")" for pair in pairs)
        sql = text(
            "SELECT error_id FROM search_docs WHERE tsv @@ to_tsquery('simple', :q) "
            "ORDER BY ts_rank(tsv, to_tsquery('simple', :q)) DESC, sort_key LIMIT :n"
        )
    else:
        q = (
            "{message_terms} : ("
            + " OR ".join("(" + " AND ".join(f'"{w}"' for w in pair) + ")" for pair in pairs)
            + ")"
        )
        sql = text(
            "SELECT d.error_id FROM search_fts JOIN search_docs d ON d.id = search_fts.rowid "
            "WHERE search_fts MATCH :q ORDER BY search_fts.rank, d.sort_key LIMIT :n"
        )
    ids = [r[0] for r in session.execute(sql, {"q": q, "n": MAX_TEXT_CANDIDATES + 1})]
    ids = [i for i in ids if i != error_id]
    if not ids:
        return []
    rows = session.execute(
        select(Error.id, Error.title, Error.message).where(
            Error.id.in_(ids), Error.repo_id == repo_id
        )
    ).all()
    return similar(message, [(r.id, r.title, r.message) for r in rows])


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
