"""Calls in a guard said as clauses: `isinstance`, `hasattr`, path tests, `startswith`,
platform checks (`is_cuda()`), predicates (`w.is_contiguous()`, `self.has_x()`).

A call with no known reading gives None, and the caller falls back to its value as a test.
"""

from __future__ import annotations

import ast

from errkb.knowledge.words import syntax
from errkb.knowledge.words.names import VERBS, phrase, predicate
from errkb.knowledge.words.nouns import Nouns


class CallClauses(Nouns):
    """Clauses for calls used as tests (the part of `Speaker` that knows functions)."""

    def _subject(self, node: ast.expr) -> str:
        if self.subject:
            return self.subject
        if isinstance(node, ast.Attribute):
            chain = syntax.names(node) or []
            kept = [c for c in chain[:-1] if c not in ("self", "cls")]
            if kept:
                return "the " + self.owner_words(kept[-1])
        return "it"

    def _call(self, node: ast.Call, holds: bool) -> str | None:
        func = node.func
        fname = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
        not_ = "" if holds else "not "
        builtin = self._builtin(node, fname, holds)
        if builtin is not None:
            return builtin
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
        if fname == "isdigit" and isinstance(func, ast.Attribute) and not node.args:
            return f"{self.noun(func.value)} is {not_}a whole number"
        pred = predicate(fname)
        if pred is not None and pred[0] == "is":
            if node.args:
                self.noun(node.args[0])  # records a model-config input as the subject
            if node.args:
                subj = self.subject or self.noun(node.args[0])
            elif isinstance(func, ast.Attribute):  # `w.is_contiguous()`
                subj = self.noun(func.value)
            else:
                subj = self.subject or "it"
            if "`" in subj:
                return None
            return f"{subj} is {not_}{phrase(pred[1], self.glossary)}"
        if pred is not None and pred[0] in VERBS and not node.args:  # `self.has_x()`
            subj = self.noun(func.value) if isinstance(func, ast.Attribute) else "it"
            subj = "it" if "`" in subj or subj in ("self", "cls", "this object") else subj
            verb = VERBS[pred[0]] if holds else neg_verb(pred[0])
            return f"{subj} {verb} {phrase(pred[1], self.glossary)}"
        return None

    def _builtin(self, node: ast.Call, fname: str, holds: bool) -> str | None:
        """`isinstance`, `hasattr` and the path tests."""
        if fname == "isinstance" and len(node.args) == 2:
            kinds = node.args[1]
            names = kinds.elts if isinstance(kinds, ast.Tuple) else [kinds]
            types = [self.type_words(t) for t in names]
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
        return None


def participle(word: str) -> str:
    return {"enable": "enabled", "use": "used", "do": "done", "can": "possible"}.get(word, word)


def neg_verb(verb: str) -> str:
    return {
        "is": "is not",
        "has": "has no",
        "use": "does not use",
        "uses": "does not use",
        "requires": "does not require",
        "supports": "does not support",
        "needs": "does not need",
    }.get(verb, "should not")
