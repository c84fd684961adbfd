"""The core every layer shares: settings, database, schema, errors, domain records, search index."""
