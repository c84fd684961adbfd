"""Guard expressions said as clauses, from their syntax trees.

`x <= 0` -> "seconds per frame is zero or negative", `isinstance(x, (str, list))` -> "x is
neither a string nor a list", `len(names) != len(set(names))` -> "names contains duplicates",
`mode not in ("a", "b")` -> 'mode is not "a" or "b"'. The nouns come from `nouns`; a comment
that explains a test in its own words (see `notes.glosses`) wins over any paraphrase. A clause
whose nouns could not be made into words keeps the code quoted, and its fact is marked unworded.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping

from errkb.knowledge.facts import Involvement
from errkb.knowledge.origins.inputs import InputFinder
from errkb.knowledge.words import syntax
from errkb.knowledge.words.calls import CallClauses, neg_verb, participle
from errkb.knowledge.words.names import VERBS, parts, phrase, predicate
from errkb.knowledge.words.syntax import code, negate
from errkb.knowledge.words.wording import cli_value, is_switch

__all__ = ["Speaker", "code", "negate", "words_of"]


class Speaker(CallClauses):
    """Says one site's guard conditions as clauses."""

    def __init__(
        self,
        flags: list[Involvement],
        resolved: Mapping[str, str],
        finder: InputFinder,
        glossary: Mapping[str, str],
        constants: Mapping[str, str] | None = None,
        glosses: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(flags, resolved, finder, glossary, constants)
        self.glosses = dict(glosses or {})  # code -> a comment's words for it

    def say(self, node: ast.expr) -> str:
        """One conjunct as a clause."""
        gloss = self.glosses.get(ast.unparse(node))
        if gloss is not None:
            return gloss
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            inner = node.operand
            if isinstance(inner, ast.Compare | ast.BoolOp) and syntax.negatable(inner):
                return self.say(negate(inner))
            if isinstance(inner, ast.Compare) and syntax.is_range(inner):
                return self._outside(inner)
            if isinstance(inner, ast.Compare) and _all_equal(inner):
                return _listed([self.noun(n) for n in (inner.left, *inner.comparators)]) + (
                    " are not all equal"
                )
            if isinstance(inner, ast.BoolOp) and isinstance(inner.op, ast.And):
                # `not (a and b)`: one of them fails, each said on its own (not "`a and b` is
                # false or empty")
                return self.say(ast.BoolOp(ast.Or(), [negate(v) for v in inner.values]))
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
        node = syntax.getattr_as_attribute(syntax.unwrapped_bool(node))
        flag = self.flag_of(node)
        if flag is not None:
            self.flags_used.append(flag)
            if flag.definition is not None and not is_switch(flag):  # a path, a name, a number
                return f"{flag.flag} is {'set' if holds else 'unset or empty'}"
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
                    return f"{what} is {'' if holds else 'not '}{participle(pred[0])} ({said})"
                if pred is not None:
                    return said
                if "`" not in said:
                    return said
        if isinstance(node, ast.Call):
            call = self._call(node, holds) or self._quantified(node, holds)
            if call is not None:
                return call
        mod = syntax.modulo(node)
        if mod is not None:  # `if a % b:` tests that b does not divide a
            return (
                f"{self.noun(mod[0])} is {'not ' if holds else ''}a multiple of {self.noun(mod[1])}"
            )
        found = self.finder.of(node)
        if found is not None and found.kind == "environment":
            self.used.append(found)
            return (
                f"the environment variable {found.name} is {'set' if holds else 'unset or false'}"
            )
        if found is not None and found.kind == "hardware":
            self.used.append(found)
        name = syntax.last_name(node)
        pred = predicate(name) if name else None
        if name and pred is not None:
            verb, rest = pred
            what = phrase(rest, self.glossary)
            if verb in VERBS:
                subj = self._subject(node)
                return f"{subj} {VERBS[verb] if holds else neg_verb(verb)} {what}".strip()
            return f"{what} is {not_}{participle(verb)}"
        noun = self.noun(node)
        if "`" in noun and isinstance(node, ast.Call):  # a call's answer, not a container
            return f"{noun} returns {'true' if holds else 'false'}"
        if "`" in noun:
            return f"{noun} is {'true' if holds else 'false or empty'}"
        if name and parts(name)[:1] and parts(name)[0] in _VERB_NAMES and noun.startswith("the "):
            # `self.set_to_none`, `skip_warmup`: an option named by what it does
            return f"{noun.removeprefix('the ')} is {'on' if holds else 'off'}"
        return f"{noun} is {'set' if holds else 'unset or empty'}"

    def _quantified(self, node: ast.Call, holds: bool) -> str | None:
        """`all(t(x) for x in xs)` / `any(...)` over one plain loop: "for every x in xs, ..."
        or "for some x in xs, ...", with the test said (negated where the call fails)."""
        func = node.func
        if not (isinstance(func, ast.Name) and func.id in ("all", "any") and len(node.args) == 1):
            return None
        arg = node.args[0]
        if not isinstance(arg, ast.GeneratorExp | ast.ListComp) or len(arg.generators) != 1:
            return None
        loop = arg.generators[0]
        if loop.ifs or not isinstance(loop.target, ast.Name):
            return None
        every = func.id == "all"
        test = arg.elt if holds else negate(arg.elt)
        quantifier = "every" if every == holds else "some"
        return f"for {quantifier} {loop.target.id} in {self.noun(loop.iter)}, {self.say(test)}"

    def _compare(self, node: ast.Compare) -> str:
        if _all_equal(node):  # `a == b == c`
            return _listed([self.noun(n) for n in (node.left, *node.comparators)]) + " are equal"
        if syntax.is_range(node):
            lo, hi = node.left, node.comparators[1]
            subject = self.noun(node.comparators[0])
            lo_w = "more than" if isinstance(node.ops[0], ast.Lt) else "at least"
            hi_w = "less than" if isinstance(node.ops[1], ast.Lt) else "at most"
            return f"{subject} is {lo_w} {self.noun(lo)} and {hi_w} {self.noun(hi)}"
        if len(node.ops) != 1:
            return code(ast.unparse(node))
        op, right = node.ops[0], node.comparators[0]
        left = syntax.getattr_as_attribute(node.left)
        if isinstance(op, ast.Is | ast.IsNot) and syntax.is_none(right):
            return self._none(left, isinstance(op, ast.Is))
        if isinstance(op, ast.Is | ast.IsNot) and isinstance(getattr(right, "value", None), bool):
            # `x is not True`: the value itself, not only something that tests true
            not_ = "not " if isinstance(op, ast.IsNot) else ""
            return f"{self.noun(left)} is {not_}{right.value}"  # type: ignore[attr-defined]
        if (
            isinstance(op, ast.NotEq | ast.Eq)
            and syntax.is_none_test(left)
            and syntax.is_none_test(right)
        ):
            a, b = self.noun(left.left), self.noun(right.left)  # type: ignore[attr-defined]
            if isinstance(op, ast.NotEq):
                return f"only one of {_bare(a)} and {_bare(b)} is given"
            return f"{_bare(a)} and {_bare(b)} are both given or both missing"
        if isinstance(op, ast.In | ast.NotIn):
            return self._membership(left, right, isinstance(op, ast.In))
        mod = syntax.modulo(left)
        if mod is not None and syntax.number(right) == 0:
            not_ = "" if isinstance(op, ast.Eq) else "not "
            return f"{self.noun(mod[0])} is {not_}a multiple of {self.noun(mod[1])}"
        lengths = self._lengths(op, left, right)
        if lengths is not None:
            return lengths
        n = syntax.number(right)
        subject = self.noun(left)
        counted = syntax.len_of(left)
        if counted is not None and n == 0 and isinstance(op, ast.Eq | ast.LtE | ast.Lt):
            return f"{self.noun(counted)} is empty"
        if n is not None and not isinstance(op, ast.Eq | ast.NotEq):
            return f"{subject} is {syntax.bound(op, n)}"
        value = self.noun(right)
        if isinstance(right, ast.Tuple | ast.List) and isinstance(op, ast.Eq | ast.NotEq):
            value = ast.unparse(right)  # one whole value, not alternatives ("32 or 32")
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
        if _bare(subject) == _bare(value):  # `a.x != b.x` said as "the x differs from the x"
            own = [syntax.names(side) or [] for side in (left, right)]
            if isinstance(op, ast.Eq | ast.NotEq) and sorted(len(o) for o in own) == [1, 2]:
                if "self" in (own[0][:1] + own[1][:1]):  # `page_size != self.page_size`
                    return f"the {_bare(subject)} it is given {words} its own"
            return code(ast.unparse(node))  # is no help, nor "x differs from the x"
        return f"{subject} {words} {value}"

    def _expanded(self, node: ast.expr) -> ast.expr:
        """A local bound to `set(...)` read as that call."""
        if isinstance(node, ast.Name):
            inner = self._local(node.id)
            if inner is not None and syntax.set_of(inner) is not None:
                return inner
        return node

    def _none(self, left: ast.expr, missing: bool) -> str:
        """`x is None` / `x is not None`: something missing or given."""
        subject = self.noun(left)
        if not missing:
            return f"{subject} is set"
        if subject.startswith("the model's "):
            return "the model has no " + subject.removeprefix("the model's ")
        if self.subject and isinstance(left, ast.Attribute):
            return f"{self.subject} has no {_bare(subject)}"
        if subject.startswith("--"):
            return f"{subject} is not set"
        return f"there is no {_bare(subject)}"

    def _lengths(self, op: ast.cmpop, left: ast.expr, right: ast.expr) -> str | None:
        """`len(a) != len(b)`, and `len(x) != len(set(x))`: x holds duplicates."""
        a, b = syntax.len_of(left), syntax.len_of(right)
        if a is None or b is None or not isinstance(op, ast.Eq | ast.NotEq):
            return None
        a, b = self._expanded(a), self._expanded(b)  # `seen = set(xs)`: len(seen) counts xs
        left, right = ast.Call(ast.Name("len"), [a], []), ast.Call(ast.Name("len"), [b], [])
        differ = isinstance(op, ast.NotEq)
        for one, other in ((a, b), (b, a)):
            inner = syntax.set_of(other)
            if inner is not None and ast.dump(inner) == ast.dump(one):
                what = self.noun(one)
                return f"{what} {'contains duplicates' if differ else 'has no duplicates'}"
        plain = syntax.set_of(a) is None and syntax.set_of(b) is None
        first, second = (
            (self.noun(a), self.noun(b)) if plain else (self.noun(left), self.noun(right))
        )
        if first == second:
            return code(ast.unparse(ast.Compare(left, [op], [right])))
        if plain:
            return (
                f"{first} and {second} {'differ in length' if differ else 'have the same length'}"
            )
        return f"{first} {'differs from' if differ else 'equals'} {second}"

    def _membership(self, item: ast.expr, where: ast.expr, inside: bool) -> str:
        subject = self.noun(item)
        stated = self.stated(where)
        if stated:  # an empty one (`_REGISTRY = {}`, filled at run time) lists nothing
            return f"{subject} is {'' if inside else 'not '}{self.listed(stated)}"
        if isinstance(where, ast.Constant) and isinstance(where.value, str):
            return f"{self.noun(where)} {'contains' if inside else 'does not contain'} {subject}"
        place = self.noun(where)
        if isinstance(item, ast.Constant) and isinstance(item.value, str):  # text in a text
            return f"{place} {'contains' if inside else 'does not contain'} {subject}"
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


# Leading name parts that make a boolean option's name a command: "the set to none" would not
# read, "set to none is on" does.
_VERB_NAMES = frozenset(
    "set get skip force allow disable keep return load save apply run check reuse".split()
)


def _bare(noun: str) -> str:
    return noun[4:] if noun.startswith("the ") else noun


def words_of(name: str, glossary: Mapping[str, str]) -> str:
    """An identifier as words (re-exported for the explanation)."""
    return phrase(name, glossary) if parts(name) else name


def _all_equal(node: ast.Compare) -> bool:
    """`a == b == c`: a chain of equalities (one `==` is an ordinary comparison)."""
    return len(node.ops) > 1 and all(isinstance(op, ast.Eq) for op in node.ops)


def _listed(nouns: list[str]) -> str:
    """'a, b and c'."""
    return ", ".join(nouns[:-1]) + " and " + nouns[-1]
