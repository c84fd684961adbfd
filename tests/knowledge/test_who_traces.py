"""Who hits it, traced from the code: each rule on a small real source shape, extracted by the
real extractor and explained with the default pins' vocabulary (no database)."""

from __future__ import annotations

import textwrap
from dataclasses import replace
from pathlib import Path

from errkb.core.origin import Origin
from errkb.core.records import ExtractConfig
from errkb.core.vocabulary import Vocabulary
from errkb.ingest.extract import extract_file
from errkb.ingest.origins.snapshot_origins import snapshot_origins
from errkb.ingest.pins import load_pins
from errkb.knowledge import Explanation, explain_error
from errkb.knowledge.fixes.origin_fixes import path_flag
from errkb.knowledge.who.decide import decided
from errkb.knowledge.who.evidence import Clue

ROOT = Path(__file__).resolve().parents[2]
VOCAB = load_pins(ROOT / "pins.toml").repo("sgl-project/sglang").vocabulary()
EVERY = ExtractConfig(exceptions=("*",), asserts=True, lookups=("params_dict",))
SRT = "python/sglang/srt/layers/example.py"


def explained(
    source: str, path: str = SRT, exception: str = "ValueError", origin: Origin | None = None
) -> Explanation:
    """The explanation of the one site of `exception` the source raises; `origin`, when given,
    is what the value-origin index found for it."""
    result = extract_file(textwrap.dedent(source).encode(), path, EVERY)
    (site,) = [s for s in result.sites if s.exception == exception]
    if origin is not None:
        site = replace(site, origin=origin)
    return explain_error(site, [], None, project="sglang", vocabulary=VOCAB)


def test_an_assert_is_traced_from_what_it_checks() -> None:
    ex = explained(
        """
        from sglang.srt.environ import envs

        def staging_buffer(n):
            assert not envs.SGLANG_ENABLE_STAGING.get(), "staging is on"
            return n
        """,
        exception="AssertionError",
    )
    assert ex.who_hits_it.kind == "environment"
    assert "SGLANG_ENABLE_STAGING is an environment variable" in ex.who_hits_it.evidence


def test_an_assert_on_the_platform_is_the_hardware() -> None:
    ex = explained(
        """
        from sglang.srt.utils import is_cuda

        def kernel(x):
            assert is_cuda(), "this kernel needs CUDA"
            return x
        """,
        exception="AssertionError",
    )
    assert ex.who_hits_it.kind == "hardware"
    assert any("is_cuda" in e for e in ex.who_hits_it.evidence)


def test_a_local_is_traced_to_the_request_field_it_holds() -> None:
    ex = explained(
        """
        def check(req):
            top_k = req.sampling_params.top_k
            if top_k < -1:
                raise ValueError("bad top_k")
        """
    )
    assert ex.who_hits_it.kind == "request_field"
    assert any("top_k" in e for e in ex.who_hits_it.evidence)


def test_a_check_in_the_projects_tests_is_hit_by_its_test_suite() -> None:
    source = """
        def test_runs(server_args):
            assert server_args.tp_size == 2
        """
    ex = explained(source, "python/sglang/test/runners/test_tp.py", "AssertionError")
    assert ex.who_hits_it.kind == "test"
    assert "test code" in ex.who_hits_it.text and "could not tell" not in ex.who_hits_it.text
    # the same check in the server's own code is traced to the flag it reads
    ex = explained(source, SRT, "AssertionError")
    assert ex.who_hits_it.kind == "flag"


def test_a_self_attribute_is_traced_to_the_server_setting_init_copied() -> None:
    ex = explained(
        """
        class Runner:
            def __init__(self, server_args):
                self.tp_size = server_args.tp_size
                self.pages = []

            def check(self):
                if self.tp_size > 8 and not self.pages:
                    raise ValueError("too many GPUs")
        """
    )
    assert ex.who_hits_it.kind == "flag"
    assert (
        "`server_args.tp_size` is a server setting (tp_size), read through `self.tp_size`"
        in ex.who_hits_it.evidence
    )


