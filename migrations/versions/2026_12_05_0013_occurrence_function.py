"""occurrences: the raising function's own name, and indexes by snapshot with path or function

Building an entry looks up, in one snapshot, the other errors raised in the same files (related
errors) and by functions of the same name (the lineage: is the check still there after it
stopped raising this error?). Both scanned every occurrence of the snapshot, about 30,000 on a
late sglang release with every class and assert: 4 and 10 ms per entry, a third of a doc's cost.
`function` is the last part of `qualname`; (snapshot, path) replaces the snapshot-only index,
which it serves as well.

Revision ID: 0013_occurrence_function
Revises: 0012_entry_doc_inputs
Create Date: 2026-12-05 11:30:00
"""

import sqlalchemy as sa
from alembic import op

revision = "0013_occurrence_function"
down_revision = "0012_entry_doc_inputs"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Plain ADD COLUMN (no batch copy: see 0011), then the rows written before are filled in.
    op.add_column(
        "occurrences",
        sa.Column("function", sa.String(300), nullable=False, server_default=""),
    )
    if op.get_bind().dialect.name == "postgresql":
        op.execute("UPDATE occurrences SET function = regexp_replace(qualname, '^.*\\.', '')")
    else:
        # SQLite has no reverse search: rtrim(q, q-without-dots) strips the last dotted part
        # off the end, so what follows that prefix is the last part.
        op.execute(
            "UPDATE occurrences SET function = "
            "substr(qualname, length(rtrim(qualname, replace(qualname, '.', ''))) + 1)"
        )
    op.create_index("ix_occurrences_snapshot_path", "occurrences", ["snapshot_id", "path"])
    op.create_index(
        "ix_occurrences_snapshot_function", "occurrences", ["snapshot_id", "function"]
    )
    op.drop_index("ix_occurrences_snapshot_id", table_name="occurrences")


def downgrade() -> None:
    op.create_index("ix_occurrences_snapshot_id", "occurrences", ["snapshot_id"])
    op.drop_index("ix_occurrences_snapshot_function", table_name="occurrences")
    op.drop_index("ix_occurrences_snapshot_path", table_name="occurrences")
    op.drop_column("occurrences", "function")
