"""The static site: the same pages as the live service, written to files with relative links.

`errkb export-site OUTDIR` lets a project host its error docs on any file server (or open them
from disk): one page and one JSON file per error, the index with an in-browser search over
`search-index.json`, module and flag pages, the stylesheets and script, and `sitemap.xml`.
Entries come from `build_entry`, lists from the search and browse services: nothing here
re-derives what the service already knows.
"""

from __future__ import annotations

import json
import shutil
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote
from xml.etree import ElementTree as ET

from errkb.core.search.index import involved_flag_names
from errkb.service.pages import contexts
from errkb.service.pages.export_entries import write_entry_pages
from errkb.service.pages.highlight import pygments_css
from errkb.service.pages.render import STATIC
from errkb.service.pages.urls import ExportLinks, flag_slug
from errkb.service.read import DbSession
from errkb.service.read.browse import (
    ModuleTree,
    class_counts,
    error_count,
    error_ids,
    error_summaries,
    flag_definitions,
    flag_errors,
    flag_summaries,
    hits_for,
    labels_by_id,
    module_tree,
    occurrence_rows,
    snapshot_labels,
)
from errkb.service.read.search import SearchResults

SITEMAP_NS = "http://www.sitemaps.org/schemas/sitemap/0.9"


@dataclass
class ExportStats:
    """What an export wrote."""

    errors: int = 0
    modules: int = 0
    flags: int = 0
    files: int = 0


class _Writer:
    """Writes pages under the output folder and remembers their URLs for the sitemap."""

    def __init__(self, outdir: Path) -> None:
        self.outdir = outdir
        self.pages: list[str] = []
        self.files = 0

    def write(self, rel: str, text: str, *, page: bool = True) -> None:
        target = self.outdir / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
        self.files += 1
        if page:
            self.pages.append(rel)


def _depth(rel: str) -> int:
    return rel.count("/")


def _canonical(base: str, rel: str) -> str | None:
    return f"{base}/{rel}" if base else None


def export_site(
    session: DbSession,
    outdir: Path,
    *,
    base_url: str = "",
    progress: Callable[[int, int], None] | None = None,
    workers: int = 0,
) -> ExportStats:
    """Write the whole site under `outdir`; `base_url` makes canonical and sitemap URLs absolute.

    `workers` processes write the entry pages (0: one per core).
    """
    base = base_url.rstrip("/")
    out = _Writer(outdir)
    stats = ExportStats()
    _write_static(outdir)

    ids = error_ids(session)
    write_entry_pages(session, ids, outdir, base, workers=workers, progress=progress)
    out.pages += [f"errors/{i}.html" for i in ids]
    out.files += 2 * len(ids)
    stats.errors = len(ids)

    index = _search_index(session)
    out.write("search-index.json", json.dumps(index, separators=(",", ":")), page=False)
    page = contexts.index_page(
        {
            "errors": len(ids),
            "snapshots": snapshot_labels(session),
            "classes": class_counts(session),
        },
        results=None,
        search_index_url="search-index.json",
        canonical=_canonical(base, "index.html"),
    )
    out.write("index.html", page.render(ExportLinks(0)))
    stats.modules = _write_modules(session, out, module_tree(session), base)
    stats.flags = _write_flags(session, out, base)
    _write_sitemap(outdir, out.pages, base)
    stats.files = out.files + 1
    return stats


def _write_static(outdir: Path) -> None:
    static = outdir / "static"
    static.mkdir(parents=True, exist_ok=True)
    for name in ("site.css", "site.js"):
        shutil.copyfile(STATIC / name, static / name)
    (static / "pygments.css").write_text(pygments_css(), encoding="utf-8")


def _results(session: DbSession, ids: set[str]) -> SearchResults:
    """Every error of `ids` as one result page, alphabetical by title."""
    items = hits_for(session, [(i, False) for i in ids])
    items.sort(key=lambda h: (h.title.casefold(), h.id))
    return SearchResults(total=len(items), limit=max(len(items), 1), items=items)


def _write_modules(session: DbSession, out: _Writer, tree: ModuleTree, base: str) -> int:
    count = 0
    for path in sorted(set(tree.children) | set(tree.files)):
        rel = f"modules/{path}.html" if path else "modules/index.html"
        results = _results(session, tree.files[path]) if path in tree.files else None
        page = contexts.module_page(tree, path, results=results, canonical=_canonical(base, rel))
        out.write(rel, page.render(ExportLinks(_depth(rel))))
        count += 1
    return count


def _write_flags(session: DbSession, out: _Writer, base: str) -> int:
    summaries = flag_summaries(session)
    page = contexts.flags_page(summaries, canonical=_canonical(base, "flags/index.html"))
    out.write("flags/index.html", page.render(ExportLinks(1)))
    errors = flag_errors(session)
    defs = flag_definitions(session, sorted(errors))
    labels = labels_by_id(session)
    for s in summaries:
        rel = f"flags/{flag_slug(s.flag)}.html"
        flag_defs = defs.get(s.flag, [])
        defined_in = [labels[i] for i in sorted({d.snapshot_id for d in flag_defs})]
        page = contexts.flag_page(
            s.flag,
            flag_defs,
            _results(session, errors[s.flag]),
            defined_in,
            canonical=_canonical(base, rel),
        )
        out.write(rel, page.render(ExportLinks(1)))
    return len(summaries)


def _search_index(session: DbSession) -> dict[str, Any]:
    """What the in-browser search filters: message, paths, flags and snapshots of every error."""
    paths: dict[str, set[str]] = defaultdict(set)
    flags: dict[str, set[str]] = defaultdict(set)
    snaps: dict[str, dict[str, tuple[str, str]]] = defaultdict(dict)
    for error_id, path, line, involvements, label, sort_key in occurrence_rows(session):
        paths[error_id].add(path)
        flags[error_id].update(involved_flag_names(involvements))
        snaps[error_id].setdefault(label, (sort_key, f"{path}:{line}"))
    rows = error_summaries(session)
    errors = []
    for r in sorted(rows, key=lambda r: (r.message.casefold(), r.id)):
        ordered = sorted(snaps[r.id].items(), key=lambda kv: (kv[1][0], kv[0]))
        errors.append(
            {
                "id": r.id,
                "href": f"errors/{r.id}.html",
                "title": r.title,
                "exception": r.exception,
                "message": r.message,
                "paths": sorted(paths[r.id]),
                "flags": sorted(flags[r.id]),
                "snapshots": [label for label, _ in ordered],
                "where": ordered[-1][1][1] if ordered else "",
            }
        )
    return {"version": 1, "count": error_count(session), "errors": errors}


def sitemap_xml(locs: list[str]) -> bytes:
    """A sitemaps.org `urlset` document listing `locs` in order."""
    ET.register_namespace("", SITEMAP_NS)
    urlset = ET.Element(f"{{{SITEMAP_NS}}}urlset")
    for loc in locs:
        url = ET.SubElement(urlset, f"{{{SITEMAP_NS}}}url")
        ET.SubElement(url, f"{{{SITEMAP_NS}}}loc").text = loc
    return bytes(ET.tostring(urlset, encoding="utf-8", xml_declaration=True))


def _write_sitemap(outdir: Path, pages: list[str], base: str) -> None:
    prefix = f"{base}/" if base else ""
    (outdir / "sitemap.xml").write_bytes(sitemap_xml([prefix + quote(p) for p in sorted(pages)]))