def test_a_self_attribute_is_traced_to_the_model_config_of_another_method() -> None:
    ex = explained(
        """
        class Attention:
            def __init__(self, config):
                self.setup(config)

            def setup(self, config):
                self.num_heads = (
                    config.num_attention_heads
                )

            def forward(self, x):
                if self.num_heads % 2:
                    raise ValueError("odd heads")
        """,
        "python/sglang/srt/models/example.py",
    )
    assert ex.who_hits_it.kind == "model_config"
    assert any("read through `self.num_heads`" in e for e in ex.who_hits_it.evidence)


def test_an_attribute_of_another_class_is_not_taken_for_this_ones() -> None:
    ex = explained(
        """
        class Config:
            def __init__(self, server_args):
                self.tp_size = server_args.tp_size

        class Runner:
            def check(self):
                if self.tp_size > 8:
                    raise ValueError("too many GPUs")
        """
    )
    assert not any("read through" in e for e in ex.who_hits_it.evidence)


def test_a_parameter_is_traced_through_its_call_site_to_the_flag_passed() -> None:
    ex = explained(
        """
        def check_tp(tp):
            if tp > 8:
                raise ValueError("too many GPUs")

        def launch(server_args):
            check_tp(server_args.tp_size)
        """
    )
    assert ex.who_hits_it.kind == "flag"
    assert (
        "`server_args.tp_size` is a server setting (tp_size), read through `tp`"
        in ex.who_hits_it.evidence
    )


def test_a_method_parameter_is_traced_through_self_calls_and_the_constructor() -> None:
    ex = explained(
        """
        class Sampler:
            def __init__(self, top_k):
                if top_k < -1:
                    raise ValueError("top_k must be -1 or more")

            def _check(self, name):
                if name not in ("a", "b"):
                    raise KeyError(name)

            def run(self, req):
                self._check(name=req.sampling_params.top_p)

        def make(req):
            return Sampler(req.sampling_params.top_k)
        """
    )
    assert ex.who_hits_it.kind == "request_field"
    assert any("read through `top_k`" in e for e in ex.who_hits_it.evidence)


def test_where_a_tensor_lives_is_not_the_platform_and_amx_is_not_a_package() -> None:
    ex = explained(
        """
        def kernel(page_table):
            assert page_table.is_cuda
        """,
        exception="AssertionError",
    )
    assert ex.who_hits_it.kind != "hardware"
    ex = explained(
        """
        _is_cpu_amx_available = cpu_has_amx_support()

        def process(layer):
            assert _is_cpu_amx_available, "Fp8MoEMethod on CPU requires AMX support"
        """,
        exception="AssertionError",
    )
    assert ex.who_hits_it.kind == "hardware"


def test_a_literal_the_module_passes_is_no_proof_of_an_internal_invariant() -> None:
    ex = explained(
        """
        VALID_N = (1, 2, 4, 8)

        class Router:
            def __init__(self, n_k=4):
                if n_k not in VALID_N:
                    raise ValueError("n_k must be one of VALID_N")

        def build():
            return Router(n_k=4)
        """
    )
    assert ex.who_hits_it.kind == "unknown"


def test_a_check_of_tensors_shapes_and_devices_is_an_internal_invariant_reported_first() -> None:
    ex = explained(
        """
        import torch

        def fused_kernel(a, page_table, out):
            assert a.stride(-1) == 1 and a.shape[0] == out.shape[0]
            assert page_table is None or page_table.is_cuda
            if a.dtype not in (torch.float16, torch.bfloat16):
                raise ValueError("a has the wrong dtype")
        """,
        path="python/sglang/kernels/ops/example.py",
    )
    assert ex.who_hits_it.kind == "internal"
    assert ex.who_hits_it.text.startswith("Nobody's input: this is an internal check")
    assert "(`a.dtype`: " in ex.who_hits_it.text
    assert ex.what_it_means.text.startswith("This is a check inside sglang")
    assert "the shape, type, layout or device of tensors the code builds" in ex.who_hits_it.text
    assert ex.solutions[0].kind == "report"
    # what to include, listed once with one "and"
    assert (
        "Include the sglang version, the full command line or request, the model, the whole "
        "traceback and the environment variables that start with SGLANG_"
    ) in ex.solutions[0].text, ex.solutions[0].text
    asserts = [
        explained(source, exception="AssertionError")
        for source in (
            """
            def launch(a, out):
                assert a.stride(-1) == 1 and a.shape[0] == out.shape[0]
            """,
            """
            def launch(page_table):
                assert page_table is None or page_table.is_cuda
            """,
        )
    ]
    assert [e.who_hits_it.kind for e in asserts] == ["internal", "internal"]


