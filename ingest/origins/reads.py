"""What one name chain read by a guard is, by itself: an input a user controls, state the project
computes, or a name to follow further (a parameter, a local, `self.x`, a typed receiver).

`cfg.enable_x` in a settings hook, `get_memory().page_size`, `server_args.tp_size` are server
flags; `envs.SGLANG_X`, `get_bool_env_var("X")`, `os.environ["X"]` environment variables;
`hf_config.x` the model's configuration; `is_cuda()`, `get_device_capability()` the hardware;
`is_flashinfer_available()` a package; a tensor's `shape`, `dtype` or `is_contiguous()`, an
UPPER_CASE constant, an enum member and a literal are state the project computes itself.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from functools import lru_cache
from typing import Literal

from errkb.core.origin import OriginKind
from errkb.core.records import Vocabulary
from errkb.ingest.origins.unparsed import unparsed

ReadKind = Literal["input", "internal", "param", "local", "self", "typed", "unknown"]

_SETTINGS = re.compile(r"^(server_args|args|cfg|settings|sargs|global_server_args(_dict)?)$")
_SETTINGS_CALL = re.compile(r"^get_(global_)?server_args$|^get_[a-z]+$")
_ENV_CALL = re.compile(r"^(get_(bool|int|float|str)_env_var|getenv|get_env\w*)$")
_HARDWARE_CALL = re.compile(
    r"^_?(is_(cuda|hip|npu|xpu|cpu|mps|musa|hpu|cuda_alike|sm\d+\w*|blackwell\w*|hopper\w*|"
    r"gfx\w+|rocm)\w*|get_device_capability|device_capability|get_device_sm|"
    r"get_device_name|cpu_has_\w+|get_platform|current_platform)$"
)
_PARALLEL = re.compile(
    r"(^|_)((attn|moe|mlp|dense)_)?(tp|dp|pp|ep|cp|sp)_(size|world_size)$|"
    r"world_size$|^get_(tensor|pipeline|data|expert|context|attention_tp|attention_dp)\w*_"
    r"(size|world_size)$|^(nnodes|num_gpus|device_count)$"
)
_DEPENDENCY = re.compile(
    r"^_?is_\w+_available$|__version__|^(parse_)?version$|_version$|^HAS_|^has_\w+_(kernel|lib)$"
)
_MACHINE = re.compile(
    r"pin_memory|cuda|gpu|npu|xpu|hpu|cpu|amx|avx|device|fp8_hw|nvlink|rdma", re.I
)
# what the machine runs: its operating system and processor, read from the standard library
_OPERATING_SYSTEM = frozenset(
    "sys.platform platform.system platform.machine platform.processor os.name os.uname".split()
)
_TENSOR = frozenset(
    "shape ndim dim size numel stride is_contiguous storage_offset dtype is_floating_point "
    "device is_cuda is_cpu layout data_ptr element_size nbytes itemsize".split()
)
_MEDIA = re.compile(r"audio|image|video|frame|pixel|waveform|speech", re.I)
_REQUEST_HOLDERS = frozenset({"req", "request", "reqs", "sampling_params", "obj", "batch"})
# Modules whose attributes a guard compares with (`torch.float32`, `math.inf`): constants.
_LIBRARIES = frozenset({"torch", "np", "numpy", "math", "tl", "triton", "jnp"})


@dataclass(frozen=True)
class Read:
    """What a name chain is: an input (with its kind and user-facing name), internal state, or a
    name to follow (`param`, `local`, `self`, `typed`: a receiver with an annotated class)."""

    kind: ReadKind
    origin: OriginKind | None = None
    name: str = ""  # the input's user-facing name, or what to follow
    why: str = ""  # a short plain reason


@dataclass
class Rules:
    """What the snapshot's configuration tells about inputs: its flags (dest -> flag), request
    fields, and the vocabulary's environment helpers and model-config names."""

    flags: dict[str, str]
    vocabulary: Vocabulary
    request_fields: frozenset[str] = frozenset()
    request_types: frozenset[str] = frozenset()
    flag_types: frozenset[str] = frozenset()  # the settings classes whose fields are flags
    # what `read_of` found of each expression text (and whether its file is model code): a
    # trace reads the same few expressions again and again
    reads: dict[tuple[str, bool], Read] = field(default_factory=dict, repr=False, compare=False)

    def in_model_code(self, path: str) -> bool:
        """True for a file of model implementations (there `config` is the model's)."""
        return _in_globs(path, self.vocabulary.model_paths)

    def flag(self, dest: str) -> str | None:
        """The command-line flag of a settings field."""
        return self.flags.get(dest)


