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

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from errkb.core.models import Error, Occurrence, SiteBody, Snapshot
from errkb.core.search.index import involved_flag_names
from errkb.service.browse.queries import (
    ModuleTree,
    crumbs,
    flag_definitions,
    flag_errors,
    flag_summaries,
    module_tree,
    snapshot_labels,
)
from errkb.service.pages.export_entries import write_entry_pages
from errkb.service.pages.highlight import pygments_css
from errkb.service.pages.render import STATIC, PageMeta, render
from errkb.service.pages.urls import ExportLinks, flag_slug
from errkb.service.search.queries import SearchResults, hits_for

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
    session: Session,
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

    ids = list(session.scalars(select(Error.id).order_by(Error.id)))
    write_entry_pages(session, ids, outdir, base, workers=workers, progress=progress)
    out.pages += [f"errors/{i}.html" for i in ids]
    out.files += 2 * len(ids)
    stats.errors = len(ids)

    index = _search_index(session)
    out.write("search-index.json", json.dumps(index, separators=(",", ":")), page=False)
    labels = snapshot_labels(session)
    page = PageMeta(
        title="Errors of the knowledge base",
        description=f"Documentation of {len(ids)} errors, derived from the source code.",
        canonical=_canonical(base, "index.html"),
    )
    out.write(
        "index.html",
        render(
            "index.html",
            links=ExportLinks(0),
            page=page,
            heading="Error knowledge base",
            stats={"errors": len(ids), "snapshots": labels},
            results=None,
            searching=False,
            search_index_url="search-index.json",
        ),
    )
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


def _results(session: Session, ids: set[str]) -> SearchResults:
    """Every error of `ids` as one result page, alphabetical by title."""
    items = hits_for(session, [(i, False) for i in ids])
    items.sort(key=lambda h: (h.title.casefold(), h.id))
    return SearchResults(total=len(items), limit=max(len(items), 1), items=items)


def _write_modules(session: Session, out: _Writer, tree: ModuleTree, base: str) -> int:
    count = 0
    for path in sorted(set(tree.children) | set(tree.files)):
        is_file = path in tree.files and not tree.is_folder(path)
        rel = f"modules/{path}.html" if path else "modules/index.html"
        total = len(tree.files[path]) if is_file else len(tree.under.get(path, ()))
        where = f"{'in' if is_file else 'under'} {path or 'the code'}"
        page = PageMeta(
            title=path or "Modules",
            description=f"{total} errors raised {where}",
            canonical=_canonical(base, rel),
        )
        html = render(
            "module.html",
            links=ExportLinks(_depth(rel)),
            page=page,
            path=path,
            crumbs=crumbs(path),
            is_file=is_file,
            children=[] if is_file else tree.listing(path),
            total=total,
            snapshot="",
            results=_results(session, tree.files[path]) if is_file else None,
            next_url=None,
        )
        out.write(rel, html)
        count += 1
    return count


def _write_flags(session: Session, out: _Writer, base: str) -> int:
    summaries = flag_summaries(session)
    page = PageMeta(
        title="Flags",
        description=f"{len(summaries)} command-line flags involved in errors",
        canonical=_canonical(base, "flags/index.html"),
    )
    out.write(
        "flags/index.html", render("flags.html", links=ExportLinks(1), page=page, flags=summaries)
    )
    errors = flag_errors(session)
    defs = flag_definitions(session, sorted(errors))
    labels = {i: label for i, label in session.execute(select(Snapshot.id, Snapshot.label))}
    for s in summaries:
        rel = f"flags/{flag_slug(s.flag)}.html"
        flag_defs = defs.get(s.flag, [])
        page = PageMeta(
            title=s.flag,
            description=(s.help or f"Errors involving {s.flag}")[:300],
            canonical=_canonical(base, rel),
        )
        html = render(
            "flag.html",
            links=ExportLinks(1),
            page=page,
            flag=s.flag,
            definitions=flag_defs,
            results=_results(session, errors[s.flag]),
            defined_in=[labels[i] for i in sorted({d.snapshot_id for d in flag_defs})],
            next_url=None,
        )
        out.write(rel, html)
    return len(summaries)


def _search_index(session: Session) -> dict[str, Any]:
    """What the in-browser search filters: message, paths, flags and snapshots of every error."""
    paths: dict[str, set[str]] = defaultdict(set)
    flags: dict[str, set[str]] = defaultdict(set)
    snaps: dict[str, dict[str, tuple[str, str]]] = defaultdict(dict)
    stmt = (
        select(
            Occurrence.error_id,
            Occurrence.path,
            Occurrence.line,
            SiteBody.flags,
            Snapshot.label,
            Snapshot.sort_key,
        )
        .join(Snapshot, Snapshot.id == Occurrence.snapshot_id)
        .join(SiteBody, SiteBody.hash == Occurrence.body_hash)
    )
    for error_id, path, line, involvements, label, sort_key in session.execute(stmt):
        paths[error_id].add(path)
        flags[error_id].update(involved_flag_names(involvements))
        snaps[error_id].setdefault(label, (sort_key, f"{path}:{line}"))
    rows = session.execute(select(Error.id, Error.title, Error.exception, Error.message)).all()
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
    total = session.execute(select(func.count()).select_from(Error)).scalar_one()
    return {"version": 1, "count": total, "errors": errors}


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
