"""The value-origin index through the names a function does not define: a module-level name (set
where a package's import fails, or from the environment), a name reassigned from itself
(`image = image.convert("RGB")`), a `with ... as` name, another package's function given a value,
and a literal handed to a call beside the value it works on.

Each case is a small snapshot of a few modules, and each test would fail without its rule (the
name was "not traced", or a literal argument was taken for proof that the code builds the value).
"""

from __future__ import annotations

from dataclasses import replace

from errkb.core.origin import Origin
from errkb.core.records import Condition, FlagDef, Segment, Site, Snippet, Template, Vocabulary
from errkb.ingest.origins.kept import forget
from errkb.ingest.origins.snapshot_origins import snapshot_origins

VOCAB = Vocabulary(
    env_helpers=("envs", "get_bool_env_var"),
    model_config_names=("hf_config",),
    request_classes=("p/io.py:Req",),
    internal_state=("forward_mode", "forward_batch.batch_size"),
)
FLAGS = [
    FlagDef(("--page-size",), "page_size", "int", "1", None, None, "p/args.py", 2, "dataclass")
]
BASE = {
    "p/__init__.py": "",
    "p/args.py": "class ServerArgs:\n    page_size: int = 1\n",
    "p/io.py": "class Req:\n    image_path: str = ''\n",
}


def _site(path: str, line: int, qualname: str, conds: tuple[str, ...]) -> Site:
    return Site(
        "ValueError",
        Template((), "none"),
        path,
        line,
        line,
        qualname,
        tuple(Condition("if", c, True, line - 1) for c in conds),
        Snippet(line, (), line, line),
        "",
    )


def _traced(files: dict[str, str], site: Site) -> Origin:
    origin = snapshot_origins({**BASE, **files}, [site], FLAGS, VOCAB, ("ServerArgs",))[0]
    assert origin is not None
    return origin


def test_a_name_set_to_none_where_a_package_import_fails_is_that_package() -> None:
    files = {
        "p/quant.py": (
            "try:\n"
            "    from aiter.ops import gemm_a4w4\n"
            "    HAS_AITER = True\n"
            "except ImportError:\n"
            "    gemm_a4w4 = None\n"
            "    HAS_AITER = False\n"
            "def load(layer):\n"
            "    if gemm_a4w4 is None:\n"
            "        raise RuntimeError('install aiter')\n"
            "def run(layer):\n"
            "    if not HAS_AITER:\n"
            "        raise RuntimeError('install aiter')\n"
        ),
    }
    for line, qualname, cond in ((9, "load", "gemm_a4w4 is None"), (12, "run", "not HAS_AITER")):
        origin = _traced(files, _site("p/quant.py", line, qualname, (cond,)))
        assert origin.kind == "dependency", origin.chain
        assert origin.inputs == ("package: aiter",), origin.chain
        assert "set only when the aiter package can be imported" in origin.chain[0]


def test_a_module_level_name_is_what_the_module_assigns_it() -> None:
    files = {
        "p/ops.py": (
            "from p.env import get_bool_env_var\n"
            "_use_fast = get_bool_env_var('SGLANG_USE_FAST')\n"
            "def run(x):\n"
            "    if _use_fast:\n"
            "        raise ValueError('fast path off')\n"
        ),
    }
    origin = _traced(files, _site("p/ops.py", 5, "run", ("_use_fast",)))
    assert origin.kind == "environment", origin.chain
    assert origin.inputs == ("env: SGLANG_USE_FAST",)


CANVAS = {
    "p/canvas.py": (
        "from PIL import Image\n"
        "def prepare(image, width):\n"
        "    image = image.convert('RGB')\n"
        "    if image.size[0] <= 0:\n"
        "        raise ValueError('empty image')\n"
        "def load(req: Req):\n"
        "    with Image.open(req.image_path) as source_image:\n"
        "        return prepare(source_image, 4)\n"
    ),
}


