"""One site's origin: the check that fails and the tests on the way to it, each followed back
(`trace`), then one class decided: the inputs the check itself reads first, then "internal" when
the check's values were followed and reach no input, then the inputs that choose the code path.
"""

from __future__ import annotations

import ast
import re
from dataclasses import replace

from errkb.core.origin import NEVER_RUNS, UNIMPLEMENTED, Origin, OriginKind
from errkb.core.records import Site
from errkb.ingest.origins.exprs import leaves, parse_expr
from errkb.ingest.origins.module_facts import Func
from errkb.ingest.origins.reads import Rules
from errkb.ingest.origins.snapshot_index import SnapshotIndex, in_tests
from errkb.ingest.origins.trace import FAR, MAX_CALLERS, ORDER, Place, Walk


def _guard_nodes(site: Site) -> tuple[list[ast.expr], list[ast.expr]]:
    """The check that fails (an assert's condition, a raise's innermost test) and the tests on
    the way to it, which choose the code path."""
    tests = [c.expr for c in site.conditions if c.kind in ("if", "elif", "while", "case")]
    if site.kind == "assert" and site.check:
        check, path = [site.check], tests
    elif site.check and site.kind != "lookup":
        check, path = [site.check], [t for t in tests if t != site.check]
    else:
        check, path = tests[-1:], tests[:-1]
    checked = [n for e in dict.fromkeys(check) if (n := parse_expr(e)) is not None]
    return checked, [n for e in dict.fromkeys(path) if (n := parse_expr(e)) is not None]


def _walk(nodes: list[ast.expr], walk: Walk, at: Place) -> Walk:
    for node in nodes:
        for leaf in leaves(node):
            walk.visit(leaf, at, 0, "")
    return walk


Decided = tuple[OriginKind, tuple[str, ...]]  # the class and the inputs found


def _decided(walk: Walk, named: frozenset[str] = frozenset()) -> Decided | None:
    """The class that decides (the first in ORDER) and the inputs found. A flag that may also
    set the value gives way to the class of the value the message names: "architectures
    {architectures} are not supported" is the model's, whatever flag can override them."""
    if walk.found:
        kinds = [k for k, _, _ in walk.found]
        kind = next(k for k in ORDER if k in kinds)
        flagged = {_field(n) for k, n, _ in walk.found if k == "flag"}
        said = [k for k, n, _ in walk.found if _field(n) in named - flagged and k != "flag"]
        if kind == "flag" and said:
            kind = next(k for k in ORDER if k in said)
        return kind, tuple(dict.fromkeys(n for _, n, _ in walk.found))
    return None


def _field(name: str) -> str:
    """The field an input's name ends at: "config.json: x" and "--x" are `x`."""
    return name.rsplit(": ", 1)[-1].lstrip("-").replace("-", "_").rsplit(".", 1)[-1]


