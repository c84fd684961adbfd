"""Browse: module trees, flag lists and snapshot labels for the index pages."""