def test_a_tensor_check_that_also_reads_an_input_or_media_is_not_internal() -> None:
    sources = (
        # head_dim may come from anywhere: the check is not proven internal
        "def attend(q, head_dim):\n    assert q.shape[-1] == head_dim\n",
        # a tensor another name stands beside, untraced
        "def attend(q, k):\n    assert q.shape[-1] == k\n",
        # a recording the user sent
        "def encode(audio_segment):\n    assert audio_segment.numel() > 0\n",
        # the message speaks to a user who can change something
        "def attend(q):\n    if q.dtype != 1:\n        raise AssertionError('not supported')\n",
    )
    found = [explained(s, exception="AssertionError").who_hits_it for s in sources]
    assert [w.kind for w in found] == ["unknown", "unknown", "unknown", "unknown"]
    mixed = explained(
        "import torch\n\ndef quantize(w, scale):\n    assert w.dtype == torch.float8_e4m3fn"
        " and scale is not None\n",
        exception="AssertionError",
    ).who_hits_it
    assert mixed.kind == "unknown"
    assert mixed.evidence == ("`w.dtype`, `scale`: not traced to an input",)  # no torch.float8


def test_a_name_read_twice_is_said_once_in_one_sentence() -> None:
    ex = explained(
        """
        from sglang.srt.distributed import get_tensor_model_parallel_world_size

        def check(lm_head):
            tp_size = get_tensor_model_parallel_world_size()
            if lm_head.tp_size != tp_size or tp_size > 8:
                raise ValueError("lm_head TP size does not match the runtime TP size")
        """
    )
    text = ex.who_hits_it.text
    assert ex.who_hits_it.kind == "hardware", text
    assert text.count("`tp_size`") == 1, text
    assert text.startswith("The hardware, platform or parallelism settings in use: "), text
    assert text.count(": ") == 1 or "(--" in text, text


def test_a_copy_of_data_kept_on_the_cpu_is_not_the_hardware() -> None:
    ex = explained(
        """
        def check(self):
            if max(self.verify_lens_cpu) > self.cap:
                raise ValueError("capped layout has a row exceeding the cap")
        """
    )
    assert ex.who_hits_it.kind != "hardware", ex.who_hits_it.text
    assert "hardware" not in ex.who_hits_it.text, ex.who_hits_it.text
    # a test of the platform still is
    platform = explained(
        """
        from sglang.srt.utils import is_cpu

        _is_cpu = is_cpu()

        def check(x):
            if _is_cpu:
                raise ValueError("not supported on CPU")
        """
    )
    assert platform.who_hits_it.kind == "hardware", platform.who_hits_it.text


def test_a_message_that_states_the_hardware_or_the_weights_says_who_when_nothing_is_traced() -> (
    None
):
    hardware = explained(
        """
        def pick_kernel(kernels):
            if not kernels:
                raise RuntimeError(
                    "No MXFP8 GEMM kernel is available on this device. "
                    "MXFP8 requires Blackwell (SM100) with FlashInfer."
                )
        """,
        exception="RuntimeError",
    )
    assert hardware.who_hits_it.kind == "hardware", hardware.who_hits_it.text
    assert "the message says which hardware this code needs" in hardware.who_hits_it.text
    weights = explained(
        """
        def load(self, state):
            missing, unexpected = self.load_state_dict(state, strict=True)
            if missing or unexpected:
                raise RuntimeError(f"audio tower weight mismatch: missing={missing}")
        """,
        exception="RuntimeError",
    )
    assert weights.who_hits_it.kind == "model_config", weights.who_hits_it.text
    # a message about neither leaves it untold
    plain = explained(
        """
        def load(self, state):
            found = self.lookup(state)
            if not found:
                raise RuntimeError("nothing found")
        """,
        exception="RuntimeError",
    )
    assert plain.who_hits_it.kind == "unknown", plain.who_hits_it.text


