"""The structured answers of the MCP tools: small models cut from the read side's results.

An agent pays for every token, so each answer keeps only what decides the next step: which error
it is, why it happens, who is meant to fix it and how, and where the full page is. The fields
keep the names and values of `GET /api/errors/{id}`, so a program can use either.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field, GetJsonSchemaHandler
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema

from errkb.service.entries.schemas import Entry
from errkb.service.match.schemas import Confidence, MatchOut
from errkb.service.mcp.texts import cut
from errkb.service.search.schemas import SearchResults

# Related errors an answer lists (the page lists up to eight): the Markdown and the structured
# copy list the same ones, and every answer the client checks is smaller for it.
RELATED_SHOWN = 5


class SolutionItem(BaseModel):
    """One way out, as the entry lists it."""

    kind: str = Field(
        description="advice (the message's own words), flag (change an involved option), "
        "upgrade (a later version no longer raises it), downgrade (an earlier one did not: a "
        "regression), condition (what must change when nothing concrete is known), report (an "
        "internal check: report it upstream), request_field, environment (a variable, or a "
        "package to install), model, hardware (change that input: the GPU, platform or parallel "
        "sizes for hardware)"
    )
    text: str
    command: str | None = None


class ExampleFix(BaseModel):
    """A command line (or request) that reaches the error, and one that does not."""

    before: str
    after: str
    note: str | None = None


class RelatedItem(BaseModel):
    """An error raised near this one, and why it is related."""

    id: str
    title: str
    reason: str


class VersionRange(BaseModel):
    """An unbroken run of ingested versions that raise the error."""

    first: str
    last: str
    versions: int = Field(description="how many ingested versions the run holds")


class Versions(BaseModel):
    """The ingested versions that raise the error, and the first one that no longer does."""

    ranges: list[VersionRange] = Field(description="the runs of versions that raise it")
    present_in: list[str]
    first_seen: str
    last_seen: str
    gone_in: str | None = None
    summary: str


class Source(BaseModel):
    """Where the shown version raises it, with a link pinned to that version."""

    snapshot: str
    path: str
    line: int
    function: str
    url: str | None = None


# Keywords under which a null could be judged otherwise than by `type` alone.
_NOT_BY_TYPE = {"enum", "const", "anyOf", "oneOf", "allOf", "not", "$ref", "if"}


def nullable_as_type_list(node: dict[str, Any]) -> dict[str, Any]:
    """`{"anyOf": [X, {"type": "null"}]}` as X with `"type": [X's type, "null"]`; else `node`.

    The two say the same: X's other keywords (properties, required, items) apply only to values of
    X's type, so a null passes both and nothing else passes one but not the other.
    """
    branches = node.get("anyOf")
    if not (isinstance(branches, list) and len(branches) == 2 and {"type": "null"} in branches):
        return node
    x = branches[0] if branches[1] == {"type": "null"} else branches[1]
    if not isinstance(x, dict) or not isinstance(x.get("type"), str) or _NOT_BY_TYPE & x.keys():
        return node
    rest = {k: v for k, v in node.items() if k != "anyOf"}
    return {**x, **rest, "type": [x["type"], "null"]}


class Answer(BaseModel):
    """A tool's whole answer, published in the schema shape the SDK's client checks cheapest.

    The SDK's client checks every structured answer against the tool's output schema with
    `jsonschema`, at a cost of one step per value and per subschema tried. With the nested parts
    as `$ref`s into `$defs` (pydantic's default), each check also resolved a reference per
    nested object, 1.35-1.39 times the cost, so they are written in place. An optional field is
    `"type": [T, "null"]` rather than pydantic's `anyOf` of the two, which tried T first and,
    for a null, built an error before trying null: the schema says the same, and checking an
    entry costs 0.80-0.86 times as much (measured on 100 entries of the sglang knowledge base).
    """

    @classmethod
    def __get_pydantic_json_schema__(
        cls, core_schema: CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        def simplified(node: Any) -> Any:
            if isinstance(node, dict):
                if "$ref" in node:
                    return simplified(handler.resolve_ref_schema(node))
                return nullable_as_type_list({k: simplified(v) for k, v in node.items()})
            if isinstance(node, list):
                return [simplified(v) for v in node]
            return node

        return dict(simplified(handler.resolve_ref_schema(handler(core_schema))))


class WhoHitsIt(BaseModel):
    """Who is in a position to hit the error."""

    kind: str = Field(
        description="the input that leads to it: flag, request_field, environment, "
        "model_config, dependency, hardware; internal (a bug in the project), test (the "
        "project's own tests), unknown"
    )
    text: str


class ErrorDetails(Answer):
    """One error's entry, compact: what `get_error` returns."""

    id: str = Field(description="16 hexadecimal digits, stable across versions")
    exception: str = Field(description="the exception class raised (AssertionError: an assert)")
    message: str = Field(description="the message template; {expr} is filled in at run time")
    repo: str = Field(description="the project that raises it")
    what_it_means: str = Field(description="the error in plain words")
    trigger: str = Field(description="what must hold for the code to raise it")
    common_situations: list[str] = Field(description="how users usually get there")
    who_hits_it: WhoHitsIt | None = Field(None, description="whose input leads to it")
    test_code: bool = Field(
        description="raised only in sglang's own tests, not by the code a server runs"
    )
    solutions: list[SolutionItem] = Field(description="ways out, in the order to try them")
    example_fix: ExampleFix | None = Field(
        None, description="a command line or request that reaches it, and one that does not"
    )
    related: list[RelatedItem] = Field(
        description=f"the first {RELATED_SHOWN} related errors, as the page ranks them"
    )
    related_total: int = Field(description="how many related errors the page lists")
    versions: Versions
    source: Source | None = Field(None, description="the first raise site in the version shown")
    sites_total: int = Field(description="the error's raise sites across the ingested versions")
    page_url: str | None = Field(
        description="the entry's page; null when the server has no public address to link to"
    )
    json_url: str | None = Field(description="the entry's JSON; null as page_url is")


class MatchedSite(BaseModel):
    """The raise site the traceback's frame pinned, and the releases whose lines agree."""

    path: str
    line: int = Field(description="the line the traceback's frame shows")
    function: str
    lines_match: list[str] = Field(
        description="the ingested versions that raise it on that line (the newest 10)"
    )


class MatchItem(BaseModel):
    """One error a pasted text shows."""

    id: str
    exception: str
    message: str = Field(description="the message template, cut to 240 characters")
    score: float = Field(description="0-1; >= 0.8: the message is shown; < 0.5: a weak guess")
    confidence: Confidence = Field(
        description='"match" for a score of 0.5 or more, else "weak guess"'
    )
    test_code: bool = Field(
        description="raised only by sglang's own tests, not by the code a server runs"
    )
    versions: list[str] = Field(
        description="ingested versions consistent with the text (the newest 10 of them)"
    )
    site: MatchedSite | None = Field(
        None, description="the raise site the traceback's frame pinned, if one did"
    )
    sites_total: int = Field(description="the error's raise sites across the ingested versions")
    raised_in: str = Field(description="the versions that raise it, in one sentence")
    who_hits_it: str | None = None
    first_solution: str
    page_url: str | None = Field(description="null when the server has no public address")


class MatchAnswer(Answer):
    """What `match_error` returns: the errors found, best first (empty: none is known)."""

    matches: list[MatchItem]
    note: str | None = None


class SearchItem(BaseModel):
    """One search hit."""

    id: str
    exception: str
    message: str = Field(description="the message template, cut to 300 characters")
    title: str = Field(description="the message, or for an assert without one its condition")
    versions: list[str]
    where: str | None = Field(None, description="path:line in the newest version raising it")
    test_code: bool = Field(description="raised only in sglang's own tests: listed last")
    page_url: str | None = Field(description="null when the server has no public address")


class SearchAnswer(Answer):
    """What `search_errors` returns: the first hits, ranked as the HTTP search ranks them."""

    total: int
    items: list[SearchItem]
    notes: list[str] = Field(description="a flag or exception class no ingested version knows")


def absolute(base: str, url: str) -> str | None:
    """A root-relative URL made absolute under `base` (an absolute one is kept); None without a
    base: a link to an address nothing serves is worse than none."""
    if "://" in url:
        return url
    return base.rstrip("/") + url if base else None


def error_details(entry: Entry, base: str) -> ErrorDetails:
    """The compact entry an agent reads."""
    x = entry.explanation
    occ = entry.occurrences[0] if entry.occurrences else None
    tl = entry.timeline
    fix = x.example_fix
    return ErrorDetails(
        id=entry.id,
        exception=entry.exception,
        message=entry.message,
        repo=entry.repo.name,
        what_it_means=x.what_it_means.text,
        trigger=x.trigger.text,
        common_situations=x.common_situations.items,
        who_hits_it=WhoHitsIt(kind=x.who_hits_it.kind, text=x.who_hits_it.text)
        if x.who_hits_it
        else None,
        test_code=is_test_code(entry),
        solutions=[SolutionItem(kind=s.kind, text=s.text, command=s.command) for s in x.solutions],
        example_fix=ExampleFix(before=fix.before, after=fix.after, note=fix.note) if fix else None,
        related=[
            RelatedItem(id=r.id, title=r.title, reason=r.reason)
            for r in entry.related[:RELATED_SHOWN]
        ],
        related_total=len(entry.related),
        versions=Versions(
            ranges=[
                VersionRange(first=r.from_snapshot, last=r.to_snapshot, versions=r.snapshots)
                for r in tl.ranges
                if r.present
            ],
            present_in=tl.present_in,
            first_seen=tl.first_seen,
            last_seen=tl.last_seen,
            gone_in=tl.gone_in,
            summary=tl.summary,
        ),
        source=Source(
            snapshot=occ.snapshot, path=occ.path, line=occ.line, function=occ.function, url=occ.url
        )
        if occ
        else None,
        sites_total=entry.sites_total,
        page_url=absolute(base, entry.page_url),
        json_url=absolute(base, entry.json_url),
    )


def is_test_code(entry: Entry) -> bool:
    """True for an error raised only in the project's own tests (by its paths, or who hits it)."""
    who = entry.explanation.who_hits_it
    return entry.test_code or (who is not None and who.kind == "test")


def match_item(m: MatchOut, entry: Entry, base: str) -> MatchItem:
    """One match with what the entry says about who hits it and the first way out."""
    x = entry.explanation
    first = x.solutions[0]
    site = None
    if m.site is not None:
        site = MatchedSite(
            path=m.site.path,
            line=m.site.line,
            function=m.site.function,
            lines_match=m.snapshots[-10:],
        )
    return MatchItem(
        id=m.id,
        exception=entry.exception,
        message=cut(entry.message, 240),
        score=round(m.score, 3),
        confidence=m.confidence,
        test_code=m.test_code,
        versions=m.snapshots[-10:],
        site=site,
        sites_total=entry.sites_total,
        raised_in=entry.timeline.summary.split(";")[0],
        who_hits_it=cut(x.who_hits_it.text, 160) if x.who_hits_it else None,
        first_solution=cut(first.text + (f" ({first.command})" if first.command else ""), 240),
        page_url=absolute(base, entry.page_url),
    )


def search_answer(results: SearchResults, base: str) -> SearchAnswer:
    """The hits of one search page."""
    return SearchAnswer(
        total=results.total,
        items=[
            SearchItem(
                id=h.id,
                exception=h.exception,
                message=cut(h.message, 300),
                title=cut(h.title, 300),
                versions=h.snapshots,
                where=h.where,
                test_code=h.test_code,
                page_url=absolute(base, h.url),
            )
            for h in results.items
        ],
        notes=results.notes,
    )