@lru_cache(maxsize=16_384)  # asked for every name a trace reads, of a few thousand paths
def _in_globs(path: str, globs: tuple[str, ...]) -> bool:
    return any(fnmatchcase(path, g) for g in globs)


def chain_of(node: ast.expr) -> list[str] | None:
    """`self.a.b` -> ["self", "a", "b"]; `get_x().y` -> ["get_x()", "y"]; `a["k"]` -> ["a", "k"]."""
    parts: list[str] = []
    while True:
        if isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        elif isinstance(node, ast.Call):
            inner = chain_of(node.func)
            if inner is None:
                return None
            key = node.args[0] if node.args else None
            if (
                inner[-1] in ("get", "pop")
                and isinstance(key, ast.Constant)
                and isinstance(key.value, str)
            ):
                inner[-1] = key.value  # `d.get("k", default)` and `d.pop("k")` read `d["k"]`
                return inner + parts[::-1]
            inner[-1] += "()"
            return inner + parts[::-1]
        elif isinstance(node, ast.Subscript):
            key = node.slice
            if isinstance(key, ast.Constant) and isinstance(key.value, str):
                parts.append(key.value)
            node = node.value
        elif isinstance(node, ast.Name):
            parts.append(node.id)
            return parts[::-1]
        else:
            return None


def _string_arg(node: ast.expr) -> str:
    if isinstance(node, ast.Call) and node.args:
        a = node.args[0]
        if isinstance(a, ast.Constant) and isinstance(a.value, str):
            return a.value
    return ""


def _env_read(node: ast.expr, chain: list[str], rules: Rules) -> str:
    """The environment variable a chain reads, or ""."""
    helpers = set(rules.vocabulary.env_helpers)
    bare = [p.removesuffix("()") for p in chain]
    if bare[0] in helpers and len(bare) >= 2 and bare[1].isupper():
        return bare[1]  # envs.SGLANG_X(.get())
    if isinstance(node, ast.Call):
        callee = bare[-1]
        if callee in helpers or _ENV_CALL.match(callee) or "environ" in bare[:-1]:
            return _string_arg(node)
    if isinstance(node, ast.Subscript) and "environ" in bare:
        return chain[-1]
    return ""


def read_of(node: ast.expr, path: str, rules: Rules) -> Read:
    """What one name chain (or call) a guard reads is, by itself (kept per expression text: the
    reading depends on nothing else but whether the file is model code)."""
    key = (unparsed(node), rules.in_model_code(path))
    read = rules.reads.get(key)
    if read is None:
        read = rules.reads[key] = _read_of(node, path, rules)
    return read


