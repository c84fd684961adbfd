"""Inputs a user controls that a guard reads: request fields, environment, model config.

Flags come linked from ingest (`Involvement`); the other inputs are recognised here from the
guard's syntax tree and the project's vocabulary (pins.toml): a request field is an attribute of
a request class (`self.top_p` inside `SamplingParams`, `request.n` where `request` is named after
`*Request`), an environment variable is read through `os.environ`/`os.getenv` or the project's
helpers, and the model's configuration is reached through names like `hf_config`.
"""

from __future__ import annotations

import ast
import fnmatch
import re
from dataclasses import dataclass
from typing import Literal

from errkb.core.records import Site, Template, Vocabulary

InputKind = Literal["request_field", "environment", "model_config", "hardware"]

_ENV_READERS = ("getenv", "environ.get", "environ.setdefault")
_HARDWARE = re.compile(
    # a test of the machine by its own name (`_is_cuda`, `get_device_capability`), not a setting
    # that mentions one (`direct_gpu_weight_loading`)
    r"^_?(is_|has_|on_|get_)?(cuda|hip|rocm|npu|xpu|hpu|mps|musa|cpu|gpu|sm\d+|blackwell|hopper|ampere|"
    r"device_capability|get_device_name|flashinfer_available|cuda_alike)(_|$)",
    re.I,
)
# Values a message prints that come from the model's config.json (its architecture, type...).
_MODEL_WORDS = frozenset(
    "architectures architecture arch archs model_arch model_type quant_method quantization "
    "hidden_act torch_dtype".split()
)
# Properties of a tensor (torch.Tensor.is_cuda, ...): where the data is, not the platform.
# `seq_lens_cpu`, `x_gpu`: a copy of data kept on a device, not a test of the platform
# (`_is_cpu`, `use_cuda`, `cpu_has_amx` are)
_PLACED = re.compile(
    r"^(?!_?(is|has|use|on|enable|support)_)\w+_(cpu|gpu|cuda|npu|xpu|hpu|mps|musa|device)$|"
    r"(cuda|gpu|npu|hip|xpu)_(graphs?|stream|event|runner|kernel|buffer|mem|memory|tensor|ipc)|"
    r"offload|resident|pin_memory",
    re.I,
)
_TENSOR_DEVICE = frozenset({"is_cuda", "is_cpu", "is_mps", "is_xpu", "is_hpu", "is_meta"})
_MAPPING_METHODS = frozenset({"get", "items", "keys", "values", "to_dict", "__dict__"})
_ENV_NAME = re.compile(r"^[A-Z][A-Z0-9]*(_[A-Z0-9]+)+$")


@dataclass(frozen=True)
class Input:
    """One input the guard or the message involves, named the way a user sets it."""

    kind: InputKind
    name: str  # "top_p", "SGLANG_ENABLE_X", "architectures", "is_hip"
    owner: str = ""  # the request class ("SamplingParams"), the config name ("hf_config")
    default: str | None = None  # source text, when the code states it


def _class_of(qualname: str) -> str | None:
    names = [p for p in qualname.split(".") if p != "<locals>"]
    return next((n for n in reversed(names[:-1]) if n[:1].isupper()), None)


def _spec(spec: str) -> tuple[str, str]:
    path, _, cls = spec.rpartition(":")
    return path or "*", cls


def request_class(site: Site, vocab: Vocabulary) -> str | None:
    """The request class the site is in, when the pins name it as one."""
    cls = _class_of(site.qualname)
    if cls is None:
        return None
    for spec in vocab.request_classes:
        path, pattern = _spec(spec)
        if fnmatch.fnmatchcase(site.path, path) and fnmatch.fnmatchcase(cls, pattern):
            return cls
    return None


def _snake(name: str) -> str:
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower()


def _request_holders(vocab: Vocabulary) -> list[str]:
    """Variable names that hold a request: the classes' names in snake case (`*Request` too)."""
    out = []
    for spec in vocab.request_classes:
        pattern = _snake(_spec(spec)[1]).strip("*_")
        if pattern and "*" not in pattern:
            out.append(pattern)
    return out


