"""The value-origin index through the ways values travel in a large project: `**kwargs` handed on
to a base class, a parameter every caller leaves at its default, `getattr(cfg, "x")`, a tuple
unpacked from a call, a field of an object built on the spot, a function that returns one of
its constants under a test, `super(Cls, self).__init__`, a class called through a name it was
assigned to, a container the class fills itself, calls that call themselves, a length the code
fixes, `[a] * n`, a called function's parameters bound to that call's arguments, a check a debug
switch turns on, and a trace that ends where it cannot read.

Each case is a small snapshot of a few modules; each test names the class and the input found,
so a trace that stops early, takes a wrong turn or loops fails.
"""

from __future__ import annotations

from errkb.core.origin import Origin
from errkb.core.records import Condition, FlagDef, Segment, Site, Snippet, Template, Vocabulary
from errkb.ingest.origins.snapshot_origins import snapshot_origins

VOCAB = Vocabulary(env_helpers=("envs",), model_config_names=("hf_config",))
FLAGS = [
    FlagDef(("--page-size",), "page_size", "int", "1", None, None, "p/args.py", 2, "dataclass")
]
FILES = {
    "p/args.py": "class ServerArgs:\n    page_size: int = 1\n",
    # `**kwargs` handed on to the base class, whose constructor the caller names through an alias
    "p/pool.py": (
        "class Base:\n"
        "    def __init__(self, size, page_size):\n"
        "        self.page_size = page_size\n"
        "    def write(self):\n"
        "        if self.page_size <= 0:\n"
        "            raise ValueError('page size')\n"
        "class Npu(Base):\n"
        "    def __init__(self, *args, **kwargs):\n"
        "        super(Base, self).__init__(*args, **kwargs)\n"
    ),
    "p/build.py": (
        "from p.pool import Npu\n"
        "def build(server_args):\n"
        "    pool_cls = Npu\n"
        "    return pool_cls(size=4, page_size=server_args.page_size)\n"
    ),
    # a parameter every caller leaves at its default
    "p/adapter.py": (
        "class Adapter:\n"
        "    def forward(self, q, sinks=None):\n"
        "        if sinks is not None:\n"
        "            raise NotImplementedError('no sinks')\n"
        "def run(a: Adapter, q):\n"
        "    a.forward(q)\n"
        "    a.forward(q * 2)\n"
    ),
    # `getattr(hf_config, "x")` read through a helper's call, then `.get("k")`
    "p/proc.py": (
        "class Proc:\n"
        "    def __init__(self, hf_config):\n"
        "        pc = self._norm(getattr(hf_config, 'processor_config', {}))\n"
        "        self.stamps = pc.get('use_stamps', False)\n"
        "    def video(self):\n"
        "        if not self.stamps:\n"
        "            raise NotImplementedError('needs stamps')\n"
    ),
    # a tuple unpacked from a function that returns constants under an environment test
    "p/dtypes.py": (
        "import envs\n"
        "import torch\n"
        "def state_dtypes():\n"
        "    name = envs.SGLANG_STATE_DTYPE.get()\n"
        "    if name == 'fp32':\n"
        "        return torch.float32, torch.float32\n"
        "    return torch.bfloat16, torch.bfloat16\n"
        "def make():\n"
        "    a, b = state_dtypes()\n"
        "    check(a)\n"
        "def check(dtype):\n"
        "    assert dtype == torch.float32\n"
    ),
    # a field of an object built on the spot: only its own argument counts
    "p/plan.py": (
        "from p.args import ServerArgs\n"
        "class Spec:\n"
        "    site: str\n"
        "    shared: bool\n"
        "class Plan:\n"
        "    def __init__(self, server_args: ServerArgs):\n"
        "        self.spec = Spec('gate', server_args.page_size > 1)\n"
        "    def check(self):\n"
        "        if self.spec.site != 'gate':\n"
        "            raise ValueError('bad site')\n"
    ),
    # a container the class fills itself, created under a flag's test
    "p/encoder.py": (
        "class Encoder:\n"
        "    def __init__(self, server_args):\n"
        "        if server_args.page_size > 1:\n"
        "            self._results = {}\n"
        "    def send(self, rid):\n"
        "        if 'error' in self._results[rid]:\n"
        "            raise RuntimeError('failed')\n"
    ),
    # methods that call themselves through their callers
    "p/loops.py": (
        "class A:\n"
        "    def step(self, layer):\n"
        "        assert layer.ready\n"
        "    def run(self, layer):\n"
        "        self.step(layer)\n"
        "        self.run(layer)\n"
    ),
}


