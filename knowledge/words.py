"""Names made into words: `is_hybrid_swa` -> "hybrid sliding-window attention (SWA)".

Identifiers are split at underscores and case changes; each part is looked up in the project's
glossary (pins.toml) and otherwise kept as a lower-case word. Prefixes that only say a name is
a predicate or a getter (`is_`, `get_`, `self.`) are dropped, so the words read as a noun phrase.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
# Leading name parts that say what kind of name it is, not what it is about.
_PREDICATE = ("is", "has", "use", "uses", "should", "can", "enable", "enabled", "do")
_GETTER = ("get", "_get")
_OWNERS = frozenset({"self", "cls", "args", "server_args", "kwargs", "config", "cfg"})


def parts(name: str) -> list[str]:
    """The lower-case parts of an identifier (snake_case and CamelCase)."""
    out: list[str] = []
    for chunk in name.strip("_").split("_"):
        out += [p.lower() for p in _CAMEL.split(chunk) if p]
    return out


def phrase(name: str, glossary: Mapping[str, str]) -> str:
    """An identifier as words, with the glossary's expansions (`tp_size` -> "tensor ... size")."""
    words: list[str] = []
    for p in parts(name):
        w = glossary.get(p, p)
        if not words or words[-1] != w:
            words.append(w)
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
    return phrase(names[-2], glossary)
