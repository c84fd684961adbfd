"""entry_docs: the hash of each doc's inputs and the related errors it names

A doc is rebuilt only when the hash of its inputs (its error, occurrences, the snapshots around
them, the knowledge code's version, and the titles of the related errors it names) moves. Rows
of older builds have neither column: they count as changed, and the next build replaces them.

Revision ID: 0012_entry_doc_inputs
Revises: 0011_exception_classes
Create Date: 2026-12-04 18:10:00
"""

import sqlalchemy as sa
from alembic import op

revision = "0012_entry_doc_inputs"
down_revision = "0011_exception_classes"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("entry_docs") as batch:
        batch.add_column(sa.Column("inputs", sa.String(64), nullable=True))
        batch.add_column(sa.Column("related", sa.Text(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("entry_docs") as batch:
        batch.drop_column("related")
        batch.drop_column("inputs")
