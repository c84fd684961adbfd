"""What a guard's expressions are, as noun phrases: `self.server_args.tp_size` -> "--tp-size",
`len(x)` -> "the length of x", `get_platform()` -> "the platform", `Modality.AUDIO` as written.

A flag reads as `--flag-name`, a request field, environment variable or model setting as what it
is; names become words through the project's glossary. When no words fit, the code is quoted in
backticks, so no phrase claims more than the code says, and the clause using it is kept out of
the prose (see `guard.Fact.worded`).
"""

from __future__ import annotations

import ast
from collections.abc import Mapping

from errkb.knowledge.facts import Involvement
from errkb.knowledge.origins.inputs import Input, InputFinder
from errkb.knowledge.words import syntax
from errkb.knowledge.words.names import VERBS, phrase, predicate, wordable

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
_OWNERS = frozenset({"self", "cls"})
_PLAIN_OWNERS = frozenset(
    {"server_args", "args", "config", "get_parallel", "parallel"}
)  # add nothing to the noun
# Zero-argument methods whose result is best said as a property of the receiver.
_METHODS = {
    "dim": "the number of dimensions of",
    "numel": "the number of elements of",
    "size": "the size of",
    "keys": "the keys of",
    "values": "the values of",
    "items": "the items of",
    "item": "the value of",  # a one-element tensor's number
    "tolist": "",
    "lower": "",
    "upper": "",
    "strip": "",
}
_EMPTY = frozenset({"set", "list", "dict", "tuple", "defaultdict", "OrderedDict", "Counter"})
MAX_LISTED = 12  # values of a stated list shown before "…"