def _read_of(node: ast.expr, path: str, rules: Rules) -> Read:
    if isinstance(node, ast.Constant):
        value = node.value
        if isinstance(value, str) and value.startswith("--") and value[2:3].isalpha():
            return Read("input", "flag", value, "a command-line option")
        if isinstance(value, str) and value.endswith("config.json"):
            return Read("input", "model_config", f"file: {value}", "the model's configuration file")
        return Read("internal", "internal", why="a literal")
    chain = chain_of(node)
    if not chain:
        return Read("unknown")
    bare = [p.removesuffix("()") for p in chain]
    state = _state_read(bare, rules.vocabulary.internal_state)
    if state:  # `forward_batch.forward_mode.is_decode()`: what the project chose as it runs
        return Read("internal", "internal", why=f"`{state}`, state the code sets as it runs")
    env = _env_read(node, chain, rules)
    if env:
        return Read("input", "environment", f"env: {env}", f"{env} is an environment variable")
    last = bare[-1]
    if ".".join(bare[:2]) in _OPERATING_SYSTEM:  # `sys.platform != "linux"`
        return Read("input", "hardware", "hardware: the operating system or CPU", "the machine")
    # a server flag: a settings object's field, or a field read through a settings accessor
    # (a group's field is the flag of the group's name and its own: `moe.runner_backend`)
    dest = last if rules.flag(last) else f"{bare[-2]}_{last}" if len(bare) >= 2 else ""
    if len(bare) >= 2 and rules.flag(dest):
        holders = bare[:-1]
        if any(_SETTINGS.match(h) for h in holders) or any(
            _SETTINGS_CALL.match(h) and chain[i].endswith("()") for i, h in enumerate(holders)
        ):
            return Read("input", "flag", rules.flag(dest) or dest, "a server setting")
    keyed = isinstance(node, ast.Call) and getattr(node.func, "attr", "") in ("get", "pop")
    if (
        len(bare) >= 2
        and last in _TENSOR
        and bare[-2] != "self"
        and not keyed  # `d.get("size")` is a key, not a tensor's size
        and not _MEDIA.search(bare[0])
    ):
        return Read("internal", "internal", why=f"a tensor's {last}")
    if any(_HARDWARE_CALL.match(p) for p in bare) and not _DEPENDENCY.match(last):
        return Read("input", "hardware", "hardware: the GPU or platform", "the hardware in use")
    if any(_PARALLEL.search(p) for p in bare[-2:]):
        return Read("input", "hardware", _parallel_flag(last, rules), "a parallelism size")
    if any(_DEPENDENCY.search(p) for p in bare) and _MACHINE.search(last):
        # `is_pin_memory_available()`, `_is_cpu_amx_available`: what the machine has
        return Read("input", "hardware", "hardware: the GPU or platform", "the hardware in use")
    if any(_DEPENDENCY.search(p) for p in bare):
        return Read(
            "input", "dependency", f"package: {last}", "an installed package or its version"
        )
    model_names = set(rules.vocabulary.model_config_names)
    if any(p in model_names or p == "model_config" for p in bare[:-1]) or (
        rules.in_model_code(path)
        and bare[0] in ("config", "self")
        and "config" in bare[:2]
        and len(bare) >= 2
        and bare[-1] != "config"
    ):
        return Read("input", "model_config", f"config.json: {last}", "the model's configuration")
    if len(bare) >= 2 and bare[-2] in _REQUEST_HOLDERS and last in rules.request_fields:
        return Read("input", "request_field", f"request: {last}", "a field of the request")
    if last.isupper() and len(last.strip("_")) > 1:
        return Read("internal", "internal", why="a constant")
    if len(chain) >= 2 and bare[0] in _LIBRARIES and not any(p.endswith("()") for p in chain):
        return Read("internal", "internal", why=f"a constant of {bare[0]}")
    if len(bare) == 1:
        return Read("param", name=bare[0]) if not isinstance(node, ast.Call) else Read("unknown")
    if bare[0] == "self" and len(bare) >= 2 and not chain[1].endswith("()"):
        return Read("self", name=bare[1])
    if len(bare) >= 2 and not chain[0].endswith("()"):
        return Read("typed", name=".".join(bare))
    return Read("unknown")


def _state_read(bare: list[str], names: tuple[str, ...]) -> str:
    """The name of state the project sets as it runs that a chain reads ("forward_mode"; an
    entry "holder.name" matches those parts in a row), "" for none."""
    for name in names:
        parts = name.split(".")
        n = len(parts)
        if any(bare[i : i + n] == parts for i in range(len(bare) - n + 1)):
            return name
    return ""


def _parallel_flag(name: str, rules: Rules) -> str:
    """The flag that sets a parallelism size (`tp_size` -> --tp-size), or the size's name."""
    for dest in (name, name.replace("world_size", "size"), f"{name.split('_')[0]}_size"):
        if rules.flag(dest):
            return rules.flag(dest) or dest
    return "hardware: the parallelism sizes"


def classes_named(
    specs: tuple[str, ...], index_fields: dict[str, dict[str, dict[str, str]]]
) -> tuple[set[str], set[str]]:
    """The classes that "path-glob:class-glob" specs name, and their annotated fields;
    `index_fields` maps each path to its classes' fields."""
    types: set[str] = set()
    names: set[str] = set()
    for spec in specs:
        path_glob, _, class_glob = spec.rpartition(":")
        for path, classes in index_fields.items():
            if path_glob and not fnmatchcase(path, path_glob):
                continue
            for cls, fields in classes.items():
                if fnmatchcase(cls, class_glob):
                    types.add(cls)
                    names.update(fields)
    return types, names
