"""Linking raise sites to flags: which options a message names or a guard reads (pure).

Owned by the knowledge work (issue 3); the pipeline calls `flag_involvements` for every site once
the snapshot's flag catalog is known, and stores the result in `occurrences.flags`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ingest.records import FlagDef, Site


def flag_involvements(site: Site, catalog: Mapping[str, FlagDef]) -> list[dict[str, Any]]:
    """Flags involved in a site; `catalog` maps dest name -> FlagDef for the snapshot."""
    return []  # in progress: implemented by the knowledge work
