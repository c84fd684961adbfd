"""Browsing the knowledge base by module (folder tree with counts) and by command-line flag.

The tree and the flag counts are built in Python from (path, error id) and (flag, error id) pairs
read once: simple, identical on both backends, and reusable by the static export, which walks
every folder and flag without a query per page.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Row, func, select
from sqlalchemy.orm import Session

from errkb.core.models import Error, Flag, Occurrence, SiteBody, Snapshot
from errkb.core.search.index import involved_flag_names


@dataclass(frozen=True)
class ModuleNode:
    """A folder or file under a folder, with how many distinct errors are raised inside it."""

    name: str
    path: str
    is_file: bool
    errors: int


@dataclass
class ModuleTree:
    """Every folder and file that raises an error, with the distinct errors under each."""

    under: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    children: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    files: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))

    def add(self, path: str, error_id: str) -> None:
        """Count one (file path, error) pair in the file and every folder above it."""
        self.files[path].add(error_id)
        parts = path.split("/")
        for i in range(len(parts)):
            folder = "/".join(parts[:i])
            self.under[folder].add(error_id)
            self.children[folder].add("/".join(parts[: i + 1]))

    def is_folder(self, path: str) -> bool:
        return path in self.children

    def listing(self, path: str) -> list[ModuleNode]:
        """The folders first, then the files, directly under `path`, by name."""
        nodes = []
        for child in self.children.get(path, ()):
            is_file = child in self.files and child not in self.children
            count = len(self.files[child]) if is_file else len(self.under[child])
            nodes.append(ModuleNode(child.rsplit("/", 1)[-1], child, is_file, count))
        return sorted(nodes, key=lambda n: (n.is_file, n.name))


def module_tree(session: Session, snapshot: str | None = None) -> ModuleTree:
    """The module tree of every snapshot, or of the one labelled `snapshot`."""
    stmt = select(Occurrence.path, Occurrence.error_id).distinct()
    if snapshot:
        stmt = stmt.join(Snapshot, Snapshot.id == Occurrence.snapshot_id).where(
            Snapshot.label == snapshot
        )
    tree = ModuleTree()
    for path, error_id in session.execute(stmt):
        tree.add(path, error_id)
    return tree


def crumbs(path: str) -> list[tuple[str, str]]:
    """(name, path) of each folder from the root down to `path`."""
    parts = [p for p in path.split("/") if p]
    return [(part, "/".join(parts[: i + 1])) for i, part in enumerate(parts)]


@dataclass(frozen=True)
class FlagSummary:
    """A flag involved in at least one error, with its newest definition."""

    flag: str
    errors: int
    help: str | None
    default: str | None


def flag_errors(session: Session, snapshot: str | None = None) -> dict[str, set[str]]:
    """Flag name -> ids of the errors involving it (in `snapshot`, or in any)."""
    stmt = select(Occurrence.error_id, SiteBody.flags).join(
        SiteBody, SiteBody.hash == Occurrence.body_hash
    )
    if snapshot:
        stmt = stmt.join(Snapshot, Snapshot.id == Occurrence.snapshot_id).where(
            Snapshot.label == snapshot
        )
    out: dict[str, set[str]] = defaultdict(set)
    for error_id, involvements in session.execute(stmt):
        for name in involved_flag_names(involvements):
            out[name].add(error_id)
    return out


def flag_definitions(session: Session, names: list[str] | None = None) -> dict[str, list[Flag]]:
    """Flag name -> its definitions, newest snapshot first."""
    stmt = select(Flag, Snapshot.label, Snapshot.sort_key).join(
        Snapshot, Snapshot.id == Flag.snapshot_id
    )
    if names is not None:
        stmt = stmt.where(Flag.name.in_(names))
    out: dict[str, list[tuple[str, Flag]]] = defaultdict(list)
    for flag, _label, sort_key in session.execute(stmt):
        out[flag.name].append((sort_key, flag))
    return {
        n: [f for _, f in sorted(v, key=lambda kv: kv[0], reverse=True)] for n, v in out.items()
    }


def flag_summaries(session: Session, snapshot: str | None = None) -> list[FlagSummary]:
    """Every involved flag with its error count and newest help, most errors first."""
    errors = flag_errors(session, snapshot)
    defs = flag_definitions(session, sorted(errors))
    out = []
    for name, ids in errors.items():
        newest = defs.get(name, [None])[0]
        out.append(
            FlagSummary(
                name,
                len(ids),
                newest.help if newest else None,
                newest.default if newest else None,
            )
        )
    return sorted(out, key=lambda s: (-s.errors, s.flag))


def snapshot_labels(session: Session) -> list[str]:
    """Every ingested snapshot label, oldest first."""
    rows = session.execute(select(Snapshot.label, Snapshot.sort_key)).all()
    return [label for label, _ in sorted(rows, key=lambda r: (r[1], r[0]))]


def error_count(session: Session) -> int:
    """How many distinct errors the knowledge base holds."""
    return session.execute(select(func.count()).select_from(Error)).scalar_one()


def class_counts(session: Session) -> list[tuple[str, int]]:
    """(class, errors) for each raised class, the most common first; asserts count as
    AssertionError, missing keys as KeyError."""
    rows = session.execute(select(Error.exception, func.count()).group_by(Error.exception)).all()
    return sorted(((str(c), int(n)) for c, n in rows), key=lambda r: (-r[1], r[0]))


def error_ids(session: Session) -> list[str]:
    """Every error id, in order."""
    return list(session.scalars(select(Error.id).order_by(Error.id)))


def occurrence_rows(session: Session) -> list[tuple[str, str, int, Any, str, str]]:
    """(error id, path, line, flag involvements, snapshot label, sort key) of every occurrence."""
    stmt = select(
        Occurrence.error_id,
        Occurrence.path,
        Occurrence.line,
        SiteBody.flags,
        Snapshot.label,
        Snapshot.sort_key,
    )
    stmt = stmt.join(Snapshot, Snapshot.id == Occurrence.snapshot_id)
    stmt = stmt.join(SiteBody, SiteBody.hash == Occurrence.body_hash)
    return [tuple(row) for row in session.execute(stmt)]  # type: ignore[misc]


def error_summaries(session: Session) -> list[Row[tuple[str, str, str, str]]]:
    """(id, title, exception, message) of every error."""
    return list(session.execute(select(Error.id, Error.title, Error.exception, Error.message)))
