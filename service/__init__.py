"""The FastAPI service: JSON API, HTML pages and the log matcher."""
