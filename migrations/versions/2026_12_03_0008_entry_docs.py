"""entry_docs: every error's entry JSON, built in bulk after an ingest (zlib-compressed)

Revision ID: 0008_entry_docs
Revises: 0007_compact_storage
Create Date: 2026-12-03 21:40:00
"""

import sqlalchemy as sa
from alembic import op

revision = "0008_entry_docs"
down_revision = "0007_compact_storage"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "entry_docs",
        sa.Column("error_id", sa.String(16), nullable=False),
        sa.Column("content_key", sa.String(64), nullable=False),
        sa.Column("variant", sa.String(64), nullable=False),
        sa.Column("body", sa.LargeBinary(), nullable=False),
        sa.PrimaryKeyConstraint("error_id", name=op.f("pk_entry_docs")),
    )


def downgrade() -> None:
    op.drop_table("entry_docs")