def test_the_first_solution_is_the_traced_flag_when_no_flag_is_linked_to_the_guard() -> None:
    source = """
        def stage(self, runner):
            if self.topk != 1 and runner.cuda_graph_runner_for_draft_extend is not None:
                raise ValueError("Draft-extend metadata staging requires topk=1")
        """
    chain = (
        "`self.topk` <- set in W.__init__ (w.py) to `get_spec().topk`: a server setting "
        "(--speculative-eagle-topk)",
    )
    ex = explained(source, origin=Origin("flag", ("--speculative-eagle-topk",), chain))
    assert ex.who_hits_it.kind == "flag", ex.who_hits_it.text
    first = ex.solutions[0]
    assert first.kind == "flag" and "--speculative-eagle-topk" in first.text, ex.solutions
    # a CUDA graph runner is an object the code builds, not a test of the platform
    assert not any("GPU or platform" in s.text for s in ex.solutions), ex.solutions
    assert "cuda_graph_runner_for_draft_extend" not in ex.who_hits_it.inputs


def test_the_who_sentence_shows_first_the_step_that_ends_at_its_own_class() -> None:
    source = """
        def prep(cache_indices, B):
            if cache_indices.shape[0] != B and FLAG:
                raise ValueError("bad indices")
        """
    chain = (
        "`B` <- passed by run (r.py) as `n` <- `is_cuda()`: the hardware in use "
        "(hardware: the GPU or platform)",
        "`FLAG` <- `envs.SGLANG_SYNC.get()`: SGLANG_SYNC is an environment variable "
        "(env: SGLANG_SYNC)",
    )
    origin = Origin("environment", ("hardware: the GPU or platform", "env: SGLANG_SYNC"), chain)
    ex = explained(source, origin=origin)
    text = ex.who_hits_it.text
    assert ex.who_hits_it.kind == "environment", text
    lead = "The environment where the server runs (an environment variable, the network): "
    assert text.startswith(lead + "`FLAG` comes from the environment variable SGLANG_SYNC"), text


def test_another_class_the_check_reads_is_said_after_also_once_per_name() -> None:
    source = """
        from sglang.srt.distributed import get_tensor_model_parallel_world_size

        def check(self):
            if self.mode == "cpu" and get_tensor_model_parallel_world_size() != 1:
                raise ValueError("not yet support tp_size!=1")
        """
    chain = (
        "`self.mode` <- set in O.__init__ (o.py) to `get_exec().offload_mode`: a server "
        "setting (--offload-mode)",
    )
    ex = explained(source, origin=Origin("flag", ("--offload-mode",), chain))
    text = ex.who_hits_it.text
    assert ex.who_hits_it.kind == "flag", text
    assert "The check also reads" not in text, text
    assert " Also, `get_tensor_model_parallel_world_size()` follows from the parallelism" in text


def _indexed(source: str, exception: str) -> Explanation:
    """The explanation of the source's one site of `exception`, with the origin the value-origin
    index traces for it over a snapshot of that one module."""
    text = textwrap.dedent(source)
    result = extract_file(text.encode(), SRT, EVERY)
    (site,) = [s for s in result.sites if s.exception == exception]
    (origin,) = snapshot_origins({SRT: text}, [site], [], VOCAB)
    return explained(source, exception=exception, origin=origin)


def test_a_check_under_type_checking_says_it_never_runs() -> None:
    ex = _indexed(
        """
        from typing import TYPE_CHECKING
        from sglang.srt.environ import envs

        def pool(p):
            if TYPE_CHECKING:
                assert envs.SGLANG_POOL.get() == 2
            return p
        """,
        "AssertionError",
    )
    assert ex.who_hits_it.kind == "internal"
    assert ex.what_it_means.text.startswith("This check never runs: it sits under `if TYPE_")
    assert "never runs" in ex.who_hits_it.text and "SGLANG_POOL" not in ex.who_hits_it.text


def test_a_method_left_unimplemented_is_not_called_a_comparison_of_values() -> None:
    ex = _indexed(
        """
        class Engine:
            def pause(self):
                raise NotImplementedError()

        def stop(engine: Engine):
            engine.pause()
        """,
        "NotImplementedError",
    )
    assert ex.who_hits_it.kind == "internal"
    meaning = ex.what_it_means.text
    assert "leaves unimplemented" in meaning and "values it compares" not in meaning
    assert "values it compares" not in ex.who_hits_it.text


