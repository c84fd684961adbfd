"""The entry of a failed import: what is missing, which distribution installs it, what this
release declares of it, what happens when the import is guarded, and the pip lines that fix it.

The three ways an import fails are told apart by the error: `No module named 'X'` (X is not
installed), `No module named 'X.sub'` or `cannot import name 'Y' from 'X'` (the installed X is a
version this release was not written for), and an `undefined symbol` or a shared library that
cannot be opened (a compiled X built for another torch or CUDA), which the same entries answer.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

from errkb.core.declared import Declared
from errkb.core.records import Site, Vocabulary
from errkb.knowledge import Explanation, WhoHitsIt
from errkb.knowledge.facts import Derived, DerivedItems, Involvement, Provenance, TimelineFacts
from errkb.knowledge.imports.distributions import Distribution, distribution_of
from errkb.knowledge.imports.fixes import import_example, import_fixes
from errkb.knowledge.imports.guards import ImportGuard, checks_words, fallback_words, guard_of


@dataclass(frozen=True)
class ImportFacts:
    """What an import entry is made of."""

    module: str  # the module the error names ("outlines.fsm.json_schema", "sgl_kernel")
    name: str  # the name taken from it ("build_regex_from_object"), "" for a missing module
    distribution: Distribution
    guard: ImportGuard
    release: str  # the release whose requirements were read ("0.1.12")
    project: str  # the project's distribution ("sglang")
    declared_known: bool  # False when the snapshot's requirements were never read

    @property
    def top(self) -> str:
        """The top-level package ("outlines")."""
        return self.module.split(".", 1)[0]

    @property
    def version_problem(self) -> bool:
        """True when the module is installed but is not the version this release expects."""
        return bool(self.name) or self.module != self.top


def import_facts(
    site: Site,
    *,
    requirements: Sequence[Declared] | None,
    vocabulary: Vocabulary,
    release: str,
    project: str,
) -> ImportFacts:
    """The facts of one import site, read against the shown release's requirements."""
    message = site.template.literal_text
    if site.exception == "ModuleNotFoundError":
        module, name = _quoted(message)[0], ""
    else:
        name, module = _quoted(message)[:2]
    dist = distribution_of(module, requirements or (), vocabulary.distributions, project)
    return ImportFacts(
        module, name, dist, guard_of(site), release, project, requirements is not None
    )


def _quoted(message: str) -> list[str]:
    """The quoted names of a message: `cannot import name 'Y' from 'X'` -> [Y, X]."""
    return message.split("'")[1::2] or [""]


def explain_import(
    site: Site,
    flags: list[Involvement],
    tl: TimelineFacts | None,
    *,
    requirements: Sequence[Declared] | None,
    vocabulary: Vocabulary,
    release: str,
    project: str,
    releases: Collection[str] = (),
) -> Explanation:
    """The explanation of an import site (`Site.kind == "import"`)."""
    facts = import_facts(
        site, requirements=requirements, vocabulary=vocabulary, release=release, project=project
    )
    prov: tuple[Provenance, ...] = ("derived:message", "derived:conditions")
    return Explanation(
        # names stay plain here: the module, the name and the file are said as written
        what_it_means=Derived(_meaning(site, facts).replace("`", ""), prov),
        trigger=Derived(_trigger(site, facts), ("derived:conditions",)),
        common_situations=DerivedItems(_situations(facts), ("derived:message",)),
        solutions=import_fixes(site, facts, flags, tl, releases),
        example_fix=import_example(facts),
        facts=DerivedItems(_fact_items(site, facts), ("derived:conditions",)),
        intent=None,
        who_hits_it=WhoHitsIt(
            "dependency",
            f"Anyone whose environment lacks {facts.distribution.name}, or has a version of it "
            f"that {project} {release} was not written for.",
            ("derived:message",),
            (f"{facts.module} -> {facts.distribution.name}",),
        ),
        inputs=(),
    )


