"""Browsing: the knowledge base by module (a folder tree with counts), by flag and by snapshot.

These are the answers behind the index page's counts, the module and flag pages, the sitemap,
`GET /api/snapshots` and the static export. Each is one query (or a handful) in its domain's
`queries` module; front ends reach them only through here.
"""

from __future__ import annotations

from errkb.service.browse.queries import (
    FlagSummary,
    ModuleTree,
    class_counts,
    crumbs,
    error_count,
    error_ids,
    error_summaries,
    flag_definitions,
    flag_errors,
    flag_summaries,
    module_tree,
    occurrence_rows,
    snapshot_labels,
)
from errkb.service.browse.trees import ModuleTrees
from errkb.service.search.queries import hits_for
from errkb.service.snapshots.queries import labels_by_id, list_snapshots
from errkb.service.snapshots.schemas import SnapshotOut

__all__ = [
    "FlagSummary",
    "ModuleTree",
    "ModuleTrees",
    "SnapshotOut",
    "class_counts",
    "crumbs",
    "error_count",
    "error_ids",
    "error_summaries",
    "flag_definitions",
    "flag_errors",
    "flag_summaries",
    "hits_for",
    "labels_by_id",
    "list_snapshots",
    "module_tree",
    "occurrence_rows",
    "snapshot_labels",
]
