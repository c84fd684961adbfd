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


# Plain ADD/DROP COLUMN, not batch mode: SQLite's batch mode would copy `errors` and
# `snapshots` and drop the originals, and with foreign keys on, those drops cascade to every
# occurrence and flag. SQLite supports both statements natively (DROP COLUMN since 3.35).


def upgrade() -> None:
    # Rows written before hold ValueErrors only: an empty chain reads as "the class alone".
    op.add_column("errors", sa.Column("chain", sa.JSON(), nullable=True))
    op.add_column(
        "errors", sa.Column("kind", sa.String(10), nullable=False, server_default="raise")
    )
    op.add_column("errors", sa.Column("check_text", sa.Text(), nullable=True))
    op.add_column("snapshots", sa.Column("site_counts", sa.JSON(), nullable=True))


def downgrade() -> None:
    op.drop_column("snapshots", "site_counts")
    op.drop_column("errors", "check_text")
    op.drop_column("errors", "kind")
    op.drop_column("errors", "chain")