def _site(path: str, line: int, qualname: str, conds: tuple[str, ...], check: str = "") -> Site:
    kind = "assert" if check else "raise"
    return Site(
        "AssertionError" if check else "ValueError",
        Template((), "none"),
        path,
        line,
        line,
        qualname,
        tuple(Condition("if", c, True, line - 1) for c in conds),
        Snippet(line, (), line, line),
        "",
        kind=kind,
        check=check,
    )


def _origin(site: Site) -> Origin:
    origin = snapshot_origins(FILES, [site], FLAGS, VOCAB, ("ServerArgs",))[0]
    assert origin is not None
    return origin


def test_kwargs_handed_on_to_a_base_class_reach_the_callers_flag() -> None:
    origin = _origin(_site("p/pool.py", 6, "Base.write", ("self.page_size <= 0",)))
    assert origin.kind == "flag", origin.chain
    assert origin.inputs == ("--page-size",)
    assert any("handed on by Npu.__init__" in step for step in origin.chain)


def test_a_parameter_every_caller_leaves_at_its_default_is_the_default() -> None:
    origin = _origin(_site("p/adapter.py", 4, "Adapter.forward", ("sinks is not None",)))
    assert origin.kind == "internal", origin.chain
    assert any("left at its default" in step for step in origin.chain)


def test_getattr_and_get_of_the_model_config_are_the_model_config() -> None:
    origin = _origin(_site("p/proc.py", 7, "Proc.video", ("not self.stamps",)))
    assert origin.kind == "model_config", origin.chain
    assert origin.inputs == ("config.json: processor_config",)


def test_a_value_a_function_returns_under_an_environment_test_is_the_environment() -> None:
    origin = _origin(_site("p/dtypes.py", 12, "check", (), check="dtype == torch.float32"))
    assert origin.kind == "environment", origin.chain
    assert origin.inputs == ("env: SGLANG_STATE_DTYPE",)


def test_a_field_of_an_object_built_on_the_spot_reads_only_its_own_argument() -> None:
    origin = _origin(_site("p/plan.py", 10, "Plan.check", ("self.spec.site != 'gate'",)))
    # the flag is given to another field of the same object: not what the check compares
    assert origin.kind == "internal", origin.chain
    assert origin.inputs == ()


def test_a_container_the_class_fills_itself_is_internal_whatever_test_creates_it() -> None:
    site = _site("p/encoder.py", 7, "Encoder.send", ("'error' in self._results[rid]",))
    origin = _origin(site)
    assert origin.kind in ("internal", "unknown"), origin.chain
    assert "--page-size" not in origin.inputs
    assert any("a container Encoder fills itself" in step for step in origin.chain)


def test_calls_in_a_cycle_end() -> None:
    origin = _origin(_site("p/loops.py", 3, "A.step", (), check="layer.ready"))
    assert origin.kind in ("internal", "unknown")
    assert len(origin.chain) <= 8