def requirement_words(facts: ImportFacts) -> str:
    """What the release declares of the distribution, in a sentence."""
    dist, who = facts.distribution, f"{facts.project} {facts.release}"
    if not facts.declared_known:
        return f"The requirements of {who} were not read, so its version range is not known."
    if dist.requirement is None:
        return (
            f"{who} does not declare {dist.name} among its requirements: it is an optional "
            "dependency that you install yourself."
        )
    req = dist.requirement
    version = f"`{req.spec}`" if req.specifier or req.url else f"`{dist.name}` (any version)"
    where = ""
    if dist.extras:
        where = f", through the extra `{facts.project}[{dist.extras[0]}]`"
        if len(dist.extras) > 1:
            also = ", ".join(f"`{facts.project}[{e}]`" for e in dist.extras[1:])
            where += f" (which {also} includes)"
    marker = f" on `{req.marker}`" if req.marker else ""
    return f"{who} declares {version}{where}{marker}."


def _meaning(site: Site, facts: ImportFacts) -> str:
    where = f"`{site.path}` line {site.line}"
    dist = facts.distribution.name
    if facts.name:
        head = (
            f"{facts.project} imports `{facts.name}` from `{facts.module}` ({where}), and the "
            f"installed {dist} has no such name: it is a version that {facts.project} "
            f"{facts.release} was not written for (the name was added later, or removed or "
            "renamed since)."
        )
    elif facts.module != facts.top:
        head = (
            f"{facts.project} imports `{facts.module}` ({where}). Python found `{facts.top}` "
            f"but not its submodule: the installed {dist} is a version without it."
        )
    else:
        head = (
            f"{facts.project} imports `{facts.module}` ({where}), which the `{dist}` "
            "distribution installs, and Python could not find it: it is not installed in the "
            "environment that runs the server."
        )
    said = [head, requirement_words(facts)]
    if facts.guard.falls_back:
        said.append(
            f"This import is guarded: a failure does not stop {facts.project}. "
            + fallback_words(facts.guard)
        )
    elif facts.guard.caught:
        said.append(fallback_words(facts.guard))
    if site.qualname != "<module>":
        said.append(
            f"The import sits inside `{site.qualname}`, so it fails only when that code runs."
        )
    said.append(checks_words(facts.guard))
    return " ".join(s for s in said if s)


def _trigger(site: Site, facts: ImportFacts) -> str:
    when = "when the module is loaded" if site.qualname == "<module>" else "when it runs"
    return f"Running `{_one_line(site.raise_source)}` at `{site.path}` line {site.line}, {when}."


def _one_line(statement: str) -> str:
    """An import statement on one line, without its comments and with few names: `from x import
    (a, b, c, and 5 more)` rather than the source's ten lines."""
    lines = [line.split("#", 1)[0].strip() for line in statement.splitlines()]
    text = " ".join(line for line in lines if line).replace("( ", "(").replace(", )", ")")
    head, sep, names = text.partition(" import ")
    listed = [n.strip() for n in names.strip("() ").split(",") if n.strip()]
    if not sep or len(listed) <= _NAMES_SHOWN:
        return text.replace(",)", ")")
    more = len(listed) - _NAMES_SHOWN
    return f"{head} import ({', '.join(listed[:_NAMES_SHOWN])}, and {more} more)"


_NAMES_SHOWN = 3


def _situations(facts: ImportFacts) -> tuple[str, ...]:
    dist = facts.distribution
    out: list[str] = []
    if dist.extras:
        out.append(
            f"{facts.project} was installed without its `{dist.extras[0]}` extra, which brings "
            f"{dist.name}."
        )
    if facts.version_problem:
        out.append(
            f"{dist.name} was upgraded (or downgraded) after {facts.project} was installed, by "
            "another package or by hand, to a version outside the range "
            f"{facts.project} {facts.release} was written for."
        )
    else:
        out.append(f"The server runs in another environment than the one {dist.name} went into.")
    if not facts.version_problem:
        out.append(
            f"If the error names an `undefined symbol` or a shared library (`.so`) instead, "
            f"{dist.name} is installed but was built for another torch or CUDA than the one "
            "installed: reinstall it for your torch and CUDA."
        )
    return tuple(out)


def _fact_items(site: Site, facts: ImportFacts) -> tuple[str, ...]:
    items = [f"Imported by `{site.raise_source}`."]
    if facts.guard.caught:
        items.append(f"Inside a `try` that catches {facts.guard.caught}.")
    items.extend(
        f"Under `if {expr}`." if holds else f"Under the `else` of `if {expr}`."
        for expr, holds in facts.guard.checks
    )
    return tuple(items)