def test_a_name_reassigned_from_itself_and_a_with_name_reach_the_request() -> None:
    # `image` <- the caller's `source_image` <- `Image.open(req.image_path)` (another package's
    # function, given the request's path); before, `image.convert('RGB')` was followed into
    # itself and the literal 'RGB' taken for the value's origin
    origin = _traced(CANVAS, _site("p/canvas.py", 5, "prepare", ("image.size[0] <= 0",)))
    assert origin.kind == "request_field", origin.chain
    assert origin.inputs == ("request: image_path",), origin.chain
    assert not any("a literal" in step for step in origin.chain), origin.chain


def test_a_literal_handed_to_a_call_beside_a_value_is_not_proof_of_an_internal_check() -> None:
    files = {
        "p/conv.py": (
            "def crop(width):\n"
            "    if width <= 0:\n"
            "        raise ValueError('empty image')\n"
            "def run(img):\n"
            "    return crop(img.convert('RGB').width)\n"
        ),
    }
    origin = _traced(files, _site("p/conv.py", 3, "crop", ("width <= 0",)))
    assert origin.kind != "internal", origin.chain
    assert not any("a literal" in step for step in origin.chain), origin.chain


def test_calls_of_another_packages_function_or_an_objects_method_of_that_name_are_not_callers() -> (
    None
):
    files = {
        "p/topk.py": (
            "def hash_topk(logits, ids, scale=1.0, scoring='sqrt'):\n"
            "    if scoring != 'sqrt':\n"
            "        raise ValueError('scoring')\n"
            "    kernel.hash_topk(logits, ids, out, scale)\n"
        ),
        "p/layer.py": (
            "from p.args import ServerArgs\n"
            "class Layer:\n"
            "    def __init__(self, server_args: ServerArgs, hf_config):\n"
            "        self.scale = server_args.page_size\n"
            "        self.scoring = hf_config.scoring_func\n"
            "    def xpu(self, logits, ids):\n"
            "        from sgl_kernel import hash_topk\n"
            "        hash_topk(logits, ids, self.scale, self.scale)\n"
            "    def forward(self, logits, ids):\n"
            "        from p.topk import hash_topk\n"
            "        return hash_topk(logits, ids, scoring=self.scoring)\n"
        ),
    }
    origin = _traced(files, _site("p/topk.py", 3, "hash_topk", ("scoring != 'sqrt'",)))
    # only p/layer.py's second call is of this function: the first is sgl_kernel's, and
    # `kernel.hash_topk(` in p/topk.py is a method of another object
    assert origin.kind == "model_config", origin.chain
    assert origin.inputs == ("config.json: scoring_func",), origin.chain


def test_state_the_project_sets_as_it_runs_is_internal_however_deep_its_assignments_go() -> None:
    files = {
        "p/batch.py": (
            "from p.env import envs\n"
            "class Batch:\n"
            "    def prepare(self):\n"
            "        if envs.SGLANG_IDLE_SYNC.get():\n"
            "            self.forward_mode = 'extend'\n"
            "def init(batch: Batch, inputs=None):\n"
            "    if batch.forward_mode.is_extend():\n"
            "        assert inputs is not None\n"
        ),
    }
    site = _site("p/batch.py", 8, "init", ("batch.forward_mode.is_extend()",))
    origin = _traced(files, site)
    assert origin.kind == "internal", origin.chain
    assert "env: SGLANG_IDLE_SYNC" not in origin.inputs + origin.path_inputs, origin
    assert any("state the code sets as it runs" in step for step in origin.chain), origin.chain


def test_a_dict_written_out_is_read_by_key_through_what_it_merges() -> None:
    files = {
        "p/opts.py": (
            "def build(req: Req, defaults):\n"
            "    options = {**defaults, 'path': req.image_path}\n"
            "    if not options.get('path'):\n"
            "        raise ValueError('no path')\n"
        ),
    }
    origin = _traced(files, _site("p/opts.py", 4, "build", ("not options.get('path')",)))
    assert origin.kind == "request_field", origin.chain
    assert origin.inputs == ("request: image_path",), origin.chain


