"""Who calls a method, when its name is written for many classes: a call whose arguments cannot
bind to the signature is another function's, and `x.forward(...)` of an unrelated object (a
compiled kernel's) is not the model's `forward`, while `self.attn_backend.forward(...)` is the
backend's. A check whose only spots of that name were left out is not said to have no caller."""

from __future__ import annotations

from errkb.core.origin import Origin
from errkb.core.records import Condition, FlagDef, Site, Snippet, Template, Vocabulary
from errkb.ingest.origins.calls import fits
from errkb.ingest.origins.module_facts import Func
from errkb.ingest.origins.snapshot_origins import snapshot_origins

VOCAB = Vocabulary(env_helpers=("envs",))
FLAGS = [FlagDef(("--eps",), "eps", "float", "1", None, None, "p/args.py", 2, "dataclass")]
# `forward` defined in more modules than COMMON_METHOD, so that a receiver's name matters
OTHERS = {
    f"p/other{i}.py": f"class Other{i}:\n    def forward(self, a, b, c):\n        return a\n"
    for i in range(8)
}
FILES = {
    **OTHERS,
    "p/args.py": "class ServerArgs:\n    eps: float = 1.0\n",
    "p/model.py": (
        "class Model:\n"
        "    def forward(self, ids, proxy=None):\n"
        "        if proxy < 0:\n"
        "            raise ValueError('proxy')\n"
    ),
    # a compiled kernel's `forward`: two positional arguments fit `Model.forward` by count
    "p/kernel.py": (
        "def run(server_args):\n"
        "    module = load_kernel()\n"
        "    module.forward(1, server_args.eps)\n"
    ),
    "p/backend.py": (
        "class Backend:\n"
        "    def forward(self, q, layer):\n"
        "        if layer < 0:\n"
        "            raise ValueError('layer')\n"
    ),
    "p/attention.py": (
        "class Attention:\n"
        "    def __init__(self, attn_backend):\n"
        "        self.attn_backend = attn_backend\n"
        "    def run(self, q, server_args):\n"
        "        return self.attn_backend.forward(q, server_args.eps)\n"
    ),
}


def _site(path: str, line: int, qualname: str, test: str) -> Site:
    conditions = (Condition("if", test, True, line - 1),)
    snippet = Snippet(line, (), line, line)
    return Site(
        "ValueError", Template((), "none"), path, line, line, qualname, conditions, snippet, ""
    )


def _origin(files: dict[str, str], site: Site) -> Origin:
    origin = snapshot_origins(files, [site], FLAGS, VOCAB, ("ServerArgs",))[0]
    assert origin is not None
    return origin


def test_a_kernels_forward_in_an_unrelated_module_is_not_the_models() -> None:
    origin = _origin(FILES, _site("p/model.py", 4, "Model.forward", "proxy < 0"))
    assert origin.inputs == (), origin  # not the flag the kernel's call passes
    assert origin.callers == -1, origin  # not "no call was found": they could not be told apart
    assert any("other classes'" in step for step in origin.chain), origin.chain


def test_a_receiver_named_by_the_class_noun_is_a_call_of_that_class() -> None:
    origin = _origin(FILES, _site("p/backend.py", 4, "Backend.forward", "layer < 0"))
    assert origin.kind == "flag" and origin.inputs == ("--eps",), origin


def test_a_module_that_names_the_class_calls_it() -> None:
    files = {
        **FILES,
        # (the model's file changed too: an unchanged file's site keeps the origin traced
        # before, in this process, whatever its callers are now; see `kept.site_key`)
        "p/model.py": FILES["p/model.py"] + "# called by the runner\n",
        "p/runner.py": (
            "from p.model import Model\n"
            "def go(m: Model, server_args):\n"
            "    m.forward(1, proxy=server_args.eps)\n"
        ),
    }
    origin = _origin(files, _site("p/model.py", 4, "Model.forward", "proxy < 0"))
    assert origin.inputs == ("--eps",), origin


def test_a_call_that_cannot_bind_to_the_signature_is_another_functions() -> None:
    func = Func("Model.forward", "Model", ("self", "ids", "proxy"), (), 2, 4, defaults=())
    assert fits("m.forward(1, 2)", func)
    assert not fits("m.forward(1, 2, 3)", func)  # one position too many
    assert not fits("m.forward(1, bias=2)", func)  # a keyword it does not take
    assert not fits("m.forward()", func)  # leaves out what it needs
    assert fits("m.forward(*args)", func) and fits("m.forward(**kw)", func)
    spread = Func("f", "", ("a",), (), 2, 4, star=("args", "kwargs"))
    assert fits("f(1, 2, 3, b=4)", spread)


def test_an_assert_that_state_the_code_builds_is_set_is_internal_on_a_path_a_flag_chooses() -> None:
    files = {
        **FILES,
        "p/cache.py": (
            "class Cache:\n"
            "    def __init__(self):\n"
            "        self.host = connect_host()\n"
            "    def evict(self, server_args):\n"
            "        if server_args.eps > 1:\n"
            "            assert self.host is not None\n"
        ),
    }
    site = Site(
        "AssertionError",
        Template((), "none"),
        "p/cache.py",
        6,
        6,
        "Cache.evict",
        (Condition("if", "server_args.eps > 1", True, 5),),
        Snippet(6, (), 6, 6),
        "",
        kind="assert",
        check="self.host is not None",
    )
    origin = _origin(files, site)
    assert origin.kind == "internal", origin  # not "--eps refuses that combination"
    assert origin.path_inputs == ("--eps",), origin  # the way around it


def test_a_function_handed_on_by_its_name_is_not_said_to_have_no_caller() -> None:
    files = {
        **FILES,
        "p/hooks/moe.py": (
            "def handle_moe(server_args):\n"
            "    if server_args.eps > 1:\n"
            "        raise ValueError('moe')\n"
            "def orphan(server_args):\n"
            "    if server_args.eps > 2:\n"
            "        raise ValueError('orphan')\n"
        ),
        "p/hooks/pipeline.py": (
            "from p.hooks.moe import handle_moe\n"
            "HOOKS = [handle_moe]\n"
            "def run(server_args):\n"
            "    for hook in HOOKS:\n"
            "        hook(server_args)\n"
        ),
    }
    handed = _origin(files, _site("p/hooks/moe.py", 3, "handle_moe", "server_args.eps > 1"))
    assert handed.callers == -1, handed  # called through the list: not "no call found"
    orphan = _origin(files, _site("p/hooks/moe.py", 6, "orphan", "server_args.eps > 2"))
    assert orphan.callers == 0, orphan


def test_a_test_that_chooses_between_computed_values_is_not_the_values_origin() -> None:
    files = {
        **FILES,
        "p/pick.py": (
            "class Pick:\n"
            "    def run(self, server_args):\n"
            "        meta = self.build() if server_args.eps > 1 else self.other()\n"
            "        if meta < 0:\n"
            "            raise ValueError('meta')\n"
            "        dtype = 'bf16' if server_args.eps > 1 else 'fp32'\n"
            "        if dtype == 'bf16':\n"
            "            raise ValueError('dtype')\n"
        ),
    }
    computed = _origin(files, _site("p/pick.py", 5, "Pick.run", "meta < 0"))
    assert "--eps" not in computed.inputs, computed  # the test only picks one of two results
    written = _origin(files, _site("p/pick.py", 8, "Pick.run", "dtype == 'bf16'"))
    assert written.inputs == ("--eps",), written  # two literals: the test is the value's origin
