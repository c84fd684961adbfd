"""entry_docs: the inputs hash without the reach of the newest run of releases

A new release that raises an error exactly as the release before did changes nothing in its
entry but the version lists. `stable` is the inputs hash that leaves that reach out: when it
held, a build may leave the doc to its first request or a background build. Rows of older
builds have none: they count as changed in content, and the next build replaces them.

Revision ID: 0014_entry_doc_stable
Revises: 0013_occurrence_function
Create Date: 2026-12-05 18:00:00
"""

import sqlalchemy as sa
from alembic import op

revision = "0014_entry_doc_stable"
down_revision = "0013_occurrence_function"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("entry_docs", sa.Column("stable", sa.String(64), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("entry_docs") as batch:
        batch.drop_column("stable")