def test_methods_of_a_value_are_no_steps_away_from_it() -> None:
    files = {
        "p/mode.py": (
            "def check(options):\n"
            "    m = str(options.get('mode', 'a')).strip().lower()\n"
            "    if m not in ('a', 'b'):\n"
            "        raise ValueError('mode')\n"
            "def relay(o):\n"
            "    return check(o)\n"
            "def route(o):\n"
            "    return relay(o)\n"
            "def hop(o):\n"
            "    return route(o)\n"
            "def serve(req: Req):\n"
            "    return hop({'mode': req.image_path})\n"
        ),
    }
    origin = _traced(files, _site("p/mode.py", 4, "check", ("m not in ('a', 'b')",)))
    assert origin.kind == "request_field", origin.chain


def test_state_named_with_its_holder_is_internal_only_through_that_holder() -> None:
    files = {
        "p/prep.py": (
            "from p.env import envs\n"
            "def prep(forward_batch, idx, req: Req):\n"
            "    if idx.shape[0] != forward_batch.batch_size:\n"
            "        raise ValueError('bad indices')\n"
            "    if req.batch_size > 4:\n"
            "        raise ValueError('too many')\n"
        ),
        "p/io.py": "class Req:\n    image_path: str = ''\n    batch_size: int = 1\n",
    }
    held = _traced(
        files, _site("p/prep.py", 4, "prep", ("idx.shape[0] != forward_batch.batch_size",))
    )
    assert held.kind == "internal", held.chain
    assert any("state the code sets as it runs" in step for step in held.chain), held.chain
    # the same name read through the request is the request's
    request = _traced(files, _site("p/prep.py", 6, "prep", ("req.batch_size > 4",)))
    assert request.kind == "request_field", request.chain


def test_a_flag_that_may_also_set_a_value_gives_way_to_the_class_the_message_names() -> None:
    files = {
        "p/registry.py": (
            "from p.args import ServerArgs\n"
            "def resolve(architectures):\n"
            "    if architectures not in ('A',):\n"
            "        raise ValueError(f'Model architectures {architectures} are not supported')\n"
            "def load(hf_config):\n"
            "    return resolve(hf_config.architectures)\n"
            "def override(server_args: ServerArgs):\n"
            "    return resolve(server_args.page_size)\n"
        ),
    }
    site = _site("p/registry.py", 4, "resolve", ("architectures not in ('A',)",))
    named = replace(site, template=Template((Segment("placeholder", "architectures"),), "f"))
    assert _traced(files, site).kind == "flag"  # the first class in ORDER
    forget()  # the origin kept for the site by its key (the same file, another message)
    origin = _traced(files, named)
    assert origin.kind == "model_config", origin
    assert "--page-size" in origin.inputs  # still named among the inputs


def test_a_call_runs_the_function_its_module_defines_or_imports_not_a_namesake() -> None:
    # `get_backend` is defined in three modules: an unrelated one that sorts first returns a
    # constant; the module the check imports it from returns a flag; the check's own module
    # defines its own (in `q/own.py`), which returns the environment variable.
    files = {
        "a/__init__.py": "",
        "a/aaa.py": "BACKEND = 'auto'\ndef get_backend():\n    return BACKEND\n",
        "p/ctx.py": "def get_backend(server_args):\n    return server_args.page_size\n",
        "p/check.py": (
            "from p.ctx import get_backend\n"
            "def run(server_args):\n"
            "    if get_backend(server_args) > 4:\n"
            "        raise ValueError('too big')\n"
        ),
        "q/__init__.py": "",
        "q/own.py": (
            "from envs import envs\n"
            "def get_backend():\n"
            "    return envs.SGLANG_BACKEND.get()\n"
            "def run():\n"
            "    if get_backend() == 'x':\n"
            "        raise ValueError('no x')\n"
        ),
    }
    imported = _traced(files, _site("p/check.py", 4, "run", ("get_backend(server_args) > 4",)))
    assert imported.kind == "flag" and imported.inputs == ("--page-size",), imported.chain
    own = _traced(files, _site("q/own.py", 6, "run", ("get_backend() == 'x'",)))
    assert own.kind == "environment", own.chain
    assert own.inputs == ("env: SGLANG_BACKEND",), own.chain


