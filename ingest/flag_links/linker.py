"""Linking raise sites to flags: which options a message names or a guard reads (pure).

A flag is involved in a site when
- its flag string (`--enable-unified-memory`) or its field name (`enable_unified_memory`)
  appears in the literal text of the message, or a placeholder of the message reads it (side
  "message"); or
- a guard condition reads its dest as an attribute (`get_memory().enable_unified_memory`,
  `self.server_args.tp_size`), directly or through a local name resolved to such a read
  (`pd_enabled` -> `get_disagg().disaggregation_mode != "null"`) (side "condition").

The condition side records what the guard needs of the flag (`polarity`, see
`ingest.flag_links.guard_uses`): on / off, eq / ne / in / not_in a value, or other, and whether
the guard *requires* it or it is one alternative among several. Which attribute reads count as
flag reads is the rule against false links in `ingest.flag_links.reads`; bare local names count
only through their resolution. `ingest.flag_links.read_filter` skips, provably without changing
any link, the texts that cannot hold such a read, which are most of them.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping, Sequence
from typing import Any

from errkb.core.records import Condition, FlagDef, FlagLink, Site
from errkb.ingest.flag_links.guard_uses import GuardUse, condition_uses
from errkb.ingest.flag_links.read_filter import ReadFilter
from errkb.ingest.flag_links.reads import Reads, is_specific, parse_expr


def message_flags(literal: str) -> list[str]:
    """`--flag-name` tokens in a message's literal text, in order, without duplicates."""
    found: list[str] = []
    i = literal.find("--")
    while i != -1:
        j = i + 2
        while j < len(literal) and (literal[j].isalnum() or literal[j] in "-_"):
            j += 1
        token = literal[i:j].rstrip("-_")
        before = literal[i - 1] if i else " "
        if len(token) > 2 and token[2].isalpha() and not (before.isalnum() or before == "-"):
            if token not in found:
                found.append(token)
        i = literal.find("--", j)
    return found


_DEST = re.compile(r"(?<![\w.-])[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+(?![\w(-])")


def message_dests(literal: str) -> list[str]:
    """Snake-case names in a message's literal text (`enable_tokenizer_batch_encode`,
    `pp_max_micro_batch_size`): a message naming a flag by its field, in order, once each. A
    name after a dot or before a call (`config.x`, `f(`) is the code's, not an option."""
    return list(dict.fromkeys(_DEST.findall(literal)))


def flag_involvements(site: Site, catalog: Mapping[str, FlagDef]) -> list[FlagLink]:
    """Flags involved in a site; `catalog` maps dest name -> FlagDef for the snapshot."""
    return Linker(catalog).involvements(site)


def linked_sites(
    sites: Sequence[Site], catalog: Mapping[str, FlagDef]
) -> list[tuple[Site, list[FlagLink]]]:
    """Each site with its flag involvements against the snapshot's flag catalog.

    It runs in the ingesting process: the read filter leaves only the few sites that read a flag
    to be analysed, so sending the catalog to worker processes would cost more than it saves.
    """
    linker = Linker(catalog)
    return [(site, linker.involvements(site)) for site in sites]


