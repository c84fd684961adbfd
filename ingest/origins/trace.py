"""Following a site's guarded values back through the snapshot to where they come from.

Each name the guard reads is read by itself first (`reads.read_of`); a name that is not yet an
input nor internal state is followed: a local to the expressions assigned to it, a parameter to
what each caller passes (in any module), `self.x` to what the class's methods assign, `p.x` for
a parameter `p` annotated with a request or settings class to that class's field. Each step is
kept as one short line, so the entry can show how we know.
"""

from __future__ import annotations

import ast
import re
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from typing import cast

from errkb.core.origin import OriginKind
from errkb.ingest.origins.module_facts import Func, ModuleFacts
from errkb.ingest.origins.reads import Rules, chain_of, read_of
from errkb.ingest.origins.snapshot_index import SnapshotIndex
from errkb.ingest.origins.unparsed import unparsed

MAX_STEPS = 80  # names followed per site
MAX_DEPTH = 6  # calls or assignments followed away from the site
MAX_CALLERS = 6
_EMPTY = re.compile(
    r"^(\{\}|\[\]|\(\)|(dict|list|set|tuple|deque|OrderedDict)\(\)|(collections\.)?defaultdict\(\w*\))$"
)
_SELF = frozenset({"self", "cls"})
LEN = "\x01"  # ends a `rest` whose value is read for its length only
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
_WRAPPERS = frozenset(
    "len isinstance any all int float str bool tuple list set sorted max min abs getattr hasattr "
    "type callable math.prod sum const_expr cutlass.const_expr".split()
)