def test_loop_names_kwargs_keys_and_message_values_are_followed() -> None:
    files = {
        **FILES,
        "p/loop.py": (
            "def check(server_args):\n"
            "    for size in [server_args.page_size]:\n"
            "        if size <= 0:\n"
            "            raise ValueError('size')\n"
            "def pick(**kwargs):\n"
            "    size = kwargs.pop('size', None)\n"
            "    if size <= 0:\n"
            "        raise ValueError('size')\n"
            "def go(server_args):\n"
            "    pick(size=server_args.page_size)\n"
            "def unknown_mode(mode):\n"
            "    raise ValueError(f'unknown {mode}')\n"
            "def start(server_args):\n"
            "    unknown_mode(server_args.page_size)\n"
        ),
    }
    loop = _site("p/loop.py", 4, "check", ("size <= 0",))
    kwargs = _site("p/loop.py", 8, "pick", ("size <= 0",))
    message = Site(
        **{
            **_site("p/loop.py", 12, "unknown_mode", ()).__dict__,
            "template": Template(
                (Segment("text", "unknown "), Segment("placeholder", "mode")), "fstring"
            ),
        }
    )
    for site in (loop, kwargs, message):
        origin = snapshot_origins(files, [site], FLAGS, VOCAB, ("ServerArgs",))[0]
        assert origin is not None
        assert origin.inputs == ("--page-size",), (site.qualname, origin.chain)


def test_a_field_of_a_model_config_class_nobody_builds_is_the_model_config() -> None:
    files = {
        **FILES,
        "p/config.py": (
            "from transformers import PretrainedConfig\n"
            "class MyConfig(PretrainedConfig):\n"
            "    def __init__(self, window=None, **kwargs):\n"
            "        if window is not None and window < 0:\n"
            "            raise ValueError('window')\n"
        ),
    }
    vocab = Vocabulary(model_config_bases=("PretrainedConfig",))
    site = _site("p/config.py", 5, "MyConfig.__init__", ("window is not None and window < 0",))
    origin = snapshot_origins(files, [site], FLAGS, vocab, ("ServerArgs",))[0]
    assert origin is not None and origin.kind == "model_config", origin
    assert origin.inputs == ("config.json: window",)


def test_a_raise_whose_check_compares_only_the_codes_own_state_is_internal() -> None:
    # the container is the class's own; the flag only chooses the path: the way around it
    site = _site("p/encoder.py", 7, "Encoder.send", ("'error' in self._results[rid]",))
    files = {
        **FILES,
        "p/encoder.py": (
            "class Encoder:\n"
            "    def __init__(self, server_args):\n"
            "        self._results = {}\n"
            "    def send(self, rid, server_args):\n"
            "        if server_args.page_size > 1:\n"
            "            if 'error' in self._results[rid]:\n"
            "                raise RuntimeError('failed')\n"
        ),
    }
    site = _site("p/encoder.py", 7, "Encoder.send", ("server_args.page_size > 1",))
    site = Site(
        **{
            **site.__dict__,
            "conditions": (
                Condition("if", "server_args.page_size > 1", True, 5),
                Condition("if", "'error' in self._results[rid]", True, 6),
            ),
        }
    )
    origin = snapshot_origins(files, [site], FLAGS, VOCAB, ("ServerArgs",))[0]
    assert origin is not None and origin.kind == "internal", origin
    assert origin.path_inputs == ("--page-size",)


def _traced(files: dict[str, str], site: Site) -> Origin:
    origin = snapshot_origins({**FILES, **files}, [site], FLAGS, VOCAB, ("ServerArgs",))[0]
    assert origin is not None
    return origin


LINEAR = {
    # a layer built with a list the code writes out; the check reads only the list's length
    "p/linear.py": (
        "class Linear:\n"
        "    def __init__(self, size, sizes, server_args):\n"
        "        self.part_sizes = [size // server_args.page_size]\n"
        "        if sizes:\n"
        "            self.part_sizes = [s // server_args.page_size for s in sizes]\n"
        "def build(server_args, hidden):\n"
        "    return Linear(1, [hidden] * 3, server_args)\n"
        "def split(linear: Linear):\n"
        "    sizes = linear.part_sizes\n"
        "    if len(sizes) != 3:\n"
        "        raise ValueError('three shards')\n"
        "    if sizes[0] > 4:\n"
        "        raise ValueError('too wide')\n"
    ),
}


