"""pack_dictionaries: trained zstd dictionaries that entry docs are compressed with

Revision ID: 0009_pack_dictionaries
Revises: 0008_entry_docs
Create Date: 2026-12-04 04:40:00
"""

import sqlalchemy as sa
from alembic import op

revision = "0009_pack_dictionaries"
down_revision = "0008_entry_docs"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "pack_dictionaries",
        sa.Column("id", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("purpose", sa.String(32), nullable=False),
        sa.Column("samples", sa.Integer(), nullable=False),
        sa.Column("data", sa.LargeBinary(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_pack_dictionaries")),
    )
    op.create_index(
        op.f("ix_pack_dictionaries_purpose"), "pack_dictionaries", ["purpose"], unique=False
    )


def downgrade() -> None:
    op.drop_index(op.f("ix_pack_dictionaries_purpose"), table_name="pack_dictionaries")
    op.drop_table("pack_dictionaries")
