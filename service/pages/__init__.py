"""The HTML pages and the static export, rendered from the same context builders."""
