"""compact storage: flag definitions shared across snapshots, site code compressed, a slimmer
occurrence index

Revision ID: 0007_compact_storage
Revises: 0006_repo_vocabulary
Create Date: 2026-12-03 22:00:00

On the knowledge base of all 151 sglang releases:
- `flags` held one full row per snapshot per option (73,056 rows, 4,545 distinct definitions,
  18 MB with its indexes): now `flag_bodies` holds each distinct definition once, keyed by a hash
  of everything but its line, and `snapshot_flags` (snapshot, body, line) says where each
  snapshot has it;
- `site_bodies.conditions` and `.snippet` (18 MB of JSON) become one compressed blob, `code`
  (`errkb.core.packed`);
- the occurrence index on (snapshot, path, function) (10 MB: a copy of every row's path and
  function) becomes an index on the snapshot alone, which the cascades and per-snapshot reads use;
- `file_cache` is keyed by a 64-bit hash of (extractor, content hash) as its row id, instead of
  a primary-key index holding a second copy of every key (9 MB); the table is rebuilt (nothing
  refers to it).

The rows are converted in place, to exactly what the ingester writes (the hashes are computed
the same way), and back. Plain ALTER TABLE / CREATE / DROP on both backends: batch mode would
copy `site_bodies` and drop the original, and with foreign keys on, that drop cascades.
"""

import hashlib
import json
from typing import Any

import sqlalchemy as sa
from alembic import op

from errkb.core.packed import pack, unpack

revision = "0007_compact_storage"
down_revision = "0006_repo_vocabulary"
branch_labels = None
depends_on = None

BATCH = 500
FLAG_CONTENT = ("name", "flags", "dest", "type", "default", "choices", "help", "path", "origin")


def _json_text(value: Any) -> str:
    """A JSON column's value as the ingester writes it (json.dumps' default separators); the
    drivers hand back text (SQLite) or the decoded value (psycopg)."""
    return json.dumps(json.loads(value) if isinstance(value, str) else value)


def _is_sqlite() -> bool:
    return bool(op.get_bind().dialect.name == "sqlite")


def _add_not_null(table: str, name: str, type_: Any, sqlite_default: str) -> None:
    """Add a column to be filled, NOT NULL in the end: SQLite can only add it with a default
    (its ALTER TABLE cannot change nullability later), PostgreSQL adds it nullable first."""
    if _is_sqlite():
        column = sa.Column(name, type_, nullable=False, server_default=sa.text(sqlite_default))
    else:
        column = sa.Column(name, type_, nullable=True)
    op.add_column(table, column)


def _set_not_null(table: str, column: str) -> None:
    if not _is_sqlite():
        op.alter_column(table, column, nullable=False)


def upgrade() -> None:
    _upgrade_occurrence_index()
    _upgrade_flags()
    _upgrade_site_bodies()
    _upgrade_file_cache()


def downgrade() -> None:
    _downgrade_file_cache()
    _downgrade_site_bodies()
    _downgrade_flags()
    _downgrade_occurrence_index()