def test_a_module_level_name_set_under_the_modules_own_if_follows_its_test() -> None:
    # `pick = None` unless the platform is CUDA: the platform chooses the value
    files = {
        "p/utils.py": "def is_cuda():\n    return True\n",
        "p/indexer.py": (
            "from p.utils import is_cuda\n"
            "_is_cuda = is_cuda()\n"
            "if _is_cuda:\n"
            "    from p.kernels import pick\n"
            "else:\n"
            "    pick = None\n"
            "def run(n):\n"
            "    if pick is None:\n"
            "        raise ValueError('CUDA only')\n"
        ),
    }
    origin = _traced(files, _site("p/indexer.py", 9, "run", ("pick is None",)))
    assert origin.kind == "hardware", origin.chain
    assert any("set when" in step and "_is_cuda" in step for step in origin.chain), origin.chain


def test_a_typed_value_no_constructor_call_shows_is_followed_through_the_callers() -> None:
    # `Sampler` is built by a decoder (`msgspec.convert(..., type=Sampler)`), never by a call of
    # the class: what `_validate`'s caller passes shows where it comes from, through the
    # function of a plainly imported module
    files = {
        "p/sampler.py": (
            "import msgspec\n"
            "class Sampler:\n"
            "    t: float = 1.0\n"
            "def _validate(sampler: Sampler):\n"
            "    if sampler.t <= 0:\n"
            "        raise ValueError('t must be positive')\n"
            "def parse(hf_config):\n"
            "    sampler = msgspec.convert(hf_config.sampler, type=Sampler)\n"
            "    _validate(sampler)\n"
        ),
    }
    origin = _traced(files, _site("p/sampler.py", 6, "_validate", ("sampler.t <= 0",)))
    assert origin.kind == "model_config", origin.chain
    assert origin.inputs == ("config.json: sampler",), origin.chain


def test_a_plainly_imported_module_is_another_packages() -> None:
    from errkb.ingest.origins.snapshot_index import SnapshotIndex

    text = "import msgspec\nimport torch.nn.functional as F\nimport p.args\nfrom p import io\n"
    index = SnapshotIndex.of([*BASE.items(), ("p/use.py", text)])
    assert index.foreign("p/use.py", "msgspec") and index.foreign("p/use.py", "F")
    assert index.imports("p/use.py", "msgspec")  # a receiver named by an import
    assert not index.foreign("p/use.py", "p") and not index.foreign("p/use.py", "io")


def test_keywords_beside_a_calls_arguments_are_not_where_its_value_comes_from() -> None:
    # `pin_memory=` sets how the tensor is made; its data is the request's
    files = {
        "p/batch.py": (
            "import torch\n"
            "from envs import envs\n"
            "from p.io import Req\n"
            "def lens(req: Req):\n"
            "    pin = envs.SGLANG_PIN.get()\n"
            "    seq = torch.tensor(req.image_path, dtype=torch.int64, pin_memory=pin)\n"
            "    if seq.sum() > 4:\n"
            "        raise ValueError('too long')\n"
        ),
    }
    origin = _traced(files, _site("p/batch.py", 8, "lens", ("seq.sum() > 4",)))
    assert origin.kind == "request_field", origin.chain
    assert origin.inputs == ("request: image_path",), origin.chain


def test_a_package_test_of_the_machine_is_the_hardware() -> None:
    files = {
        "p/pool.py": (
            "from p.utils import is_pin_memory_available\n"
            "def alloc(n):\n"
            "    if not is_pin_memory_available():\n"
            "        raise RuntimeError('pinned memory is needed')\n"
        ),
        "p/utils.py": "def is_pin_memory_available():\n    return True\n",
    }
    origin = _traced(files, _site("p/pool.py", 4, "alloc", ("not is_pin_memory_available()",)))
    assert origin.kind == "hardware", origin.chain


def test_the_operating_system_a_check_reads_is_the_machine() -> None:
    files = {
        "p/tree.py": (
            "import sys\n"
            "def build():\n"
            "    if sys.platform != 'linux':\n"
            "        raise RuntimeError('the extension supports Linux only')\n"
        ),
    }
    origin = _traced(files, _site("p/tree.py", 4, "build", ("sys.platform != 'linux'",)))
    assert origin.kind == "hardware", origin.chain
    assert origin.inputs == ("hardware: the operating system or CPU",), origin.inputs
