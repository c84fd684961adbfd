"""search index: full-text search over messages, templates, paths and flags

One plain table `search_docs` (one row per error, pre-tokenized text) on both backends, plus the
backend's own full-text index over it: an external-content FTS5 table on SQLite, a stored
weighted tsvector column with a GIN index on PostgreSQL. These objects are not ORM models; the
Alembic env leaves every `search_*` name out of autogenerate (see migrations/env.py).

Revision ID: 0002_search
Revises: 0001
Create Date: 2026-12-02 12:05:00
"""

import sqlalchemy as sa
from alembic import op

revision = "0002_search"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "search_docs",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column(
            "error_id",
            sa.String(length=16),
            sa.ForeignKey("errors.id", ondelete="CASCADE", name="fk_search_docs_error_id_errors"),
            nullable=False,
        ),
        sa.Column("sort_key", sa.Integer(), nullable=False),
        sa.Column("message_terms", sa.Text(), nullable=False),
        sa.Column("meta_terms", sa.Text(), nullable=False),
        sa.Column("flag_key", sa.Text(), nullable=False),
        sa.UniqueConstraint("error_id", name="uq_search_docs_error_id"),
    )
    op.create_index("ix_search_docs_sort_key", "search_docs", ["sort_key"])
    if op.get_bind().dialect.name == "postgresql":
        op.execute(
            "ALTER TABLE search_docs ADD COLUMN tsv tsvector GENERATED ALWAYS AS ("
            "setweight(to_tsvector('simple', message_terms), 'A') || "
            "setweight(to_tsvector('simple', meta_terms), 'B')) STORED"
        )
        op.execute("CREATE INDEX ix_search_docs_tsv ON search_docs USING gin (tsv)")
    else:
        op.execute(
            "CREATE VIRTUAL TABLE search_fts USING fts5("
            "message_terms, meta_terms, content='search_docs', content_rowid='id', "
            "tokenize='unicode61')"
        )


def downgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        op.execute("DROP TABLE IF EXISTS search_fts")
    op.drop_table("search_docs")