def _file_cache_id(extractor: str, content_hash: str) -> int:
    """The row id as `file_cache_id` in `errkb.core.models` computed it at this revision."""
    digest = hashlib.blake2b(f"{extractor}\0{content_hash}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


def _replace_file_cache(keyed: bool) -> None:
    """Rebuild `file_cache` with row ids hashed from its keys (`keyed`), or with the key
    (content_hash, extractor) as its primary key, copying every row. No foreign key points at
    this table, so dropping the old one cascades nowhere."""
    op.rename_table("file_cache", "file_cache_old")
    if not _is_sqlite():  # constraint names are per schema there
        op.execute(
            "ALTER TABLE file_cache_old RENAME CONSTRAINT pk_file_cache TO pk_file_cache_old"
        )
    key: list[sa.Column[Any]] = [
        sa.Column("content_hash", sa.String(length=64), nullable=False),
        sa.Column("extractor", sa.String(length=64), nullable=False),
        sa.Column("result", sa.LargeBinary(), nullable=False),
    ]
    if keyed:
        ident = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
        columns = [sa.Column("id", ident, nullable=False, autoincrement=False), *key]
        pk = sa.PrimaryKeyConstraint("id", name=op.f("pk_file_cache"))
    else:
        columns = key
        pk = sa.PrimaryKeyConstraint("content_hash", "extractor", name=op.f("pk_file_cache"))
    table = op.create_table("file_cache", *columns, pk)
    conn = op.get_bind()
    rows = conn.execute(sa.text("SELECT content_hash, extractor, result FROM file_cache_old")).all()
    values = [
        {"content_hash": h, "extractor": x, "result": bytes(r)}
        | ({"id": _file_cache_id(x, h)} if keyed else {})
        for h, x, r in rows
    ]
    if keyed:  # in id order, so pages fill up; a colliding id keeps its first row
        by_id: dict[int, dict[str, Any]] = {}
        for v in values:
            by_id.setdefault(v["id"], v)
        values = [by_id[i] for i in sorted(by_id)]
    for start in range(0, len(values), BATCH):
        conn.execute(table.insert(), values[start : start + BATCH])
    op.drop_table("file_cache_old")


def _upgrade_file_cache() -> None:
    _replace_file_cache(keyed=True)


def _downgrade_file_cache() -> None:
    _replace_file_cache(keyed=False)


def _upgrade_occurrence_index() -> None:
    op.drop_index("ix_occurrences_snapshot_qualname", table_name="occurrences")
    op.create_index("ix_occurrences_snapshot_id", "occurrences", ["snapshot_id"])


def _downgrade_occurrence_index() -> None:
    op.drop_index("ix_occurrences_snapshot_id", table_name="occurrences")
    op.create_index(
        "ix_occurrences_snapshot_qualname", "occurrences", ["snapshot_id", "path", "qualname"]
    )


def _upgrade_flags() -> None:
    op.create_table(
        "flag_bodies",
        sa.Column("hash", sa.String(length=32), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("flags", sa.JSON(), nullable=False),
        sa.Column("dest", sa.String(length=200), nullable=False),
        sa.Column("type", sa.String(length=200), nullable=True),
        sa.Column("default", sa.Text(), nullable=True),
        sa.Column("choices", sa.JSON(), nullable=True),
        sa.Column("help", sa.Text(), nullable=True),
        sa.Column("path", sa.String(length=500), nullable=False),
        sa.Column("origin", sa.String(length=20), nullable=False),
        sa.PrimaryKeyConstraint("hash", name=op.f("pk_flag_bodies")),
    )
    op.create_index("ix_flag_bodies_dest", "flag_bodies", ["dest"])
    op.create_index("ix_flag_bodies_name", "flag_bodies", ["name"])
    op.create_table(
        "snapshot_flags",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("snapshot_id", sa.Integer(), nullable=False),
        sa.Column("body_hash", sa.String(length=32), nullable=False),
        sa.Column("line", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["body_hash"],
            ["flag_bodies.hash"],
            name=op.f("fk_snapshot_flags_body_hash_flag_bodies"),
        ),
        sa.ForeignKeyConstraint(
            ["snapshot_id"],
            ["snapshots.id"],
            name=op.f("fk_snapshot_flags_snapshot_id_snapshots"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_snapshot_flags")),
    )
    op.create_index("ix_snapshot_flags_snapshot_id", "snapshot_flags", ["snapshot_id"])

    conn = op.get_bind()
    flags = sa.table("flags", *(sa.column(c) for c in ("id", "snapshot_id", "line", *FLAG_CONTENT)))
    typed = {"flags": sa.JSON(), "choices": sa.JSON()}
    bodies = sa.table("flag_bodies", *(sa.column(c, typed.get(c)) for c in ("hash", *FLAG_CONTENT)))
    links = sa.table(
        "snapshot_flags", *(sa.column(c) for c in ("snapshot_id", "body_hash", "line"))
    )
    known: set[str] = set()
    rows = conn.execute(sa.select(flags).order_by(flags.c.id)).mappings().all()
    for start in range(0, len(rows), BATCH):
        new_bodies, new_links = [], []
        for row in rows[start : start + BATCH]:
            content = {c: row[c] for c in FLAG_CONTENT}
            for c in typed:  # hashed as the JSON text the ingester writes, stored as values
                content[c] = json.loads(_json_text(row[c]))
            digest = _flag_hash(
                [_json_text(row[c]) if c in typed else row[c] for c in FLAG_CONTENT]
            )
            if digest not in known:
                known.add(digest)
                new_bodies.append({"hash": digest, **content})
            new_links.append(
                {"snapshot_id": row["snapshot_id"], "body_hash": digest, "line": row["line"]}
            )
        if new_bodies:
            conn.execute(bodies.insert(), new_bodies)
        conn.execute(links.insert(), new_links)
    op.drop_table("flags")


def _flag_hash(content: list[Any]) -> str:
    """As `ingest.snapshot_rows.flag_rows` computes it (JSON columns as their text)."""
    return hashlib.sha256(json.dumps(content).encode()).hexdigest()[:32]


def _downgrade_flags() -> None:
    op.create_table(
        "flags",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("snapshot_id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("flags", sa.JSON(), nullable=False),
        sa.Column("dest", sa.String(length=200), nullable=False),
        sa.Column("type", sa.String(length=200), nullable=True),
        sa.Column("default", sa.Text(), nullable=True),
        sa.Column("choices", sa.JSON(), nullable=True),
        sa.Column("help", sa.Text(), nullable=True),
        sa.Column("path", sa.String(length=500), nullable=False),
        sa.Column("line", sa.Integer(), nullable=False),
        sa.Column("origin", sa.String(length=20), nullable=False),
        sa.ForeignKeyConstraint(
            ["snapshot_id"],
            ["snapshots.id"],
            name=op.f("fk_flags_snapshot_id_snapshots"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_flags")),
    )
    op.create_index("ix_flags_dest", "flags", ["dest"])
    op.create_index("ix_flags_name", "flags", ["name"])
    op.create_index("ix_flags_snapshot_id", "flags", ["snapshot_id"])
    columns = ", ".join(f'b."{c}"' for c in FLAG_CONTENT)
    names = ", ".join(f'"{c}"' for c in FLAG_CONTENT)
    op.execute(
        f"INSERT INTO flags (snapshot_id, line, {names}) "  # noqa: S608 - fixed names
        f"SELECT s.snapshot_id, s.line, {columns} FROM snapshot_flags s "
        "JOIN flag_bodies b ON b.hash = s.body_hash ORDER BY s.id"
    )
    op.drop_table("snapshot_flags")
    op.drop_table("flag_bodies")


def _upgrade_site_bodies() -> None:
    _add_not_null("site_bodies", "code", sa.LargeBinary(), "x''")
    conn = op.get_bind()
    bodies = sa.table(
        "site_bodies", sa.column("hash"), sa.column("conditions"), sa.column("snippet")
    )
    update = (
        sa.table("site_bodies", sa.column("hash"), sa.column("code", sa.LargeBinary()))
        .update()
        .where(sa.column("hash") == sa.bindparam("h"))
        .values(code=sa.bindparam("c", type_=sa.LargeBinary()))
    )
    rows = conn.execute(sa.select(bodies)).all()
    for start in range(0, len(rows), BATCH):
        values = [
            {"h": h, "c": pack(_code_text(_json_text(c), _json_text(s)).encode())}
            for h, c, s in rows[start : start + BATCH]
        ]
        if values:
            conn.execute(update, values)
    _set_not_null("site_bodies", "code")
    op.drop_column("site_bodies", "conditions")
    op.drop_column("site_bodies", "snippet")


def _code_text(conditions: str, snippet: str) -> str:
    """As `errkb.core.models.packed_code` writes it."""
    return f'{{"conditions": {conditions}, "snippet": {snippet}}}'


def _downgrade_site_bodies() -> None:
    _add_not_null("site_bodies", "conditions", sa.JSON(), "'[]'")
    _add_not_null("site_bodies", "snippet", sa.JSON(), "'{}'")
    conn = op.get_bind()
    bodies = sa.table("site_bodies", sa.column("hash"), sa.column("code", sa.LargeBinary()))
    update = (
        sa.table(
            "site_bodies",
            sa.column("hash"),
            sa.column("conditions", sa.JSON()),
            sa.column("snippet", sa.JSON()),
        )
        .update()
        .where(sa.column("hash") == sa.bindparam("h"))
        .values(
            conditions=sa.bindparam("c", type_=sa.JSON()),
            snippet=sa.bindparam("s", type_=sa.JSON()),
        )
    )
    rows = conn.execute(sa.select(bodies)).all()
    for start in range(0, len(rows), BATCH):
        values = []
        for h, code in rows[start : start + BATCH]:
            decoded = json.loads(unpack(bytes(code)))
            values.append({"h": h, "c": decoded["conditions"], "s": decoded["snippet"]})
        if values:
            conn.execute(update, values)
    _set_not_null("site_bodies", "conditions")
    _set_not_null("site_bodies", "snippet")
    op.drop_column("site_bodies", "code")
