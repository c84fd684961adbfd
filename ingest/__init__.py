"""The ingest pipeline: sources -> extraction -> synthesis -> store."""
