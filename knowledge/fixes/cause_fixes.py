"""Solutions for causes other than the user's flags and request: the model, the hardware, the
parallelism, the installed packages, and the code itself.

Each names what the guard tests as the code states it (the config.json field, the platform
test, the divisibility, the package check) instead of a generic "use a supported model": a
person can compare that with their setup. Reporting upstream leads only when the evidence shows
an internal invariant; when we could not tell which input leads to the raise, it comes last and
does not claim that no input is tested.
"""

from __future__ import annotations

import ast
import re

from errkb.knowledge.facts import Fix, Provenance
from errkb.knowledge.origins import hardware
from errkb.knowledge.origins.inputs import CONFIG_HOLDERS, is_config_field
from errkb.knowledge.origins.requirements import Requirement, required_version
from errkb.knowledge.who.evidence import WhoKind
from errkb.knowledge.who.said import MEMORY_SAID, WEIGHTS_SAID, message_says
from errkb.knowledge.words.reading import Reading

_PROV: tuple[Provenance, ...] = ("derived:conditions",)
MAX_CODE = 120


def _short(code: str) -> str:
    return code if len(code) <= MAX_CODE else code[: MAX_CODE - 1] + "…"


def tests_of(r: Reading, kind: WhoKind) -> list[str]:
    """The guard's conjuncts (as code) that read a name of one evidence class."""
    names = [c.code for c in r.clues if c.kind == kind and c.code]
    out = []
    for g in r.groups:
        for n in g:
            code = ast.unparse(n)
            if any(name in code for name in names) and code not in out:
                out.append(code)
    return out


def _quoted(codes: list[str]) -> str:
    return ", ".join(f"`{_short(c)}`" for c in codes[:3])


def _accepted(r: Reading, kind: WhoKind) -> list[str]:
    """The literal values a guard accepts or rejects for names of one class (`x in (a, b)`)."""
    names = [c.code for c in r.clues if c.kind == kind and c.code]
    out: list[str] = []
    for g in r.groups:
        for n in g:
            for node in ast.walk(n):
                if not isinstance(node, ast.Compare) or len(node.ops) != 1:
                    continue
                right = node.comparators[0]
                if isinstance(node.ops[0], ast.In | ast.NotIn) and isinstance(
                    right, ast.List | ast.Tuple | ast.Set
                ):
                    if any(name in ast.unparse(node.left) for name in names):
                        out += [ast.unparse(e) for e in right.elts]
    return list(dict.fromkeys(out))


def model_fixes(r: Reading) -> list[Fix]:
    """The model's config.json field or weights the guard tests, and what to change."""
    model = [i for i in r.inputs if i.kind == "model_config"]
    tested = tests_of(r, "model_config")
    weights = [Fix("model", _WEIGHTS, ("derived:message",))] if _about_weights(r) else []
    if not model and not tested:
        return weights
    origin = r.site.origin
    # the config.json fields the index traced the values to, else the names the guard reads
    fields = [
        n.split(": ", 1)[1] for n in (origin.inputs if origin else ()) if is_config_field(n)
    ] or [i.name for i in model if i.name and i.name not in CONFIG_HOLDERS]
    if not fields:  # the names the guard reads that are named after config.json fields
        fields = [
            c.code.rsplit(".", 1)[-1]
            for c in r.clues
            if c.kind == "model_config" and c.code and c.code.replace(".", "").isidentifier()
        ]
    names = ", ".join(dict.fromkeys(fields)) or "its configuration"
    text = f"Check the model's config.json ({names})"
    values = _accepted(r, "model_config")
    if values:
        text += "; the values the code lists are " + ", ".join(values[:8])
    text += (
        ". If the model is right, point --model-path at a checkpoint whose config this release "
        "reads (a model that ships its own code needs --trust-remote-code; --revision picks "
        "another version of the checkpoint)."
    )
    key = model[0].name or model[0].owner if model else (fields[0] if fields else None)
    registry = registry_fix(r)
    return [*weights, Fix("model", text, _PROV, input=key)] + ([registry] if registry else [])


_WEIGHTS = (
    "Check the checkpoint's weights: the message reports a weight this code does not expect, or "
    "one it cannot find. Point --model-path at a complete checkpoint of a model this release "
    "supports (download it again if files may be missing or changed); a quantized or converted "
    "checkpoint needs the matching --quantization or --load-format."
)


def _about_weights(r: Reading) -> bool:
    """True when the message reports a checkpoint's weights ("Unexpected ... weight")."""
    said = message_says(r.site.template.literal_text)
    return said is not None and said[1] == WEIGHTS_SAID


_REGISTRY = re.compile(r"regist", re.I)
_NOT_REGISTERED = re.compile(r"\b(no|not|cannot|unknown)\b[^.]*\bregistered\b", re.I)