def test_a_message_that_names_an_option_is_that_option_when_nothing_is_traced() -> None:
    ex = _indexed(
        """
        class Decode:
            def decode(self, latents):
                if not hasattr(self.vae, "decode_chunk"):
                    raise ValueError(
                        "Streaming decode needs a causal VAE. "
                        "Point --component_paths.vae at the causal VAE weights when streaming."
                    )
                return latents
        """,
        "ValueError",
    )
    assert ex.who_hits_it.kind == "flag", ex.who_hits_it
    assert "the message names --component_paths.vae" in ex.who_hits_it.evidence
    assert ex.what_it_means.text.startswith("The value you gave --component_paths.vae when")
    first = ex.solutions[0]
    assert first.kind == "advice" and first.text.startswith("Point --component_paths.vae at")


def test_a_setting_that_mentions_the_gpu_is_not_the_hardware() -> None:
    ex = explained(
        """
        class Loader:
            def check(self):
                if self.direct_gpu_weight_loading and self.should_cpu_offload_component("dit"):
                    raise ValueError("direct loading needs a GPU-resident DiT; turn offload off")
        """
    )
    assert "the GPU or platform" not in ex.who_hits_it.inputs, ex.who_hits_it
    assert not any(s.text.startswith("Run it on") for s in ex.solutions), ex.solutions


def test_a_model_fix_names_the_config_field_the_index_traced_not_the_attribute() -> None:
    source = """
        class Backend:
            def check(self):
                if self.model_config.head_dim_v != 512:
                    raise ValueError(f"requires d_v=512, got {self.model_config.head_dim_v}")
        """
    chain = ("`self.model_config.head_dim_v`: the model's configuration (config.json: v_head_dim)",)
    ex = explained(source, origin=Origin("model_config", ("config.json: v_head_dim",), chain))
    (fix, *_) = [s for s in ex.solutions if s.kind == "model"]
    assert "config.json (v_head_dim)" in fix.text, fix.text


def test_a_flag_value_that_could_not_be_parsed_is_said_so_not_a_refused_combination() -> None:
    source = """
        import json

        def parse(server_args):
            text = server_args.disaggregation_ib_device or server_args.mooncake_ib_device
            try:
                return json.loads(text)
            except json.JSONDecodeError:
                raise ValueError(f"Invalid JSON mapping: {text}")
        """
    chain = ("`text`: a server setting (--disaggregation-ib-device)",)
    origin = Origin("flag", ("--disaggregation-ib-device", "--mooncake-ib-device"), chain)
    meaning = explained(source, origin=origin).what_it_means.text
    assert meaning.startswith(
        "The value you gave --disaggregation-ib-device or --mooncake-ib-device when you started "
        "sglang could not be read."
    ), meaning
    assert "combination" not in meaning


def test_a_message_about_the_data_a_request_sent_is_the_request_when_nothing_is_traced() -> None:
    ex = _indexed(
        """
        class Processor:
            async def process(self, data):
                try:
                    return self.decode(data)
                except RuntimeError as e:
                    raise ValueError(f"Multimodal data is corrupted or cannot be decoded: {e}")
        """,
        "ValueError",
    )
    assert ex.who_hits_it.kind == "request_field", ex.who_hits_it
    assert ex.what_it_means.text.startswith("The image, video or audio your request sent")
    assert ex.solutions[0].kind == "request_field" and "Send smaller or readable" in (
        ex.solutions[0].text
    )


def test_media_too_large_is_the_request_though_the_trace_reached_only_the_codes_limit() -> None:
    # the index followed the values to the code's own constant and an HTTP response: internal,
    # weakly; the message says what the request sent is too large
    limit = "_MAX_BYTES: a constant"
    searched = "6 callers and assignments followed; none reaches an input"
    ex = explained(
        """
        _MAX_BYTES = 50 * 1024 * 1024

        def download(response):
            declared = response.headers.get("content-length")
            if declared and int(declared) > _MAX_BYTES:
                raise ValueError(f"Remote media exceeds the {_MAX_BYTES} byte download limit")
        """,
        origin=Origin("internal", (), (limit, searched), 1),
    )
    assert ex.who_hits_it.kind == "request_field", ex.who_hits_it
    assert ex.solutions[0].kind == "request_field", ex.solutions
    proven = Origin("internal", (), ("every caller passes a value, never None", limit), 1)
    ex = explained(
        """
        def download(size, limit):
            if size > limit:
                raise ValueError("Remote media exceeds the download limit")
        """,
        origin=proven,
    )
    assert ex.who_hits_it.kind == "internal"  # a proof of the index outweighs the message


