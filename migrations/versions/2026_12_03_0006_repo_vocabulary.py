"""repos.vocabulary: the project's glossary and how its users' inputs are named (from the pins)

Revision ID: 0006_repo_vocabulary
Revises: 0005_occurrence_indexes
Create Date: 2026-12-03 17:40:00
"""

import sqlalchemy as sa
from alembic import op

revision = "0006_repo_vocabulary"
down_revision = "0005_occurrence_indexes"
branch_labels = None
depends_on = None


# Plain ALTER TABLE on both backends (SQLite has ADD and DROP COLUMN): batch mode would copy
# `repos` and drop the original, and with foreign keys on, that drop cascades to every snapshot.


def upgrade() -> None:
    op.add_column("repos", sa.Column("vocabulary", sa.JSON(), nullable=True))


def downgrade() -> None:
    op.drop_column("repos", "vocabulary")
