"""The full-text search index: written by the ingester, read by the service."""