def test_a_requirement_on_the_media_a_request_sent_is_the_request_when_nothing_is_traced() -> None:
    ex = _indexed(
        """
        class Processor:
            def normalize(self, waveform):
                if waveform.ndim != 1:
                    raise ValueError(f"Omni audio must be mono, got shape={tuple(waveform.shape)}")
                return waveform
        """,
        "ValueError",
    )
    assert ex.who_hits_it.kind == "request_field", ex.who_hits_it


def test_a_request_fix_says_to_leave_out_a_field_the_guard_needs_absent_not_the_guard() -> None:
    ex = explained(
        """
        import math

        class SimSamplingParams:
            lidar: list | None = None
            fps: float = 10.0

            def check(self, default_fps):
                if self.lidar is not None and not math.isclose(float(self.fps), default_fps):
                    raise ValueError(f"LiDAR requests need fps={default_fps:g}, got {self.fps}.")
        """,
        path="python/sglang/multimodal_gen/configs/sample/sim.py",
    )
    fixes = [s.text for s in ex.solutions if s.kind == "request_field"]
    assert "Leave lidar out of the request." in fixes, fixes
    # the fps test reads as code: the message's words say what it needs
    (fps,) = [f for f in fixes if "fps" in f and "lidar" not in f]
    assert "to what the message asks for: “LiDAR requests need fps=" in fps, fps
    assert "`" not in fps and "is true" not in fps, fps


def test_a_message_about_the_weights_first_says_to_check_the_checkpoint() -> None:
    ex = explained(
        """
        class Model:
            def load_weights(self, weights):
                params = dict(self.named_parameters())
                for name, w in weights:
                    if name not in params:
                        raise ValueError(f"Unexpected vision tower weight: {name}")
        """
    )
    assert ex.who_hits_it.kind == "model_config", ex.who_hits_it
    assert ex.solutions[0].text.startswith("Check the checkpoint's weights"), ex.solutions[0]


def test_advice_that_prints_a_list_says_so_instead_of_the_expression() -> None:
    ex = explained(
        """
        class TaskType:
            @classmethod
            def parse(cls, value):
                if value not in cls.__members__:
                    raise ValueError(f"Unknown task {value!r}; choose from {[t.name for t in cls]}")
        """
    )
    advice = [s.text for s in ex.solutions if s.kind == "advice"]
    assert advice == ["Choose from the values the message lists"], advice


def test_a_message_that_says_which_variable_to_set_addresses_the_user_not_a_bug() -> None:
    searched = "19 callers and assignments followed; none reaches an input"
    ex = explained(
        """
        def init_shapes(targets, fused):
            if targets and fused:
                raise ValueError(
                    "LoRA targets the indexer, which is incompatible with fusion. "
                    "Set SGLANG_DISABLE_FUSION=1 to disable fusion."
                )
        """,
        origin=Origin("internal", (), (searched,), 2),
    )
    assert ex.who_hits_it.kind == "environment", ex.who_hits_it
    assert "SGLANG_DISABLE_FUSION set where sglang starts" in ex.what_it_means.text
    assert ex.solutions[0].text.startswith("Set SGLANG_DISABLE_FUSION=1"), ex.solutions[0]


def test_a_parenthesis_that_spells_out_a_name_is_not_the_reason() -> None:
    ex = explained(
        """
        def validate(model_is_dsa):
            if not model_is_dsa:
                raise ValueError(
                    "--enable-hisparse is only supported for DSA (DeepSeek Sparse Attention) models"
                )
        """
    )
    assert "reason: DeepSeek Sparse Attention" not in ex.what_it_means.text, ex.what_it_means
    ex = explained(
        """
        def load(size):
            if size > 4:
                raise ValueError("cannot load the adapter (the rank must not exceed 4)")
        """
    )
    assert "the rank must not exceed 4" in ex.what_it_means.text, ex.what_it_means


