"""exception_classes: each error's class chain, kind and check, and each snapshot's site counts per class

Revision ID: 0011_exception_classes
Revises: 0010_file_cache_key_check
Create Date: 2026-12-04 18:10:00
"""

import sqlalchemy as sa
from alembic import op

revision = "0011_exception_classes"
down_revision = "0010_file_cache_key_check"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Rows written before hold ValueErrors only: an empty chain reads as "the class alone".
    with op.batch_alter_table("errors") as batch:
        batch.add_column(sa.Column("chain", sa.JSON(), nullable=True))
        batch.add_column(sa.Column("kind", sa.String(10), nullable=False, server_default="raise"))
        batch.add_column(sa.Column("check_text", sa.Text(), nullable=True))
    with op.batch_alter_table("snapshots") as batch:
        batch.add_column(sa.Column("site_counts", sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("snapshots") as batch:
        batch.drop_column("site_counts")
    with op.batch_alter_table("errors") as batch:
        batch.drop_column("check_text")
        batch.drop_column("kind")
        batch.drop_column("chain")
