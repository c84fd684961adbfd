"""Hand-built error rows for the pure matcher tests (templates written as `text {expr} text`)."""

from __future__ import annotations

import hashlib

from errkb.service.match.matcher import ErrorRow, OccurrenceRow


def segments(display: str) -> list[dict[str, object]]:
    """Segment dicts for a display-form template; `{expr}` marks a placeholder."""
    out: list[dict[str, object]] = []
    rest = display
    while rest:
        open_ = rest.find("{")
        if open_ < 0:
            out.append(_seg("text", rest))
            break
        if open_:
            out.append(_seg("text", rest[:open_]))
        close = rest.index("}", open_)
        out.append(_seg("placeholder", rest[open_ + 1 : close]))
        rest = rest[close + 1 :]
    return out


def _seg(kind: str, text: str) -> dict[str, object]:
    return {"kind": kind, "text": text, "conversion": None, "format_spec": None}


def occ(
    path: str, line: int, qualname: str, snapshot: str, end_line: int | None = None
) -> OccurrenceRow:
    """One occurrence in a repo whose paths carry the `python/` prefix."""
    sort_key = snapshot.rjust(12, "0")
    return OccurrenceRow(path, line, end_line or line + 3, qualname, snapshot, sort_key, "python/")


def row(display: str, *occurrences: OccurrenceRow, exception: str = "ValueError") -> ErrorRow:
    """An error row whose id is derived from its exception and template, like the store's."""
    eid = hashlib.sha256(f"{exception}\x1f{display}".encode()).hexdigest()[:16]
    return ErrorRow(eid, display[:80], exception, segments(display), tuple(occurrences))