class Nouns:
    """Noun phrases for one site's expressions: knows its flags, locals, inputs and glossary."""

    def __init__(
        self,
        flags: list[Involvement],
        resolved: Mapping[str, str],
        finder: InputFinder,
        glossary: Mapping[str, str],
        constants: Mapping[str, str] | None = None,
    ) -> None:
        self.flags = [f for f in flags if f.cli]
        self.resolved = resolved
        self.finder = finder
        self.glossary = glossary
        self.constants = dict(constants or {})  # module constants with literal values
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
        inner = syntax.parse(self.resolved[name])
        if isinstance(inner, ast.List | ast.Dict | ast.Set | ast.Tuple | ast.ListComp):
            return None
        if isinstance(inner, ast.Call) and not inner.args and syntax.call_name(inner) in _EMPTY:
            return None  # `seen = set()`: an empty collection filled later
        return inner

    def flag_of(self, node: ast.expr) -> Involvement | None:
        """The linked flag an attribute (or a local resolved to one) stands for."""
        node = syntax.getattr_as_attribute(node)
        if isinstance(node, ast.Attribute):
            return next((f for f in self.flags if f.dest == node.attr), None)
        return None

    def stated(self, node: ast.expr) -> list[str] | None:
        """The values a literal collection, or a module constant holding one, states."""
        if isinstance(node, ast.Name) and node.id in self.constants:
            node = syntax.parse(self.constants[node.id]) or node
        if isinstance(node, ast.Dict):  # `x not in {"a": ..., "b": ...}`: its keys
            keys = [k for k in node.keys if k is not None]
            node = ast.Tuple(keys, ast.Load()) if len(keys) == len(node.keys) else node
        if isinstance(node, ast.Tuple | ast.List | ast.Set):
            if all(isinstance(e, ast.Constant) for e in node.elts):
                return [self.noun(e) for e in node.elts]
        return None

    def listed(self, values: list[str]) -> str:
        """Values as a reader lists them: `"a", "b" or "c"`."""
        if len(values) > MAX_LISTED:
            values = values[:MAX_LISTED] + ["…"]
            return ", ".join(values)
        return (
            " or ".join(values)
            if len(values) <= 2
            else ", ".join(values[:-1]) + " or " + values[-1]
        )

    def noun(self, node: ast.expr) -> str:
        """What an expression is, as words."""
        node = syntax.getattr_as_attribute(node)
        flag = self.flag_of(node)
        if flag is not None:
            self.flags_used.append(flag)
            return flag.flag
        found = self.finder.of(node)
        if found is not None:
            said = self._input(found)
            if said is not None:
                return said
        if isinstance(node, ast.Constant):
            if isinstance(node.value, str):
                return f'"{node.value}"'
            n = syntax.number(node)
            return syntax.num(n) if n is not None else str(node.value)
        if isinstance(node, ast.Name):
            return self._name(node)
        if isinstance(node, ast.Attribute):
            chain = syntax.names(node)
            if chain is not None:
                return self._chain_words(chain)
        if isinstance(node, ast.Call):
            said = self._call_noun(node)
            if said is not None:
                return said
        if isinstance(node, ast.Subscript):
            said = self._item(node)
            if said is not None:
                return said
        stated = self.stated(node)
        if stated is not None:
            return self.listed(stated)
        return syntax.code(ast.unparse(node))

    def _input(self, found: Input) -> str | None:
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
        return None

    def _name(self, node: ast.Name) -> str:
        if node.id in ("self", "cls"):
            return "this object"
        inner = self._local(node.id)
        if inner is not None and isinstance(inner, ast.Attribute | ast.Call | ast.Subscript):
            self.resolving.add(node.id)
            said = self.noun(inner)
            self.resolving.discard(node.id)
            if "`" not in said:
                return said
        return phrase(node.id, self.glossary)

    def _call_noun(self, node: ast.Call) -> str | None:
        fname = syntax.call_name(node)
        if fname == "len" and len(node.args) == 1:
            inner = syntax.set_of(node.args[0])
            if inner is not None:
                return "the number of distinct values in " + self.noun(inner)
            return "the length of " + self.noun(node.args[0])
        if fname == "type" and node.args:
            return "the type of " + self.noun(node.args[0])
        if fname in ("list", "tuple", "int", "float", "str", "bool") and len(node.args) == 1:
            return self.noun(node.args[0])
        if fname in ("set", "frozenset") and len(node.args) == 1:
            return "the distinct values of " + self.noun(node.args[0])
        if node.args or node.keywords:
            if fname in ("get", "pop") and isinstance(node.func, ast.Attribute) and node.args:
                return self._entry(node.func.value, node.args[0])
            return None
        if isinstance(node.func, ast.Attribute) and fname == "get":  # `field.get()`
            owner = self.noun(node.func.value)
            return f"the value of {owner}" if "`" not in owner else None
        if isinstance(node.func, ast.Attribute) and fname in _METHODS:
            words = _METHODS[fname]
            owner = self.noun(node.func.value)
            return f"{words} {owner}".strip() if "`" not in owner else None
        chain = syntax.names(node)
        if chain is not None:
            return self._chain_words(chain)
        return None

    def _item(self, node: ast.Subscript) -> str | None:
        key = node.slice
        if isinstance(key, ast.Constant) and isinstance(key.value, str):
            if isinstance(node.value, ast.Name) and node.value.id in ("kwargs", "params"):
                return f"the {key.value} argument"
            return self._entry(node.value, key)
        n = syntax.number(key)
        if n is not None and n == int(n):
            owner = node.value
            if isinstance(owner, ast.Attribute) and owner.attr == "shape":
                of = self.noun(owner.value)
                which = "the last dimension" if n == -1 else f"dimension {syntax.num(n)}"
                return f"the size of {which} of {of}" if "`" not in of else None
        return None

    def _entry(self, owner: ast.expr, key: ast.expr) -> str | None:
        """`d["k"]`, `d.get(k)`: the k entry of d."""
        of = self.noun(owner)
        if isinstance(key, ast.Constant) and isinstance(key.value, str):
            return f"the {key.value!r} entry of {of}"
        if isinstance(key, ast.Name):
            return f"the entry of {of} named by {phrase(key.id, self.glossary)}"
        return None

    def type_words(self, node: ast.expr) -> str:
        """A type in an `isinstance` test: "a string", "a Mapping", "one of the sizeable pools"."""
        text = ast.unparse(node)
        if text in _TYPES:
            return _TYPES[text]
        last = text.rsplit(".", 1)[-1]
        if last.upper() == last.lstrip("_") and wordable(last, self.glossary):
            return "one of the " + phrase(last, self.glossary)
        if not last[:1].isupper():
            return syntax.code(text)
        return f"{'an' if last[0] in 'AEIO' else 'a'} {last}"  # "an OutputBatch"

    def owner_words(self, part: str) -> str:
        """An owner in a chain: `get_platform` -> "platform", `model_config` -> "model config"."""
        return phrase(part.removeprefix("get_").removeprefix("_get_"), self.glossary)

    def _chain_words(self, chain: list[str]) -> str:
        if chain[0] in _MODULES:  # torch.float16 is its own best name
            return ".".join(chain)
        if chain[0][:1].isupper() and len(chain) == 2:  # Modality.AUDIO, an enum member
            return ".".join(chain)
        kept = [c for c in chain if c not in _OWNERS]
        if not kept:
            return "this object"
        pred = predicate(kept[-1])
        if pred is not None and pred[0] in VERBS:  # `self.has_bias`: a yes/no, not a thing
            owner = kept[-2] if len(kept) >= 2 and kept[-2] not in _PLAIN_OWNERS else None
            who = f"the {self.owner_words(owner)}" if owner else "it"
            return f"whether {who} {VERBS[pred[0]]} {phrase(pred[1], self.glossary)}"
        last = self.owner_words(kept[-1])
        if len(kept) >= 2 and kept[-2] not in _PLAIN_OWNERS:
            # `x.dtype`: x is a local name; `module.a`: `a` is a name, not a word
            bare = len(kept) == 2 and kept[0] == chain[0] or not wordable(kept[-2], self.glossary)
            return f"the {last} of {'' if bare else 'the '}{self.owner_words(kept[-2])}"
        return f"the {last}"
