"""Who hits an error, from evidence: the names its guard reads, traced to where they come from.

Every name the guard reads (its conjuncts, and the expressions its locals resolve to) is traced
to an input: a flag the ingester linked, a request field, an environment variable, the model's
configuration or weights, the hardware, platform or parallelism, or a dependency's version.
Each trace is kept as a clue (`Clue`): the class and the chain of names that proves it, which
the entry shows as the evidence of "who hits it".

"Internal" is a finding, not a default: it needs every name the guard reads to be state the code
computes itself (private attributes, module constants, enum members, the batch's forward mode).
A guard whose names lead nowhere we can tell is "unknown", and the entry says so instead of
claiming that no input is tested.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from dataclasses import dataclass

from errkb.core.origin import USER_KINDS, OriginKind
from errkb.core.records import Condition
from errkb.knowledge.origins.inputs import Input, name_chain
from errkb.knowledge.who.said import message_says

# The classes of who hits an error are the classes of where a guard's values come from, and win
# in the same order when a guard reads several: what a user changes first.
WhoKind = OriginKind
ORDER: tuple[WhoKind, ...] = USER_KINDS

_PARALLEL = re.compile(
    r"(^|_)((attn|moe|mlp|dense)_)?(tp|dp|pp|ep|cp|sp)_(size|rank|group)$|world_size$|"
    r"^(get_)?(tensor|pipeline|data|expert|context)_(model_)?parallel|num_gpus$|^nnodes$|"
    r"^device_count$|^gpu_id$",
    re.I,
)
_DEPENDENCY = re.compile(
    r"__version__|^(parse_)?version$|^Version$|_version$|^is_\w+_available$|_available$|"
    r"^find_spec$|^import_module$|_installed$|^HAS_|^has_\w+_(kernel|lib|package)$",
)
# A device or instruction set named in a check's name: what the machine has, not a package.
_DEVICE = re.compile(r"(^|_)(cpu|gpu|cuda|hip|rocm|npu|xpu|hpu|mps|musa|amx|avx\d*|sm\d+)(_|$)")
_IMPORT_ERRORS = ("ImportError", "ModuleNotFoundError")
# Names that hold a model's configuration in ML serving code, besides the project's own.
_MODEL_HOLDERS = frozenset({"model_config", "hf_config", "pretrained_config", "hf_text_config"})
# Parts of a model checkpoint that a weight loader checks.
_WEIGHTS = frozenset({"loaded_weight", "params_dict", "weight_name", "checkpoint"})
# Fields of a Hugging Face model's config.json: a value under one of these names comes from it.
_CONFIG_FIELDS = frozenset(
    "architectures model_type hidden_size num_attention_heads num_key_value_heads head_dim "
    "num_hidden_layers intermediate_size vocab_size max_position_embeddings rope_theta "
    "rope_scaling torch_dtype tie_word_embeddings num_experts num_local_experts "
    "num_experts_per_tok moe_intermediate_size n_routed_experts n_shared_experts kv_lora_rank "
    "q_lora_rank qk_rope_head_dim qk_nope_head_dim v_head_dim sliding_window layer_types "
    "quantization_config hidden_act".split()
)
# A project's own test code (a test module, a `tests/` or `test/` package, a conftest): its
# checks fail when a test fails, not when a user runs the software.
_TEST_PATH = re.compile(r"(^|/)(tests?|testing)/|(^|/)(test_[^/]*|[^/]*_test|conftest)\.py$")
_REQUEST_HOLDERS = frozenset({"req", "request", "reqs", "sampling_params"})
_SETTINGS = re.compile(r"(^|_)(server_)?args$|settings$", re.I)
# Words of a message addressed to a user who can change something: not an internal invariant.
_USER_WORDS = re.compile(
    r"configur|please|specif|enabl|disabl|install|support|--|\buse\b|\bpass\b", re.I
)
# What a guard may read of a tensor: its shape, type, layout or device, which the code computes
# from the model and the batch (a user sets none of them directly), unless the tensor is media
# that a user sent (`_MEDIA`).
_TENSOR_PROPERTIES = frozenset(
    "shape ndim dim size numel stride is_contiguous storage_offset dtype is_floating_point "
    "device is_cuda is_cpu layout data_ptr element_size nbytes itemsize".split()
)
_MEDIA = re.compile(r"audio|image|video|frame|pixel|waveform|speech", re.I)
_LIBRARIES = frozenset({"torch"})  # whose attributes a guard compares with are constants
_TENSOR_STATE = "the shape, type, layout or device of tensors the code builds itself"
# A method that asks the batch's forward mode (decode, extend, ...): scheduling state.
_MODE_PREDICATE = re.compile(r"^is_\w+$")


@dataclass(frozen=True)
class Clue:
    """One trace from a name the guard reads to an input, said for a person."""

    kind: WhoKind
    text: str  # "`self.server_args.tp_size` is a server setting (tp_size)"
    code: str = ""  # the name chain as the code reads it, when the clue comes from one


def traced(nodes: list[ast.expr], resolved: dict[str, str]) -> list[tuple[ast.expr, str]]:
    """The outermost name chains the nodes read (`self.a.b`, `f()`), each with the local or
    `self.` attribute it was read through ("" when read directly); each followed once."""
    out: list[tuple[ast.expr, str]] = []
    seen: set[str] = set()
    todo: list[tuple[ast.expr, str]] = [(n, "") for n in nodes]
    while todo:
        node, via = todo.pop(0)
        inner: set[int] = set()
        for n in ast.walk(node):
            if isinstance(n, ast.Attribute):  # a subscript's value is a leaf of its own
                inner.add(id(n.value))
            elif isinstance(n, ast.Call):
                inner.add(id(n.func))
        for n in ast.walk(node):
            if not isinstance(n, ast.Name | ast.Attribute | ast.Call) or id(n) in inner:
                continue
            key = _resolved_key(n, resolved)
            if key is not None and key not in seen:
                seen.add(key)
                if isinstance(n, ast.Attribute):  # `self.tp_size` tells by its own name too
                    out.append((n, via))
                try:
                    todo.append((ast.parse(resolved[key], mode="eval").body, via or key))
                except (SyntaxError, ValueError, RecursionError):
                    pass
                continue
            out.append((n, via))
    return out


def _resolved_key(node: ast.expr, resolved: dict[str, str]) -> str | None:
    """The key `resolved` holds for a local (`pd_enabled`) or a `self.` attribute, if any."""
    if isinstance(node, ast.Name):
        return node.id if node.id in resolved else None
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        key = f"{node.value.id}.{node.attr}"
        return key if key in resolved else None
    return None


def leaves(nodes: list[ast.expr], resolved: dict[str, str]) -> list[ast.expr]:
    """The outermost name chains the nodes read, locals and `self.` attributes followed once."""
    return [n for n, _ in traced(nodes, resolved)]


def _computed(node: ast.expr, chain: list[str]) -> bool:
    """State the code computes itself: a private name, a constant, an enum member, a mode test."""
    if isinstance(node, ast.Call) and getattr(node.func, "id", "") in ("len", "isinstance"):
        return False  # judged by their arguments, which `leaves` also yields
    names = [p for p in chain if p != "self"]
    if not names:
        return False
    if any(p.startswith("_") and not p.startswith("__") for p in names):
        return True
    if len(names[-1].strip("_")) > 1 and names[-1].isupper():
        return True  # MODULE_CONSTANT, Enum.MEMBER (not a one-letter size such as `N`)
    mode = any("mode" in p.lower() for p in names[:-1])
    return mode and isinstance(node, ast.Call) and bool(_MODE_PREDICATE.match(names[-1]))


def _name_clue(node: ast.expr, chain: list[str], qualname: str) -> Clue | None:
    """The class a name chain points to by its own words (parallelism, versions, weights...)."""
    code = ast.unparse(node)
    if chain[-1] in ("get", "pop") and isinstance(node, ast.Call) and node.args:
        key = node.args[0]  # kwargs.pop("tie_word_embeddings"): the key is the name
        if isinstance(key, ast.Constant) and isinstance(key.value, str):
            chain = [*chain[:-1], key.value]
    shown = code if len(code) <= 60 else ".".join(chain)
    last = chain[-1]
    if len(chain) >= 2 and any(_SETTINGS.search(p) for p in chain[:-1]):
        # a setting of the server's, parallelism ones included: the user sets it as a flag
        return Clue("flag", f"`{shown}` is a server setting ({last})", code)
    if any(_PARALLEL.search(p) for p in chain[-2:]):
        return Clue(
            "hardware",
            f"`{shown}` follows from the parallelism settings (how the GPUs are split)",
            code,
        )
    if any(_DEPENDENCY.search(p) for p in chain) and _DEVICE.search(last):
        # `_is_cpu_amx_available`: what the machine has, not an installed package
        return Clue("hardware", f"`{shown}` tells the hardware or platform in use", code)
    if any(_DEPENDENCY.search(p) for p in chain):
        return Clue("dependency", f"`{shown}` tests an installed package or its version", code)
    if any(p in _MODEL_HOLDERS for p in chain[:-1]):
        return Clue("model_config", f"`{shown}` is read from the model's configuration", code)
    if qualname.rsplit(".", 1)[-1] == "load_weights" and (
        chain[0] in _WEIGHTS or last in _WEIGHTS or chain[0] == "name"
    ):
        return Clue("model_config", f"`{shown}` comes from the checkpoint's weights", code)
    owner = next((p for p in reversed(qualname.split(".")[:-1]) if p[:1].isupper()), "")
    if last in _CONFIG_FIELDS and (len(chain) >= 2 or owner.endswith("Config")):
        return Clue("model_config", f"`{shown}` is named after a field of config.json", code)
    if len(chain) >= 2 and chain[-2] in _REQUEST_HOLDERS:
        return Clue("request_field", f"`{shown}` is a field of the request being served", code)
    return None


def _input_clue(i: Input) -> Clue:
    if i.kind == "request_field":
        where = f" of {i.owner}" if i.owner else ""
        return Clue("request_field", f"{i.name} is a field{where} that the request sets", i.name)
    if i.kind == "environment":
        return Clue("environment", f"{i.name} is an environment variable", i.name)
    if i.kind == "model_config":
        name = ".".join(p for p in (i.owner, i.name) if p)
        code = name if i.name else ""  # a bare `config` says which object, not what is tested
        return Clue("model_config", f"`{name}` is read from the model's configuration", code)
    if _DEPENDENCY.search(i.name) and not _DEVICE.search(i.name):
        return Clue("dependency", f"`{i.name}` tests an installed package", i.name)
    return Clue("hardware", f"`{i.name}` tells the hardware or platform in use", i.name)


def clues(
    flag_clues: list[str],
    inputs: list[Input],
    nodes: list[ast.expr],
    site_info: SiteInfo,
    known: Callable[[ast.expr], object] = lambda n: None,
) -> list[Clue]:
    """Every trace from the guard's names to an input, strongest classes first; `known` tells
    the names already traced as `inputs`."""
    found: list[Clue] = [Clue("flag", f) for f in flag_clues]
    found += [_input_clue(i) for i in inputs]
    for node, via in traced(nodes, site_info.resolved):
        chain = name_chain(node)
        read = known(node)
        clue = None
        if isinstance(read, Input):  # read directly, where the site's inputs were not looked
            clue = _input_clue(read)  # for (an assert's own check), or through `via`
        elif chain and read is None:
            clue = _name_clue(node, chain, site_info.qualname)
        if clue is not None and via:
            clue = Clue(clue.kind, f"{clue.text}, read through `{via}`", via)
        if clue is not None:
            found.append(clue)
    if site_info.exception in _IMPORT_ERRORS or any(
        e in t for t in site_info.handlers for e in _IMPORT_ERRORS
    ):
        found.append(Clue("dependency", "it is raised when a package cannot be imported"))
    said = message_says(site_info.message) if not found else None
    if said is not None:  # what the message itself says the check is about
        found.append(Clue(*said))
    out: list[Clue] = []
    for c in found:
        if c not in out:
            out.append(c)
    return sorted(out, key=lambda c: ORDER.index(c.kind) if c.kind in ORDER else len(ORDER))


@dataclass(frozen=True)
class SiteInfo:
    """What of a site the trace needs besides its guard's nodes."""

    qualname: str
    exception: str
    resolved: dict[str, str]
    handlers: tuple[str, ...]  # the exception classes of `except` blocks around the raise
    message: str = ""  # the message's literal text
    path: str = ""  # the file the site is in