def name_chain(node: ast.expr) -> list[str] | None:
    """`a.b.c` -> ["a", "b", "c"]; a call or a subscript in the chain passes through to what it
    applies to (`a.f(x).b` -> ["a", "f", "b"]); None when the chain does not start at a name."""
    out: list[str] = []
    while True:
        if isinstance(node, ast.Attribute):
            out.append(node.attr)
            node = node.value
        elif isinstance(node, ast.Call):
            node = node.func
        elif isinstance(node, ast.Subscript):
            node = node.value
        elif isinstance(node, ast.Name):
            out.append(node.id)
            return out[::-1]
        else:
            return None


def _const_str(node: ast.expr | None) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


class InputFinder:
    """Recognises user inputs in expressions of one site."""

    def __init__(self, site: Site, vocab: Vocabulary) -> None:
        self.vocab = vocab
        self.request_class = request_class(site, vocab)
        self.holders = _request_holders(vocab)
        self.helpers = set(vocab.env_helpers)
        self.model_names = set(vocab.model_config_names)
        self.model_class = False  # a model's configuration class: its own fields are the config
        if any(fnmatch.fnmatchcase(site.path, glob) for glob in vocab.model_paths):
            self.model_names |= {"config", "text_config", "vision_config", "audio_config"}
            self.model_class = (_class_of(site.qualname) or "").endswith("Config")

    def env_name(self, name: str) -> bool:
        """True for a name that looks like one of the project's environment variables."""
        return bool(_ENV_NAME.match(name)) and (
            not self.vocab.env_prefixes or name.startswith(self.vocab.env_prefixes)
        )

    def of(self, node: ast.expr) -> Input | None:
        """The input an expression reads directly, if any."""
        env = self._environment(node)
        if env is not None:
            return env
        chain = name_chain(node)
        if not chain:
            return None
        for i, part in enumerate(chain):
            if part in self.model_names or any(part.endswith("_" + m) for m in self.model_names):
                rest = chain[i + 1 :]
                if rest[-1:] == ["get"] and isinstance(node, ast.Call) and node.args:
                    key = _const_str(node.args[0])  # config.get("backbone_type")
                    rest = rest[:-1] + ([key] if key else [])
                elif isinstance(node, ast.Call) and rest:
                    rest = rest[:-1]  # `quant_config.get_name()`: a method, not a field
                if rest[-1:] and rest[-1] in _MAPPING_METHODS:
                    rest = rest[:-1]  # `hf_config.get` itself names no field
                return Input("model_config", ".".join(rest), part)
        if self.model_class and chain[0] == "self" and len(chain) == 2:
            return Input("model_config", chain[1], "config")
        if self.request_class and chain[0] == "self" and len(chain) == 2:
            return Input("request_field", chain[1], self.request_class)
        for i, part in enumerate(chain[:-1]):
            if any(part == h or part.endswith("_" + h) for h in self.holders):
                field = chain[i + 1]
                if field in _MAPPING_METHODS:  # sampling_params.get("max_new_tokens")
                    key = (
                        _const_str(node.args[0])
                        if isinstance(node, ast.Call) and node.args
                        else None
                    )
                    if key is None:
                        return None
                    field = key
                return Input("request_field", field, part)
        if isinstance(node, ast.Attribute) and chain[-1] in _TENSOR_DEVICE and chain[0] != "torch":
            return None  # `x.is_cuda`: where a tensor lives, which the calling code chose
        if (
            isinstance(node, ast.Call | ast.Name | ast.Attribute)
            and _HARDWARE.search(chain[-1])
            and not _PLACED.search(chain[-1])
        ):
            return Input("hardware", chain[-1])
        return None

    def _model_key(self, node: ast.AST) -> Input | None:
        """`'quantization_config'` as a key, `hf_config=...` as an argument: the model's config."""
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            if node.value in self.model_names:
                return Input("model_config", "", node.value)
        if isinstance(node, ast.keyword) and node.arg in self.model_names:
            return Input("model_config", "", node.arg)
        return None

    def _environment(self, node: ast.expr) -> Input | None:
        if isinstance(node, ast.Subscript) and ast.unparse(node.value).endswith("environ"):
            name = _const_str(node.slice)  # type: ignore[arg-type]
            return Input("environment", name) if name else None
        if isinstance(node, ast.Call):
            func = ast.unparse(node.func)
            first = _const_str(node.args[0]) if node.args else None
            default = ast.unparse(node.args[1]) if len(node.args) > 1 else None
            reader = func.endswith(_ENV_READERS) or func.split(".")[-1] in self.helpers
            if reader and node.args and first is None:  # the name is held by a constant
                first = ast.unparse(node.args[0])
            if first and reader:
                return Input("environment", first, default=default)
            if isinstance(node.func, ast.Attribute):  # envs.SGLANG_X.get()
                return self._environment(node.func.value)
        if isinstance(node, ast.Attribute) and self.env_name(node.attr):
            base = node.value
            owner = base.id if isinstance(base, ast.Name) else getattr(base, "attr", "")
            if owner in self.helpers or owner in ("env", "envs", "environ"):
                return Input("environment", node.attr)
        return None

    def all_in(self, expr: str) -> list[Input]:
        """Every input an expression's source reads, outermost first, without repeats."""
        try:
            tree = ast.parse(expr, mode="eval")
        except (SyntaxError, ValueError, RecursionError):
            return []
        out: list[Input] = []
        # a called method's name (`cfg.get_name` of `cfg.get_name()`) is no field
        called = {id(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call)}
        for node in ast.walk(tree):
            if id(node) in called:
                continue
            found = self.of(node) if isinstance(node, ast.expr) else None
            if found is None:
                found = self._model_key(node)
            if found is not None:
                if all(found.name != o.name or found.kind != o.kind for o in out):
                    out.append(found)
        return out


