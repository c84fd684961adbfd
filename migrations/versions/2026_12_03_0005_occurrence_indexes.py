"""occurrences: drop the single-column indexes that the composite ones already serve

Revision ID: 0005_occurrence_indexes
Revises: 0004_site_bodies
Create Date: 2026-12-03 18:20:00

(error_id, snapshot_id) leads with error_id and (snapshot_id, path, qualname) with snapshot_id,
so lookups and cascades by either column use them; no query looks occurrences up by path alone
(the search filter compares a prefix through substr). On the all-release knowledge base the three
indexes took 12 MB.
"""

from alembic import op

revision = "0005_occurrence_indexes"
down_revision = "0004_site_bodies"
branch_labels = None
depends_on = None

DROPPED = {
    "ix_occurrences_error_id": ["error_id"],
    "ix_occurrences_snapshot_id": ["snapshot_id"],
    "ix_occurrences_path": ["path"],
}


def upgrade() -> None:
    with op.batch_alter_table("occurrences") as batch_op:
        for name in DROPPED:
            batch_op.drop_index(name)


def downgrade() -> None:
    with op.batch_alter_table("occurrences") as batch_op:
        for name, columns in DROPPED.items():
            batch_op.create_index(name, columns, unique=False)
