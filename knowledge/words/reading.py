"""One reading of a site: its facts in words, the inputs they involve, its intent and audience.

Every derived field reads the same `Reading`, built once per explained site, so what an entry
says in "what it means", in its solutions and in its example fix cannot disagree.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from errkb.core.records import Site, Vocabulary
from errkb.knowledge.facts import Involvement
from errkb.knowledge.origins.inputs import Input, InputFinder, site_inputs
from errkb.knowledge.origins.notes import constant_values, glosses
from errkb.knowledge.who.decide import decided
from errkb.knowledge.who.evidence import Clue, SiteInfo, handlers_of, who
from errkb.knowledge.who.evidence import WhoKind as Audience
from errkb.knowledge.words import guard
from errkb.knowledge.words.intent import Intent, intent
from errkb.knowledge.words.phrases import Speaker


@dataclass(frozen=True)
class Reading:
    """The facts, inputs, intent and audience of one site."""

    site: Site
    flags: tuple[Involvement, ...]
    facts: tuple[guard.Fact, ...]
    groups: tuple[tuple[ast.expr, ...], ...]
    inputs: tuple[Input, ...]
    intent: Intent | None
    audience: Audience
    clues: tuple[Clue, ...]
    finder: InputFinder
    glossary: dict[str, str]
    web_url: str | None
    resolved: dict[str, str]

    def reads(self, node: ast.expr) -> Input | None:
        """The input an expression reads directly, or through the local it names."""
        found = self.finder.of(node)
        if found is None and isinstance(node, ast.Name) and node.id in self.resolved:
            try:
                inner = ast.parse(self.resolved[node.id], mode="eval").body
            except (SyntaxError, ValueError, RecursionError):
                return None
            return self.finder.of(inner)
        return found

    def tests_on(self, found: Input) -> list[ast.expr]:
        """The guard's conjuncts that read one input."""
        return [
            n
            for g in self.groups
            for n in g
            if any(isinstance(s, ast.expr) and self.reads(s) == found for s in ast.walk(n))
        ]


def read_site(
    site: Site, flags: list[Involvement], vocab: Vocabulary, web_url: str | None = None
) -> Reading:
    """Read a site once for all derived fields."""
    resolved = {k: v for c in site.conditions for k, v in c.resolved}
    finder = InputFinder(site, vocab)
    glossary = dict(vocab.glossary)
    speaker = Speaker(flags, resolved, finder, glossary, constant_values(site), glosses(site))
    facts = guard.facts(site, speaker)
    groups = guard.groups(site)
    inputs = site_inputs(site, vocab)
    handlers = handlers_of(site.conditions)
    text = site.template.literal_text
    info = SiteInfo(site.qualname, site.exception, resolved, handlers, text, site.path)
    nodes = [n for g in groups for n in g] + checked(site)
    kind, clues = who(flag_clues(flags), inputs, nodes, info, finder.of)
    kind, clues = decided(site.origin, kind, clues, text)
    return Reading(
        site=site,
        flags=tuple(flags),
        facts=tuple(facts),
        groups=tuple(tuple(g) for g in groups),
        inputs=tuple(inputs),
        intent=intent(site.template, list(groups[-1]) if groups else []),
        audience=kind,
        clues=tuple(clues),
        finder=finder,
        glossary=glossary,
        web_url=web_url,
        resolved=resolved,
    )


def checked(site: Site) -> list[ast.expr]:
    """What an assert or a lookup tests itself (`x % 4 == 0`, `params_dict[name]`): not in its
    guard chain, yet the names who hits it is traced from."""
    if site.kind not in ("assert", "lookup") or not site.check:
        return []
    if site.conditions and site.conditions[-1].kind == "assert":
        return []  # already the guard's last link (`knowledge.with_own_check`)
    try:
        return [ast.parse(site.check, mode="eval").body]
    except (SyntaxError, ValueError, RecursionError):
        return []


def flag_clues(flags: list[Involvement]) -> list[str]:
    """How each linked flag reaches the guard or the message, for the evidence."""
    out = []
    for f in flags:
        name = f.flag if f.cli else f"the setting {f.dest}"
        if f.in_condition:
            via = f" (through `{f.via}`)" if f.via else ""
            out.append(f"{name} is tested by the guard{via}")
            if f.in_message:
                out.append(f"the message names {name}")
        elif f.in_message:
            out.append(f"the message names {name}")
    return out
