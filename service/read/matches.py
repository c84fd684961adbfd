"""The errors a pasted log or traceback shows, ranked, with the evidence for each.

The matcher (`service.match.matcher`) is pure: it ranks a text against an index of every known
message. This module builds that index from the database (`match_index`; a match process keeps
one, see `match_worker`), and turns the matcher's findings into the served `MatchOut`, for the
API, the paste box, the CLI and the MCP server alike.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from errkb.service.match.elsewhere import nearest_in_function, outside_matches, roots_of
from errkb.service.match.import_text import with_import_matches
from errkb.service.match.matcher import Match, MatchIndex, match_text
from errkb.service.match.queries import DbEngine, load_index
from errkb.service.match.raisers import Raiser, implicit_error, raiser_of
from errkb.service.match.schemas import (
    MatchOut,
    MatchResponse,
    RaisedBy,
    match_out,
    matches_json,
    text_of,
)

__all__ = [
    "MatchIndex",
    "MatchOut",
    "MatchResponse",
    "RaisedBy",
    "match_answer",
    "match_index",
    "matches_in",
    "matches_json_in",
    "text_of",
]


def match_index(engine: DbEngine) -> MatchIndex:
    """The index of every known message, read from the database now."""
    return load_index(engine)


@dataclass(frozen=True)
class _Answer:
    matches: list[Match]
    notes: dict[str, str] = field(default_factory=dict)
    raiser: Raiser | None = None


def _answer(index: MatchIndex, text: str, *, limit: int) -> _Answer:
    """The matcher's findings, with the failed imports a text tells in other words, and what
    the traceback says of who raised the error (`errkb.service.match.elsewhere`)."""
    found = match_text(index, text, limit=limit)
    found = with_import_matches(found, text, lambda t: match_text(index, t, limit=3), limit)
    roots = roots_of(index)
    raiser = raiser_of(text, roots)
    if raiser is not None:
        return _Answer(outside_matches(found, raiser), raiser=raiser)
    implicit = implicit_error(text, roots)
    if implicit is not None:
        kept, notes = nearest_in_function(index, found, implicit[1], text)
        return _Answer(kept[:limit], notes)
    return _Answer(found)


def _raised_by(raiser: Raiser | None) -> dict[str, Any] | None:
    """The `RaisedBy` of a response, as plain data."""
    if raiser is None:
        return None
    frame = raiser.frame
    where = ""
    if frame is not None:
        where = f" The project called it at {frame.path}, line {frame.line}, in {frame.function}."
    return {
        "package": raiser.package,
        "text": f"The error is raised by {raiser.package}, not by the project's own code.{where}",
        "frame": None
        if frame is None
        else {"path": frame.path, "line": frame.line, "function": frame.function},
    }


def matches_in(index: MatchIndex, text: str, *, limit: int, public_url: str) -> list[MatchOut]:
    """The errors `text` shows, best first, with links under `public_url` (or relative)."""
    answer = _answer(index, text, limit=limit)
    return [match_out(m, public_url, answer.notes.get(m.entry.id)) for m in answer.matches]


def match_answer(index: MatchIndex, text: str, *, limit: int, public_url: str) -> MatchResponse:
    """The whole answer: the matches, and the package that raised the error when it is not the
    project."""
    answer = _answer(index, text, limit=limit)
    raised = _raised_by(answer.raiser)
    return MatchResponse(
        matches=[match_out(m, public_url, answer.notes.get(m.entry.id)) for m in answer.matches],
        raised_by=RaisedBy.model_validate(raised) if raised is not None else None,
    )


def matches_json_in(index: MatchIndex, text: str, *, limit: int, public_url: str) -> bytes:
    """The same answer as the API's JSON body (`MatchResponse`), serialized."""
    answer = _answer(index, text, limit=limit)
    return matches_json(
        answer.matches, public_url, notes=answer.notes, raised_by=_raised_by(answer.raiser)
    )