@lru_cache(maxsize=50_000)
def parse_expr(text: str) -> ast.expr | None:
    """An expression's syntax tree (None when it does not parse); kept by text, as the same
    calls and expressions are read again from many sites. The trees are only read, never
    changed."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return ast.parse(f"({text.strip()})", mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def leaves(node: ast.AST) -> Iterator[ast.expr]:
    """The outermost name chains, calls and literals an expression reads; the arguments of
    `len`, `isinstance` and such are read in their place."""
    func = unparsed(node.func) if isinstance(node, ast.Call) else ""
    if isinstance(node, ast.Call) and func == "getattr" and _literal_name(node):
        # `getattr(x, "name", default)` reads `x.name`
        yield ast.Attribute(node.args[0], _literal_name(node), ast.Load())
        return
    if isinstance(node, ast.Call) and _sized(node):
        yield node  # a length: read by `Walk._length`, not as the values it holds
        return
    if isinstance(node, ast.Call) and func in _WRAPPERS:
        args = node.args[:1] if func in ("isinstance", "hasattr", "getattr") else node.args
        for a in args:
            yield from leaves(a)
        return
    if isinstance(node, ast.Name | ast.Attribute | ast.Subscript | ast.Call | ast.Constant):
        yield node  # type: ignore[misc]
        return
    if isinstance(node, ast.Lambda | ast.comprehension):
        return
    if isinstance(node, ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp):
        # `(f(t) for t in ts)`: what it loops over, and what the body reads beside its names
        bound = {
            n.id for g in node.generators for n in ast.walk(g.target) if isinstance(n, ast.Name)
        }
        for g in node.generators:
            yield from leaves(g.iter)
        body = [node.key, node.value] if isinstance(node, ast.DictComp) else [node.elt]
        for part in body:
            yield from (x for x in leaves(part) if not _reads_only(x, bound))
        return
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
        shown = [s for s in (node.left, node.right) if isinstance(s, ast.List | ast.Tuple)]
        if shown:  # `[a] * n` holds `a`s; how many says nothing of what they are
            yield from leaves(shown[0])
            return
    if isinstance(node, ast.IfExp):  # the value is one branch; the test's literals only choose
        yield from (x for x in leaves(node.test) if not isinstance(x, ast.Constant))
        yield from leaves(node.body)
        yield from leaves(node.orelse)
        return
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.expr):
            yield from leaves(child)


@dataclass(frozen=True)
class Place:
    """Where an expression is read: its file and function."""

    path: str
    func: Func | None

    def __str__(self) -> str:
        where = self.func.qualname if self.func else "module level"
        return f"{where} ({self.path.rsplit('/', 2)[-2:][-1]})"


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
        if isinstance(node, ast.Call) and _sized(node):
            self._length(node.args[0], at, depth, f"{via}`{_short(text)}`")
            return
        r = read_of(node, at.path, self.rules)
        step = f"{via}`{_short(text)}`"
        if isinstance(node, ast.Constant) and node.value is None and depth:
            self.none_passed = True
        if r.kind == "input" and r.origin is not None:
            self.found.append((r.origin, r.name, f"{step}: {r.why} ({r.name})"))
            self.deep &= depth > 0
        elif r.kind == "internal" and isinstance(node, ast.Constant) and not _handed(via):
            # comparing with a literal, or a local starting at one (a counter), says nothing of
            # where the value comes from; a literal a caller passes or a class sets does
            return
        elif r.kind == "internal":
            self.internal.append(f"{step}: {r.why}")
        elif depth >= MAX_DEPTH:
            self.unknown.append(f"{step}{FAR}")
        elif (base := _call_base(node)) is not None and r.kind in ("typed", "unknown", "self"):
            if not self._projected(base, node, at, depth, step):
                self._call(base, at, depth, step)  # `f(x).y`: what `f` returns, or is given
        elif r.kind == "param":
            self._name(r.name, None, at, depth, step)
        elif r.kind in ("self", "typed"):
            chain = chain_of(node) or []
            rest = ".".join(p for p in chain[2:]) if r.kind == "self" else ".".join(chain[1:])
            if r.kind == "self":
                self._self(chain[1], rest, at, depth, step)
            else:
                self._typed(chain[0], rest, at, depth, step)
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
                self._self(chain[1], _joined(chain[2:]), at, depth, step)
            elif r.kind == "typed" and len(chain) >= 2:
                self._typed(chain[0], _joined(chain[1:]), at, depth, step)
            else:
                for leaf in leaves(node):
                    self.visit(leaf, at, depth, f"{step} <- ")

    def _model_config_class(self, cls: str) -> bool:
        """True for a class that derives from a model configuration base (`PretrainedConfig`),
        in as many steps as the snapshot shows."""
        todo, done = [cls], set[str]()
        while todo and len(done) < 8:
            c = todo.pop(0)
            if c in self.rules.vocabulary.model_config_bases:
                return True
            if c in done or not c:
                continue
            done.add(c)
            for _, facts in self.index.class_facts(c):
                todo.extend(facts.bases.get(c, ()))
        return False

    def _projected(self, base: ast.Call, node: ast.expr, at: Place, depth: int, step: str) -> bool:
        """`Cls(a, b=x).b...`: a field of an object built right there is what the constructor
        is given for it (the other arguments say nothing of it)."""
        if not isinstance(base.func, ast.Name):
            return False
        parts: list[str] = []
        n = node
        while n is not base and isinstance(n, ast.Attribute | ast.Subscript):
            parts.append(n.attr if isinstance(n, ast.Attribute) else "")
            n = n.value
        parts.reverse()
        if not parts or not parts[0] or not all(parts[1:]):
            return False
        cls, attr = base.func.id, parts[0]
        for _, facts in self.index.class_facts(cls):
            init = facts.funcs.get(f"{cls}.__init__")
            params = init.params if init else ("self", *facts.fields.get(cls, {}))
            if attr not in params:
                continue
            func = init or Func(f"{cls}.__init__", cls, params, (), 0, 0)
            arg = _argument(ast.unparse(base), func, attr)
            if arg is None:
                return False
            self._exprs([arg], ".".join(parts[1:]), at, depth, f"{step} <- given to {cls} as ")
            return True
        return False

    def _call(self, node: ast.Call, at: Place, depth: int, step: str) -> None:
        """A call's value: what the called function returns, else what it is given."""
        name = node.func.id if isinstance(node.func, ast.Name) else ""
        done = False
        args = [*node.args, *(k.value for k in node.keywords)]
        receiver = node.func.value if isinstance(node.func, ast.Attribute) else None
        if receiver is not None and not (isinstance(receiver, ast.Name) and receiver.id in _SELF):
            args.insert(0, receiver)  # `x.f(...)` depends on `x`; `self.f(...)` on its arguments
        for a in args[:4]:
            for leaf in leaves(a):
                self.visit(leaf, at, depth + 1, f"{step} <- ")
                done = True
        done_by_def = False
        for path, func in self.index.functions(name)[:1] if name else []:
            done_by_def = True
            place = Place(path, func)
            bound = (path, func.qualname)
            fresh = bound not in self.bound
            self.bound.add(bound)
            done |= self._exprs(list(func.returns), "", place, depth, f"{step} <- returned as ")
            if func.return_tests and all(_constant(r, path, self.rules) for r in func.returns):
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
        for e in exprs[:3]:
            if not e:
                continue
            node = parse_expr(_applied(e, rest))  # the source may span lines
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
        if func is not None and func.local(name):
            if self._exprs(func.local(name), rest or "", at, depth, step):
                return
        if func is not None and (at.path, func.qualname) in self.bound and name in func.params:
            return  # the call's own argument, already read where the call is
        if func is not None and name == func.star[1] and rest and rest != LEN:
            # `kwargs["x"]` of a function given `**kwargs`: what its callers pass as `x`
            key, more = _split(rest)
            self._passed(func, key, more, at, depth, step)
            return
        if func is None or name not in func.params:
            self.unknown.append(f"{step}: not traced")
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
            cuts = self.cuts
            seen, self.seen = self.seen, set()  # what this walk saw elsewhere is no bar here
            self.active.add(key[:-1])
            work(_STEP)
            self.active.discard(key[:-1])
            self.seen = seen | self.seen
            hit = (
                tuple(self.found[marks[0] :]),
                tuple(self.internal[marks[1] :]),
                tuple(self.unknown[marks[2] :]),
                self.followed - marks[3],
            )
            del self.found[marks[0] :], self.internal[marks[1] :], self.unknown[marks[2] :]
            self.followed = marks[3]
            if any(hit[:3]) and self.cuts == cuts:
                # a trace cut short (the budget of this site, a cycle through a call under way)
                # depends on where it started: it is not kept for the next site
                memo[key] = hit
        self.found += [(cast(OriginKind, k), n, t.replace(_STEP, step)) for k, n, t in hit[0]]
        self.internal += [t.replace(_STEP, step) for t in hit[1]]
        self.unknown += [t.replace(_STEP, step) for t in hit[2]]
        self.followed += hit[3]

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
        if not calls and self._model_config_class(func.owner):
            # a Hugging Face config class: built from the model's config.json
            self.found.append(
                ("model_config", f"config.json: {name}", f"{step}: a field of the model's config")
            )
            return
        if not calls:
            self.unknown.append(f"{step}: no caller of {func.qualname} found")
            return
        read = defaulted = False
        for path, offset, caller in calls:
            call = self.index.call_text(path, offset)
            arg = _argument(call, func, name)
            where = Place(path, caller)
            if arg is None and caller is not None and _hands_on(call, caller):
                # `f(**kwargs)` in a function given `**kwargs`: its own callers say
                read = True
                self.followed += 1
                self._passed(
                    caller, name, rest, where, depth + 1, f"{step} <- handed on by {where}"
                )
            elif arg is None:
                defaulted |= _leaves_default(call, func, name)
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

    def _assigned(self, cls: str, attr: str) -> tuple[str, ModuleFacts, str] | None:
        """The module and class (`cls` or a base, in any module) that assigns or declares
        `self.attr`."""
        todo, done = [cls], set[str]()
        while todo and len(done) < 8:
            c = todo.pop(0)
            if c in done:
                continue
            done.add(c)
            for path, facts in self.index.class_facts(c):
                if f"{c}.{attr}" in facts.assigns or attr in facts.fields.get(c, {}):
                    return path, facts, c
                todo.extend(b for b in facts.bases.get(c, ()) if b not in ("object", "Module"))
        return None

    def _member(self, cls: str, attr: str, rest: str, depth: int, step: str) -> bool:
        """`x.attr` for an `x` of class `cls`: where the class assigns it, or its field."""
        hit = self._assigned(cls, attr)
        if hit is None:
            return False
        key = ("member", cls, attr, rest, depth)
        self._remembered(key, step, lambda s: self._member_now(hit, attr, rest, depth, s))
        return True

    def _member_now(
        self, hit: tuple[str, ModuleFacts, str], attr: str, rest: str, depth: int, step: str
    ) -> None:
        path, facts, c = hit
        assigned = facts.assigns.get(f"{c}.{attr}", [])
        for method, expr, tests in assigned[:3]:
            self.followed += 1
            place = Place(path, facts.funcs.get(method))
            if _EMPTY.match(expr.strip()):  # what it holds is put in by the code later
                self.internal.append(f"{step}: a container {c} fills itself")
                continue
            self._exprs([expr], rest, place, depth, f"{step} <- set in {place} to ")
            if tests:  # a value chosen by a test: the test's inputs choose it
                self._exprs([tests], "", place, depth, f"{step} <- set in {place} when ")
        if not assigned:
            self._field(c, attr, facts, path, rest, depth, step)

    def _self(self, attr: str, rest: str, at: Place, depth: int, step: str) -> None:
        owner = at.func.owner if at.func else ""
        if owner and self._member(owner, attr, rest, depth, step):
            return
        if attr.startswith("_"):
            self.internal.append(f"{step}: private state of {owner or 'the object'}")
        else:
            self.unknown.append(f"{step}: not traced")

    def _field(
        self, cls: str, attr: str, facts: ModuleFacts, path: str, rest: str, depth: int, step: str
    ) -> None:
        """A declared field: a request's, a settings class's, else what its constructor gets."""
        if cls in self.rules.request_types:
            self.found.append(("request_field", f"request: {attr}", f"{step}: a request field"))
        elif cls in self.rules.flag_types and self.rules.flag(attr):
            flag = self.rules.flag(attr) or attr
            self.found.append(("flag", flag, f"{step}: a server setting ({flag})"))
        else:
            fields = tuple(facts.fields.get(cls, {}))
            init = Func(f"{cls}.__init__", cls, ("self", *fields), (), 0, 0)
            self._passed(init, attr, rest, Place(path, None), depth, f"{step}: field of {cls}")

    def _typed(self, root: str, rest: str, at: Place, depth: int, step: str) -> None:
        func = at.func
        annotation = func.annotation(root) if func else ""
        cls = annotation.strip("'\" ").split("[")[-1].strip("]'\" ").rsplit(".", 1)[-1]
        cls = cls.split("|")[0].strip()
        attr, more = _split(rest)
        if cls in self.rules.request_types and attr in self.rules.request_fields:
            self.found.append(("request_field", f"request: {attr}", f"{step}: a request field"))
            return
        if cls.lstrip("_")[:1].isupper() and self._member(cls, attr, more, depth, step):
            return
        self._name(root, rest, at, depth, step)


