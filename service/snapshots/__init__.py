"""Snapshots: what has been ingested."""
