"""Every error's explanation in one snapshot of the shared test knowledge base, derived once per
version of the code and kept beside the knowledge base.

Deriving a whole release's explanations takes minutes (about 100 s of CPU for 0.5.23's 29,608
errors), and two modules check them: tests/e2e/test_knowledge_inputs_sglang.py (every snapshot)
and tests/e2e/test_knowledge_sglang.py (0.5.23). Like the knowledge base itself, they are kept in
a file keyed by a hash of all the code that decides them (errkb/, ingest/, knowledge/, service/,
migrations/, the pins), one per snapshot under a lock of its own, so two test processes share
each snapshot's derivation, and a run after an unchanged one reads them back. A change to any of
that code derives them again.
"""

from __future__ import annotations

import pickle
from pathlib import Path
from typing import NamedTuple

from kbcache import CACHE, ROOT, built_once, files_digest
from sqlalchemy.orm import Session

from errkb.service.entries.facts import snapshot_explanations
from errkb.service.entries.schemas import ExplanationOut

FOLDERS = ("errkb", "ingest", "knowledge", "service", "migrations")


class Explained(NamedTuple):
    """The error an explanation is of (the fields the checks read)."""

    id: str
    exception: str
    kind: str
    message: str


def code_digest() -> str:
    """A hash of every source file that decides an explanation, and the pins."""
    files = [ROOT / "errkb" / "pins.toml"]
    for folder in FOLDERS:
        files += sorted((ROOT / folder).rglob("*.py"))
    return files_digest(files)


def kept_explanations(session: Session, label: str) -> list[tuple[Explained, ExplanationOut]]:
    """`snapshot_explanations(session, label)` of the shared knowledge base (`session` reads a
    copy of it), derived once per code version."""

    def derive(partial: Path) -> None:
        rows = [
            (Explained(e.id, e.exception, e.kind, e.message), ex)
            for e, ex in snapshot_explanations(session, label)
        ]
        with open(partial, "wb") as out:
            pickle.dump(rows, out, protocol=pickle.HIGHEST_PROTOCOL)

    name = f"explanations-{label}"
    target = CACHE / f"{name}-{code_digest()}.pickle"
    with open(built_once(target, name, 1, derive), "rb") as kept:
        rows: list[tuple[Explained, ExplanationOut]] = pickle.load(kept)
    return rows
