"""Guard expressions said in English, from their syntax trees.

`x <= 0` -> "seconds per frame is zero or negative", `isinstance(x, (str, list))` -> "x is
neither a str nor a list", `len(a) != len(b)` -> "a and b differ in length"; a flag reads as
`--flag-name`, a request field, environment variable or model setting as what it is. Names
become words through the project's glossary. When no words fit, the code is quoted in
backticks, so no sentence claims more than the code says.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping

from errkb.core.negation import NEGATED, negate
from errkb.knowledge.facts import Involvement
from errkb.knowledge.inputs import Input, InputFinder
from errkb.knowledge.wording import cli_value
from errkb.knowledge.words import parts, phrase, predicate, wordable

MAX_CODE = 80
_TYPES = {
    "str": "a string",
    "int": "an integer",
    "float": "a number",
    "bool": "a boolean",
    "list": "a list",
    "tuple": "a tuple",
    "dict": "a dict",
    "set": "a set",
    "bytes": "bytes",
}
_MODULES = frozenset("torch np numpy math os sys re json enum typing".split())
_VERB = {"is": "is", "has": "has", "use": "uses", "uses": "uses", "should": "should"}


def code(text: str) -> str:
    """Source text in backticks, shortened in the middle when very long."""
    text = " ".join(text.split())
    if len(text) > MAX_CODE:
        text = text[: MAX_CODE - 25] + " … " + text[-20:]
    return f"`{text}`"


def _number(node: ast.expr) -> float | None:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        n = _number(node.operand)
        return None if n is None else -n
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
        if not isinstance(node.value, bool):
            return float(node.value)
    return None


def _num(x: float) -> str:
    return str(int(x)) if x == int(x) else str(x)


class Speaker:
    """Says one site's expressions in words: knows its flags, locals, inputs and glossary."""

    def __init__(
        self,
        flags: list[Involvement],
        resolved: Mapping[str, str],
        finder: InputFinder,
        glossary: Mapping[str, str],
    ) -> None:
        self.flags = [f for f in flags if f.cli]
        self.resolved = resolved
        self.finder = finder
        self.glossary = glossary
        self.used: list[Input] = []  # inputs named so far
        self.flags_used: list[Involvement] = []
        self.subject: str | None = None  # "the model" when a group is about it
        self.resolving: set[str] = set()  # locals being said (`x = x or y` must not loop)

    def _local(self, name: str) -> ast.expr | None:
        """The expression a local stands for, unless it is already being said. A local first
        bound to a literal list, dict or set (`tokens = []`) is an accumulator filled later:
        its first value says nothing, so its name is said instead."""
        if name in self.resolving or name not in self.resolved:
            return None
        inner = _parse(self.resolved[name])
        if isinstance(inner, ast.List | ast.Dict | ast.Set | ast.Tuple):
            return None
        return inner

    # -- nouns ------------------------------------------------------------------------------

    def flag_of(self, node: ast.expr) -> Involvement | None:
        """The linked flag an attribute (or a local resolved to one) stands for."""
        if isinstance(node, ast.Attribute):
            return next((f for f in self.flags if f.dest == node.attr), None)
        return None

    def noun(self, node: ast.expr) -> str:
        """What an expression is, as words."""
        flag = self.flag_of(node)
        if flag is not None:
            self.flags_used.append(flag)
            return flag.flag
        found = self.finder.of(node)
        if found is not None:
            self.used.append(found)
            if found.kind == "request_field":
                return f"the request's {found.name}"
            if found.kind == "environment":
                return f"the environment variable {found.name}"
            if found.kind == "model_config":
                self.subject = "the model"
                if not found.name:  # the config object itself: `quant_config`
                    return f"the model's {phrase(found.owner, self.glossary)}"
                return f"the model's {phrase(found.name.split('.')[-1], self.glossary)} setting"
        if isinstance(node, ast.Constant):
            if isinstance(node.value, str):
                return f'"{node.value}"'
            n = _number(node)
            return _num(n) if n is not None else str(node.value)
        if isinstance(node, ast.Name):
            inner = self._local(node.id)
            if inner is not None and isinstance(inner, ast.Attribute | ast.Call | ast.Subscript):
                self.resolving.add(node.id)
                said = self.noun(inner)
                self.resolving.discard(node.id)
                if "`" not in said:
                    return said
            return phrase(node.id, self.glossary)
        if isinstance(node, ast.Attribute):
            chain = _names(node)
            if chain is not None:
                return self._chain_words(chain)
        if isinstance(node, ast.Call):
            func = node.func
            fname = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
            if fname == "len" and len(node.args) == 1:
                return "the length of " + self.noun(node.args[0])
            if fname in ("type",) and node.args:
                return "the type of " + self.noun(node.args[0])
            if fname in ("set", "list", "tuple", "int", "float", "str", "bool") and node.args:
                return self.noun(node.args[0])
            if fname and not node.args and fname.startswith("get_"):
                return "the " + phrase(fname[4:], self.glossary)
        if isinstance(node, ast.Subscript):
            key = node.slice
            if isinstance(key, ast.Constant) and isinstance(key.value, str):
                if isinstance(node.value, ast.Name) and node.value.id in ("kwargs", "params"):
                    return f"the {key.value} argument"
                return f"the {key.value!r} entry of {self.noun(node.value)}"
        if isinstance(node, ast.Tuple | ast.List | ast.Set):
            return ", ".join(self.noun(e) for e in node.elts)
        return code(ast.unparse(node))

    def _type(self, node: ast.expr) -> str:
        """A type in an `isinstance` test: "a string", "a Mapping", "one of the sizeable pools"."""
        text = ast.unparse(node)
        if text in _TYPES:
            return _TYPES[text]
        last = text.rsplit(".", 1)[-1]
        if last.upper() == last.lstrip("_") and wordable(last, self.glossary):
            return "one of the " + phrase(last, self.glossary)
        return f"a {last}" if last[:1].isupper() else code(text)

    def _chain_words(self, chain: list[str]) -> str:
        if chain[0] in _MODULES:  # torch.float16 is its own best name
            return ".".join(chain)
        kept = [c for c in chain if c not in ("self", "cls")]
        if not kept:
            return "this object"
        last = phrase(kept[-1], self.glossary)
        if len(kept) >= 2 and kept[-2] not in ("server_args", "args", "config"):
            local = len(kept) == 2 and kept[0] == chain[0]  # `x.dtype`: x is a local name
            return f"the {last} of {'' if local else 'the '}{phrase(kept[-2], self.glossary)}"
        return f"the {last}"

    def _choices(self, node: ast.expr) -> str:
        if isinstance(node, ast.Tuple | ast.List | ast.Set):
            items = [self.noun(e) for e in node.elts]
            return (
                " or ".join(items)
                if len(items) <= 2
                else ", ".join(items[:-1]) + " or " + items[-1]
            )
        return self.noun(node)

    # -- clauses ----------------------------------------------------------------------------

    def say(self, node: ast.expr) -> str:
        """One conjunct as a clause."""
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            inner = node.operand
            if isinstance(inner, ast.Compare | ast.BoolOp) and _negatable(inner):
                return self.say(negate(inner))
            if isinstance(inner, ast.Compare) and _is_range(inner):
                return self._outside(inner)
            return self._truth(inner, False)
        if isinstance(node, ast.BoolOp):
            joined = [self.say(v) for v in node.values]
            if isinstance(node.op, ast.Or):  # a nested "either" (a local standing for an
                # `or`) joins the outer list rather than opening a second one
                return "either " + ", or ".join(j.removeprefix("either ") for j in joined)
            return " and ".join(joined)
        if isinstance(node, ast.Compare):
            return self._compare(node)
        return self._truth(node, True)

    def _outside(self, node: ast.Compare) -> str:
        """`not lo < x <= hi`: x is outside a range (the ends said as included or not)."""
        lo, x, hi = node.left, node.comparators[0], node.comparators[1]
        lo_in = "" if isinstance(node.ops[0], ast.LtE) else " (excluded)"
        hi_in = "" if isinstance(node.ops[1], ast.LtE) else " (excluded)"
        return (
            f"{self.noun(x)} is outside the range from {self.noun(lo)}{lo_in} "
            f"to {self.noun(hi)}{hi_in}"
        )

    def _truth(self, node: ast.expr, holds: bool) -> str:
        """A value used as a test: a boolean flag, a predicate, or something present/empty."""
        not_ = "" if holds else "not "
        flag = self.flag_of(node)
        if flag is not None:
            self.flags_used.append(flag)
            return f"{flag.flag} is {'on' if holds else 'off'}"
        if isinstance(node, ast.Name) and (inner := self._local(node.id)) is not None:
            pred = predicate(node.id)
            if inner is not None:
                self.resolving.add(node.id)
                said = self.say(inner if holds else negate(inner))
                self.resolving.discard(node.id)
                # `pd_enabled`: "PD disaggregation is enabled (<what it stands for>)"; but a
                # name that opens with its verb (`is_dsv4`, `has_mtp`) adds nothing to the
                # clause it stands for, and "DeepSeek-V4 is not is" would be nonsense.
                if pred is not None and not node.id.lstrip("_").startswith(pred[0] + "_"):
                    what = phrase(pred[1], self.glossary)
                    return f"{what} is {'' if holds else 'not '}{_participle(pred[0])} ({said})"
                if pred is not None:
                    return said
                if "`" not in said:
                    return said
        if isinstance(node, ast.Call):
            call = self._call(node, holds)
            if call is not None:
                return call
        found = self.finder.of(node)
        if found is not None and found.kind == "environment":
            self.used.append(found)
            return (
                f"the environment variable {found.name} is {'set' if holds else 'unset or false'}"
            )
        if found is not None and found.kind == "hardware":
            self.used.append(found)
        name = _last_name(node)
        pred = predicate(name) if name else None
        if name and pred is not None:
            verb, rest = pred
            what = phrase(rest, self.glossary)
            if verb in _VERB:
                subj = self._subject(node)
                return f"{subj} {_VERB[verb] if holds else _neg_verb(verb)} {what}".strip()
            return f"{what} is {not_}{_participle(verb)}"
        noun = self.noun(node)
        if "`" in noun:
            return f"{noun} is {'true' if holds else 'false or empty'}"
        return f"{noun} is {'set' if holds else 'unset or empty'}"

    def _subject(self, node: ast.expr) -> str:
        if self.subject:
            return self.subject
        if isinstance(node, ast.Attribute):
            chain = _names(node) or []
            kept = [c for c in chain[:-1] if c not in ("self", "cls")]
            if kept:
                return "the " + phrase(kept[-1], self.glossary)
        return "it"

    def _call(self, node: ast.Call, holds: bool) -> str | None:
        func = node.func
        fname = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
        not_ = "" if holds else "not "
        if fname == "isinstance" and len(node.args) == 2:
            kinds = node.args[1]
            names = kinds.elts if isinstance(kinds, ast.Tuple) else [kinds]
            types = [self._type(t) for t in names]
            subject = self.noun(node.args[0])
            if holds:
                return f"{subject} is " + " or ".join(types)
            if len(types) > 1:
                return f"{subject} is neither " + " nor ".join(types)
            return f"{subject} is not {types[0]}"
        if fname == "hasattr" and len(node.args) == 2:
            attr = node.args[1]
            what = attr.value if isinstance(attr, ast.Constant) else ast.unparse(attr)
            has = "has" if holds else "has no"
            return f"{self.noun(node.args[0])} {has} {phrase(str(what), self.glossary)}"
        if fname in ("exists", "isfile", "isdir") and node.args:
            what = self.noun(node.args[0])
            pos = {"exists": "exists", "isfile": "is a file", "isdir": "is a folder"}[fname]
            neg = {
                "exists": "does not exist",
                "isfile": "is not a file",
                "isdir": "is not a folder",
            }
            return f"{what} {pos if holds else neg[fname]}"
        if fname in ("startswith", "endswith") and isinstance(func, ast.Attribute) and node.args:
            verb = "starts" if fname == "startswith" else "ends"
            return (
                f"{self.noun(func.value)} {'' if holds else 'does not '}"
                f"{verb if holds else verb[:-1]} with {self.noun(node.args[0])}"
            )
        if fname in ("isfinite", "isnan", "isinf") and node.args:
            kind = {"isfinite": "a finite number", "isnan": "NaN", "isinf": "infinite"}[fname]
            return f"{self.noun(node.args[0])} is {not_}{kind}"
        if fname in ("any", "all") and node.args:
            return None
        found = self.finder.of(node)
        if found is not None and found.kind == "hardware":
            self.used.append(found)
            return f"it is {not_}running on {phrase(fname.removeprefix('is_'), self.glossary)}"
        pred = predicate(fname)
        if pred is not None and pred[0] == "is":
            if node.args:
                self.noun(node.args[0])  # records a model-config input as the subject
            subj = self.subject or (self.noun(node.args[0]) if node.args else "it")
            return f"{subj} is {not_}{phrase(pred[1], self.glossary)}"
        return None

    def _compare(self, node: ast.Compare) -> str:
        if _is_range(node):
            lo, hi = node.left, node.comparators[1]
            subject = self.noun(node.comparators[0])
            lo_w = "more than" if isinstance(node.ops[0], ast.Lt) else "at least"
            hi_w = "less than" if isinstance(node.ops[1], ast.Lt) else "at most"
            return f"{subject} is {lo_w} {self.noun(lo)} and {hi_w} {self.noun(hi)}"
        if len(node.ops) != 1:
            return code(ast.unparse(node))
        op, left, right = node.ops[0], node.left, node.comparators[0]
        if isinstance(op, ast.Is | ast.IsNot) and _is_none(right):
            subject = self.noun(left)
            if isinstance(op, ast.Is) and self.subject and isinstance(left, ast.Attribute):
                return f"{self.subject} has no {_bare(subject)}"
            if isinstance(op, ast.Is):
                return (
                    f"{subject} is not set"
                    if subject.startswith("--")
                    else f"there is no {_bare(subject)}"
                )
            return f"{subject} is set"
        if isinstance(op, ast.NotEq | ast.Eq) and _is_none_test(left) and _is_none_test(right):
            a, b = self.noun(left.left), self.noun(right.left)  # type: ignore[attr-defined]
            if isinstance(op, ast.NotEq):
                return f"only one of {_bare(a)} and {_bare(b)} is given"
            return f"{_bare(a)} and {_bare(b)} are both given or both missing"
        if isinstance(op, ast.In | ast.NotIn):
            return self._membership(left, right, isinstance(op, ast.In))
        mod = _modulo(left)
        if mod is not None and _number(right) == 0:
            not_ = "" if isinstance(op, ast.Eq) else "not "
            return f"{self.noun(mod[0])} is {not_}a multiple of {self.noun(mod[1])}"
        if _is_len(left) and _is_len(right):
            first = self.noun(left.args[0])  # type: ignore[attr-defined]
            second = self.noun(right.args[0])  # type: ignore[attr-defined]
            if isinstance(op, ast.NotEq):
                return f"{first} and {second} differ in length"
            if isinstance(op, ast.Eq):
                return f"{first} and {second} have the same length"
        n = _number(right)
        subject = self.noun(left)
        if _is_len(left) and n == 0 and isinstance(op, ast.Eq | ast.LtE | ast.Lt):
            return f"{self.noun(left.args[0])} is empty"  # type: ignore[attr-defined]
        if n is not None and not isinstance(op, ast.Eq | ast.NotEq):
            return f"{subject} is {_bound(op, n)}"
        value = self.noun(right)
        if subject.startswith("--") and isinstance(right, ast.Constant):
            value = cli_value(repr(right.value)) or value  # as typed on the command line
        words = {
            ast.Eq: "is",
            ast.NotEq: "is not",
            ast.Lt: "is less than",
            ast.LtE: "is at most",
            ast.Gt: "is greater than",
            ast.GtE: "is at least",
        }.get(type(op))
        if words is None:
            return code(ast.unparse(node))
        if isinstance(op, ast.Eq | ast.NotEq) and not isinstance(right, ast.Constant):
            words = "equals" if isinstance(op, ast.Eq) else "differs from"
        return f"{subject} {words} {value}"

    def _membership(self, item: ast.expr, where: ast.expr, inside: bool) -> str:
        subject = self.noun(item)
        if isinstance(where, ast.Tuple | ast.List | ast.Set):
            return f"{subject} is {'' if inside else 'not '}{self._choices(where)}"
        if isinstance(where, ast.Constant) and isinstance(where.value, str):
            return f"{self.noun(where)} {'contains' if inside else 'does not contain'} {subject}"
        place = self.noun(where)
        return f"{subject} is {'' if inside else 'not '}in {place}"

    def _walk(self, node: ast.expr) -> list[ast.AST]:
        """`ast.walk`, also into what the locals it reads stand for (one level)."""
        out = list(ast.walk(node))
        for sub in out[:]:
            if isinstance(sub, ast.Name) and (inner := self._local(sub.id)) is not None:
                out += ast.walk(inner)
        return out

    def group(self, nodes: list[ast.expr]) -> tuple[str, bool]:
        """Conjuncts of one fact as one clause; (text, False) when any is only quoted code."""
        self.subject = None
        for n in nodes:  # a model setting anywhere in the group makes "the model" its subject
            for sub in self._walk(n):
                if isinstance(sub, ast.expr):
                    found = self.finder.of(sub)
                    if found is not None and found.kind == "model_config":
                        self.subject = "the model"
        try:
            said = [self.say(n) for n in nodes]
        except RecursionError:  # a deeply nested expression: quote it
            said = [code(ast.unparse(n)) for n in nodes]
        self.resolving.clear()
        if self.subject:  # "the model is X, is not Y": the subject said once
            head = self.subject + " "
            said = [said[0]] + [s[len(head) :] if s.startswith(head) else s for s in said[1:]]
        text = said[0] if len(said) == 1 else ", ".join(said[:-1]) + " and " + said[-1]
        self.subject = None
        return text, "`" not in text