def registry_fix(r: Reading) -> Fix | None:
    """A lookup in a registry that importing modules fills: the real cause is often upstream."""
    said = r.site.template.literal_text
    looked_up = any(
        isinstance(n, ast.Compare)
        and any(isinstance(op, ast.NotIn) for op in n.ops)
        and _REGISTRY.search(ast.unparse(n.comparators[-1]))
        for g in r.groups
        for n in g
    )
    low = said.lower()
    in_registry = (
        r.site.path.endswith("registry.py") and "architecture" in low and "already" not in low
    )
    if not (looked_up or in_registry or _NOT_REGISTERED.search(said)):
        return None
    text = (
        "If this release should support it, look earlier in the log for an import error: a "
        "module that fails to import (a missing package, or another version of transformers or a "
        "kernel library) never registers what it provides, and the lookup then fails here. "
        "If the model is newer than this release, upgrade: support for a new architecture "
        "comes with a new release."
    )
    return Fix("model", text, ("derived:conditions", "derived:message"))


def hardware_fixes(r: Reading) -> list[Fix]:
    """The platform or parallelism test, as the code states it."""
    clues = [c for c in r.clues if c.kind == "hardware"]
    if not clues:
        return []
    advice = r.finder.vocab.memory_advice
    if advice and any(c.text == MEMORY_SAID for c in clues):
        # the project's own advice on its memory settings, the flags it names first
        flag = re.search(r"(?<![\w-])--[a-z][\w-]*", advice)
        return [Fix("flag", advice, _PROV, flag=flag.group(0) if flag else None)]
    parallel = any("parallelism" in c.text for c in clues)
    what = "the parallelism settings" if parallel else "the GPU or platform in use"
    text = f"This depends on {what}."
    if parallel:
        text += (
            " Change the tensor, data, expert or pipeline parallel sizes (or the number of "
            "GPUs): this check compares them with the model's shape or another size, and your "
            "combination does not fit."
        )
    else:
        needs = hardware.capability([n for g in r.groups for n in g])
        said = hardware.stated(r.site.template)
        if said:
            text = f"Run it on hardware this code supports; the message says: “{said}”"
            text += "" if said.endswith((".", "!", "?")) else "."
        elif needs:
            text = f"Run it on a GPU of {needs}."
        else:
            text = (
                "The code fails this way only on some GPUs or platforms (the conditions below "
                "say which): run it on another kind, or with settings that avoid this code."
            )
        origin = r.site.origin
        chooser = [
            n
            for n in (origin.path_inputs if origin and r.audience == "hardware" else ())
            if n.startswith("--")
        ]
        if chooser:
            text += (
                f" On this machine, start it with another value of {chooser[0]}, so that this "
                "code is not used."
            )
    prov: tuple[Provenance, ...] = _PROV
    if not parallel and hardware.stated(r.site.template):
        prov = ("derived:conditions", "derived:message")
    return [Fix("hardware", text, prov)]


def requirement(r: Reading) -> Requirement | None:
    """The package version the guard's checks or the message require, if spelled out."""
    return required_version([n for g in r.groups for n in g], r.site.template)


def dependency_fixes(r: Reading) -> list[Fix]:
    """The package or version the guard checks: install or change it."""
    req = requirement(r)
    named = []
    if req is not None:
        where = (
            f"the check `{_short(req.source)}`"
            if req.provenance != "derived:message"
            else (f"the message: “{req.source}”")
        )
        text = f"Install {req.spec} in the same environment as the server: {where} requires it."
        named.append(
            Fix("environment", text, (req.provenance,), command=f"pip install '{req.spec}'")
        )
    clues = [c for c in r.clues if c.kind == "dependency"]
    if not clues:
        return named
    text = "Check the installed packages."
    text += " Install the package the check names, or the version it asks for, in the same "
    text += "environment as the server; an import error printed earlier in the log says which."
    return named + [Fix("environment", text, _PROV)]


def _env_listing(r: Reading) -> str:
    """ "the environment variables that start with SGLANG_" (the pins' prefixes), or ""."""
    prefixes = [p for p in r.finder.vocab.env_prefixes if p]
    if not prefixes:
        return "the environment variables you set for it"
    return "the environment variables that start with " + " or ".join(prefixes)


def report_fix(r: Reading, project: str, *, first: bool, alone: bool = False) -> Fix:
    """Report it upstream, with what to include; said as a finding only for an internal case,
    and as the only way on (`alone`) when no solution comes before it."""
    url = f"{r.web_url.rstrip('/')}/issues/new" if r.web_url else None
    where = f" at {url}" if url else ""
    items = [f"the {project} version", "the full command line or request", "the model"]
    include = "Include " + ", ".join(items) + " and the whole traceback"
    if first:
        listed = ", ".join([*items, "the whole traceback"]) + f" and {_env_listing(r)}"
        text = (
            f"Report it to the {project} maintainers{where}: this is a check inside {project} that "
            f"your input did not break, so it points to a bug. Include {listed}."
        )
    elif alone:  # nothing above it to fall back from
        text = (
            f"Report it to the {project} maintainers{where}: the source does not show which of "
            f"your inputs leads to this check, and they can tell. {include}."
        )
    else:
        text = (
            f"If none of the above applies, report it to the {project} maintainers{where}. "
            f"{include}."
        )
    return Fix("report", text, ("derived:conditions",), url=url)
