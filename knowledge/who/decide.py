"""Who hits an error, decided from the value-origin index first and the guard's own names second.

The index (`Site.origin`, traced at ingest across the whole snapshot) follows a guard's values
through callers, assignments and typed receivers; the site's own reading (`who.evidence`) knows
the flags the ingester linked and what the names say. The index decides when it reached an input
or proved the values internal; the site's reading fills in when the trace stopped, and a flag the
ingester linked to the check itself still counts.
"""

from __future__ import annotations

import re

from errkb.core.origin import NEVER_RUNS, UNIMPLEMENTED, Origin
from errkb.knowledge.who.evidence import Clue, WhoKind
from errkb.knowledge.who.said import (
    MEMORY_SAID,
    REQUEST_DATA_REFUSED,
    message_envs,
    says_out_of_memory,
)

_BOTH_WAYS = re.compile(r"the check needs \S+ off, and the value it tests is set only with")
_FLAG = re.compile(r"--[\w-]+")
# steps of an index chain that prove a check internal whatever its message says
_PROOFS = (NEVER_RUNS, UNIMPLEMENTED, "every caller passes a value", "the check needs ")
_LINE = {
    "flag": "a server flag",
    "request_field": "a field of the request",
    "environment": "an environment variable",
    "model_config": "the model's configuration",
    "dependency": "an installed package",
    "hardware": "the hardware or the parallelism sizes",
}


def origin_clues(origin: Origin) -> list[Clue]:
    """The index's chain as evidence: one clue per step, said for a person."""
    kind: WhoKind = origin.kind if origin.kind != "unknown" else "unknown"
    out = [Clue(kind, _step(step), "") for step in origin.chain]
    if origin.callers == 0 and origin.kind != "test":
        out.append(Clue(kind, "no call of this function was found elsewhere in the release"))
    return out


def _step(step: str) -> str:
    """`a` <- passed by f (x.py) as `b`: a server setting (--b)" reads as it is; the code
    quotes stay, as names are the clearest words for them."""
    return step.replace(" <- ", " ← ")


def decided(
    origin: Origin | None, kind: WhoKind, clues: list[Clue], message: str = ""
) -> tuple[WhoKind, list[Clue]]:
    """The who-hits-it class and its evidence, from the index and the site's own reading;
    `message` is the message's literal text."""
    if origin is None or kind == "test":
        return kind, clues
    if origin.kind == "test":
        return "test", [Clue("test", s, "") for s in origin.chain[:1]]
    traced = origin_clues(origin)
    if says_out_of_memory(message) and not any(
        p in s for s in origin.chain for p in (NEVER_RUNS, UNIMPLEMENTED)
    ):
        # "Decode out of memory": the load and the memory settings, whatever values the check
        # compares (the allocator's own counts)
        return "hardware", [Clue("hardware", MEMORY_SAID, ""), *traced]
    linked_flag = [c for c in clues if c.kind == "flag" and "tested by the guard" in c.text]
    named_flag = [c for c in clues if c.kind == "flag" and "the message names" in c.text]
    chosen = set(origin.inputs) | set(origin.path_inputs)
    chosen |= {flag for c in linked_flag for flag in _FLAG.findall(c.text)}
    if origin.kind in _LINE and origin.kind != "flag":
        # a message that names a flag the guard also tests addresses the user who set it
        # ("--speculative-algorithm is not supported with ..."), whatever else the check reads
        named = [c for c in named_flag if set(_FLAG.findall(c.text)) & chosen]
        if named:
            return "flag", named + traced
    if origin.kind in _LINE:  # the site's own clues of that class read best, then the chain
        own = [c for c in clues if c.kind == origin.kind]
        return origin.kind, own + traced + [
            c for c in clues if c.kind not in (origin.kind, "unknown")
        ]
    if origin.kind == "internal":
        # a flag the ingester linked to the check (not only to the path) still decides, and so
        # does a message that names a flag: it addresses the user ("try to increase --x")
        # (unless the index shows the check needs that flag both off and on: two readings of
        # one setting that disagree, which no start-up setting can cause)
        both_ways = bool(origin.chain) and _BOTH_WAYS.match(origin.chain[0]) is not None
        if ((linked_flag and not origin.path_inputs) or named_flag) and not both_ways:
            return "flag", named_flag + linked_flag + traced
        proven = any(p in s for s in origin.chain for p in _PROOFS)
        envs = message_envs(message)
        if envs and not proven:
            # "... Set SGLANG_DISABLE_X=1 to disable fusion": the message hands the user the
            # setting that gets past the check, whatever built the values it compares
            said = [Clue("environment", f"the message says to set {e}", e) for e in envs]
            return "environment", said + traced
        refused = [c for c in clues if c.text == REQUEST_DATA_REFUSED]
        if refused and not proven:
            # "Remote media exceeds the download limit": the limit is the code's, the media the
            # request's, though the trace reached only the limit
            return "request_field", refused + traced
        return "internal", traced
    if kind != "unknown":
        return kind, clues + traced
    return "unknown", traced or clues
