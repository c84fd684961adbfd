"""The fixes of a failed import, first what this release declares, as pip lines.

1. Install the distribution as this release declares it: the exact pin where it pins one, else
   the range's bound (for a name that is missing from the installed version, the lowest version
   the release accepts, the one it was written against), and the extra that brings it.
2. The release of the project that no longer imports the name, when the history shows one.
3. The flag that keeps the code path (an optional backend) from running, when the import sits
   under a flag test.
A guarded import that falls back says first that nothing needs fixing, unless an earlier
release did not guard it: whoever sees the error runs one of those, so the upgrade to the release
that guards it comes first.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import TYPE_CHECKING

from packaging.specifiers import InvalidSpecifier, SpecifierSet

from errkb.core.records import Site
from errkb.knowledge.facts import ExampleFix, Fix, Involvement, Provenance, TimelineFacts

if TYPE_CHECKING:
    from errkb.knowledge.imports.explain import ImportFacts


def pinned_spec(facts: ImportFacts) -> str:
    """The requirement to install: `outlines==0.0.30` (a pin), `outlines==0.0.27` (the lowest
    accepted version, when the installed one lacks a name), else the release's range."""
    dist = facts.distribution
    req = dist.requirement
    if req is None or req.url or not req.specifier:
        return dist.name
    try:
        specs = list(SpecifierSet(req.specifier))
    except InvalidSpecifier:
        return req.spec
    pins = [s for s in specs if s.operator in ("==", "===")]
    if pins:
        return f"{req.name}=={pins[0].version}"
    lower = [s for s in specs if s.operator in (">=", "~=")]
    if facts.version_problem and lower and not any(s.operator == "<" for s in specs):
        return f"{req.name}=={lower[0].version}"
    return req.spec


def import_fixes(
    site: Site,
    facts: ImportFacts,
    flags: list[Involvement],
    tl: TimelineFacts | None,
    releases: Collection[str],
) -> tuple[Fix, ...]:
    """The solutions, in the order to try them."""
    prov_req: tuple[Provenance, ...] = ("derived:message",)
    out: list[Fix] = []
    guarded_in = _guarded_since(facts, tl)
    if guarded_in is not None and guarded_in in releases:
        # whoever sees this error runs a release before the guard: the upgrade comes first
        command = f"pip install '{facts.project}=={guarded_in}'"
        out.append(
            Fix(
                "upgrade",
                f"Before {facts.project} {guarded_in}, this import is not guarded and its failure "
                f"stops {facts.project}: upgrade to {guarded_in} or later (`{command}`), which "
                "goes on without it.",
                ("derived:history",),
                command=command,
                snapshot=guarded_in,
            )
        )
    elif facts.guard.falls_back:
        wanted = "" if facts.name else f" unless you need what {facts.distribution.name} brings"
        out.append(
            Fix(
                "environment",
                f"Nothing needs fixing{wanted}: {facts.project} goes on without it (see what it "
                "means).",
                ("derived:conditions",),
            )
        )
    out.append(_install(facts, prov_req))
    if facts.distribution.extras:
        extra = facts.distribution.extras[0]
        command = f"pip install '{facts.project}[{extra}]=={facts.release}'"
        out.append(
            Fix(
                "environment",
                f"Or install {facts.project} with the extra that brings it: `{command}`.",
                prov_req,
                command=command,
            )
        )
    gone = tl.gone_in if tl is not None else None
    if gone and gone in releases:
        what = f"`{facts.name}` from `{facts.module}`" if facts.name else f"`{facts.module}`"
        out.append(
            Fix(
                "upgrade",
                f"{facts.project} {gone} no longer imports {what}: upgrade to it "
                f"(`pip install '{facts.project}=={gone}'`).",
                ("derived:history",),
                command=f"pip install '{facts.project}=={gone}'",
                snapshot=gone,
            )
        )
    for inv in flags:
        if inv.condition is None or not inv.flag:
            continue
        out.append(
            Fix(
                "flag",
                f"This import belongs to code that `{inv.flag}` selects ({inv.condition}): "
                "a server started without it does not run it.",
                ("derived:flags",),
                flag=inv.flag,
            )
        )
        break
    return tuple(out)


def _guarded_since(facts: ImportFacts, tl: TimelineFacts | None) -> str | None:
    """The release whose change of guard made this import fall back, when the history shows one
    (the releases before it fail where this one goes on)."""
    if tl is None or not facts.guard.falls_back or tl.first_seen == tl.last_seen:
        return None
    changed = [e.snapshot for e in tl.changed_in if "guard" in e.kinds]
    return changed[-1] if changed else None


def _install(facts: ImportFacts, prov: tuple[Provenance, ...]) -> Fix:
    spec = pinned_spec(facts)
    command = f"pip install '{spec}'"
    req = facts.distribution.requirement
    if req is None:
        text = f"Install {facts.distribution.name}: `{command}`."
    elif spec != req.spec:
        text = (
            f"Install the version {facts.project} {facts.release} was written against: "
            f"`{command}` (it declares `{req.spec}`; later versions may lack what it imports)."
        )
    else:
        text = f"Install what {facts.project} {facts.release} declares: `{command}`."
    return Fix("environment", text, prov, command=command)


def import_example(facts: ImportFacts) -> ExampleFix | None:
    """The install line before (the project alone) and after (with the requirement)."""
    spec = pinned_spec(facts)
    extra = facts.distribution.extras[0] if facts.distribution.extras else ""
    project = f"{facts.project}[{extra}]" if extra else facts.project
    return ExampleFix(
        before=f"pip install '{facts.project}=={facts.release}'",
        after=f"pip install '{project}=={facts.release}' '{spec}'",
        note=f"{facts.distribution.name} as {facts.project} {facts.release} declares it.",
        provenance=("derived:message",),
    )
