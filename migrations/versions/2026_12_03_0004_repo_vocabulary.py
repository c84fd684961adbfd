"""repos.vocabulary: the project's glossary and how its users' inputs are named (from the pins)

Revision ID: 0004_repo_vocabulary
Revises: 0003_error_flags
Create Date: 2026-12-03 17:40:00
"""

import sqlalchemy as sa
from alembic import op

revision = "0004_repo_vocabulary"
down_revision = "0003_error_flags"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("repos") as batch:
        batch.add_column(sa.Column("vocabulary", sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("repos") as batch:
        batch.drop_column("vocabulary")
