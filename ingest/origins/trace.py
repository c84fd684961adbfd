"""Following a site's guarded values back through the snapshot to where they come from.

Each name the guard reads is read by itself first (`reads.read_of`); a name that is not yet an
input nor internal state is followed: a local to the expressions assigned to it, a parameter to
what each caller passes (in any module), `self.x` to what the class's methods assign, `p.x` for
a parameter `p` annotated with a request or settings class to that class's field. Each step is
kept as one short line, so the entry can show how we know.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import cast

from errkb.core.origin import OriginKind
from errkb.ingest.origins import members
from errkb.ingest.origins.calls import Place, argument, hands_on, leaves_default
from errkb.ingest.origins.exprs import (
    LEN,
    call_base,
    constant,
    handed,
    joined,
    leaves,
    merged,
    parse_expr,
    reads_name,
    short,
    sized,
    split_rest,
)
from errkb.ingest.origins.module_facts import Func
from errkb.ingest.origins.reads import Rules, chain_of, read_of
from errkb.ingest.origins.snapshot_index import SnapshotIndex
from errkb.ingest.origins.unparsed import unparsed

MAX_STEPS = 120  # names followed per site (a trace replayed from memory counts its own)
MAX_DEPTH = 6  # calls or assignments followed away from the site
MAX_CALLERS = 6
_SELF = frozenset({"self", "cls"})
FAR = ": followed too far"  # the end of a step past MAX_DEPTH
_STEP = "\x00"  # stands for the step that led to a remembered trace
# The order in which an input class wins when a check reads several: what a user changes first
# (a parallelism size before the model's sizes it divides).
ORDER: tuple[OriginKind, ...] = (
    "flag",
    "request_field",
    "environment",
    "hardware",
    "model_config",
    "dependency",
)


@dataclass
class Walk:
    index: SnapshotIndex
    rules: Rules
    resolved: dict[str, str]
    found: list[tuple[OriginKind, str, str]] = field(default_factory=list)
    deep: bool = True  # every input was found through a caller or an assignment
    none_passed: bool = False  # a `None` was reached through a caller or an assignment
    followed: int = 0  # callers and assignments followed
    internal: list[str] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)
    seen: set[tuple[str, str, str]] = field(default_factory=set)
    active: set[tuple[object, ...]] = field(default_factory=set)  # traces under way (no cycles)
    steps: int = 0
    callers: int = -1
    cuts: int = 0  # traces cut short (the step budget, a cycle): their results are not kept
    # functions whose returns are being read for one call: their parameters are that call's
    # arguments, read in their place, not what every other caller passes
    bound: set[tuple[str, str]] = field(default_factory=set)

    def visit(self, node: ast.expr, at: Place, depth: int, via: str) -> None:
        text = unparsed(node)
        key = (at.path, at.func.qualname if at.func else "", text)
        if key in self.seen:
            return
        if self.steps >= MAX_STEPS:
            self.cuts += 1
            return
        self.seen.add(key)
        self.steps += 1
        if isinstance(node, ast.Call) and sized(node):
            self._length(node.args[0], at, depth, f"{via}`{short(text)}`")
            return
        r = read_of(node, at.path, self.rules)
        step = f"{via}`{short(text)}`"
        if isinstance(node, ast.Constant) and node.value is None and depth:
            self.none_passed = True
        if (
            r.origin == "dependency"
            and isinstance(node, ast.Name)
            and members.fallback(self, node.id, at)
        ):
            members.module_global(self, node.id, "", at, depth, step)  # `HAS_X`, set on import
        elif r.kind == "input" and r.origin is not None:
            self.found.append((r.origin, r.name, f"{step}: {r.why} ({r.name})"))
            self.deep &= depth > 0
        elif r.kind == "internal" and isinstance(node, ast.Constant) and not handed(via):
            # comparing with a literal, or a local starting at one (a counter), says nothing of
            # where the value comes from; a literal a caller passes or a class sets does
            return
        elif r.kind == "internal":
            self.internal.append(f"{step}: {r.why}")
        elif depth >= MAX_DEPTH:
            self.unknown.append(f"{step}{FAR}")
        elif (base := call_base(node)) is not None and r.kind in ("typed", "unknown", "self"):
            if not members.projected(self, base, node, at, depth, step):
                self._call(base, at, depth, step)  # `f(x).y`: what `f` returns, or is given
        elif r.kind == "param":
            self._name(r.name, None, at, depth, step)
        elif (
            r.kind == "typed"
            and isinstance(node, ast.Call)
            and self.index.foreign(at.path, (chain_of(node) or [""])[0])
        ):
            # `Image.open(p)`: another package's function, given `p`
            self._call(node, at, depth, step)
        elif r.kind in ("self", "typed"):
            chain = chain_of(node) or []
            rest = ".".join(p for p in chain[2:]) if r.kind == "self" else ".".join(chain[1:])
            if r.kind == "self":
                members.self_attr(self, chain[1], rest, at, depth, step)
            else:
                members.typed(self, chain[0], rest, at, depth, step)
        elif isinstance(node, ast.Call):
            self._call(node, at, depth, step)
        else:
            self.unknown.append(f"{step}: not traced")

    def _length(self, node: ast.expr, at: Place, depth: int, step: str) -> None:
        """`len(x)`: a list the code writes out has a fixed length, a comprehension the length
        of what it loops over, `[a] * n` the count `n`; a name is followed to what it holds."""
        if isinstance(node, ast.List | ast.Tuple | ast.Set):
            n = len(node.elts)
            self.internal.append(
                f"{step}: a list the code builds with {n} entr{'y' if n == 1 else 'ies'}"
            )
        elif isinstance(node, ast.ListComp | ast.GeneratorExp | ast.SetComp | ast.DictComp):
            of = ast.Call(ast.Name("len", ast.Load()), [node.generators[0].iter], [])
            self.visit(of, at, depth, f"{step} <- ")
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
            count = node.right if isinstance(node.left, ast.List | ast.Tuple) else node.left
            for leaf in leaves(count):
                self.visit(leaf, at, depth, f"{step} <- ")
        else:
            r = read_of(node, at.path, self.rules)
            chain = chain_of(node) or []
            if r.kind == "param" and chain:
                self._name(chain[0], LEN, at, depth, step)
            elif r.kind == "self" and len(chain) >= 2:
                members.self_attr(self, chain[1], joined(chain[2:]), at, depth, step)
            elif r.kind == "typed" and len(chain) >= 2:
                members.typed(self, chain[0], joined(chain[1:]), at, depth, step)
            else:
                for leaf in leaves(node):
                    self.visit(leaf, at, depth, f"{step} <- ")

    def _call(self, node: ast.Call, at: Place, depth: int, step: str) -> None:
        """A call's value: what the called function returns, else what it is given."""
        name = node.func.id if isinstance(node.func, ast.Name) else ""
        done = False
        # keywords beside positional arguments set how it works (`dtype=`), not its value
        args = [*node.args] or [k.value for k in node.keywords]
        receiver = node.func.value if isinstance(node.func, ast.Attribute) else None
        if receiver is not None and not (
            isinstance(receiver, ast.Name)
            and (receiver.id in _SELF or self.index.imports(at.path, receiver.id))
        ):
            # `x.f(...)` depends on `x`; `self.f(...)` and `ImageOps.f(...)` (a module or class
            # imported by name) on their arguments
            args.insert(0, receiver)
        given = [leaf for a in args[:4] for leaf in leaves(a)]
        values = [
            leaf
            for leaf in given
            if not isinstance(leaf, ast.Constant)
            or read_of(leaf, at.path, self.rules).kind == "input"  # "config.json"
        ]
        # a literal beside the values a call is given (`image.convert("RGB")`) is a setting of
        # the call, not where its value comes from; a call of literals only is made by the code
        held = (
            set(map(id, leaves(receiver)))
            if receiver is not None and args[:1] == [receiver]
            else set()
        )
        for leaf in values or given:
            # `x.strip().lower()`: a method of the value itself is no step away from it
            self.visit(leaf, at, depth + (id(leaf) not in held), f"{step} <- ")
            done = True
        done_by_def = False
        called = self.index.called(at.path, name) if name else None
        for path, func in [called] if called is not None else []:
            done_by_def = True
            place = Place(path, func)
            bound = (path, func.qualname)
            fresh = bound not in self.bound
            self.bound.add(bound)
            done |= self._exprs(list(func.returns), "", place, depth, f"{step} <- returned as ")
            if func.return_tests and all(constant(r, path, self.rules) for r in func.returns):
                # it returns one of its constants: the tests that pick one choose the value
                tests = list(func.return_tests)
                done |= self._exprs(tests, "", place, depth, f"{step} <- returned when ")
            if fresh:
                self.bound.discard(bound)
        package = self.index.package_of(at.path, name) if name and not done_by_def else ""
        if package:  # what an installed package's function or class gives back
            self.found.append(
                (
                    "dependency",
                    f"package: {package}",
                    f"{step}: what the {package} package returns (package: {package})",
                )
            )
            done = True
        if not done:
            self.unknown.append(f"{step}: not traced")

    def _exprs(self, exprs: list[str], rest: str, at: Place, depth: int, step: str) -> bool:
        done = False
        for text in [x for e in exprs[:3] if e for x in merged(e, rest)]:
            node = parse_expr(text)  # the source may span lines
            if node is None:
                continue
            done = True
            for leaf in leaves(node):
                self.visit(leaf, at, depth + 1, step if step.endswith(" ") else f"{step} <- ")
        return done

    def _name(self, name: str, rest: str | None, at: Place, depth: int, step: str) -> None:
        """A bare name (or the root of `name.rest`): a local, else a parameter."""
        func = at.func
        is_param = func is not None and name in func.params
        if depth == 0 and name in self.resolved and not is_param:
            if self._exprs([self.resolved[name]], rest or "", at, depth, step):
                return
        # `x = x.convert(...)`: the value before is followed (the parameter, an earlier
        # assignment), not the assignment that reads it again
        assigned = [e for e in func.local(name) if not reads_name(e, name)] if func else []
        if assigned and self._exprs(assigned, rest or "", at, depth, step):
            return
        if func is not None and (at.path, func.qualname) in self.bound and name in func.params:
            self.cuts += 1  # what this trace finds here depends on the call it came from
            return  # the call's own argument, already read where the call is
        if func is not None and name == func.star[1] and rest and rest != LEN:
            # `kwargs["x"]` of a function given `**kwargs`: what its callers pass as `x`
            key, more = split_rest(rest)
            self._passed(func, key, more, at, depth, step)
            return
        if func is None or name not in func.params:
            members.module_global(self, name, rest or "", at, depth, step)
            return
        self._passed(func, name, rest or "", at, depth, step)

    def _remembered(self, key: tuple[object, ...], step: str, work: Callable[[str], None]) -> None:
        """Run `work` once per snapshot for a key, then replay what it found under this step:
        a function called from many sites, or a field read by many, is followed once."""
        memo = self.index.memo
        hit = memo.get(key)
        if hit is None:
            if key[:-1] in self.active:  # the same trace deeper in itself: a cycle of calls
                self.cuts += 1
                return
            marks = (len(self.found), len(self.internal), len(self.unknown), self.followed)
            cuts, steps, none_passed = self.cuts, self.steps, self.none_passed
            # what this walk saw elsewhere is no bar here, nor what this trace sees after it:
            # a trace replayed from memory must leave the walk as running it would
            seen, self.seen = self.seen, set()
            self.none_passed = False
            self.active.add(key[:-1])
            work(_STEP)
            self.active.discard(key[:-1])
            self.seen = seen
            hit = (
                tuple(self.found[marks[0] :]),
                tuple(self.internal[marks[1] :]),
                tuple(self.unknown[marks[2] :]),
                self.followed - marks[3],
                self.steps - steps,
                self.none_passed,
            )
            del self.found[marks[0] :], self.internal[marks[1] :], self.unknown[marks[2] :]
            self.followed, self.steps, self.none_passed = marks[3], steps, none_passed
            if any(hit[:3]) and self.cuts == cuts:
                # a trace cut short (the budget of this site, a cycle through a call under way)
                # depends on where it started: it is not kept for the next site
                memo[key] = hit
        self.found += [(cast(OriginKind, k), n, t.replace(_STEP, step)) for k, n, t in hit[0]]
        self.internal += [t.replace(_STEP, step) for t in hit[1]]
        self.unknown += [t.replace(_STEP, step) for t in hit[2]]
        self.followed += hit[3]
        self.steps += hit[4]
        self.none_passed |= hit[5]

    def _passed(self, func: Func, name: str, rest: str, at: Place, depth: int, step: str) -> None:
        """What the callers of `func` pass for its parameter (or dataclass field) `name`."""
        calls = self.index.callers(func, MAX_CALLERS)
        if depth == 0:
            self.callers = max(self.callers, 0) + len(calls)
        key = ("passed", func.qualname, func.start, name, rest, depth)
        work = lambda s: self._passed_now(func, calls, name, rest, at, depth, s)  # noqa: E731
        self._remembered(key, step, work)

    def _passed_now(
        self,
        func: Func,
        calls: list[tuple[str, int, Func | None]],
        name: str,
        rest: str,
        at: Place,
        depth: int,
        step: str,
    ) -> None:
        if not calls and members.model_config_class(self, func.owner):
            # a Hugging Face config class: built from the model's config.json
            said = f"{step}: a field of the model's config"
            self.found.append(("model_config", f"config.json: {name}", said))
            return
        if not calls:  # (`.forward(` of many classes is not its call: `model(...)` is)
            told = " (the calls of that name are other classes')" if self.index.unsure(func) else ""
            self.unknown.append(f"{step}: no caller of {func.qualname} found{told}")
            return
        read = defaulted = False
        for path, offset, caller in calls:
            call = self.index.call_text(path, offset)
            arg = argument(call, func, name)
            where = Place(path, caller)
            if arg is None and caller is not None and hands_on(call, caller):
                # `f(**kwargs)` in a function given `**kwargs`: its own callers say
                read = True
                self.followed += 1
                self._passed(
                    caller, name, rest, where, depth + 1, f"{step} <- handed on by {where}"
                )
            elif arg is None:
                defaulted |= leaves_default(call, func, name)
            else:
                read = True
                self.followed += 1
                self._exprs([arg], rest, where, depth, f"{step} <- passed by {where} as ")
        default = func.default(name)
        if not read and defaulted and default is not None:
            # every call found leaves it at its default: the signature's value is the value
            self._exprs([default], rest, at, depth, f"{step} <- left at its default, ")
        elif not read:  # the calls pass it by *args, or cannot be read
            self.unknown.append(f"{step}: no call of {func.qualname} shows what it gets")
