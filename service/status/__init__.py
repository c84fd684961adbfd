"""The knowledge base's state (mapped into the package as `errkb.service.status`): per project
the snapshots held and the last ingest, and whether the entry docs are current (`state`), read
by `errkb status` and `/healthz`; its SQL is in `queries`."""
