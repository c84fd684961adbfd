"""An error's occurrences as served: one page of all of them (`occurrence_page`), and each one
with its conditions, snippet, pinned link and flags (`occurrence_out`, also used by the entry).
"""

from __future__ import annotations

import re
from dataclasses import asdict

from errkb.core.errors import BadInput
from errkb.core.models import Error, Occurrence, Snapshot
from errkb.core.records import FlagDef, flag_links
from errkb.core.settings import Settings
from errkb.knowledge.facts import Involvement
from errkb.service.entries.facts import site_of
from errkb.service.entries.history_out import conditions_out, pinned_url
from errkb.service.entries.queries import error_and_repo, occurrence_count, occurrence_rows
from errkb.service.entries.schemas import FlagOut, OccurrenceOut, OccurrencePage
from errkb.service.queries import DbSession as Session


def _link(link_base: str | None, path: str, line: int) -> str | None:
    return f"{link_base}{path}#L{line}" if link_base else None


def flag_out(inv: Involvement, link_base: str | None) -> FlagOut:
    """A flag the error involves, with its definition where the snapshot defines it."""
    d = inv.definition
    return FlagOut(
        flag=inv.flag,
        flags=list(d.flags) if d else [inv.flag],
        dest=inv.dest,
        sides=[s for s in inv.sides if s in ("message", "condition")],  # type: ignore[misc]
        polarity=inv.polarity,  # type: ignore[arg-type]
        value=inv.value,
        condition=inv.condition,
        required=inv.required,
        type=d.type if d else None,
        default=d.default if d else None,
        choices=list(d.choices) if d and d.choices is not None else None,
        help=d.help if d else None,
        defined_at=f"{d.path}:{d.line}" if d else None,
        defined_url=_link(link_base, d.path, d.line) if d else None,
    )


# An occurrence page's cursor is the offset of its first row: ASCII digits, small enough for
# any database integer (declared in the OpenAPI document, so forged values never reach a query).
OCCURRENCE_CURSOR = r"^[0-9]{1,9}$"


def occurrence_page(
    session: Session,
    error_id: str,
    *,
    cursor: str | None,
    limit: int,
    settings: Settings | None = None,
) -> OccurrencePage:
    """One page of every occurrence of an error, newest snapshot first, then by path and line."""
    error, _ = error_and_repo(session, error_id)
    if cursor is not None and re.fullmatch(OCCURRENCE_CURSOR, cursor) is None:
        raise BadInput(f"cursor must be the next_cursor of a previous page, got {cursor!r}")
    offset = int(cursor or 0)
    total = occurrence_count(session, error_id)
    rows = occurrence_rows(session, error_id, offset, limit)
    nxt = offset + len(rows)
    more = nxt < total
    base = settings.public_url.rstrip("/") if settings else ""
    return OccurrencePage(
        items=[occurrence_out(error, occ, snap, {}) for occ, snap in rows],
        total=total,
        next_cursor=str(nxt) if more else None,
        next_url=f"{base}/api/errors/{error.id}/occurrences?cursor={nxt}&limit={limit}"
        if more
        else None,
    )


def occurrence_out(
    error: Error, occ: Occurrence, snap: Snapshot, catalog: dict[str, FlagDef]
) -> OccurrenceOut:
    """One stored occurrence as served, flag definitions taken from `catalog`."""
    site = site_of(error, occ)
    links = flag_links(occ.flags)
    return OccurrenceOut(
        snapshot=snap.label,
        snapshot_date=snap.date,
        path=occ.path,
        line=occ.line,
        end_line=occ.end_line,
        function=occ.qualname,
        conditions=conditions_out(site.conditions),
        snippet=asdict(site.snippet),  # type: ignore[arg-type]
        raise_source=occ.raise_source,
        url=pinned_url(snap, occ.path, occ.line, occ.end_line),
        flags=[
            flag_out(Involvement.from_link(link, catalog.get(link.dest)), snap.link_base)
            for link in links
        ],
    )
