"""Knowledge synthesis (pure): from a site, its flags and its history to the entry's prose.

Each derived field carries its provenance: `derived:message` (the message's own words),
`derived:conditions` (the guard chain), `derived:flags` (flag definitions), `derived:history`
(the snapshots it occurs in). Nothing here touches the database; `service.entries` reads the rows
and calls `explain_error`.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, replace

from errkb.core.records import Condition, Site, Vocabulary
from errkb.knowledge.facts import (
    Derived,
    DerivedItems,
    ExampleFix,
    Fix,
    Involvement,
    Provenance,
    TimelineFacts,
)
from errkb.knowledge.fixes.solutions import example_fix, solutions
from errkb.knowledge.origins.inputs import Input
from errkb.knowledge.origins.notes import with_constants
from errkb.knowledge.who.evidence import WhoKind as Audience
from errkb.knowledge.who.kinds import USER_INPUTS, kind_note
from errkb.knowledge.words.explain import common_situations, trigger, who_hits_it
from errkb.knowledge.words.intent import Intent
from errkb.knowledge.words.meaning import named_inputs, what_it_means
from errkb.knowledge.words.reading import read_site


@dataclass(frozen=True)
class Explanation:
    """All derived prose of one error, as shown for one of its sites."""

    what_it_means: Derived
    trigger: Derived
    common_situations: DerivedItems
    solutions: tuple[Fix, ...]
    example_fix: ExampleFix | None
    facts: DerivedItems
    intent: Intent | None
    who_hits_it: WhoHitsIt
    inputs: tuple[Input, ...]


@dataclass(frozen=True)
class WhoHitsIt:
    """Who is in a position to hit the error (`knowledge.who.evidence.WhoKind`), with evidence."""

    kind: Audience
    text: str
    provenance: tuple[Provenance, ...]
    evidence: tuple[str, ...] = ()  # each name the guard reads, traced to its input
    inputs: tuple[str, ...] = ()  # the inputs that lead here, by their user-facing names


def with_own_check(site: Site) -> Site:
    """An assert's site with its own check as the guard's last link, which the raise needs
    false (`assert ratio == 4` raises when the ratio is not 4): without it, an assert outside any
    `if` would read as raised "whenever that code runs"."""
    if site.kind != "assert" or not site.check:
        return site
    own = Condition("assert", site.check, False, site.line)
    return replace(site, conditions=(*site.conditions, own))


def _own_check_kind(
    site: Site,
    flags: list[Involvement],
    vocabulary: Vocabulary | None,
    web_url: str | None,
    kind: str,
) -> str:
    """The who-hits-it class of an assert's own check alone (the guard's class otherwise)."""
    if site.kind != "assert" or not site.conditions or site.conditions[-1].kind != "assert":
        return kind
    if kind not in USER_INPUTS:
        return kind
    alone = replace(site, conditions=site.conditions[-1:])
    mine = [f for f in flags if f.condition is None or site.check in f.condition]
    return who_hits_it(read_site(alone, mine, vocabulary or Vocabulary(), web_url))[0]


def _with_note(note: tuple[Fix, ...], found: list[Fix], kind: str) -> tuple[Fix, ...]:
    """The kind note's solutions first, but after the report of an internal check (and after
    the note that callers catch it, which leads when there is one)."""
    if kind != "internal" or not found:
        return (*note, *found)
    lead = next((i for i, f in enumerate(found) if f.kind == "report"), 0) + 1
    return (*found[:lead], *note, *found[lead:])


def explain_error(
    site: Site,
    flags: list[Involvement],
    tl: TimelineFacts | None,
    *,
    project: str,
    launch_command: str | None = None,
    releases: Collection[str] = (),
    pypi_name: str | None = None,
    vocabulary: Vocabulary | None = None,
    web_url: str | None = None,
) -> Explanation:
    """Explain one error from one of its sites, its involved flags and its timeline."""
    site = with_constants(site)  # every quote of the message shows a constant's value
    site = with_own_check(site)  # an assert's check is the last link of its guard
    r = read_site(site, flags, vocabulary or Vocabulary(), web_url)
    kind, who, evidence = who_hits_it(r)
    meaning = what_it_means(site, flags, r, project)
    # what the kind of error means (kinds.py), said after the user's part; an assert's own note
    # is said by the lead already (an internal check, or a check of the user's input)
    note = kind_note(site, _own_check_kind(site, flags, vocabulary, web_url, kind))
    if note is not None and site.kind != "assert":
        meaning = Derived(f"{meaning.text} {note.text}", meaning.provenance)
    return Explanation(
        what_it_means=meaning,
        trigger=trigger(site, flags, launch_command, r),
        common_situations=common_situations(site, flags, tl, project, r),
        solutions=_with_note(
            note.fixes if note is not None else (),
            solutions(
                site,
                flags,
                tl,
                exception=site.exception,
                project=project,
                releases=releases,
                pypi_name=pypi_name,
                reading=r,
                launch_command=launch_command,
                path_flags=(vocabulary or Vocabulary()).path_flags,
            ),
            kind,
        ),
        example_fix=example_fix(
            site, flags, launch_command, r, tl=tl, pypi_name=pypi_name, releases=releases
        ),
        facts=DerivedItems(
            tuple(f.text for f in r.facts),
            ("derived:conditions", "derived:flags") if flags else ("derived:conditions",),
        ),
        intent=r.intent,
        who_hits_it=WhoHitsIt(
            kind,
            who.text,
            who.provenance,
            evidence,
            named_inputs(site, r, flags, (vocabulary or Vocabulary()).path_flags),
        ),
        inputs=r.inputs,
    )
