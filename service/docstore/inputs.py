"""What an entry doc is built from, hashed: a doc is rebuilt only when this hash moves.

An entry reads its error row, its repo, every occurrence of the error, the repo's snapshots
around the error's life (the one before it first appears to the one after it last does: the
timeline, the version fixes and the line runs read nothing further), the shown snapshot's flags
and related errors, and the code that derives the prose. So the hash covers:

- the knowledge code's version: a hash of the source of `errkb.knowledge` and of the modules
  that assemble an entry, so changed rules rebuild every doc, and only they do;
- the settings variant (public URL, AI model);
- the error and repo fields, every occurrence (place and body hash), and the window of
  snapshots; the shown snapshot is the newest of them, and a stored snapshot never changes, so
  its flags and its same-file and shared-flag neighbours are covered by its id;
- the titles of the related errors the doc names (stored with the doc).

A second hash, `stable_inputs`, leaves out how far the error's newest run of releases reaches
and the line numbers: it holds when a new release raises the error from the same code in the
same functions as the release before did, so its doc only gains a version and perhaps shifted
lines. A build can leave those docs for later (on first request, or the background build), and
rebuild at once only those whose content moved.

Related errors by similar message come from the whole repo, so a new error can join them.
`neighbours_of_new` finds the docs a new error may change that way; those are rebuilt too.
AI prose is not hashed: `errkb explain` deletes the doc of the error it changes.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from functools import cache
from itertools import combinations
from pathlib import Path
from typing import Any

import errkb.core.records
import errkb.knowledge
import errkb.service.entries
from errkb.core.search.terms import terms
from errkb.knowledge.history.related import SIMILAR, similarity
from errkb.service.entries.related import MAX_TEXT_CANDIDATES, query_words

# The modules besides `errkb.knowledge` whose code shapes an entry's JSON.
_ENTRY_CODE = (
    "build",
    "facts",
    "histories",
    "history_out",
    "schemas",
    "ai",
)


@cache
def knowledge_version() -> str:
    """A hash of the code that derives entries: it moves exactly when that code changes."""
    digest = hashlib.sha256()
    knowledge = Path(errkb.knowledge.__file__).parent
    here = Path(errkb.service.entries.__file__).parent
    core = Path(errkb.core.records.__file__).parent
    files = sorted(knowledge.rglob("*.py")) + [here / f"{m}.py" for m in _ENTRY_CODE]
    files += sorted((here / "lineage").glob("*.py")) + sorted((here / "related").glob("*.py"))
    files += [core / "records.py", core / "flag_catalog.py"]
    for path in files:
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


def _h(*parts: object) -> str:
    # repr of tuples of str, int and None is exact and stable, and several times cheaper than
    # JSON for the hundreds of thousands of occurrences of a whole history.
    return hashlib.sha256(repr(parts).encode()).hexdigest()[:32]


def repo_digest(repo: Any) -> str:
    """The repo fields an entry reads."""
    vocabulary = json.dumps(repo.vocabulary, sort_keys=True, default=str)
    return _h(repo.name, repo.web_url, repo.pypi_name, repo.launch_command, vocabulary)


class Timeline:
    """A repo's snapshots in version order, each as a short digest of what entries read of it."""

    def __init__(self, snapshots: Sequence[Any]) -> None:
        self.position = {s.id: i for i, s in enumerate(snapshots)}
        self.digests = [
            _h(s.id, s.label, s.kind, s.commit, str(s.date), s.link_base) for s in snapshots
        ]

    def runs(self, occurrences: Sequence[tuple[Any, ...]]) -> list[tuple[object, ...]]:
        """The error's life as runs of consecutive snapshots where it is raised from the same
        code (`occurrences`: (snapshot id, place...) tuples), each with the digests of its first
        and last snapshot; a run that reaches the newest snapshot ends in "newest", so a release
        that extends it changes nothing here."""
        at: dict[int, list[tuple[Any, ...]]] = {}
        for o in occurrences:
            at.setdefault(self.position[o[0]], []).append(o[1:])
        newest = len(self.digests) - 1
        out: list[tuple[object, ...]] = []
        start = last = -2
        places: list[tuple[Any, ...]] = []
        for position in sorted(at):
            here = sorted(at[position])
            if position != last + 1 or here != places:
                if start >= 0:
                    out.append((tuple(places), self.digests[start], self.digests[last]))
                start, places = position, here
            last = position
        if start >= 0:
            end = "newest" if last == newest else self.digests[last]
            out.append((tuple(places), self.digests[start], end))
        if 0 <= last < newest:  # the release it is gone in
            out.append(("gone in", self.digests[last + 1]))
        return out

    def window(self, present: Iterable[int]) -> list[str]:
        """The snapshots from the one before the error's first to the one after its last."""
        at = [self.position[i] for i in present]
        if not at:
            return []
        return self.digests[max(0, min(at) - 1) : max(at) + 2]


