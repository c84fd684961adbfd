"""Search: the `/api/errors` listing and the queries behind the index page."""
