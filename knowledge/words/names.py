"""Names made into words: `is_hybrid_swa` -> "hybrid sliding-window attention (SWA)".

Identifiers are split at underscores and case changes; each part (or two parts, for an entry
like `scaled_mm`) is looked up in the project's glossary (pins.toml) and otherwise kept as a
lower-case word. Prefixes that only say a name is
a predicate or a getter (`is_`, `get_`, `self.`) are dropped, so the words read as a noun phrase.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
# Leading name parts that say what kind of name it is, not what it is about.
_PREDICATE = (
    "is",
    "has",
    "use",
    "uses",
    "should",
    "can",
    "enable",
    "enabled",
    "do",
    "requires",
    "supports",
    "needs",
)
# A predicate's leading part as the verb of a clause: `has_bias` -> "has bias".
VERBS = {
    "is": "is",
    "has": "has",
    "use": "uses",
    "uses": "uses",
    "should": "should",
    "requires": "requires",
    "supports": "supports",
    "needs": "needs",
}
_GETTER = ("get", "_get")
_SHORT_WORDS = frozenset("to of in on by at or no up as if per out off".split())
_OWNERS = frozenset({"self", "cls", "args", "server_args", "kwargs", "config", "cfg"})


def parts(name: str) -> list[str]:
    """The lower-case parts of an identifier (snake_case and CamelCase)."""
    out: list[str] = []
    for chunk in name.strip("_").split("_"):
        out += [p.lower() for p in _CAMEL.split(chunk) if p]
    return out


def wordable(name: str, glossary: Mapping[str, str]) -> bool:
    """True when every part of a name reads as a word (`n_k`, `qwen3_vl` do not)."""
    ps = parts(name)
    return bool(ps) and all(
        p in glossary or p in _SHORT_WORDS or (p.isalpha() and len(p) > 2) for p in ps
    )


def phrase(name: str, glossary: Mapping[str, str]) -> str:
    """An identifier as words, with the glossary's expansions (`tp_size` -> "tensor ... size").

    A name with parts that are not words (`n_k`, `h3`) is kept as it is written.
    """
    if not wordable(name, glossary):
        return name.strip("_") or name
    words: list[str] = []
    ps = parts(name)
    i = 0
    while i < len(ps):
        p = ps[i]
        pair = f"{p}_{ps[i + 1]}" if i + 1 < len(ps) else ""
        if pair in glossary:  # a two-part entry wins: `scaled_mm` is not "scaled multimodal"
            p, i = pair, i + 1
        i += 1
        w = glossary.get(p, p)
        if words and words[-1].endswith(" of") and w == "of":
            continue  # `num_of_layers`: "number of layers", not "number of of layers"
        if not words or words[-1] != w:
            words.append(w)
    if len(words) > 1 and words[-1].endswith(" of"):
        words[-1] = words[-1].removesuffix(" of")  # `layer_num`: "layer number"
    return " ".join(words)


def predicate(name: str) -> tuple[str, str] | None:
    """("is", "hybrid swa") for `is_hybrid_swa`; None when the name is not a predicate."""
    ps = parts(name)
    if len(ps) > 1 and ps[0] in _PREDICATE:
        return ps[0], "_".join(ps[1:])
    if len(ps) > 1 and ps[-1] in ("enabled", "disabled", "supported", "required", "available"):
        return ps[-1], "_".join(ps[:-1])
    return None


def subject(chain: list[str], glossary: Mapping[str, str]) -> str:
    """Words for an attribute chain (`self.model_config.hf_config` -> "the model's HF config")."""
    kept = [c for c in chain if c not in _OWNERS] or chain[-1:]
    last = kept[-1]
    owner = kept[-2] if len(kept) > 1 else None
    text = phrase(last, glossary)
    if owner and owner not in ("model_config",) and not last.startswith(owner):
        return f"the {text} of the {phrase(owner, glossary)}"
    if owner == "model_config":
        return f"the model's {text}"
    return f"the {text}"


def class_noun(qualname: str, glossary: Mapping[str, str]) -> str | None:
    """The class a method belongs to, as words (`KVCacheConfigurator._init_pools` -> "KV ...")."""
    names = [p for p in qualname.split(".") if p != "<locals>"]
    if len(names) < 2 or not names[-2][:1].isupper():
        return None
    return phrase(names[-2], glossary) if wordable(names[-2], glossary) else None


def class_name(qualname: str) -> str | None:
    """The class a method belongs to, as written."""
    names = [p for p in qualname.split(".") if p != "<locals>"]
    return names[-2] if len(names) > 1 and names[-2][:1].isupper() else None
