"""Where a site's guarded values come from: the record the value-origin index leaves with a site.

Written at ingest (`errkb.ingest.origins`), stored with the site's snippet, read by the knowledge
synthesis to say who hits an error and why, and shown as evidence ("How we know").
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

# What a guard's values come from, in the order a user changes things: the first class that one
# of the values reaches decides who hits the error. "internal": every value is state the project
# computes itself (a failing check is a bug in the project); "test": only the project's own tests
# call the code; "unknown": the trace stopped.
OriginKind = Literal[
    "flag",
    "request_field",
    "environment",
    "model_config",
    "dependency",
    "hardware",
    "internal",
    "test",
    "unknown",
]
USER_KINDS: tuple[OriginKind, ...] = (
    "flag",
    "request_field",
    "environment",
    "model_config",
    "dependency",
    "hardware",
)

# The first step of a check that never runs: it sits under `if TYPE_CHECKING:`, true only for a
# type checker.
NEVER_RUNS = "under `if TYPE_CHECKING:`, which only a type checker reads: it never runs"
# The first step of a method body that only raises NotImplementedError.
UNIMPLEMENTED = "a method this class leaves unimplemented, reached by the code"


@dataclass(frozen=True)
class Origin:
    """The class of input a site's guard reads, the inputs by their user-facing names, and the
    chain of names that shows it, each step a short plain line."""

    kind: OriginKind
    inputs: tuple[
        str, ...
    ] = ()  # "--page-size", "request: rollout", "env: SGLANG_X", "config.json: x"
    chain: tuple[str, ...] = ()
    callers: int = -1  # calls of the enclosing function found in the snapshot; -1: not looked for
    # How the callers treat the error when one catches it ("logs a warning and goes on"), else ""
    caught: str = ""
    # Inputs that select the code path without being what the check compares (a backend flag):
    # the way around an internal check.
    path_inputs: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        """The stored form (empty fields left out)."""
        out: dict[str, Any] = {"kind": self.kind}
        for name in ("inputs", "chain", "path_inputs"):
            if value := getattr(self, name):
                out[name] = list(value)
        if self.callers >= 0:
            out["callers"] = self.callers
        if self.caught:
            out["caught"] = self.caught
        return out

    @classmethod
    def from_json(cls, raw: dict[str, Any] | None) -> Origin | None:
        """The stored form read back; None when nothing was stored."""
        if not raw or raw.get("kind") not in USER_KINDS + ("internal", "test", "unknown"):
            return None
        return cls(
            kind=raw["kind"],
            inputs=tuple(str(x) for x in raw.get("inputs") or ()),
            chain=tuple(str(x) for x in raw.get("chain") or ()),
            callers=int(raw.get("callers", -1)),
            caught=str(raw.get("caught") or ""),
            path_inputs=tuple(str(x) for x in raw.get("path_inputs") or ()),
        )
