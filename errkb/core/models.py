"""The database schema: SQLAlchemy 2.0 typed models shared by `ingest` and `service`."""

from __future__ import annotations

from datetime import datetime
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
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship

from errkb.core.records import SnapshotKind

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
    repo: Mapped[Repo] = relationship()


class SiteBody(Base):
    """The bulky, rarely changing part of a raise site, stored once per distinct content.

    Keyed by a hash of its content, with every line number relative to the raise line, so a site
    whose code is unchanged across a hundred releases (even as the lines above it move) has one
    row here, however many occurrences point to it.
    """

    __tablename__ = "site_bodies"
    hash: Mapped[str] = mapped_column(String(32), primary_key=True)
    end_offset: Mapped[int] = mapped_column(Integer)  # end_line - line
    conditions: Mapped[list[dict[str, Any]]] = mapped_column(JSON)  # lines relative to the raise
    snippet: Mapped[dict[str, Any]] = mapped_column(JSON)  # lines relative to the raise
    flags: Mapped[list[dict[str, Any]]] = mapped_column(JSON, default=list)  # flag involvements
    raise_source: Mapped[str] = mapped_column(Text)


class Occurrence(Base):
    """One raise site of an error in one snapshot: where it is, and which body it has.

    Slim on purpose (one row per snapshot per site, over a hundred thousand for a whole
    history): the matcher, filters and histories read these columns; the conditions, snippet
    and flag links live once per distinct version in `site_bodies`, and the properties below
    give them back with absolute line numbers.
    """

    __tablename__ = "occurrences"
    # Indexed by (error, snapshot) and (snapshot, path, function) only (below): their leading
    # columns serve the lookups and cascades by error or by snapshot, and no query looks
    # occurrences up by path alone; single-column copies cost 12 MB on a whole history.
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    error_id: Mapped[str] = mapped_column(ForeignKey("errors.id", ondelete="CASCADE"))
    snapshot_id: Mapped[int] = mapped_column(ForeignKey("snapshots.id", ondelete="CASCADE"))
    path: Mapped[str] = mapped_column(String(500))
    line: Mapped[int] = mapped_column(Integer)
    end_line: Mapped[int] = mapped_column(Integer)
    qualname: Mapped[str] = mapped_column(String(300))
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


class Flag(Base):
    """A command-line option as defined in one snapshot."""

    __tablename__ = "flags"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    snapshot_id: Mapped[int] = mapped_column(
        ForeignKey("snapshots.id", ondelete="CASCADE"), index=True
    )
    name: Mapped[str] = mapped_column(String(200), index=True)  # primary flag "--tp-size"
    flags: Mapped[list[str]] = mapped_column(JSON)
    dest: Mapped[str] = mapped_column(String(200), index=True)
    type: Mapped[str | None] = mapped_column(String(200))
    default: Mapped[str | None] = mapped_column(Text)
    choices: Mapped[list[str] | None] = mapped_column(JSON)
    help: Mapped[str | None] = mapped_column(Text)
    path: Mapped[str] = mapped_column(String(500))
    line: Mapped[int] = mapped_column(Integer)
    origin: Mapped[str] = mapped_column(String(20))


class FileCache(Base):
    """Per-file extraction results keyed by content hash, shared across runs and sources."""

    __tablename__ = "file_cache"
    content_hash: Mapped[str] = mapped_column(String(64), primary_key=True)
    extractor: Mapped[str] = mapped_column(String(64), primary_key=True)  # version + config digest
    result: Mapped[bytes] = mapped_column(LargeBinary)  # compressed FileResult JSON (core.packed)


class Meta(Base):
    """Key/value state, e.g. the ingest generation used for ETags and matcher rebuilds."""

    __tablename__ = "meta"
    key: Mapped[str] = mapped_column(String(100), primary_key=True)
    value: Mapped[str] = mapped_column(Text)


class AiExplanation(Base):
    """Optional AI prose for an error, cached per (error, template hash, model)."""

    __tablename__ = "ai_explanations"
    error_id: Mapped[str] = mapped_column(
        ForeignKey("errors.id", ondelete="CASCADE"), primary_key=True
    )
    template_hash: Mapped[str] = mapped_column(String(64), primary_key=True)
    model: Mapped[str] = mapped_column(String(200), primary_key=True)
    content: Mapped[dict[str, Any]] = mapped_column(JSON)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


Index("ix_occurrences_error_snapshot", Occurrence.error_id, Occurrence.snapshot_id)
Index(
    "ix_occurrences_snapshot_qualname",
    Occurrence.snapshot_id,
    Occurrence.path,
    Occurrence.qualname,
)
Index("ix_error_flags_snapshot_dest", ErrorFlag.snapshot_id, ErrorFlag.dest)