def test_a_length_the_code_fixes_is_internal_whatever_the_entries_hold() -> None:
    origin = _traced(LINEAR, _site("p/linear.py", 11, "split", ("len(sizes) != 3",)))
    assert origin.kind == "internal", origin.chain
    assert any("len([hidden] * 3)" in s for s in origin.chain), origin.chain
    assert any("a list the code builds with 1 entry" in s for s in origin.chain), origin.chain
    # the same list's entries are divided by the flag: a check of an entry reads it
    entry = _traced(LINEAR, _site("p/linear.py", 13, "split", ("sizes[0] > 4",)))
    assert entry.kind == "flag" and entry.inputs == ("--page-size",), entry.chain


def test_a_list_repeated_n_times_holds_its_entries_not_n() -> None:
    files = {
        "p/slots.py": (
            "class Pool:\n"
            "    def __init__(self, server_args):\n"
            "        self.slots = [None] * server_args.page_size\n"
            "    def get(self, i):\n"
            "        slot = self.slots[i]\n"
            "        assert slot is not None\n"
        ),
    }
    origin = _traced(files, _site("p/slots.py", 6, "Pool.get", (), check="slot is not None"))
    assert origin.kind == "internal", origin.chain
    assert "--page-size" not in origin.inputs


def test_a_called_functions_parameters_are_that_calls_arguments() -> None:
    files = {
        "p/divide.py": (
            "def divide(a, b):\n"
            "    return a // b\n"
            "def layer(server_args):\n"
            "    return divide(server_args.page_size, 2)\n"
            "def narrow(width):\n"
            "    n = divide(width, 4)\n"
            "    if n > 8:\n"
            "        raise ValueError('wide')\n"
            "def start():\n"
            "    narrow(64)\n"
        ),
    }
    origin = _traced(files, _site("p/divide.py", 8, "narrow", ("n > 8",)))
    # another caller of `divide` passes the flag; this call passes a literal and a width
    assert "--page-size" not in origin.inputs, origin.chain
    assert origin.kind == "internal", origin.chain


def test_a_check_that_a_debug_switch_turns_on_is_internal_with_the_switch_as_way_around() -> None:
    files = {
        "p/alloc.py": (
            "import envs\n"
            "class Alloc:\n"
            "    def __init__(self):\n"
            "        self.debug = envs.SGLANG_DEBUG_POOL.get()\n"
            "        self.free = []\n"
            "    def alloc(self, n):\n"
            "        out = self.take(n)\n"
            "        if self.debug:\n"
            "            assert len(set(out)) == len(out)\n"
        ),
    }
    site = _site("p/alloc.py", 9, "Alloc.alloc", ("self.debug",), check="len(set(out)) == len(out)")
    origin = _traced(files, site)
    assert origin.kind == "internal", origin.chain
    assert origin.path_inputs == ("env: SGLANG_DEBUG_POOL",)
    # a switch that is not a debug switch still decides
    plain = {"p/alloc.py": files["p/alloc.py"].replace("DEBUG_POOL", "FAST_POOL")}
    assert _traced(plain, site).kind == "environment"


def test_a_trace_that_ends_at_a_call_it_cannot_read_proves_nothing() -> None:
    files = {
        "p/opaque.py": (
            "class Req:\n"
            "    def __init__(self, **kwargs):\n"
            "        self.latents = kwargs.get('latents')\n"
            "def make(*args):\n"
            "    return Req(*args)\n"
            "def decode(batch: Req, server_args):\n"
            "    if server_args.page_size > 1:\n"
            "        assert batch.latents is not None\n"
        ),
    }
    path = ("server_args.page_size > 1",)
    site = _site("p/opaque.py", 8, "decode", path, check="batch.latents is not None")
    origin = _traced(files, site)
    assert origin.kind != "internal", origin.chain


