"""Module facts in a stored form (JSON), for the store across processes, and made many at a time
in other processes: the parse processes make the facts of a snapshot's new files at once.
"""

from __future__ import annotations

import json
from dataclasses import fields
from typing import Any

from errkb.ingest.origins.module_facts import Func, ModuleFacts

_FUNC_FIELDS = tuple(f.name for f in fields(Func))


def facts_bytes(facts: ModuleFacts) -> bytes:
    """The stored form of a module's facts, read back by `facts_from_bytes`."""
    funcs = [[getattr(f, name) for name in _FUNC_FIELDS] for f in facts.funcs.values()]
    raw = [funcs, facts.bases, facts.assigns, facts.fields, facts.tries, facts.globals]
    return json.dumps(raw, separators=(",", ":")).encode()


def facts_from_bytes(data: bytes) -> ModuleFacts:
    """The facts `facts_bytes` stored."""
    funcs, bases, assigns, classes, tries, names = json.loads(data)
    facts = ModuleFacts(
        {f[0]: Func(*(_tupled(v) for v in f)) for f in funcs},
        {c: tuple(b) for c, b in bases.items()},
        {k: [tuple(x) for x in v] for k, v in assigns.items()},
        classes,
        [(a, b, tuple(n), w) for a, b, n, w in tries],
        names,
    )
    facts._order()
    return facts


def facts_of_texts(texts: list[str]) -> list[tuple[ModuleFacts, bytes]]:
    """Each module text's facts, with their stored form: the work of a parse process, for the
    many files of a snapshot made at once (`snapshot_origins`'s `make_facts`)."""
    out = []
    for text in texts:
        facts = ModuleFacts.of(text)
        out.append((facts, facts_bytes(facts)))
    return out


def _tupled(value: Any) -> Any:
    """JSON's lists back to the tuples a `Func` holds."""
    return tuple(_tupled(v) for v in value) if isinstance(value, list) else value