def origin_of(site: Site, index: SnapshotIndex, rules: Rules) -> Origin | None:
    """Where the values a site's guard reads come from (None for the project's own tests)."""
    if in_tests(site.path) or site.kind == "import":
        return None
    if any(c.kind == "if" and c.holds and _TYPE_CHECKING.match(c.expr) for c in site.conditions):
        return Origin("internal", (), (NEVER_RUNS,))
    facts = index.facts(site.path)
    func = facts.funcs.get(site.qualname) or facts.func_at(site.line)
    resolved = {k: v for c in site.conditions for k, v in c.resolved}
    at = Place(site.path, func)
    check_nodes, path_nodes = _guard_nodes(site)
    if not check_nodes and not path_nodes and site.kind == "raise":
        # raised whenever the code gets here: the values its message names are what it reports
        named = [parse_expr(s.text) for s in site.template.segments if s.kind != "text"]
        check_nodes = [n for n in named[:4] if n is not None]
    check = _walk(check_nodes, Walk(index, rules, resolved), at)
    path = _walk(path_nodes, Walk(index, rules, resolved), at)
    callers = max(check.callers, path.callers)
    if func is not None and callers < 0 and func.qualname.rsplit(".", 1)[-1] != "__init__":
        callers = len(index.callers(func, MAX_CALLERS))
    if callers == 0 and func is not None and (index.unsure(func) or index.handed(site.path, func)):
        # calls of that name were another class's, or the function is handed on by its name
        # (a hook in a list, a callback): not a sign that nothing calls it
        callers = -1
    network = _network(site)
    if network:  # raised while handling a failed connection: the machine's network
        check.found.append(("environment", "network: the network connection", network))
    unguarded = not any(c.kind in ("if", "elif", "while", "case") for c in site.conditions)
    if site.exception == "NotImplementedError" and unguarded and site.kind == "raise":
        # a method body that only raises: the class the code chose does not implement it
        check.internal.append(UNIMPLEMENTED)
    if site.kind == "assert" and not check.found and not path.found and not check.internal:
        # an assert whose values reach no input: the project's own invariant
        check.internal.append("an assert whose values reach no input that could be traced")
    caught = _caught(site, func, index)
    chain = [s for w in (check, path) for s in [x for _, _, x in w.found] + w.internal + w.unknown]
    chain_t = tuple(chain[:8])
    path_inputs = tuple(dict.fromkeys(n for _, n, _ in path.found))
    reported = frozenset(
        s.text.rsplit(".", 1)[-1] for s in site.template.segments if s.kind != "text"
    )
    decided = _decided(check, reported)
    if decided is not None and _none_test(check_nodes) and check.deep and not check.none_passed:
        # a None test whose callers always pass a value: it cannot fire from an input
        why = "every caller passes a value, never None"
        return replace(
            Origin("internal", (), (why, *chain_t), callers, path_inputs=decided[1]), caught=caught
        )
    proof = _internal_proof(check_nodes, check, path, decided is None)
    if proof:
        return replace(
            Origin("internal", (), (proof, *chain_t), callers, path_inputs=path_inputs),
            caught=caught,
        )
    own_state = check.internal and not check.found and not check.unknown
    if site.kind != "assert" and not own_state:
        # every test of a raise's guard is a condition the input meets, unless the check itself
        # compares only state the code builds (then the path's inputs are the way around it)
        decided = decided or _decided(path, reported)
    if decided is not None:
        return replace(
            Origin(decided[0], decided[1], chain_t, callers, path_inputs=path_inputs), caught=caught
        )
    if check.internal or (check.followed and not check.found and _only_deep(check.unknown)):
        # the values the check compares are the code's own: its callers and assignments were
        # followed and reach no input (a trace that ends in a call it cannot read proves
        # nothing; one that goes on deeper into the code's own state than it follows does)
        n = check.followed
        searched = f"{n} {'caller or assignment' if n == 1 else 'callers and assignments'} "
        searched += "followed; none reaches an input"
        said = (*chain_t, searched) if check.followed else chain_t
        return replace(
            Origin("internal", (), said, callers, path_inputs=path_inputs), caught=caught
        )
    return replace(_by_path(site, check_nodes, check, path, chain_t, callers), caught=caught)


def _by_path(
    site: Site, check_nodes: list[ast.expr], check: Walk, path: Walk, chain: Chain, callers: int
) -> Origin:
    """The origin when the check's own values decide nothing: the inputs of its path."""
    decided = _decided(path)
    made = all(u.endswith((": not traced", FAR)) for u in check.unknown)
    if decided is not None and site.kind == "assert" and _none_test(check_nodes) and made:
        # an assert that the code's own state is set (`x.host_value is not None`: a value its
        # calls make, not one handed in), on a path a setting chooses: the setting is the way
        # around it, not what breaks it
        said = (*chain, "the value it tests was followed; none reaches an input")
        return Origin("internal", (), said, callers, path_inputs=decided[1])
    if decided is not None:
        return Origin(decided[0], decided[1], chain, callers)
    if path.internal or path.followed:
        return Origin("internal", (), chain, callers)
    return Origin("unknown", (), chain, callers)