def site_inputs(site: Site, vocab: Vocabulary) -> list[Input]:
    """Every input the site's guard (with its resolved locals) or its message involves."""
    finder = InputFinder(site, vocab)
    out: list[Input] = []

    def add(found: Input) -> None:
        if all(found.name != o.name or found.kind != o.kind for o in out):
            out.append(found)

    for cond in site.conditions:
        for expr in (cond.expr, *(value for _, value in cond.resolved)):
            for found in finder.all_in(expr):
                add(found)
    for seg in site.template.segments:
        last = seg.text.rsplit(".", 1)[-1].strip("()[]")
        if seg.kind == "placeholder" and last in _MODEL_WORDS:
            add(Input("model_config", last))
        if seg.kind == "placeholder":
            for found in finder.all_in(seg.text):
                if found.kind != "hardware" and not _identifies(found):
                    add(found)
    if any(i.kind == "model_config" and i.name for i in out):
        out = [i for i in out if i.kind != "model_config" or i.name]
    for name in env_names_in_message(site.template, finder):
        add(Input("environment", name))
    if finder.request_class and not any(i.kind == "request_field" for i in out):
        field = message_field(site.template)
        if field:
            add(Input("request_field", field, finder.request_class))
    return out


# Request fields a message prints only to say which request it is about ("rid={request.rid}"):
# they name the request, they are not what the check refuses
_IDENTIFIERS = frozenset("rid request_id req_id id session_id trace_id user".split())


def _identifies(found: Input) -> bool:
    return found.kind == "request_field" and found.name in _IDENTIFIERS


def env_names_in_message(template: Template, finder: InputFinder) -> list[str]:
    """Names in the message's text that are the project's environment variables."""
    words = re.findall(r"[A-Za-z_][A-Za-z0-9_]*", template.literal_text)
    return list(dict.fromkeys(w for w in words if finder.env_name(w)))


def message_field(template: Template) -> str | None:
    """The field a validator's message is about: its quoted or leading identifier."""
    text = template.literal_text.strip()
    quoted = re.match(r"^['\"`]?([a-z_][a-z0-9_]*)['\"`]?\s", text)
    if quoted and ("_" in quoted.group(1) or text[: quoted.end()].strip()[:1] in "'\"`"):
        return quoted.group(1)
    inner = re.search(r"['\"`]([a-z_][a-z0-9_]*)['\"`]", text)
    return inner.group(1) if inner else None


# Names of the whole configuration object (`self.model_config.hf_config` passed on), which the
# index may reach in place of a field: "hf_config in its config.json" names no field
CONFIG_HOLDERS = frozenset({"config", "hf_config", "hf_text_config", "model_config"})


def is_config_field(name: str) -> bool:
    """True for "config.json: hidden_size", False for another input or the whole config."""
    kind, _, value = name.partition(": ")
    return kind == "config.json" and bool(value) and value not in CONFIG_HOLDERS
