"""A snapshot's declared requirements, from a wheel's METADATA, an sdist's PKG-INFO, or the
`[project]` table of a `pyproject.toml` (a git commit or a folder).

Pure: text in, `Declared` records out. A requirement that does not parse is left out rather than
failing the snapshot: the requirements only add to the import entries.
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterable, Iterator
from email.parser import HeaderParser

from packaging.markers import Marker
from packaging.requirements import InvalidRequirement, Requirement

from errkb.core.declared import Declared


def from_metadata(text: str) -> tuple[Declared, ...]:
    """The `Requires-Dist` lines of a METADATA or PKG-INFO file."""
    headers = HeaderParser().parsestr(text)
    return tuple(_parsed(headers.get_all("Requires-Dist") or ()))


def from_pyproject(text: str) -> tuple[Declared, ...]:
    """`[project] dependencies` and `optional-dependencies` of a pyproject.toml."""
    try:
        project = tomllib.loads(text).get("project") or {}
    except tomllib.TOMLDecodeError:
        return ()
    lines = [str(x) for x in project.get("dependencies") or ()]
    for extra, reqs in (project.get("optional-dependencies") or {}).items():
        lines.extend(f"{r} ; extra == '{extra}'" for r in reqs or ())
    return tuple(_parsed(lines))


def _parsed(lines: Iterable[str]) -> Iterator[Declared]:
    for line in lines:
        try:
            req = Requirement(line)
        except InvalidRequirement:
            continue
        extra, marker = _split_marker(req.marker)
        yield Declared(
            name=req.name,
            specifier=str(req.specifier),
            extra=extra,
            marker=marker,
            extras=tuple(sorted(req.extras)),
            url=req.url or "",
        )


def _split_marker(marker: Marker | None) -> tuple[str, str]:
    """The extra a marker names (`extra == 'srt'`), and the rest of the marker."""
    if marker is None:
        return "", ""
    extra = ""
    rest: list[str] = []
    for part in str(marker).split(" and "):
        name, _, value = part.strip().strip("()").partition("==")
        if name.strip() == "extra":
            extra = value.strip().strip("'\"")
        else:
            rest.append(part.strip())
    return extra, " and ".join(rest)
