"""snapshots: the requirements each snapshot declares

A failed import's entry names the distribution that provides the module, the version range this
release asks for and the extra that brings it. They come from the release's own metadata
(`Requires-Dist` of a wheel, `pyproject.toml` of a commit or folder), read at ingest and kept as
JSON with the snapshot: a list of {name, specifier, extra, marker, extras, url}. Snapshots ingested
before keep NULL (not read), which the entries tell from an empty list (nothing declared).

Revision ID: 0015_snapshot_requirements
Revises: 0014_entry_doc_stable
Create Date: 2026-12-07 05:40:00
"""

import sqlalchemy as sa
from alembic import op

revision = "0015_snapshot_requirements"
down_revision = "0014_entry_doc_stable"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # A nullable column: a plain ADD COLUMN on both dialects, no batch copy (see 0011).
    op.add_column("snapshots", sa.Column("requirements", sa.JSON(), nullable=True))


def downgrade() -> None:
    # A plain DROP COLUMN on both dialects (see 0011): a batch copy of `snapshots` on SQLite
    # drops the table, and its ON DELETE CASCADE empties every table that points to it.
    op.drop_column("snapshots", "requirements")