def _fields(error: Any) -> tuple[object, ...]:
    """The error's own fields an entry shows."""
    return (error.id, error.message, error.title, error.exception, error.form, error.template)


def own_inputs(
    error: Any,
    repo: str,
    occurrences: Sequence[Any],
    timeline: Timeline,
    variant: str,
) -> str:
    """The hash of one error's own inputs (see the module docstring); `occurrences` in any order."""
    occs = sorted(
        (o.snapshot_id, o.path, o.line, o.end_line, o.qualname, o.body_hash) for o in occurrences
    )
    near = timeline.window({o[0] for o in occs})
    return _h(knowledge_version(), variant, repo, _fields(error), occs, near)


def stable_inputs(
    error: Any,
    repo: str,
    occurrences: Sequence[Any],
    timeline: Timeline,
    variant: str,
) -> str:
    """`own_inputs` without the reach of the newest run of releases and without line numbers
    (see the module docstring)."""
    occs = [(o.snapshot_id, o.path, o.qualname, o.body_hash) for o in occurrences]
    first = min((timeline.position[o[0]] for o in occs), default=0)
    before = timeline.digests[first - 1] if first > 0 else None
    return _h(knowledge_version(), variant, repo, _fields(error), timeline.runs(occs), before)


def related_ids(text: str | None) -> list[str]:
    """The related error ids stored with a doc."""
    return [i for i in (text or "").split(",") if i]


def doc_inputs(own: str, related: Iterable[str], titles: dict[str, str]) -> str:
    """The full inputs hash: the error's own inputs and its related errors' titles."""
    return _h(own, [(i, titles.get(i)) for i in related])


def _pairs(message: str) -> list[tuple[str, ...]]:
    words = query_words(message)
    return list(combinations(words, 2)) or [(w,) for w in words]


def neighbours_of_new(
    candidates: dict[str, str], messages: dict[str, str], new: set[str]
) -> set[str]:
    """Of `candidates` (id: message), those whose similar errors a new error (an id in `new`;
    `messages` holds every error's) may change.

    Mirrors `related._text_candidates`: the errors whose messages hold a pair of the doc's
    distinctive words are ranked by the index, the first `MAX_TEXT_CANDIDATES` of them kept,
    and those at least `SIMILAR` alike listed. A new error that answers the query changes the
    list when it is alike enough, or when the query had more answers than are kept (the new
    one may push another out)."""
    if not new:
        return set()
    ids = list(messages)
    holders: dict[str, set[int]] = {}
    for n, error_id in enumerate(ids):
        for term in set(terms(messages[error_id])):
            holders.setdefault(term, set()).add(n)
    fresh = {n for n, error_id in enumerate(ids) if error_id in new}
    out = set()
    for error_id, message in candidates.items():
        answers: set[int] = set()
        for pair in _pairs(message):
            found = holders.get(pair[0], set())
            for word in pair[1:]:
                found = found & holders.get(word, set())
            answers |= found
        arrived = answers & fresh
        if arrived and (
            len(answers) > MAX_TEXT_CANDIDATES + 1  # itself among them
            or any(similarity(message, messages[ids[n]]) >= SIMILAR for n in arrived)
        ):
            out.add(error_id)
    return out
