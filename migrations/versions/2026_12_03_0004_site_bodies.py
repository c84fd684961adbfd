"""site_bodies: occurrences keep where a site is; its conditions, snippet, flag links and message
source are stored once per distinct content, with lines relative to the raise

Revision ID: 0004_site_bodies
Revises: 0003_error_flags
Create Date: 2026-12-03 17:40:00

Existing rows are converted in place: each occurrence's bulky columns become (or reuse) a body
keyed by the same content hash the ingester computes, then the columns are dropped.
"""

import hashlib
import json

import sqlalchemy as sa
from alembic import op

revision = "0004_site_bodies"
down_revision = "0003_error_flags"
branch_labels = None
depends_on = None

BATCH = 2000
SNIPPET_LINES = ("start", "raise_start", "raise_end")

occurrences = sa.table(
    "occurrences",
    sa.column("id", sa.Integer),
    sa.column("line", sa.Integer),
    sa.column("end_line", sa.Integer),
    sa.column("conditions", sa.JSON),
    sa.column("snippet", sa.JSON),
    sa.column("flags", sa.JSON),
    sa.column("raise_source", sa.Text),
    sa.column("body_hash", sa.String),
)
bodies = sa.table(
    "site_bodies",
    sa.column("hash", sa.String),
    sa.column("end_offset", sa.Integer),
    sa.column("conditions", sa.JSON),
    sa.column("snippet", sa.JSON),
    sa.column("flags", sa.JSON),
    sa.column("raise_source", sa.Text),
)


def _body(row: sa.Row) -> dict:
    """The body of one old occurrence row, hashed as `ingest.snapshot_rows` hashes it."""
    line = row.line
    conditions = [c | {"line": c["line"] - line} for c in row.conditions or []]
    snippet = {k: (v - line if k in SNIPPET_LINES else v) for k, v in (row.snippet or {}).items()}
    flags = row.flags or []
    core = "\x1f".join(
        (str(row.end_line - line), json.dumps(conditions), json.dumps(snippet), row.raise_source)
    )
    digest = hashlib.sha256(core.encode()).digest() + json.dumps(flags).encode()
    return {
        "hash": hashlib.sha256(digest).hexdigest()[:32],
        "end_offset": row.end_line - line,
        "conditions": conditions,
        "snippet": snippet,
        "flags": flags,
        "raise_source": row.raise_source,
    }


def upgrade() -> None:
    op.create_table(
        "site_bodies",
        sa.Column("hash", sa.String(length=32), nullable=False),
        sa.Column("end_offset", sa.Integer(), nullable=False),
        sa.Column("conditions", sa.JSON(), nullable=False),
        sa.Column("snippet", sa.JSON(), nullable=False),
        sa.Column("flags", sa.JSON(), nullable=False),
        sa.Column("raise_source", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint("hash", name=op.f("pk_site_bodies")),
    )
    with op.batch_alter_table("occurrences") as batch_op:
        batch_op.add_column(sa.Column("body_hash", sa.String(length=32), nullable=True))

    conn = op.get_bind()
    known: set[str] = set()
    last = 0
    while True:
        rows = conn.execute(
            sa.select(occurrences)
            .where(occurrences.c.id > last)
            .order_by(occurrences.c.id)
            .limit(BATCH)
        ).all()
        if not rows:
            break
        last = rows[-1].id
        made = [(r.id, _body(r)) for r in rows]
        new = {b["hash"]: b for _, b in made if b["hash"] not in known}
        if new:
            conn.execute(sa.insert(bodies), list(new.values()))
            known.update(new)
        conn.execute(
            sa.update(occurrences)
            .where(occurrences.c.id == sa.bindparam("oid"))
            .values(body_hash=sa.bindparam("h")),
            [{"oid": oid, "h": b["hash"]} for oid, b in made],
        )

    with op.batch_alter_table("occurrences") as batch_op:
        batch_op.alter_column("body_hash", existing_type=sa.String(length=32), nullable=False)
        batch_op.create_foreign_key(
            batch_op.f("fk_occurrences_body_hash_site_bodies"),
            "site_bodies",
            ["body_hash"],
            ["hash"],
        )
        batch_op.drop_column("conditions")
        batch_op.drop_column("snippet")
        batch_op.drop_column("flags")
        batch_op.drop_column("raise_source")


def downgrade() -> None:
    with op.batch_alter_table("occurrences") as batch_op:
        batch_op.add_column(sa.Column("conditions", sa.JSON(), nullable=True))
        batch_op.add_column(sa.Column("snippet", sa.JSON(), nullable=True))
        batch_op.add_column(sa.Column("flags", sa.JSON(), nullable=True))
        batch_op.add_column(sa.Column("raise_source", sa.Text(), nullable=True))
    conn = op.get_bind()
    body_of = {r.hash: r for r in conn.execute(sa.select(bodies))}
    rows = conn.execute(sa.select(occurrences.c.id, occurrences.c.line, occurrences.c.body_hash))
    updates = []
    for oid, line, h in rows.all():
        b = body_of[h]
        snippet = {k: (v + line if k in SNIPPET_LINES else v) for k, v in b.snippet.items()}
        updates.append(
            {
                "oid": oid,
                "c": [c | {"line": c["line"] + line} for c in b.conditions],
                "s": snippet,
                "f": b.flags,
                "r": b.raise_source,
            }
        )
    if updates:
        conn.execute(
            sa.update(occurrences)
            .where(occurrences.c.id == sa.bindparam("oid"))
            .values(
                conditions=sa.bindparam("c"),
                snippet=sa.bindparam("s"),
                flags=sa.bindparam("f"),
                raise_source=sa.bindparam("r"),
            ),
            updates,
        )
    with op.batch_alter_table("occurrences") as batch_op:
        for name, kind in (
            ("conditions", sa.JSON()),
            ("snippet", sa.JSON()),
            ("flags", sa.JSON()),
            ("raise_source", sa.Text()),
        ):
            batch_op.alter_column(name, existing_type=kind, nullable=False)
        batch_op.drop_constraint("fk_occurrences_body_hash_site_bodies", type_="foreignkey")
        batch_op.drop_column("body_hash")
    op.drop_table("site_bodies")
