"""error_flags: which errors involve which flag dest per snapshot (for related errors)

Revision ID: 0003_error_flags
Revises: 0002_search
Create Date: 2026-12-02 12:40:00
"""

import sqlalchemy as sa
from alembic import op

revision = "0003_error_flags"
down_revision = "0002_search"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "error_flags",
        sa.Column("error_id", sa.String(length=16), nullable=False),
        sa.Column("snapshot_id", sa.Integer(), nullable=False),
        sa.Column("dest", sa.String(length=200), nullable=False),
        sa.Column("flag", sa.String(length=200), nullable=False),
        sa.ForeignKeyConstraint(
            ["error_id"],
            ["errors.id"],
            name=op.f("fk_error_flags_error_id_errors"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["snapshot_id"],
            ["snapshots.id"],
            name=op.f("fk_error_flags_snapshot_id_snapshots"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("error_id", "snapshot_id", "dest", name=op.f("pk_error_flags")),
    )
    op.create_index(
        "ix_error_flags_snapshot_dest", "error_flags", ["snapshot_id", "dest"], unique=False
    )


def downgrade() -> None:
    op.drop_index("ix_error_flags_snapshot_dest", table_name="error_flags")
    op.drop_table("error_flags")
