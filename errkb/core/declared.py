"""The requirements a snapshot declares (`Requires-Dist`, or `pyproject.toml`'s dependencies).

Read by the source adapters, stored with the snapshot, and read back by the import entries: which
distribution provides a module, at which versions, and which extra brings it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

_SEPARATORS = re.compile(r"[-_.]+")


def canonical(name: str) -> str:
    """A distribution name as pip compares it (PEP 503): `Sgl_Kernel` -> `sgl-kernel`."""
    return _SEPARATORS.sub("-", name).lower()


@dataclass(frozen=True)
class Declared:
    """One requirement: `outlines>=0.0.27; extra == 'srt'` is ("outlines", ">=0.0.27", "srt")."""

    name: str  # as the project spells it
    specifier: str = ""  # ">=0.0.27", "==0.0.30", "" for any version
    extra: str = ""  # the extra that brings it ("srt"), "" for a requirement of every install
    marker: str = ""  # the environment marker beside the extra ("sys_platform == 'linux'")
    extras: tuple[str, ...] = ()  # the extras it asks of the distribution (`sglang[srt]`)
    url: str = ""  # a direct reference (`name @ https://...`)

    @property
    def spec(self) -> str:
        """What pip is given: `outlines>=0.0.27`, `sgl-kernel==0.3.21`."""
        extras = f"[{','.join(self.extras)}]" if self.extras else ""
        if self.url:
            return f"{self.name}{extras} @ {self.url}"
        return f"{self.name}{extras}{self.specifier}"

    def to_json(self) -> dict[str, Any]:
        """The stored form (empty fields left out)."""
        out: dict[str, Any] = {"name": self.name}
        for key in ("specifier", "extra", "marker", "url"):
            if getattr(self, key):
                out[key] = getattr(self, key)
        if self.extras:
            out["extras"] = list(self.extras)
        return out

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> Declared:
        """From the stored form."""
        return cls(
            name=str(raw["name"]),
            specifier=str(raw.get("specifier") or ""),
            extra=str(raw.get("extra") or ""),
            marker=str(raw.get("marker") or ""),
            extras=tuple(str(x) for x in raw.get("extras") or ()),
            url=str(raw.get("url") or ""),
        )


def declared_from_json(raw: Sequence[Mapping[str, Any]] | None) -> tuple[Declared, ...]:
    """A snapshot's stored requirements; None (not read, or an older ingest) gives ()."""
    return tuple(Declared.from_json(r) for r in raw or ())


def declared_to_json(declared: Iterable[Declared]) -> list[dict[str, Any]]:
    """A snapshot's requirements as stored."""
    return [d.to_json() for d in declared]
