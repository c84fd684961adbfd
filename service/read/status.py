"""The status of the knowledge base: whether its database answers, and what it holds.

`/healthz` reports whether the last database round trip succeeded (`ping`, made by the app's
`DatabaseWatch`) and the knowledge base in a few fields (`knowledge_summary`); the index page
shows what the knowledge base holds (`kb_status`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from errkb.service.browse.queries import error_count, snapshot_labels
from errkb.service.queries import DbSession, VersionTracker, ping, session_kb_key
from errkb.service.status import state

# VersionTracker: the content key every cached answer is keyed by, for a process that keeps
# answers (a server, `errkb mcp`).
__all__ = [
    "EMPTY_KB",
    "KbStatus",
    "VersionTracker",
    "content_key",
    "kb_status",
    "knowledge_summary",
    "ping",
]


@dataclass(frozen=True)
class KbStatus:
    """What the knowledge base holds, as one transaction sees it."""

    errors: int  # distinct errors
    snapshots: list[str]  # labels of the ingested snapshots, oldest first


def kb_status(session: DbSession) -> KbStatus:
    """How many errors the knowledge base holds, and from which snapshots."""
    return KbStatus(error_count(session), snapshot_labels(session))


def knowledge_summary(session: DbSession) -> dict[str, Any]:
    """The knowledge base in a few fields, as `errkb status` counts them: snapshots, newest
    release, last ingest, entries and current entry documents."""
    return state.compact(state.kb_status(session))


def content_key(session: DbSession) -> str:
    """The content key as the session's transaction sees it: stored entry docs are keyed by it."""
    return session_kb_key(session)


# What a server on an empty knowledge base says in its 404s and its /healthz.
EMPTY_KB = "the knowledge base is empty: nothing has been ingested yet (run `errkb ingest`)"
