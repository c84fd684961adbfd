"""Entries: the full record of one error, as JSON and as the data behind its page."""