def in_test_code(path: str) -> bool:
    """True for a file of the project's own tests (`tests/`, `test_*.py`, a conftest)."""
    return bool(_TEST_PATH.search(path))


def _names_something(source: str) -> bool:
    """True when the source reads a name (it is not a literal alone)."""
    try:
        tree = ast.parse(source, mode="eval")
    except (SyntaxError, ValueError, RecursionError):
        return True
    return any(isinstance(n, ast.Name) for n in ast.walk(tree))


def internal_names(nodes: list[ast.expr], resolved: dict[str, str]) -> tuple[list[str], bool]:
    """The names of a guard that reads only state the code computes (empty when it reads
    anything else), and whether tensors' properties are among them.

    So are a tensor's properties (`x.shape[0]`, `a.stride(-1)`; see `_TENSOR_PROPERTIES`), the
    tensor where the guard reads one of them (`x is None or x.is_cuda`), and `torch.float16`. A
    name resolved to a literal alone is not followed: a parameter resolves to what the calls in
    its module pass (`n_k` <- `4`), and callers elsewhere may pass anything."""
    followed = {k: v for k, v in resolved.items() if _names_something(v)}
    names: list[str] = []
    tensors: set[str] = set()  # the roots of the tensor properties read
    bare: set[str] = set()  # plain names, computed only if they are such a tensor
    for node in leaves(nodes, followed):
        chain = name_chain(node)
        if chain is None:
            continue
        if chain == ["self"] or chain[0] in ("isinstance", "len", "type", "hasattr", "getattr"):
            continue
        if _computed(node, chain):
            names.append(ast.unparse(node))
        elif len(chain) >= 2 and chain[-1] in _TENSOR_PROPERTIES and not _MEDIA.search(chain[0]):
            tensors.add(chain[0])
            names.append(ast.unparse(node))
        elif len(chain) == 2 and chain[0] in _LIBRARIES and isinstance(node, ast.Attribute):
            continue  # torch.float16
        elif len(chain) == 1:
            bare.add(chain[0])
            names.append(ast.unparse(node))
        else:
            return [], False
    if not bare <= tensors:
        return [], False
    return names, bool(tensors)


