"""URLs between pages, for the live site (absolute paths) and the static export (relative files).

Templates only ever call a `links` object, so one set of templates renders both: the server's
`/errors/{id}?snapshot=0.5.19` and the export's `../errors/{id}.html#snap-0.5.19`, which works
from any file server or straight from disk.
"""

from __future__ import annotations

from urllib.parse import quote, urlencode

from errkb.service.pages.view import anchor_for


def flag_slug(flag: str) -> str:
    """`--enable-unified-memory` -> `enable-unified-memory`: the flag's URL and file name."""
    name = flag.lstrip("-") or flag
    return "".join(c if c.isascii() and (c.isalnum() or c in "-_.") else "_" for c in name)


class ServerLinks:
    """Links of the live service, rooted at the app's root path."""

    live = True

    def __init__(self, root: str = "", *, empty: bool = False) -> None:
        self.root = root.rstrip("/")
        self.empty = empty  # nothing ingested yet: every page says so

    def home(self, **query: str) -> str:
        """The index and search page, with an optional query string."""
        query = {k: v for k, v in query.items() if v}
        return f"{self.root}/" + (("?" + urlencode(query)) if query else "")

    def search_action(self) -> str:
        return f"{self.root}/"

    def match_action(self) -> str:
        return f"{self.root}/match"

    def error(self, error_id: str, snapshot: str | None = None) -> str:
        url = f"{self.root}/errors/{quote(error_id)}"
        return url + (f"?snapshot={quote(snapshot, safe='')}" if snapshot else "")

    def modules(self, path: str = "") -> str:
        return f"{self.root}/modules/" + quote(path)

    def flags(self) -> str:
        return f"{self.root}/flags/"

    def flag(self, flag: str) -> str:
        return f"{self.root}/flags/{quote(flag_slug(flag))}"

    def static(self, name: str) -> str:
        return f"{self.root}/static/{name}"

    def json(self, error_id: str) -> str:
        return f"{self.root}/api/errors/{quote(error_id)}"

    def json_label(self, error_id: str) -> str:
        return self.json(error_id)

    def api_docs(self) -> str:
        return f"{self.root}/docs"


class ExportLinks:
    """Relative links between the exported files; `depth` is how many folders deep the page is."""

    live = False
    empty = False  # an export holds what was ingested

    def __init__(self, depth: int) -> None:
        self.up = "../" * depth

    def home(self, **query: str) -> str:
        query = {k: v for k, v in query.items() if v}
        return f"{self.up}index.html" + (("?" + urlencode(query)) if query else "")

    def search_action(self) -> str:
        return f"{self.up}index.html"

    def match_action(self) -> str:
        return ""

    def error(self, error_id: str, snapshot: str | None = None) -> str:
        url = f"{self.up}errors/{quote(error_id)}.html"
        # One page per error: a version's link goes to its row of the version history.
        return url + (f"#tl-{anchor_for(snapshot)}" if snapshot else "")

    def modules(self, path: str = "") -> str:
        return f"{self.up}modules/" + (quote(path) + ".html" if path else "index.html")

    def flags(self) -> str:
        return f"{self.up}flags/index.html"

    def flag(self, flag: str) -> str:
        return f"{self.up}flags/{quote(flag_slug(flag))}.html"

    def static(self, name: str) -> str:
        return f"{self.up}static/{name}"

    def json(self, error_id: str) -> str:
        return f"{self.up}errors/{quote(error_id)}.json"

    def json_label(self, error_id: str) -> str:
        return f"errors/{error_id}.json"

    def api_docs(self) -> str:
        return ""
