"""The value-origin index: a guard's values followed across modules to the input they come from.

Each case is a small snapshot of several modules, shaped like sglang's: settings fields, a hook,
an accessor, a kernel called by a backend, a request class. The checks name the class found and
the chain that shows it, so a trace that stops early or takes a wrong turn fails.
"""

from __future__ import annotations

from errkb.core.origin import Origin
from errkb.core.records import Condition, FlagDef, Site, Snippet, Template, Vocabulary
from errkb.ingest.origins.snapshot_origins import snapshot_origins

VOCAB = Vocabulary(
    request_classes=("*/io.py:GenerateReq",),
    env_helpers=("envs", "get_bool_env_var"),
    model_config_names=("hf_config",),
)
FLAGS = [
    FlagDef(("--page-size",), "page_size", "int", "1", None, None, "p/args.py", 3, "dataclass"),
    FlagDef(
        ("--enable-mis",), "enable_mis", "bool", "False", None, None, "p/args.py", 4, "dataclass"
    ),
]
FILES = {
    "p/args.py": (
        "class ServerArgs:\n    x: int = 0\n    page_size: int = 1\n    enable_mis: bool = False\n"
    ),
    "p/io.py": "class GenerateReq:\n    rollout: bool = False\n    text: str = ''\n",
    "p/pool.py": (
        "from p.kernels import scatter\n"
        "class Pool:\n"
        "    def __init__(self, server_args):\n"
        "        self.page_size = server_args.page_size\n"
        "        self.buf = make()\n"
        "    def write(self, x):\n"
        "        scatter(x, self.page_size)\n"
        "        scatter(x, self.buf.shape[0])\n"
    ),
    "p/kernels.py": (
        "def scatter(x, page_size):\n"
        "    if page_size <= 0:\n"
        "        raise ValueError('page size')\n"
        "def fused(q, k):\n"
        "    assert q.shape[0] == k.shape[0]\n"
    ),
    "p/backend.py": (
        "from p.kernels import fused\n"
        "class Backend:\n"
        "    def forward(self, q):\n"
        "        k = q.new_empty(q.shape)\n"
        "        fused(q, k)\n"
    ),
    "p/stage.py": (
        "from p.io import GenerateReq\n"
        "def denoise(batch: GenerateReq, image):\n"
        "    if batch.rollout and image is not None:\n"
        "        raise ValueError('rollout supports text only')\n"
    ),
    "p/env.py": (
        "import envs\n"
        "class Layout:\n"
        "    def __init__(self):\n"
        "        if envs.SGLANG_HND.get():\n"
        "            self.layout = 'hnd'\n"
        "        else:\n"
        "            self.layout = 'nhd'\n"
        "    def check(self):\n"
        "        assert self.layout == 'nhd'\n"
    ),
    "p/transfer.py": (
        "import logging\n"
        "logger = logging.getLogger()\n"
        "def send(handle):\n"
        "    if handle is None:\n"
        "        raise RuntimeError('transfer failed')\n"
        "def poll(handle):\n"
        "    try:\n"
        "        send(handle)\n"
        "    except Exception as e:\n"
        "        logger.warning('failed: %s', e)\n"
    ),
    "p/tests/test_pool.py": "from p.kernels import scatter\nscatter(None, 0)\n",
}


def _site(path: str, line: int, qualname: str, conds: tuple[str, ...], check: str = "") -> Site:
    kind = "assert" if check else "raise"
    conditions = tuple(Condition("if", c, True, line - 1) for c in conds)
    return Site(
        "AssertionError" if check else "ValueError",
        Template((), "none"),
        path,
        line,
        line,
        qualname,
        conditions,
        Snippet(line, (), line, line),
        "",
        kind=kind,
        check=check,
    )


def _origin(site: Site) -> Origin:
    origin = snapshot_origins(FILES, [site], FLAGS, VOCAB, ("ServerArgs",))[0]
    assert origin is not None
    return origin


def test_a_parameter_is_followed_to_the_flag_a_caller_in_another_module_passes() -> None:
    origin = _origin(_site("p/kernels.py", 3, "scatter", ("page_size <= 0",)))
    assert origin.kind == "flag"
    assert origin.inputs == ("--page-size",)
    assert any("Pool.write" in step and "server_args.page_size" in step for step in origin.chain)
    assert origin.callers == 2  # the test's call is not a caller


def test_shapes_of_tensors_the_callers_build_are_internal() -> None:
    origin = _origin(_site("p/kernels.py", 5, "fused", (), check="q.shape[0] == k.shape[0]"))
    assert origin.kind == "internal"
    assert origin.inputs == ()


def test_a_typed_receiver_of_a_request_class_is_a_request_field() -> None:
    origin = _origin(_site("p/stage.py", 4, "denoise", ("batch.rollout and image is not None",)))
    assert origin.kind == "request_field"
    assert "request: rollout" in origin.inputs


def test_a_value_chosen_by_an_environment_test_comes_from_the_environment() -> None:
    origin = _origin(_site("p/env.py", 9, "Layout.check", (), check="self.layout == 'nhd'"))
    assert origin.kind == "environment"
    assert origin.inputs == ("env: SGLANG_HND",)


def test_the_project_tests_are_not_traced() -> None:
    assert (
        snapshot_origins(FILES, [_site("p/tests/test_pool.py", 2, "<module>", ())], FLAGS, VOCAB)[0]
        is None
    )


def test_origins_round_trip_through_their_stored_form() -> None:
    origin = _origin(_site("p/kernels.py", 3, "scatter", ("page_size <= 0",)))
    assert Origin.from_json(origin.to_json()) == origin
    assert Origin.from_json({"kind": "nonsense"}) is None
    assert Origin.from_json(None) is None


def test_a_check_every_caller_catches_says_how_the_callers_treat_it() -> None:
    site = _site("p/transfer.py", 5, "send", ("handle is None",))
    site = Site(**{**site.__dict__, "exception": "RuntimeError"})
    origin = _origin(site)
    assert origin.caught == "poll catches it and logs it"
    # a caller that lets it through is not caught
    assert _origin(_site("p/kernels.py", 3, "scatter", ("page_size <= 0",))).caught == ""


def test_a_request_classs_own_field_is_what_the_request_sent_whatever_the_class_adjusts() -> None:
    # the class adjusts `text` under a flag's test; the check of `self.text` is the request's
    files = {
        **FILES,
        "p/io.py": (
            "class GenerateReq:\n"
            "    rollout: bool = False\n"
            "    text: str = ''\n"
            "    def adjust(self, server_args):\n"
            "        if server_args.enable_mis:\n"
            "            self.text = self.text.strip()\n"
            "    def validate(self):\n"
            "        if not self.text:\n"
            "            raise ValueError('text must not be empty')\n"
        ),
    }
    site = _site("p/io.py", 9, "GenerateReq.validate", ("not self.text",))
    origin = snapshot_origins(files, [site], FLAGS, VOCAB, ("ServerArgs",))[0]
    assert origin is not None and origin.kind == "request_field", origin
    assert origin.inputs == ("request: text",), origin  # not --enable-mis
