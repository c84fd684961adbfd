"""Knowledge synthesis (pure): from a site, its flags and its history to the entry's prose.

Each derived field carries its provenance: `derived:message` (the message's own words),
`derived:conditions` (the guard chain), `derived:flags` (flag definitions), `derived:history`
(the snapshots it occurs in). Nothing here touches the database; `service.entries` reads the rows
and calls `explain_error`.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from errkb.core.records import Site
from errkb.knowledge.explain import common_situations, trigger, what_it_means
from errkb.knowledge.facts import (
    Derived,
    DerivedItems,
    ExampleFix,
    Fix,
    Involvement,
    TimelineFacts,
)
from errkb.knowledge.fixes import example_fix, solutions


@dataclass(frozen=True)
class Explanation:
    """All derived prose of one error, as shown for one of its sites."""

    what_it_means: Derived
    trigger: Derived
    common_situations: DerivedItems
    solutions: tuple[Fix, ...]
    example_fix: ExampleFix | None


def explain_error(
    site: Site,
    flags: list[Involvement],
    tl: TimelineFacts | None,
    *,
    project: str,
    launch_command: str | None = None,
    releases: Collection[str] = (),
    pypi_name: str | None = None,
) -> Explanation:
    """Explain one error from one of its sites, its involved flags and its timeline."""
    return Explanation(
        what_it_means=what_it_means(site.exception, site, flags),
        trigger=trigger(site, flags, launch_command),
        common_situations=common_situations(site, flags, tl, project),
        solutions=tuple(
            solutions(
                site,
                flags,
                tl,
                exception=site.exception,
                project=project,
                releases=releases,
                pypi_name=pypi_name,
            )
        ),
        example_fix=example_fix(site, flags, launch_command),
    )