def _root(node: ast.expr) -> str:
    """The name a chain starts from (`t` of `t.x[0]`), "" when it starts elsewhere."""
    while isinstance(node, ast.Attribute | ast.Subscript | ast.Call):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node.id if isinstance(node, ast.Name) else ""


def _reads_only(node: ast.expr, names: set[str]) -> bool:
    """True for a chain from one of `names`, or a call given only such chains (`f(t)`)."""
    if _root(node) in names and not isinstance(node, ast.Call):
        return True
    args = [*node.args, *(k.value for k in node.keywords)] if isinstance(node, ast.Call) else []
    return bool(args) and all(_root(a) in names for a in args)


def _sized(node: ast.Call) -> bool:
    """True for `len(x)` of a name chain, a list written out, a comprehension or `[a] * n`."""
    if not isinstance(node.func, ast.Name) or node.func.id != "len":
        return False
    if len(node.args) != 1 or node.keywords:
        return False
    arg = node.args[0]
    if isinstance(arg, ast.List | ast.Tuple | ast.Set):
        return not any(isinstance(e, ast.Starred) for e in arg.elts)
    if isinstance(arg, ast.BinOp):
        shown = ast.List | ast.Tuple
        return isinstance(arg.op, ast.Mult) and (
            isinstance(arg.left, shown) or isinstance(arg.right, shown)
        )
    if isinstance(arg, ast.ListComp | ast.GeneratorExp | ast.SetComp | ast.DictComp):
        return True
    chain = chain_of(arg)
    return bool(chain) and not any(p.endswith("()") for p in chain)


