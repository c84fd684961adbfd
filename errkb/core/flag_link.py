"""How one raise site involves a command-line flag: the record the linker builds, entries read."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Literal

FlagSide = Literal["message", "condition"]
# What a guard needs of a flag: set (on) or unset (off), equal or not to `value`, in or not in
# `value`, or some other comparison (`value` then holds the operator and operand).
Polarity = Literal["on", "off", "eq", "ne", "in", "not_in", "other"]


@dataclass(frozen=True)
class FlagLink:
    """A flag one raise site involves: named or printed by its message, read by its guard, or both.

    Built by the linker (`errkb.ingest.flag_links`), stored as JSON with each occurrence, and
    read back by the service; `to_json`/`from_json` are the one place its stored shape is spelled.
    """

    flag: str  # the flag's main spelling, "--tp-size"
    dest: str  # the settings attribute, "tp_size"
    sides: tuple[FlagSide, ...]
    polarity: Polarity | None = None
    value: str | None = None  # source text of the compared value
    condition: str | None = None  # the guard that reads the flag
    required: bool = False  # the raise needs this use to hold (not one branch of an `or`)
    via: str | None = None  # a local name the guard reads the flag through
    cli: bool = True
    mentioned_as: str | None = None  # the alias the message spells the flag with

    def to_json(self) -> dict[str, Any]:
        """The stored form (keys as stored since the first schema)."""
        out: dict[str, Any] = {
            "flag": self.flag,
            "dest": self.dest,
            "sides": list(self.sides),
            "polarity": self.polarity,
            "value": self.value,
            "condition": self.condition,
            "required": self.required,
            "via": self.via,
            "cli": self.cli,
        }
        if self.mentioned_as is not None:
            out["mentioned_as"] = self.mentioned_as
        return out

    @classmethod
    def from_json(cls, raw: dict[str, Any]) -> FlagLink:
        """Read the stored form back; unknown keys are ignored."""
        return cls(
            flag=str(raw["flag"]),
            dest=str(raw["dest"]),
            sides=tuple(raw.get("sides") or ()),
            polarity=raw.get("polarity"),
            value=raw.get("value"),
            condition=raw.get("condition"),
            required=bool(raw.get("required")),
            via=raw.get("via"),
            cli=bool(raw.get("cli", True)),
            mentioned_as=raw.get("mentioned_as"),
        )

    def joined(self, other: FlagLink) -> FlagLink:
        """This link with the other's sides added (the same flag at another site)."""
        extra = tuple(s for s in other.sides if s not in self.sides)
        return replace(self, sides=self.sides + extra) if extra else self


def flag_links(raw: list[dict[str, Any]] | None) -> list[FlagLink]:
    """Stored links (a JSON list, or NULL) as records."""
    return [FlagLink.from_json(x) for x in raw or ()]