def test_a_comprehension_reads_what_it_loops_over() -> None:
    files = {
        "p/times.py": (
            "def validate(server_args):\n"
            "    ts = [server_args.page_size]\n"
            "    if any(t <= 0 or not finite(t) for t in ts):\n"
            "        raise ValueError('times')\n"
        ),
    }
    site = _site("p/times.py", 4, "validate", ("any(t <= 0 or not finite(t) for t in ts)",))
    origin = _traced(files, site)
    assert origin.kind == "flag" and origin.inputs == ("--page-size",), origin.chain
    assert not any("`t`" in s for s in origin.chain), origin.chain


def test_a_group_accessors_field_is_the_flag_of_the_group_and_field() -> None:
    flags = [
        *FLAGS,
        FlagDef(
            ("--moe-runner-backend",),
            "moe_runner_backend",
            "str",
            "auto",
            None,
            None,
            "p/args.py",
            3,
            "dataclass",
        ),
    ]
    files = {
        # methods of the same name are defined in more files than the function itself
        **{
            f"p/m{i}.py": f"class M{i}:\n    def get_backend(self):\n        return 1\n"
            for i in range(4)
        },
        "p/moe.py": (
            "def get_backend():\n"
            "    moe = get_flags().moe\n"
            "    return moe.runner_backend\n"
            "class Method:\n"
            "    def __init__(self):\n"
            "        self.marlin = get_backend().is_marlin()\n"
            "    def apply(self, out):\n"
            "        if self.marlin:\n"
            "            assert out.standard\n"
        ),
    }
    site = _site("p/moe.py", 9, "Method.apply", ("self.marlin",), check="out.standard")
    origin = snapshot_origins({**FILES, **files}, [site], flags, VOCAB, ("ServerArgs",))[0]
    assert origin is not None
    assert "--moe-runner-backend" in (*origin.inputs, *origin.path_inputs), origin.chain


def test_what_an_installed_package_returns_is_the_package() -> None:
    files = {
        "p/__init__.py": "",
        "p/transfer.py": (
            "from nixl._api import nixl_agent\n"
            "from p.pool import Base\n"
            "class Manager:\n"
            "    def __init__(self):\n"
            "        self.agent = nixl_agent('name')\n"
            "    def send(self, plan):\n"
            "        handle = self.agent.make_xfer(plan)\n"
            "        if not handle:\n"
            "            raise RuntimeError('no handle')\n"
        ),
    }
    origin = _traced(files, _site("p/transfer.py", 9, "Manager.send", ("not handle",)))
    assert origin.kind == "dependency" and origin.inputs == ("package: nixl",), origin.chain
    # the project's own package is not an installed one
    own = {**files, "p/transfer.py": files["p/transfer.py"].replace("nixl._api", "p.pool")}
    assert _traced(own, _site("p/transfer.py", 9, "Manager.send", ("not handle",))).kind != (
        "dependency"
    )


def test_a_check_that_needs_a_flag_off_for_a_value_set_only_with_it_on_is_internal() -> None:
    files = {
        "p/mis.py": (
            "from p.args import ServerArgs\n"
            "class Batch:\n"
            "    def __init__(self, server_args: ServerArgs):\n"
            "        self.marks = None\n"
            "        if server_args.page_size:\n"
            "            self.marks = [1]\n"
            "class Backend:\n"
            "    def __init__(self, server_args: ServerArgs):\n"
            "        self.paged = server_args.page_size\n"
            "    def init(self, batch: Batch):\n"
            "        if batch.marks is not None:\n"
            "            if not self.paged:\n"
            "                raise ValueError('needs --page-size')\n"
        ),
    }
    conds = ("batch.marks is not None", "not self.paged")
    origin = _traced(files, _site("p/mis.py", 13, "Backend.init", conds))
    assert origin.kind == "internal", origin.chain
    assert origin.chain[0].startswith("the check needs --page-size off"), origin.chain
    # the same check without the value set only under the flag is the flag's
    plain = {
        "p/mis.py": files["p/mis.py"].replace(
            "        if server_args.page_size:\n", "        if True:\n"
        )
    }
    assert _traced(plain, _site("p/mis.py", 13, "Backend.init", conds)).kind == "flag"
