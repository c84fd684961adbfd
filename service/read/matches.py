"""The errors a pasted log or traceback shows, ranked, with the evidence for each.

The matcher (`service.match.matcher`) is pure: it ranks a text against an index of every known
message. This module builds that index from the database (`match_index`; a match process keeps
one, see `match_worker`), and turns the matcher's findings into the served `MatchOut`, for the
API, the paste box, the CLI and the MCP server alike.
"""

from __future__ import annotations

from errkb.service.match.import_text import with_import_matches
from errkb.service.match.matcher import Match, MatchIndex, match_text
from errkb.service.match.queries import DbEngine, load_index
from errkb.service.match.schemas import MatchOut, MatchResponse, match_out, matches_json, text_of

__all__ = [
    "MatchIndex",
    "MatchOut",
    "MatchResponse",
    "match_index",
    "matches_in",
    "matches_json_in",
    "text_of",
]


def match_index(engine: DbEngine) -> MatchIndex:
    """The index of every known message, read from the database now."""
    return load_index(engine)


def matches_of(index: MatchIndex, text: str, *, limit: int) -> list[Match]:
    """The matcher's findings, with the failed imports a text tells in other words."""
    found = match_text(index, text, limit=limit)
    return with_import_matches(found, text, lambda t: match_text(index, t, limit=3), limit)


def matches_in(index: MatchIndex, text: str, *, limit: int, public_url: str) -> list[MatchOut]:
    """The errors `text` shows, best first, with links under `public_url` (or relative)."""
    return [match_out(m, public_url) for m in matches_of(index, text, limit=limit)]


def matches_json_in(index: MatchIndex, text: str, *, limit: int, public_url: str) -> bytes:
    """The same matches as the API's JSON body (`MatchResponse`), serialized."""
    return matches_json(matches_of(index, text, limit=limit), public_url)
