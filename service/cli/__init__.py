"""The `errkb` command line, the top layer: it drives ingest and the service."""