def test_the_model_fields_the_index_reached_are_one_fix_not_one_each() -> None:
    chain = ("`x` <- `config.hidden_size`: the model's configuration (config.json: hidden_size)",)
    fields = ("config.json: hidden_size", "config.json: vocab_size", "config.json: head_dim")
    ex = explained(
        """
        def build(x, y):
            if x != y:
                raise ValueError("sizes differ")
        """,
        origin=Origin("model_config", fields, chain, 1),
    )
    model = [s.text for s in ex.solutions if s.kind == "model"]
    assert len(model) == 1, model
    assert "(hidden_size, vocab_size and head_dim in its config.json)" in model[0], model
    assert "the values they have" in model[0], model


def test_the_who_sentence_never_says_a_value_comes_from_where_the_trace_stopped() -> None:
    chain = (
        "`len(compatible)` <- `self.supported()`: no call of Config.resolve shows what it gets",
        "`requested` <- passed by Params.validate (action.py) as `self.task_type`: a request field",
    )
    ex = explained(
        """
        def resolve(requested, compatible):
            if not requested and len(compatible) != 1:
                raise ValueError("Specify task_type for this request")
        """,
        origin=Origin("request_field", ("request: task_type",), chain, 1),
    )
    assert ex.who_hits_it.kind == "request_field"
    assert "comes from no call" not in ex.who_hits_it.text, ex.who_hits_it.text
    assert "`requested` comes from a request field" in ex.who_hits_it.text, ex.who_hits_it.text


def test_a_parallelism_size_leads_with_how_the_model_is_split_over_the_gpus() -> None:
    chain = (
        "`world_size` <- `get_tp_size()`: a parallelism size (hardware: the parallelism sizes)",
    )
    ex = explained(
        """
        def all_to_all(heads, world_size):
            if heads % world_size != 0:
                raise ValueError(f"heads ({heads}) must be divisible by world_size ({world_size})")
        """,
        origin=Origin("hardware", ("hardware: the parallelism sizes",), chain, 1),
    )
    assert ex.who_hits_it.kind == "hardware"
    assert ex.what_it_means.text.startswith("The way you split the model over GPUs"), ex


def test_media_the_pipeline_makes_is_not_the_request_the_user_sent() -> None:
    # an image processor's output and generated audio are sglang's own data, not the request's
    for message in (
        "Qwen-VL image processor must return pixel_values.",
        "generated MiniMax H3 MP4 audio must be mono, got {channels}",
    ):
        ex = _indexed(
            f"""
            class Processor:
                def check(self, features):
                    if features is None:
                        raise ValueError(f"{message}")
                    return features
            """,
            "ValueError",
        )
        assert ex.who_hits_it.kind != "request_field", (message, ex.who_hits_it)


def test_a_report_with_nothing_before_it_does_not_say_if_none_of_the_above() -> None:
    ex = _indexed(
        """
        class Stage:
            def run(self, value):
                if value is None:
                    raise RuntimeError("stage failed")
        """,
        "RuntimeError",
    )
    first = ex.solutions[0]
    assert first.kind == "report", ex.solutions
    assert "none of the above" not in first.text and "Report it to" in first.text, first.text


def test_a_message_that_says_memory_ran_out_is_the_memory_settings_not_an_internal_check() -> None:
    # the allocator's own counts are what the check compares: traced, they are internal; the
    # message says what the user meets (too much asked of the GPU memory) and the pins' advice
    # names the settings that size it
    ex = _indexed(
        """
        class Allocator:
            def alloc(self, need):
                out = self.pool.take(need)
                if out is None:
                    raise RuntimeError(
                        f"Decode out of memory. Try to lower your batch size.\\n"
                        f"Try to allocate {need} tokens. "
                        f"Please increase --mem-fraction-static.{need}"
                    )
                return out
        """,
        "RuntimeError",
    )
    assert ex.who_hits_it.kind == "hardware", ex.who_hits_it
    assert ex.what_it_means.text.startswith("The server ran out of memory here"), ex.what_it_means
    flags = [s for s in ex.solutions if s.kind == "flag"]
    assert flags and flags[0].text == VOCAB.memory_advice, ex.solutions
    assert flags[0].flag == "--max-running-requests"
    # the advice is kept in the repo row's vocabulary, which the entries are explained from
    assert Vocabulary.from_json(VOCAB.to_json()).memory_advice == VOCAB.memory_advice != ""
    # what the code tried is not advice, and a placeholder glued after a sentence is not part
    # of it
    advice = [s.text for s in ex.solutions if s.kind == "advice"]
    assert advice == ["Try to lower your batch size.", "Please increase --mem-fraction-static."], (
        advice
    )


