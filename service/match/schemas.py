"""The response models of `POST /api/match`, and how a request body and a match become them.

Shared by the route, the HTML paste form and the match processes
(`errkb.service.read.match_processes`), which build `MatchOut`s where the index lives and send
only those back.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel, Field
from pydantic_core import to_json

from errkb.core.errors import BadInput
from errkb.service.match.matcher import Match
from errkb.service.match.matcher.score import WEAK_BELOW

Confidence = Literal["match", "weak guess"]


class Span(BaseModel):
    """Character offsets of the matched text in the input (end exclusive)."""

    start: int
    end: int


class MatchedSite(BaseModel):
    """The raise site a traceback frame pinned."""

    path: str
    line: int
    function: str


class MatchOut(BaseModel):
    """One error the text shows."""

    id: str
    title: str
    score: float = Field(description="0-1; >= 0.8: the message is shown; < 0.5: a weak guess")
    confidence: Confidence = Field(
        description='"match" for a score of 0.5 or more, else "weak guess" (dropped when a '
        "match exists)"
    )
    test_code: bool = Field(
        description="raised only by the project's own tests: ranked below the code a server "
        "runs, unless the text's traceback runs in a test"
    )
    span: Span
    params: dict[str, str] = Field(description="placeholder expression -> captured value")
    site: MatchedSite | None
    snapshots: list[str] = Field(description="ingested snapshots consistent with the input")
    url: str
    note: str | None = Field(
        default=None,
        description="what the match is not: the nearest entry of a function whose line, where "
        "the traceback ends, has no entry of its own",
    )


class RaisedBy(BaseModel):
    """The package that raised the error the text's traceback ends with, when it is not the
    project: its last frame lies in that package."""

    package: str = Field(description='"transformers", "the standard library (json)"')
    text: str = Field(description="the same, in a sentence")
    frame: MatchedSite | None = Field(
        description="the project's last frame before it: where the project called that package"
    )


class MatchResponse(BaseModel):
    """Ranked matches, best first; empty when the text shows no known error."""

    matches: list[MatchOut]
    raised_by: RaisedBy | None = None


def text_of(body: bytes, content_type: str) -> str:
    """The text to match: the body itself, or the `text` field of a JSON object."""
    raw = body.decode("utf-8", errors="replace")
    if not content_type.split(";", 1)[0].strip().lower().endswith("json"):
        return raw
    try:
        data: Any = json.loads(raw)
    except (ValueError, RecursionError) as exc:
        raise BadInput(f"invalid JSON body: {str(exc)[:200]}", loc=("body",)) from None
    if not isinstance(data, dict) or not isinstance(data.get("text"), str):
        raise BadInput('a JSON body must be an object with a string field "text"', loc=("body",))
    text: str = data["text"]
    return text


def match_out(m: Match, public_url: str, note: str | None = None) -> MatchOut:
    """The response form of one match, validated (the API's hot path skips the models:
    `matches_json`)."""
    return MatchOut.model_validate(_match_dict(m, public_url.rstrip("/"), note))


def matches_json(
    matches: list[Match],
    public_url: str,
    *,
    notes: dict[str, str] | None = None,
    raised_by: dict[str, Any] | None = None,
) -> bytes:
    """The API's JSON body (`MatchResponse`) for these matches, built from plain dicts in the
    models' field order: the same bytes as `match_out` and `model_dump_json` give (a test holds
    them equal), without constructing the models (that was a tenth of a match process's
    profiled time per short text)."""
    base = public_url.rstrip("/")
    notes = notes or {}
    found = [_match_dict(m, base, notes.get(m.entry.id)) for m in matches]
    return to_json({"matches": found, "raised_by": raised_by})


def confidence(score: float) -> Confidence:
    """What a score says on the documented scale: a match, or a weak guess."""
    return "match" if score >= WEAK_BELOW else "weak guess"


def _match_dict(m: Match, base: str, note: str | None = None) -> dict[str, Any]:
    """One match as the plain data of a `MatchOut`, in its fields' order."""
    site = None
    if m.site is not None and m.site_line is not None:
        site = {"path": m.site.path, "line": m.site_line, "function": m.site.qualname}
    return {
        "id": m.entry.id,
        "title": m.entry.title,
        "score": m.score,
        "confidence": confidence(m.score),
        "test_code": m.entry.test_code,
        "span": {"start": m.start, "end": m.end},
        "params": m.params,
        "site": site,
        "snapshots": list(m.snapshots),
        "url": f"{base}/errors/{m.entry.id}",
        "note": note,
    }
