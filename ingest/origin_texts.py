"""The text of every file of a snapshot, for the value-origin index (`ingest.origins`).

The extraction reads only the files it has no cached result for; the index needs them all. The
texts of the last snapshot ingested in this process are kept by content hash, so the next release
reads again only the files that no earlier read of this process holds (none, in a history
ingested in one run); the others are read in a second pass that skips what is held.
"""

from __future__ import annotations

from collections.abc import Sequence

from errkb.ingest.sources.base import Source, SourceFile

_HELD: dict[str, str] = {}  # content hash -> text, of the last snapshot's files


def _text(data: bytes) -> str:
    return data.decode("utf-8", "replace")


def snapshot_texts(source: Source, files: Sequence[SourceFile]) -> dict[str, str]:
    """Every readable file's text by path."""
    held = dict(_HELD)
    texts: dict[str, str] = {}
    missing: set[str] = set()
    for f in files:
        if f.skip is not None:
            continue
        if f.data:
            held[f.content_hash] = texts[f.path] = _text(f.data)
        elif f.content_hash in held:
            texts[f.path] = held[f.content_hash]
        else:
            missing.add(f.path)
    if missing:
        stored = {f.stored: f.content_hash for f in files if f.stored and f.path not in missing}

        def known(members: Sequence[tuple[str, str]]) -> dict[str, str]:
            return {d: stored[d] for p, d in members if p not in missing and d in stored}

        for f in source.files(known=known):
            if f.path in missing and f.skip is None:
                held[f.content_hash] = texts[f.path] = _text(f.data)
    _HELD.clear()
    _HELD.update({f.content_hash: texts[f.path] for f in files if f.path in texts})
    return texts