def _joined(parts: list[str]) -> str:
    """The rest of a chain whose value is read for its length."""
    return ".".join(parts) + LEN


def _split(rest: str) -> tuple[str, str]:
    """The first attribute of a rest, and what follows it (the length mark kept on it)."""
    mark = LEN if rest.endswith(LEN) else ""
    attr, _, more = rest.removesuffix(LEN).partition(".")
    return attr, more + mark


def _applied(expr: str, rest: str) -> str:
    """`expr` read further by `rest`: `(e).a.b`, or `len((e).a)` for a length."""
    core = rest.removesuffix(LEN)
    text = f"({expr}).{core}" if core else expr
    return f"len({text})" if rest.endswith(LEN) else text


def _argument(call: str, func: Func, name: str) -> str | None:
    """The source of what a call passes for a parameter, None when it cannot tell."""
    node = parse_expr(call)
    if not isinstance(node, ast.Call):
        return None
    for kw in node.keywords:
        if kw.arg == name:
            return unparsed(kw.value)
    params = list(func.params)
    if func.owner and params and params[0] in ("self", "cls"):
        params = params[1:]
    if name not in params:
        return None
    i = params.index(name)
    if any(isinstance(a, ast.Starred) for a in node.args[: i + 1]):
        return None
    if i < len(node.args):
        return unparsed(node.args[i])
    return None  # the default value: said by the signature, not the caller


