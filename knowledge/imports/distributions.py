"""Which distribution installs a module, and what this release declares of it.

`sgl_kernel` is installed by `sgl-kernel`: the release's own requirements say so where the names
agree (as pip compares them), the pins' table (`[repos.distributions]`) where they do not. The
requirement found is the one an install of this release brings: of every install, or of an
extra (`sglang[srt]`), with the extras that include that one (`sglang[all]` asks `sglang[srt]`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from errkb.core.declared import Declared, canonical


@dataclass(frozen=True)
class Distribution:
    """The distribution behind a module, and this release's requirement of it (None: not
    declared)."""

    name: str
    requirement: Declared | None
    extras: tuple[str, ...] = ()  # the project's extras that bring it, the direct one first

    @property
    def spec(self) -> str:
        """`outlines>=0.0.27`, or the bare name when the release does not declare it."""
        return self.requirement.spec if self.requirement else self.name


def distribution_of(
    module: str,
    requirements: Sequence[Declared],
    table: Sequence[tuple[str, str]],
    project: str,
) -> Distribution:
    """The distribution that installs the top-level package of `module`."""
    top = module.split(".", 1)[0]
    named = [d for m, d in table if m == top]
    wanted = [canonical(d) for d in named] + [canonical(top)]
    found = [r for r in requirements if canonical(r.name) in wanted]
    # every install's requirement first, then an extra's, a marker (a platform) after none, and
    # among alike the table's first name
    found.sort(key=lambda r: (bool(r.extra), bool(r.marker), wanted.index(canonical(r.name))))
    if not found:
        return Distribution(named[0] if named else top.replace("_", "-"), None)
    first = found[0]
    return Distribution(first.name, first, _extras_bringing(first.extra, requirements, project))


def _extras_bringing(extra: str, requirements: Sequence[Declared], project: str) -> tuple[str, ...]:
    """`extra` and every extra of the project that asks for it (`all` asks `srt`)."""
    if not extra:
        return ()
    me = canonical(project)
    out = [extra]
    for name in out:
        for r in requirements:
            if canonical(r.name) == me and name in r.extras and r.extra and r.extra not in out:
                out.append(r.extra)
    return tuple(out)
