"""What each browsing page shows, built once for the live site and the static export.

A route and the exporter differ only in where the data comes from (one page of search results,
or every result at once) and in how links are written (`ServerLinks` or `ExportLinks`); the
title, description, template and values of a page are decided here, so the two never drift.
Entry pages have their own builder, `render.render_entry`, shared the same way.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from errkb.service.pages.render import PageMeta, render
from errkb.service.read.browse import ModuleTree, crumbs
from errkb.service.read.search import SearchResults

DESCRIPTION_CHARS = 300


@dataclass(frozen=True)
class Page:
    """One page to render: its template, its <head> facts and the template's values."""

    template: str
    meta: PageMeta
    values: dict[str, Any]

    def render(self, links: Any) -> str:
        return render(self.template, links=links, page=self.meta, **self.values)


def index_page(
    stats: dict[str, Any],
    *,
    results: SearchResults | None,
    q: str = "",
    searching: bool = False,
    pager: dict[str, Any] | None = None,
    search_index_url: str = "",
    canonical: str | None = None,
) -> Page:
    """The index: counts, and search results (`results`, live) or the in-browser search over
    `search_index_url` (the export, which has no server to paste a traceback to)."""
    errors = stats["errors"]
    if search_index_url:
        description = f"Documentation of {errors} errors, derived from the source code."
    else:
        description = (
            f"Search {errors} errors by message, path and flag, or paste a traceback to find "
            "which error it shows."
        )
    meta = PageMeta(
        title=f"Search: {q}" if q else "Errors of the knowledge base",
        description=description,
        canonical=canonical,
    )
    values = {
        "heading": "Error knowledge base",
        "stats": stats,
        "results": results,
        "header_q": q if searching else "",
        "searching": searching,
        "search_index_url": search_index_url,
        **(pager or {}),
    }
    return Page("index.html", meta, values)


def module_page(
    tree: ModuleTree,
    path: str,
    *,
    results: SearchResults | None,
    next_url: str | None = None,
    snapshot: str = "",
    canonical: str | None = None,
) -> Page:
    """A folder (its children with error counts) or a file (`results`: the errors it raises)."""
    is_file = path in tree.files and not tree.is_folder(path)
    total = len(tree.files[path]) if is_file else len(tree.under.get(path, ()))
    where = f"{'in' if is_file else 'under'} {path or 'the code'}"
    meta = PageMeta(
        title=path or "Modules", description=f"{total} errors raised {where}", canonical=canonical
    )
    values = {
        "path": path,
        "crumbs": crumbs(path),
        "is_file": is_file,
        "children": [] if is_file else tree.listing(path),
        "total": total,
        "snapshot": snapshot,
        "results": results if is_file else None,
        "next_url": next_url,
    }
    return Page("module.html", meta, values)


def flags_page(flags: Sequence[Any], *, canonical: str | None = None) -> Page:
    """Every flag that errors name or check (`browse.queries.flag_summaries`)."""
    meta = PageMeta(
        title="Flags",
        description=f"{len(flags)} command-line flags involved in errors",
        canonical=canonical,
    )
    return Page("flags.html", meta, {"flags": flags})


def flag_page(
    flag: str,
    definitions: Sequence[Any],
    results: SearchResults,
    defined_in: list[str],
    *,
    next_url: str | None = None,
    canonical: str | None = None,
) -> Page:
    """One flag: where it is defined (`definitions`, with their help) and the errors involving
    it."""
    help_text = next((d.help for d in definitions if d.help), None)
    meta = PageMeta(
        title=flag,
        description=(help_text or f"Errors involving {flag}")[:DESCRIPTION_CHARS],
        canonical=canonical,
    )
    values = {
        "flag": flag,
        "definitions": definitions,
        "results": results,
        "defined_in": defined_in,
        "next_url": next_url,
    }
    return Page("flag.html", meta, values)
