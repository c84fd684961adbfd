"""Who calls a function in a snapshot: the spots where its name is written as a call, less those
that cannot be its calls.

A call is found as `name(` in the text (`file_scan`), so a name shared by many functions finds
them all. A spot is left out when it is a definition, another package's function of that name,
a method of another object (`kernel.f(` for a plain function), a call whose arguments do not fit
the signature, or a method name many classes define (`forward`) called through a receiver whose
name is not the class's noun, in a module that does not name the class.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from errkb.ingest.origins.calls import fits
from errkb.ingest.origins.module_facts import Func

if TYPE_CHECKING:
    from errkb.ingest.origins.snapshot_index import SnapshotIndex

# A method name defined in more files than this (`forward`, `get`, `run`) is called through any
# receiver: a call in a module that does not name the class is taken as another class's.
COMMON_METHOD = 6
UNLIKELY = 2
# Methods that are called through the object (`model(x)` runs `forward`): a spot of the name
# itself that is not likely this class's is another object's (a compiled kernel's `forward`).
CALLED_AS_OBJECT = frozenset({"forward"})

Caller = tuple[str, int, Func | None]


def find_callers(index: SnapshotIndex, func: Func, limit: int) -> list[Caller]:
    """Where `func` is called: (path, offset of the callee name, the calling function)."""
    name = func.qualname.rsplit(".", 1)[-1]
    spots = index.calls(name)
    if name == "__init__" and func.owner:
        name = func.owner
        spots = list(index.calls(name)[: limit * 4]) + index.super_calls(func.owner)
        spots += index.alias_calls(func.owner)
    elif func.owner and len(set(index.defs.get(name, ()))) > COMMON_METHOD:
        # a name many classes define: the spots that may be this class's come first
        ranked = sorted(((_likely(index, s, func.owner), s) for s in spots), key=lambda x: x[0])
        if name in CALLED_AS_OBJECT and ranked and ranked[-1][0] == UNLIKELY:
            # `module.forward(...)` of a compiled kernel is not `GptOssModel.forward`
            index.unsure_of.add(func.qualname)
            ranked = [(r, s) for r, s in ranked if r < UNLIKELY]
        spots = [s for _, s in ranked]
    spots = spots[: limit * 4]
    found: list[Caller] = []
    for path, at in spots:
        text = index.texts[path]
        before = text[at - 1] if at else ""
        if func.owner and name == func.qualname.rsplit(".", 1)[-1] and before != ".":
            continue  # a method is called through a receiver
        if text.startswith("def ", max(0, at - 4)) or text.startswith("class ", max(0, at - 6)):
            continue
        if not func.owner and before == "." and not _module_receiver(text, at):
            continue  # `module.f(` of a function: a method of another object (`kernel.f(`)
        if not _imported_here(index, path, at, name):
            continue  # `from sgl_kernel import f`: another package's function of that name
        if not fits(index.call_text(path, at), func):
            continue  # a call of another function of that name (`kernel.forward(a, b)`)
        caller = index.facts(path).func_at(index.line_of(path, at))
        if func.owner and before == "." and not _own_class(index, func, path, at, caller):
            continue
        found.append((path, at, caller))
        if len(found) >= limit:
            break
    return found


def _receiver(text: str, at: int) -> str:
    """The dotted name before `.name(` ("" for a call's result, `f().name(`)."""
    start = at - 1
    while start > 0 and (text[start - 1].isalnum() or text[start - 1] in "_."):
        start -= 1
    return text[start : at - 1]


def _likely(index: SnapshotIndex, spot: tuple[str, int], owner: str) -> int:
    """How likely a spot of a common method name calls the method of `owner`: 0 when its
    receiver is named by the class's noun (`self.attn_backend.f(` for `XPUAttentionBackend`),
    1 when its module names the class, else `UNLIKELY` (another class's, or any class's:
    `model.load_weights(weights)` calls the method of whichever model is loaded)."""
    path, at = spot
    text = index.texts[path]
    if not at or text[at - 1] != ".":
        return UNLIKELY
    if _same_noun(_receiver(text, at), owner):
        return 0
    return 1 if index.names(path, owner) else UNLIKELY


def _own_class(index: SnapshotIndex, func: Func, path: str, at: int, caller: Func | None) -> bool:
    """False for `self.name(` in a class other than the method's, in a module that does not
    name it (not a subclass): that class's own method."""
    text = index.texts[path]
    if not (text.endswith("super()", 0, at - 1) or _receiver(text, at) in ("self", "cls")):
        return True
    own = caller is not None and caller.owner == func.owner
    return own or index.names(path, func.owner)


def _same_noun(receiver: str, owner: str) -> bool:
    """True when a receiver's last word is the class name's (`self.attn_backend` and
    `XPUAttentionBackend`, `self.adapter` and `MiniCPMFlashInferAdapter`)."""
    word = receiver.rsplit(".", 1)[-1].rsplit("_", 1)[-1].lower()
    nouns = re.findall(r"[A-Z][a-z]+|[a-z]+", owner)
    return bool(word) and bool(nouns) and nouns[-1].lower() == word


def _module_receiver(text: str, at: int) -> bool:
    """True when the name before `.f(` is one the module imports (a module, or a class)."""
    receiver = _receiver(text, at).rsplit(".", 1)[-1]
    if not receiver or receiver in ("self", "cls"):
        return False
    return re.search(rf"\bimport\b[^\n]*\b{re.escape(receiver)}\b", text) is not None


def _imported_here(index: SnapshotIndex, path: str, at: int, name: str) -> bool:
    """False when the import of `name` nearest above a call names a module that defines no
    function or class of that name in the snapshot (an installed package's)."""
    module = ""
    for offset, names in index.from_imports(path):
        if offset > at:
            break
        module = names.get(name, module)
    if not module or module.startswith("."):
        return True
    where = module.replace(".", "/")
    defined = [*index.defs.get(name, ()), *index.classes.get(name, ())]
    return any(p.removesuffix(".py").endswith(where) or f"{where}/" in p for p in defined)
