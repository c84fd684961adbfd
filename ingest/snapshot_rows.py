"""The database rows of one snapshot, built from the extraction records (pure; the store writes
them).

Occurrences and flags come by the thousand, so they are built as plain tuples in column order
with their JSON columns already serialized, for the store to hand straight to the driver.

A site's bulky parts (conditions, snippet, flag links, message source) become a `site_bodies`
row keyed by a hash of its content, with line numbers relative to the raise line: across a
history most sites keep their code while the lines above them move, so most snapshots add no
body at all and the per-snapshot row stays a few numbers and names.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import fields
from typing import Any

from errkb.core.models import function_name, packed_code
from errkb.core.records import FileResult, FlagDef, FlagLink, Site, site_error_id

TITLE_CHARS = 120
OCCURRENCE_COLUMNS = (
    "error_id",
    "snapshot_id",
    "path",
    "line",
    "end_line",
    "qualname",
    "function",
    "body_hash",
)
BODY_COLUMNS = ("hash", "end_offset", "code", "flags", "raise_source")
FLAG_BODY_COLUMNS = (
    "hash",
    "name",
    "flags",
    "dest",
    "type",
    "default",
    "choices",
    "help",
    "path",
    "origin",
)
SNAPSHOT_FLAG_COLUMNS = ("snapshot_id", "body_hash", "line")
ERROR_FLAG_COLUMNS = ("error_id", "snapshot_id", "dest", "flag")


def title_of(message: str, exception: str, site: Site | None = None) -> str:
    """A short first-sentence form of a message, for lists and page titles; a site without a
    message is named by what fails and where."""
    text = " ".join(message.split())
    # A message of values only (`assert x == 32, f"{x}"`) names nothing a reader can tell
    # apart: such a title says what fails and where, as for no message at all.
    values_only = site is not None and not any(c.isalpha() for c in site.template.literal_text)
    if site is not None and site.kind == "lookup":
        text = f"Missing key in {site.check} ({site.qualname})"
    elif site is not None and site.kind == "assert" and (not text or values_only):
        text = f"assert {site.check} ({site.qualname})"
    elif site is not None and text and values_only:
        return _short(f"{site.exception} {text} in {site.qualname}")
    elif not text:
        where = f" in {site.qualname}" if site is not None else ""
        return _short(f"{exception} raised without a message{where}")
    end = text.find(". ")
    if 0 < end:
        text = text[: end + 1]
    return _short(text)


def _short(text: str) -> str:
    if len(text) > TITLE_CHARS:
        cut = text.rfind(" ", 0, TITLE_CHARS)
        text = text[: cut if cut > TITLE_CHARS // 2 else TITLE_CHARS].rstrip(" ,;:") + "…"
    return text


_FIELDS: dict[type, tuple[str, ...]] = {}


def shallow(record: Any) -> dict[str, Any]:
    """A flat record (no nested dataclasses) as a JSON-ready dict, to read and never change (it
    may be the record's own attribute dict); much faster than asdict."""
    names = _FIELDS.get(type(record))
    if names is None:
        names = _FIELDS[type(record)] = tuple(f.name for f in fields(record))
    attrs = getattr(record, "__dict__", None)
    if attrs is not None and len(attrs) == len(names):
        return attrs  # exactly the fields, which __init__ (or pydantic) sets in field order
    return {name: getattr(record, name) for name in names}


def _json_text() -> Callable[[Any], str]:
    """`json.dumps`, as the JSON column type calls it, with records encoded as their fields.

    It is the C encoder `json.dumps` builds on every call (same escaping and separators, so the
    same text), built once: per-call setup was a third of the time for small values.
    """
    make = json.encoder.c_make_encoder  # type: ignore[attr-defined]
    if make is None:  # no C accelerator
        return lambda value: json.dumps(value, default=shallow)
    encode = make(
        None, shallow, json.encoder.encode_basestring_ascii, None, ": ", ", ", False, False, True
    )
    return lambda value: "".join(encode(value, 0))


json_text = _json_text()


def error_row(
    error: str, repo_id: int, site: Site, chain: tuple[str, ...] | None = None
) -> dict[str, Any]:
    """The errors row of a new error, from its first site and its class chain."""
    message = site.template.display
    return {
        "id": error,
        "repo_id": repo_id,
        "exception": site.exception,
        "template": [shallow(s) for s in site.template.segments],
        "form": site.template.form,
        "message": message,
        "title": title_of(message, site.exception, site),
        "chain": list(chain) if chain else None,
        "kind": site.kind,
        "check_text": site.check or None,
    }


Prepared = tuple[str, str, str, bytes]  # error id, conditions JSON, snippet JSON, body digest


def relative_conditions(site: Site) -> list[dict[str, Any]]:
    """The site's conditions as stored: each line relative to the raise line."""
    return [shallow(c) | {"line": c.line - site.line} for c in site.conditions]


def relative_snippet(site: Site) -> dict[str, Any]:
    """The site's snippet as stored: its line numbers relative to the raise line."""
    s = site.snippet
    return {
        "start": s.start - site.line,
        "lines": s.lines,
        "raise_start": s.raise_start - site.line,
        "raise_end": s.raise_end - site.line,
        "notes": site.notes,  # stored with the snippet: no column of its own (see SiteNotes)
        # and so is where its guarded values come from (`ingest.origins`)
        **({"origin": site.origin.to_json()} if site.origin is not None else {}),
    }


def prepare_site(repo: str, site: Site) -> Prepared:
    """What a site's rows need that depends on neither the snapshot, the site's path nor its
    flags: worked out as soon as its file's result is in (`SitePreparer`)."""
    conditions = json_text(relative_conditions(site))
    snippet = json_text(relative_snippet(site))
    digest = hashlib.sha256(
        "\x1f".join(
            (str(site.end_line - site.line), conditions, snippet, site.raise_source)
        ).encode()
    ).digest()
    return (site_error_id(repo, site), conditions, snippet, digest)


class SitePreparer:
    """`prepare_site` for each file result's sites, by file-cache id, as the results come in.

    The pipeline reports each result the moment it has it (cache hits while the files are read,
    extractions as the workers return them), so this work is done while the workers still parse
    rather than after them.
    """

    def __init__(self, repo: str) -> None:
        self.repo = repo
        self._done: dict[str, list[Prepared]] = {}

    def add(self, key: str, result: FileResult) -> None:
        """Prepare a result's sites (once per key)."""
        if result.sites and key not in self._done:
            self._done[key] = [prepare_site(self.repo, s) for s in result.sites]

    def of(self, key: str, result: FileResult) -> list[Prepared]:
        """A result's prepared sites, in order (prepared now if it was not reported)."""
        self.add(key, result)
        return self._done.get(key, [])


def body_hash(prepared: Prepared, flags_json: str) -> str:
    """The content hash of a site body: its prepared parts and its flag links."""
    return hashlib.sha256(prepared[3] + flags_json.encode()).hexdigest()[:32]


def site_rows(
    snapshot_id: int, site: Site, prepared: Prepared, involved: list[FlagLink]
) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    """The occurrences row (`OCCURRENCE_COLUMNS` order) and the body row (`BODY_COLUMNS`),
    whose code is packed by `packed_body` only if the body is not stored yet (most are)."""
    error, conditions, snippet, _ = prepared
    flags = json_text([link.to_json() for link in involved])
    body = body_hash(prepared, flags)
    return (
        (
            error,
            snapshot_id,
            site.path,
            site.line,
            site.end_line,
            site.qualname,
            function_name(site.qualname),
            body,
        ),
        (
            body,
            site.end_line - site.line,
            (conditions, snippet),
            flags,
            site.raise_source,
        ),
    )


def packed_body(row: tuple[Any, ...]) -> tuple[Any, ...]:
    """A body row of `site_rows` as stored: its code packed."""
    return (*row[:2], packed_code(*row[2]), *row[3:])


def flag_rows(snapshot_id: int, flag: FlagDef) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    """The snapshot_flags row (`SNAPSHOT_FLAG_COLUMNS` order) and the flag_bodies row
    (`FLAG_BODY_COLUMNS`), keyed by a hash of everything but the line."""
    content = (
        flag.flags[0] if flag.flags else "--" + flag.dest.replace("_", "-"),
        json_text(list(flag.flags)),
        flag.dest,
        flag.type,
        flag.default,
        json_text(list(flag.choices) if flag.choices is not None else None),
        flag.help,
        flag.path,
        flag.origin,
    )
    digest = hashlib.sha256(json_text(content).encode()).hexdigest()[:32]
    return (snapshot_id, digest, flag.line), (digest, *content)
