"""file_cache: a 64-bit key check in place of the key (content hash) itself

Each row is found by a 128-bit hash of (extractor, key): the row id (its first half, as before
from a hash of its own) and `key_check` (its second half). The 40-49 character keys are dropped.
Rows whose extractor has function-unit rows get the "units:" marker row that
`ingest.store.has_cached_units` looks up.

Downgrading cannot bring the keys back from their hashes: it leaves an empty parse cache of the
old shape (a cache: the next ingest parses again what it needs).

Revision ID: 0010_file_cache_key_check
Revises: 0009_pack_dictionaries
Create Date: 2026-12-04 04:55:00
"""

import hashlib
from typing import Any

import sqlalchemy as sa
from alembic import op

revision = "0010_file_cache_key_check"
down_revision = "0009_pack_dictionaries"
branch_labels = None
depends_on = None

BATCH = 2000
UNITS_PRESENT = "units:"  # as `errkb.ingest.store.UNITS_PRESENT`


def _key(extractor: str, key: str) -> tuple[int, int]:
    """As `errkb.core.models.file_cache_key` computes it."""
    digest = hashlib.blake2b(f"{extractor}\0{key}".encode(), digest_size=16).digest()
    return (
        int.from_bytes(digest[:8], "big", signed=True),
        int.from_bytes(digest[8:], "big", signed=True),
    )


def _ident() -> sa.types.TypeEngine[int]:
    return sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def _move_aside() -> None:
    op.rename_table("file_cache", "file_cache_old")
    if op.get_bind().dialect.name != "sqlite":  # constraint names are per schema there
        op.execute(
            "ALTER TABLE file_cache_old RENAME CONSTRAINT pk_file_cache TO pk_file_cache_old"
        )


def upgrade() -> None:
    _move_aside()
    table = op.create_table(
        "file_cache",
        sa.Column("id", _ident(), nullable=False, autoincrement=False),
        sa.Column("key_check", sa.BigInteger(), nullable=False),
        sa.Column("extractor", sa.String(length=64), nullable=False),
        sa.Column("result", sa.LargeBinary(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_file_cache")),
    )
    conn = op.get_bind()
    rows = conn.execute(sa.text("SELECT content_hash, extractor, result FROM file_cache_old"))
    by_id: dict[int, dict[str, Any]] = {}
    with_units: set[str] = set()
    for h, x, r in rows:
        row_id, check = _key(x, h)
        by_id.setdefault(row_id, {"id": row_id, "key_check": check, "extractor": x, "result": r})
        if h[:2] in ("u:", "n:"):
            with_units.add(x)
    for x in with_units:
        row_id, check = _key(x, UNITS_PRESENT)
        by_id.setdefault(row_id, {"id": row_id, "key_check": check, "extractor": x, "result": b""})
    ordered = [by_id[i] for i in sorted(by_id)]  # in id order, so pages fill up
    for start in range(0, len(ordered), BATCH):
        conn.execute(table.insert(), ordered[start : start + BATCH])
    op.drop_table("file_cache_old")


def downgrade() -> None:
    _move_aside()
    op.create_table(
        "file_cache",
        sa.Column("id", _ident(), nullable=False, autoincrement=False),
        sa.Column("content_hash", sa.String(length=64), nullable=False),
        sa.Column("extractor", sa.String(length=64), nullable=False),
        sa.Column("result", sa.LargeBinary(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_file_cache")),
    )
    op.drop_table("file_cache_old")