def test_the_fix_of_a_traced_flag_quotes_what_the_message_asks_for() -> None:
    ex = explained(
        """
        def pool_sizes(page_size):
            if page_size % 128 != 0:
                raise ValueError("page_size must be multiple of 128 for compressed attention.")
        """,
        origin=Origin("flag", ("--page-size",), ("`page_size`: a server setting",), 1),
    )
    first = ex.solutions[0]
    assert first.kind == "flag" and first.flag == "--page-size", ex.solutions
    assert "“page_size must be multiple of 128 for compressed attention”" in first.text, first
    assert "depends on its value" not in first.text


def test_a_check_of_the_operating_system_says_so() -> None:
    ex = _indexed(
        """
        import sys

        def build():
            if sys.platform != "linux":
                raise RuntimeError("the Rust TreeCore extension currently supports Linux only")
        """,
        "RuntimeError",
    )
    assert ex.who_hits_it.kind == "hardware", ex.who_hits_it
    lead = "The operating system or CPU you run on is not one this code supports"
    assert ex.what_it_means.text.startswith(lead), ex.what_it_means


def test_the_whole_model_configuration_is_not_named_as_a_field_of_config_json() -> None:
    ex = explained(
        """
        def window(hf_config):
            topk = hf_config.index_topk
            if topk <= 0:
                raise ValueError(f"KV offload requires a positive index_topk, got {topk}.")
        """,
        origin=Origin(
            "model_config", ("config.json: hf_config", "config.json: index_topk"), ("x",), 1
        ),
    )
    assert "index_topk in its config.json" in ex.what_it_means.text, ex.what_it_means
    assert "hf_config" not in ex.what_it_means.text
    assert not any("hf_config" in s.text for s in ex.solutions), ex.solutions


def test_a_request_id_the_message_prints_does_not_make_it_the_request_s_doing() -> None:
    # "rid={request.request_id}" says which request; "got {request.temperature}" says what
    source = """
        def update(request, part, previous_text):
            if not part["text"].startswith(previous_text):
                raise RuntimeError(f"Harmony rewrote emitted text, rid={request.%s}")
        """
    path = "python/sglang/srt/entrypoints/openai/serving_responses.py"
    kinds = {
        field: explained(source % field, path, "RuntimeError").who_hits_it.kind
        for field in ("request_id", "temperature")
    }
    assert kinds == {"request_id": "unknown", "temperature": "request_field"}, kinds


def test_a_flag_the_guard_tests_and_the_message_names_outweighs_the_model_config_trace() -> None:
    origin = Origin(
        "model_config",
        ("config.json: language_model_only",),
        ("`self.language_model_only` comes from the model's configuration",),
        1,
    )
    clues = [
        Clue("flag", "--language-model-only is tested by the guard"),
        Clue("flag", "the message names --language-model-only"),
    ]
    kind, _ = decided(origin, "flag", clues, "Cosmos3-Edge was loaded with --language-model-only.")
    assert kind == "flag"
    # a flag the message names but the guard does not test leaves the trace's class
    kind, _ = decided(
        origin, "flag", clues[1:], "Cosmos3-Edge was loaded with --language-model-only."
    )
    assert kind == "model_config"


def test_the_way_around_an_internal_check_is_offered_only_where_that_flag_chooses_the_code() -> (
    None
):
    flags = VOCAB.path_flags
    srt = "python/sglang/srt"
    assert path_flag(f"{srt}/disaggregation/mooncake/conn.py", flags) == (
        "--disaggregation-transfer-backend"
    )
    assert path_flag(f"{srt}/disaggregation/decode_kvcache_offload_manager.py", flags) is None
    assert path_flag(f"{srt}/lora/moe/plan.py", flags) == "--lora-backend"
    assert path_flag(f"{srt}/lora/lora_manager.py", flags) is None