# Switches that turn on extra checks (debug modes, sanity and invariant checks, strict asserts):
# a check they enable finds the code's own state wrong, not the switch.
_DEBUG = re.compile(
    r"(?i)debug|sanity|invariant|validate|strict|canary|_assert\b|assert$|checker|"
    r"enable[-_]\w*check\b"
)
Chain = tuple[str, ...]
_TYPE_CHECKING = re.compile(r"^(typing\.)?TYPE_CHECKING$")
_NETWORK = re.compile(
    r"ConnectionError|RequestException|Timeout|URLError|HTTPError|ConnectTimeout|socket\.error|"
    r"ClientError|ProtocolError|SSLError|HfHubHTTPError|LocalEntryNotFoundError"
)


def _network(site: Site) -> str:
    """The failed-connection classes a raise is handling, said as a step ("" when none)."""
    for c in site.conditions:
        if c.kind == "except" and _NETWORK.search(c.expr):
            return f"raised while handling `{c.expr}`: a connection failed"
    return ""


def _caught(site: Site, func: Func | None, index: SnapshotIndex) -> str:
    """How the callers treat the error when every caller found catches it, else ""."""
    if func is None or func.qualname.rsplit(".", 1)[-1] == "__init__":
        return ""
    said = []
    for path, offset, caller in index.callers(func, MAX_CALLERS):
        action = index.facts(path).catching(index.line_of(path, offset), site.exception)
        if not action:
            return ""
        where = caller.qualname if caller else "module level"
        said.append(f"{where} catches it and {'logs it' if action == 'logs' else 'goes on'}")
    return "; ".join(dict.fromkeys(said))


def _internal_proof(check_nodes: list[ast.expr], check: Walk, path: Walk, open_check: bool) -> str:
    """Why a check can fire only through a bug, when the walks show it ("" otherwise)."""
    both = _both_ways(check_nodes, check, path)
    if both:
        # the check needs a flag off while the value it tests is set only when that flag is
        # on: the two readings of one setting disagree, which only a bug in the code can do
        return f"the check needs {both} off, and the value it tests is set only with {both} on"
    switches = tuple(n for _, n, _ in path.found if _DEBUG.search(n))
    if open_check and switches and len(switches) == len(path.found):
        # the path is chosen only by switches that turn on extra checks: what such a check
        # finds wrong is the code's own state, and turning the switch off skips it
        return f"the check runs only when {', '.join(dict.fromkeys(switches))} turns on checks"
    return ""


_SET_WHEN = re.compile(r" when `(?!not )([^`]*)`: [^`]*$")


def _both_ways(check_nodes: list[ast.expr], check: Walk, path: Walk) -> str:
    """The flag a raise's check needs off (`not self.x`) while a test on its path reads a
    value the code sets only when that flag is on; "" when there is none."""
    if len(check_nodes) != 1:
        return ""
    node = check_nodes[0]
    if not (isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not)):
        return ""
    off = {n for k, n, _ in check.found if k == "flag"}
    for kind, name, step in path.found:
        if kind == "flag" and name in off and _SET_WHEN.search(step):
            return name
    return ""


def _only_deep(unknown: list[str]) -> bool:
    """True when every trace left open went on beyond the depth followed (none ended at a call
    or name it could not read)."""
    return all(u.endswith(FAR) for u in unknown)


def _none_test(nodes: list[ast.expr]) -> bool:
    """True for a check that only tests a value against None (`x is not None`)."""
    return len(nodes) == 1 and (
        isinstance(n := nodes[0], ast.Compare)
        and all(isinstance(o, ast.Is | ast.IsNot) for o in n.ops)
        and all(isinstance(c, ast.Constant) and c.value is None for c in n.comparators)
    )
