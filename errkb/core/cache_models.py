"""The schema of derived state: what can be rebuilt from the ingested rows (the file cache, entry
documents, compression dictionaries, AI prose) and small key/value state."""

from __future__ import annotations

import hashlib
from datetime import datetime
from typing import Any

from sqlalchemy import JSON, BigInteger, DateTime, ForeignKey, Integer, LargeBinary, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from errkb.core.models import Base


class FileCache(Base):
    """Per-file extraction results keyed by content hash, shared across runs and sources.

    A row is found by a 128-bit hash of (extractor, key) (`file_cache_key`): its first half is
    the row id, its second half `key_check`, compared on lookup so that two keys whose ids
    collide never share a result (the later one is just not cached). The key itself is not
    stored: over a whole history the keys (40 to 49 hex digits each, one per file and function
    of every release) took more room than most results. `extractor` stays readable, to tell
    which extractor wrote a row.
    """

    __tablename__ = "file_cache"
    id: Mapped[int] = mapped_column(
        BigInteger().with_variant(Integer(), "sqlite"),  # SQLite: the rowid itself
        primary_key=True,
        autoincrement=False,
    )
    key_check: Mapped[int] = mapped_column(BigInteger)
    extractor: Mapped[str] = mapped_column(String(64))  # version + config digest
    result: Mapped[bytes] = mapped_column(LargeBinary)  # compressed FileResult JSON (core.packed)


def file_cache_key(extractor: str, key: str) -> tuple[int, int]:
    """The file-cache row id and key check of a key: two signed 64-bit halves of its hash."""
    digest = hashlib.blake2b(f"{extractor}\0{key}".encode(), digest_size=16).digest()
    return (
        int.from_bytes(digest[:8], "big", signed=True),
        int.from_bytes(digest[8:], "big", signed=True),
    )


class Meta(Base):
    """Key/value state, e.g. the ingest generation used for ETags and matcher rebuilds."""

    __tablename__ = "meta"
    key: Mapped[str] = mapped_column(String(100), primary_key=True)
    value: Mapped[str] = mapped_column(Text)


class PackDictionary(Base):
    """A trained compression dictionary (`errkb.core.packed`), found by the id its blobs name.

    `purpose` says which blobs it was trained on ("entry_docs"); a dictionary no blob names any
    more is deleted by the writer that replaced it.
    """

    __tablename__ = "pack_dictionaries"
    id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=False)
    purpose: Mapped[str] = mapped_column(String(32), index=True)
    samples: Mapped[int] = mapped_column(Integer)
    data: Mapped[bytes] = mapped_column(LargeBinary)


class EntryDoc(Base):
    """An error's entry JSON as built after an ingest, served while its content key is current.

    `content_key` is the knowledge base's key (ingest generation and AI-prose counter) the doc
    was built under, `variant` a digest of the settings that shape it (public URL, AI model):
    a doc whose key or variant differs from the reader's is never served (it is rebuilt on
    demand). `body` is the JSON of the entry's default view, compressed (`errkb.core.packed`:
    zstd with a dictionary trained on the docs of the same build, or zlib in older rows).
    """

    __tablename__ = "entry_docs"
    error_id: Mapped[str] = mapped_column(String(16), primary_key=True)
    content_key: Mapped[str] = mapped_column(String(64))
    variant: Mapped[str] = mapped_column(String(64))
    body: Mapped[bytes] = mapped_column(LargeBinary)
    # The hash of what the doc was built from (see `service/docstore/inputs.py`) and the ids
    # of the related errors it names, comma-separated: a build skips a doc whose inputs held.
    inputs: Mapped[str | None] = mapped_column(String(64))
    related: Mapped[str | None] = mapped_column(Text)
    # The same hash without line numbers and how far the error's newest run of releases
    # reaches: when only those moved, the doc may be rebuilt later (it is not served meanwhile).
    stable: Mapped[str | None] = mapped_column(String(64))


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
