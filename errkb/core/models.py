"""The database schema: SQLAlchemy 2.0 typed models shared by `ingest` and `service`."""

from __future__ import annotations

import json
from datetime import datetime
from functools import lru_cache
from typing import Any

from sqlalchemy import (
    JSON,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Text,
    UniqueConstraint,
    join,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship

from errkb.core.packed import pack, unpack
from errkb.core.records import SiteKind, SnapshotKind

NAMING = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING)


class Repo(Base):
    """A project whose snapshots are ingested."""

    __tablename__ = "repos"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(200), unique=True)  # "sgl-project/sglang"
    git_url: Mapped[str | None] = mapped_column(String(500))
    web_url: Mapped[str | None] = mapped_column(
        String(500)
    )  # https://github.com/sgl-project/sglang
    pypi_name: Mapped[str | None] = mapped_column(String(200))
    path_prefix: Mapped[str] = mapped_column(String(200), default="")
    launch_command: Mapped[str | None] = mapped_column(Text)
    # The project's vocabulary from the pins (glossary, request classes, environment helpers):
    # `records.Vocabulary.to_json`, read by the explanations.
    vocabulary: Mapped[dict[str, Any] | None] = mapped_column(JSON)


class Snapshot(Base):
    """One complete ingest of a commit, release or folder; a row exists only once it is complete."""

    __tablename__ = "snapshots"
    __table_args__ = (UniqueConstraint("repo_id", "kind", "commit"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    repo_id: Mapped[int] = mapped_column(ForeignKey("repos.id", ondelete="CASCADE"), index=True)
    label: Mapped[str] = mapped_column(String(200))  # "0.5.18", "main@0132848349", folder label
    kind: Mapped[SnapshotKind] = mapped_column(String(10))
    ref: Mapped[str | None] = mapped_column(String(300))
    commit: Mapped[str] = mapped_column(String(200))  # full SHA, version, or folder digest
    date: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    link_base: Mapped[str | None] = mapped_column(String(500))  # ".../blob/v0.5.18/"
    sort_key: Mapped[str] = mapped_column(String(200))  # orders snapshots of a repo
    files: Mapped[int] = mapped_column(Integer, default=0)
    files_parsed: Mapped[int] = mapped_column(Integer, default=0)
    cache_hits: Mapped[int] = mapped_column(Integer, default=0)
    skipped: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    sites: Mapped[int] = mapped_column(Integer, default=0)
    errors: Mapped[int] = mapped_column(Integer, default=0)
    seconds: Mapped[float] = mapped_column(Float, default=0.0)
    # Sites per kind: {"raise": {class: n}, "indirect": n, "assert": n, "lookup": n}.
    site_counts: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    # What it declares it needs (`errkb.core.declared`): [{name, specifier, extra, ...}]; NULL
    # for a snapshot ingested before requirements were read.
    requirements: Mapped[list[dict[str, Any]] | None] = mapped_column(JSON)
    ingested_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    repo: Mapped[Repo] = relationship()


class Error(Base):
    """A distinct error: (repo, exception, normalized template); id stable across versions."""

    __tablename__ = "errors"
    id: Mapped[str] = mapped_column(String(16), primary_key=True)
    repo_id: Mapped[int] = mapped_column(ForeignKey("repos.id", ondelete="CASCADE"), index=True)
    exception: Mapped[str] = mapped_column(String(200))
    template: Mapped[list[dict[str, Any]]] = mapped_column(JSON)  # Segment dicts
    form: Mapped[str] = mapped_column(String(20))
    message: Mapped[str] = mapped_column(Text)  # display form
    title: Mapped[str] = mapped_column(String(300))
    # The class and its bases up to BaseException, as far as the snapshot's code and Python's
    # builtins tell (["FooError", "ValueError", "Exception", "BaseException"]); None: unknown.
    chain: Mapped[list[str] | None] = mapped_column(JSON)
    kind: Mapped[SiteKind] = mapped_column(String(10), server_default="raise")  # records.SiteKind
    # What must hold for the site not to fail (`Site.check`, of the first site): an assert's
    # condition, a lookup's subscript, a message-less raise's innermost guard.
    check_text: Mapped[str | None] = mapped_column(Text)
    repo: Mapped[Repo] = relationship()


class SiteBody(Base):
    """The bulky, rarely changing part of a raise site, stored once per distinct content.

    Keyed by a hash of its content, with every line number relative to the raise line, so a site
    whose code is unchanged across a hundred releases (even as the lines above it move) has one
    row here, however many occurrences point to it. The conditions and snippet, read only when an
    entry is built, are one compressed JSON blob (`code`, see `errkb.core.packed`); the flag
    links stay plain JSON, which the search index reads in SQL.
    """

    __tablename__ = "site_bodies"
    hash: Mapped[str] = mapped_column(String(32), primary_key=True)
    end_offset: Mapped[int] = mapped_column(Integer)  # end_line - line
    code: Mapped[bytes] = mapped_column(LargeBinary)  # {"conditions": [...], "snippet": {...}}
    flags: Mapped[list[dict[str, Any]]] = mapped_column(JSON, default=list)  # flag involvements
    raise_source: Mapped[str] = mapped_column(Text)

    @property
    def conditions(self) -> list[dict[str, Any]]:
        """The guard conditions, lines relative to the raise."""
        return list(unpacked_code(self.code)["conditions"])

    @property
    def snippet(self) -> dict[str, Any]:
        """The source lines around the raise, lines relative to the raise."""
        return dict(unpacked_code(self.code)["snippet"])


def packed_code(conditions_json: str, snippet_json: str) -> bytes:
    """A site body's `code` from its conditions and snippet as JSON text."""
    return pack(f'{{"conditions": {conditions_json}, "snippet": {snippet_json}}}'.encode())


@lru_cache(maxsize=1024)
def unpacked_code(code: bytes) -> dict[str, Any]:
    """A site body's `code` read back (cached: an entry reads each body a few times; callers
    copy what they change)."""
    value: dict[str, Any] = json.loads(unpack(code))
    return value


class Occurrence(Base):
    """One raise site of an error in one snapshot: where it is, and which body it has.

    Slim on purpose (one row per snapshot per site, over a hundred thousand for a whole
    history): the matcher, filters and histories read these columns; the conditions, snippet
    and flag links live once per distinct version in `site_bodies`, and the properties below
    give them back with absolute line numbers.
    """

    __tablename__ = "occurrences"
    # Indexed (below) by (error, snapshot), for an error's lookups and cascades, and within a
    # snapshot by path and by function name, for an entry's same-file errors and its lineage
    # (a late sglang release holds about 30,000 occurrences: scanning them cost 4 and 10 ms an
    # entry). No query looks occurrences up by path alone.
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    error_id: Mapped[str] = mapped_column(ForeignKey("errors.id", ondelete="CASCADE"))
    snapshot_id: Mapped[int] = mapped_column(ForeignKey("snapshots.id", ondelete="CASCADE"))
    path: Mapped[str] = mapped_column(String(500))
    line: Mapped[int] = mapped_column(Integer)
    end_line: Mapped[int] = mapped_column(Integer)
    qualname: Mapped[str] = mapped_column(String(300))
    # The raising function's own name: the last part of `qualname` (`function_name`).
    function: Mapped[str] = mapped_column(
        String(300),
        default=lambda ctx: function_name(ctx.get_current_parameters()["qualname"]),
        server_default="",
    )
    body_hash: Mapped[str] = mapped_column(ForeignKey("site_bodies.hash"))
    snapshot: Mapped[Snapshot] = relationship()
    body: Mapped[SiteBody] = relationship(lazy="joined", innerjoin=True)

    @property
    def conditions(self) -> list[dict[str, Any]]:
        """The guard conditions, at their lines in this snapshot."""
        return [c | {"line": c["line"] + self.line} for c in self.body.conditions or []]

    @property
    def snippet(self) -> dict[str, Any]:
        """The source lines around the raise, numbered as in this snapshot."""
        return shifted_snippet(self.body.snippet or {}, self.line)

    @property
    def flags(self) -> list[dict[str, Any]]:
        """The flag involvements of the site."""
        return self.body.flags or []

    @property
    def raise_source(self) -> str:
        """The source of the message argument."""
        return self.body.raise_source


def function_name(qualname: str) -> str:
    """The function's own name in a qualified name (`Cls.method` -> `method`)."""
    return qualname.rpartition(".")[2]


def shifted_snippet(snippet: dict[str, Any], by: int) -> dict[str, Any]:
    """A stored snippet with its line numbers moved by `by` (relative <-> absolute)."""
    out = dict(snippet)
    for key in ("start", "raise_start", "raise_end"):
        if key in out:
            out[key] = out[key] + by
    return out


class ErrorFlag(Base):
    """Which errors involve which flag dest in a snapshot: the index behind related errors."""

    __tablename__ = "error_flags"
    error_id: Mapped[str] = mapped_column(
        ForeignKey("errors.id", ondelete="CASCADE"), primary_key=True
    )
    snapshot_id: Mapped[int] = mapped_column(
        ForeignKey("snapshots.id", ondelete="CASCADE"), primary_key=True
    )
    dest: Mapped[str] = mapped_column(String(200), primary_key=True)
    flag: Mapped[str] = mapped_column(String(200))


class FlagBody(Base):
    """A command-line option's definition, stored once per distinct content.

    Keyed by a hash of everything but its line: across a history most options keep their
    definition while the lines above them move, so a hundred snapshots share one row here.
    """

    __tablename__ = "flag_bodies"
    hash: Mapped[str] = mapped_column(String(32), primary_key=True)
    name: Mapped[str] = mapped_column(String(200), index=True)  # primary flag "--tp-size"
    flags: Mapped[list[str]] = mapped_column(JSON)
    dest: Mapped[str] = mapped_column(String(200), index=True)
    type: Mapped[str | None] = mapped_column(String(200))
    default: Mapped[str | None] = mapped_column(Text)
    choices: Mapped[list[str] | None] = mapped_column(JSON)
    help: Mapped[str | None] = mapped_column(Text)
    path: Mapped[str] = mapped_column(String(500))
    origin: Mapped[str] = mapped_column(String(20))


class SnapshotFlag(Base):
    """That a snapshot defines an option, and at which line."""

    __tablename__ = "snapshot_flags"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    snapshot_id: Mapped[int] = mapped_column(
        ForeignKey("snapshots.id", ondelete="CASCADE"), index=True
    )
    body_hash: Mapped[str] = mapped_column(ForeignKey("flag_bodies.hash"))
    line: Mapped[int] = mapped_column(Integer)


class Flag(Base):
    """A command-line option as defined in one snapshot (read-only: the two tables above,
    joined; the store writes them directly)."""

    __table__ = join(
        SnapshotFlag.__table__,
        FlagBody.__table__,
        SnapshotFlag.__table__.c.body_hash == FlagBody.__table__.c.hash,
    )
    id: Mapped[int]
    snapshot_id: Mapped[int]
    body_hash: Mapped[str]
    line: Mapped[int]
    hash: Mapped[str]
    name: Mapped[str]
    flags: Mapped[list[str]]
    dest: Mapped[str]
    type: Mapped[str | None]
    default: Mapped[str | None]
    choices: Mapped[list[str] | None]
    help: Mapped[str | None]
    path: Mapped[str]
    origin: Mapped[str]


Index("ix_occurrences_error_snapshot", Occurrence.error_id, Occurrence.snapshot_id)
Index("ix_occurrences_snapshot_path", Occurrence.snapshot_id, Occurrence.path)
Index("ix_occurrences_snapshot_function", Occurrence.snapshot_id, Occurrence.function)
Index("ix_error_flags_snapshot_dest", ErrorFlag.snapshot_id, ErrorFlag.dest)

# The derived state's tables live beside (`errkb.core.cache_models`); imported here so that one
# import of this module registers every table, and re-exported for the modules that use them.
from errkb.core.cache_models import (  # noqa: E402
    AiExplanation,
    EntryDoc,
    FileCache,
    Meta,
    PackDictionary,
    file_cache_key,
)

__all__ = ["AiExplanation", "EntryDoc", "FileCache", "Meta", "PackDictionary", "file_cache_key"]