def _constant(expr: str, path: str, rules: Rules) -> bool:
    """True for a returned expression made of literals and constants only."""
    node = parse_expr(expr)
    if node is None:
        return False
    return all(read_of(leaf, path, rules).kind == "internal" for leaf in leaves(node))


def _call_base(node: ast.expr) -> ast.Call | None:
    """The call a chain is read from (`f(x)` of `f(x).y[0]`), None when it does not start with
    one or is itself the call."""
    base = node
    while isinstance(base, ast.Attribute | ast.Subscript):
        base = base.value
    return base if isinstance(base, ast.Call) and base is not node else None


def _literal_name(node: ast.Call) -> str:
    """The attribute name of `getattr(x, "name", ...)`, "" when it is not a literal."""
    if len(node.args) >= 2 and isinstance(a := node.args[1], ast.Constant):
        return a.value if isinstance(a.value, str) and a.value.isidentifier() else ""
    return ""


def _hands_on(call: str, caller: Func) -> bool:
    """True when a call passes on its caller's own `**kwargs`."""
    kwargs = caller.star[1]
    return bool(kwargs) and re.search(rf"\*\*{kwargs}\b", call) is not None


def _leaves_default(call: str, func: Func, name: str) -> bool:
    """True when a call passes nothing for the parameter (no keyword, too few positions, no
    `*args` or `**kwargs` that might carry it)."""
    node = parse_expr(call)
    if not isinstance(node, ast.Call) or any(k.arg is None for k in node.keywords):
        return False
    if any(isinstance(a, ast.Starred) for a in node.args):
        return False
    params = list(func.params)
    if func.owner and params and params[0] in ("self", "cls"):
        params = params[1:]
    return name in params and params.index(name) >= len(node.args)


def _handed(via: str) -> bool:
    """True when the trace went through a caller, a class's assignment or a default."""
    return " passed by " in via or " set in " in via or " left at its default" in via


def _short(text: str) -> str:
    return text if len(text) <= 70 else text[:67] + "..."