class Linker:
    """Links many sites against one catalog, building the catalog's lookups only once.

    Guard analyses are memoized per (condition, site path): the enclosing guards of one function
    are shared by all its raise sites, and a result depends on the site only through its path.
    Texts that cannot read a flag (`ReadFilter`) are not analyzed at all; `exhaustive=True`
    analyzes every text, the reference the filter is checked against.
    """

    def __init__(self, catalog: Mapping[str, FlagDef], *, exhaustive: bool = False) -> None:
        self.catalog = catalog
        self.by_flag = {name: dest for dest, f in catalog.items() for name in f.flags}
        self.server_paths = frozenset(f.path for f in catalog.values() if f.origin == "dataclass")
        self.filter = None if exhaustive else ReadFilter(catalog, self.server_paths)
        self._reads: dict[str, Reads] = {}
        self._uses: dict[tuple[Condition, str], list[GuardUse]] = {}
        self._placeholders: dict[tuple[str, str], list[str]] = {}

    def _reads_for(self, path: str) -> Reads:
        if (reads := self._reads.get(path)) is None:
            reads = self._reads[path] = Reads(self.catalog, path, self.server_paths)
        return reads

    def _condition_uses(self, cond: Condition, path: str) -> list[GuardUse]:
        key = (cond, path)
        if (uses := self._uses.get(key)) is None:
            uses = self._uses[key] = condition_uses(cond, self._reads_for(path))
        return uses

    def _placeholder_dests(self, text: str, path: str) -> list[str]:
        key = (text, path)
        if (dests := self._placeholders.get(key)) is None:
            node = parse_expr(text)
            reads = self._reads_for(path)
            dests = [
                dest
                for child in (ast.walk(node) if node is not None else ())
                if (dest := reads.dest(child)) is not None
            ]
            self._placeholders[key] = dests
        return dests

    def _named(self, dest: str, path: str) -> bool:
        """Is a field name in a message this flag? As for reads (`ingest.flag_links.reads`): a
        settings field with a specific name, or an argparse flag in its own file (or the
        settings module); `top_p` in a request check is not a benchmark script's --top-p."""
        flag = self.catalog.get(dest)
        if flag is None:
            return False
        if flag.origin == "dataclass":
            return is_specific(dest)
        return flag.path == path or flag.path in self.server_paths

    def involvements(self, site: Site) -> list[FlagLink]:
        """Flags involved in one site, most-involved first."""
        path = site.path
        may_read = _ALWAYS if self.filter is None else self.filter.for_path(path)
        dashed = False  # `--` in the literal text needs a `-` in one of its pieces
        spoken: list[str] = []
        for seg in site.template.segments:
            if seg.kind == "text":
                dashed = dashed or "-" in seg.text
            elif seg.kind == "placeholder" and may_read[seg.text]:
                spoken += self._placeholder_dests(seg.text, path)
        named = []
        if dashed:
            named = [n for n in message_flags(site.template.literal_text) if n in self.by_flag]
        spoken += [d for d in message_dests(site.template.literal_text) if self._named(d, path)]
        guarded: list[tuple[Condition, list[GuardUse]]] = []
        for cond in _with_own_check(site):
            # A guard reads only through its expression and the texts its names resolve to.
            if not may_read[cond.expr]:
                for _, text in cond.resolved:
                    if may_read[text]:
                        break
                else:
                    continue
            if uses := self._condition_uses(cond, path):
                guarded.append((cond, uses))
        if not (named or spoken or guarded):
            return []
        return self._entries(named, spoken, guarded)

    def _entries(
        self,
        named: list[str],
        spoken: list[str],
        guarded: list[tuple[Condition, list[GuardUse]]],
    ) -> list[FlagLink]:
        """One link per flag: the message side, then the most telling guard use (drafted as
        dicts, which the uses update in place)."""
        catalog = self.catalog
        out: dict[str, dict[str, Any]] = {}

        def entry(dest: str) -> dict[str, Any]:
            if dest not in out:
                f = catalog[dest]
                out[dest] = {
                    "flag": f.flags[0],
                    "dest": dest,
                    "sides": [],
                    "polarity": None,
                    "value": None,
                    "condition": None,
                    "required": False,
                    "via": None,
                    "cli": f.cli,
                }
            return out[dest]

        for name in named:
            e = entry(self.by_flag[name])
            if name != e["flag"]:
                e["mentioned_as"] = name  # the message spells it with an alias
            if "message" not in e["sides"]:
                e["sides"].append("message")
        for dest in spoken:
            e = entry(dest)
            if "message" not in e["sides"]:
                e["sides"].append("message")
        for cond, uses in guarded:
            for use in uses:
                e = entry(use.dest)
                if "condition" not in e["sides"]:
                    e["sides"].append("condition")
                # Keep the most telling use: a required boolean/value use beats "other".
                if e["polarity"] is None or use.strength > _strength_of(e):
                    e.update(
                        polarity=use.polarity,
                        value=use.value,
                        required=use.required,
                        condition=cond.text,
                        via=use.via,
                    )
        drafts = sorted(out.values(), key=lambda e: (-len(e["sides"]), e["flag"]))
        return [FlagLink.from_json(e) for e in drafts]


def _with_own_check(site: Site) -> tuple[Condition, ...]:
    """The guard, and for an assert its own check, which the raise needs false (as the
    explanations read it: `errkb.knowledge.with_own_check`)."""
    if site.kind != "assert" or not site.check:
        return site.conditions
    return (*site.conditions, Condition("assert", site.check, False, site.line))


class _Always(dict[str, bool]):
    """Every text may read (the exhaustive reference)."""

    def __missing__(self, text: str) -> bool:
        return True


_ALWAYS = _Always()


def error_flag_rows(
    error_id: str, snapshot_id: int, involvements: list[FlagLink]
) -> list[dict[str, Any]]:
    """Rows of the `error_flags` index (error, snapshot, dest) for one occurrence's links."""
    return [
        {"error_id": error_id, "snapshot_id": snapshot_id, "dest": e.dest, "flag": e.flag}
        for e in involvements
    ]


def _strength_of(e: dict[str, Any]) -> int:
    return (2 if e["required"] else 0) + (1 if e["polarity"] not in (None, "other") else 0)