def _parse(text: str | None) -> ast.expr | None:
    if not text:
        return None
    try:
        return ast.parse(text, mode="eval").body
    except (SyntaxError, ValueError, RecursionError):
        return None


def _names(node: ast.expr) -> list[str] | None:
    out: list[str] = []
    while isinstance(node, ast.Attribute):
        out.append(node.attr)
        node = node.value
    if isinstance(node, ast.Call):
        node = node.func
        while isinstance(node, ast.Attribute):
            out.append(node.attr)
            node = node.value
    if isinstance(node, ast.Name):
        out.append(node.id)
        return out[::-1]
    return None


def _last_name(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def _is_range(node: ast.Compare) -> bool:
    return len(node.ops) == 2 and all(type(o) in (ast.Lt, ast.LtE) for o in node.ops)


def _negatable(node: ast.expr) -> bool:
    if isinstance(node, ast.Compare):
        return len(node.ops) == 1 and type(node.ops[0]) in NEGATED
    return isinstance(node, ast.BoolOp) and isinstance(node.op, ast.Or)


def _participle(word: str) -> str:
    return {"enable": "enabled", "use": "used", "do": "done", "can": "possible"}.get(word, word)


def _neg_verb(verb: str) -> str:
    return {"is": "is not", "has": "has no", "use": "does not use", "uses": "does not use"}.get(
        verb, "should not"
    )


def _bare(noun: str) -> str:
    return noun[4:] if noun.startswith("the ") else noun


def _is_none(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


def _is_none_test(node: ast.expr) -> bool:
    return (
        isinstance(node, ast.Compare)
        and len(node.ops) == 1
        and isinstance(node.ops[0], ast.Is | ast.IsNot)
        and _is_none(node.comparators[0])
    )


def _is_len(node: ast.expr) -> bool:
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "len"
        and len(node.args) == 1
    )


def _modulo(node: ast.expr) -> tuple[ast.expr, ast.expr] | None:
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):
        return node.left, node.right
    return None


def _bound(op: ast.cmpop, n: float) -> str:
    if n == 0:
        return {
            ast.Lt: "negative",
            ast.LtE: "zero or negative",
            ast.Gt: "positive",
            ast.GtE: "zero or more",
        }[type(op)]  # type: ignore[index]
    v = _num(n)
    return {
        ast.Lt: f"less than {v}",
        ast.LtE: f"at most {v}",
        ast.Gt: f"more than {v}",
        ast.GtE: f"at least {v}",
    }[type(op)]  # type: ignore[index]


def words_of(name: str, glossary: Mapping[str, str]) -> str:
    """An identifier as words (re-exported for the explanation)."""
    return phrase(name, glossary) if parts(name) else name