def who(
    flag_clues: list[str],
    inputs: list[Input],
    nodes: list[ast.expr],
    info: SiteInfo,
    known: Callable[[ast.expr], object] = lambda n: None,
) -> tuple[WhoKind, list[Clue]]:
    """The class of who hits the error and the clues that show it."""
    if in_test_code(info.path):
        where = info.path.rsplit("/", 1)[-1]
        return "test", [Clue("test", f"{where} is part of the project's own tests", info.path)]
    found = clues(flag_clues, inputs, nodes, info, known)
    if found:
        return found[0].kind, found
    internal, tensors = internal_names(nodes, info.resolved)
    if internal and not _USER_WORDS.search(info.message):
        shown = ", ".join(f"`{n}`" for n in dict.fromkeys(internal[:4]))
        what = _TENSOR_STATE if tensors else "state the code computes itself"
        return "internal", [Clue("internal", f"{shown}: {what}", shown)]
    untraced = [
        ast.unparse(n)
        for n in leaves(nodes, info.resolved)
        if isinstance(n, ast.Name | ast.Attribute)
        and (c := name_chain(n))
        and c != ["self"]
        and not _computed(n, c)
        and not (len(c) == 2 and c[0] in _LIBRARIES)  # `torch.float32` is no input
    ]
    if untraced:
        shown = ", ".join(f"`{n}`" for n in list(dict.fromkeys(untraced))[:4] if len(n) <= 60)
        if shown:
            return "unknown", [Clue("unknown", f"{shown}: not traced to an input")]
    return "unknown", []


def handlers_of(conditions: tuple[Condition, ...]) -> tuple[str, ...]:
    """The exception classes of the `except` blocks the raise is in."""
    return tuple(c.expr for c in conditions if c.kind == "except")
