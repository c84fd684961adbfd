"""Guards in English, simplified; user inputs beyond flags; intent; the vocabulary in the pins.

Hand-built sites, the default pins' glossary, no database.
"""

from __future__ import annotations

import ast
import dataclasses
import json
import re
from pathlib import Path

import pytest

from errkb.core.errors import ConfigError
from errkb.core.records import (
    Condition,
    FlagDef,
    Segment,
    Site,
    SiteNotes,
    Snippet,
    Template,
    Vocabulary,
)
from errkb.ingest.pins import load_pins
from errkb.knowledge import explain_error
from errkb.knowledge.facts import Involvement
from errkb.knowledge.fixes.commands import trigger_args
from errkb.knowledge.fixes.flag_fixes import flag_fixes_of
from errkb.knowledge.origins.values import raising_and_fixing
from errkb.knowledge.words.guard import groups
from errkb.knowledge.words.intent import intent
from errkb.knowledge.words.names import phrase
from errkb.knowledge.words.wording import flag_state

ROOT = Path(__file__).resolve().parents[2]
VOCAB = load_pins(ROOT / "pins.toml").repo("sgl-project/sglang").vocabulary()
LAUNCH = "python -m sglang.launch_server --model-path <model>"


def site(
    conditions: list[Condition],
    message: str = "bad",
    path: str = "python/sglang/srt/x.py",
    qualname: str = "f",
) -> Site:
    return Site(
        "ValueError",
        Template((Segment("text", message),), "literal"),
        path,
        1,
        1,
        qualname,
        tuple(conditions),
        Snippet(1, (), 1, 1),
        "",
    )


def facts(s: Site, flags: list[Involvement] | None = None) -> list[str]:
    ex = explain_error(s, flags or [], None, project="sglang", vocabulary=VOCAB)
    return list(ex.facts.items)


def test_reference_guard_reads_as_four_facts_with_the_glossary() -> None:
    ref = site(
        [
            Condition(
                "if", "get_memory().enable_unified_memory and req_to_token_pool is None", True, 1
            ),
            Condition("if", "self.mambaish_config is not None", False, 2),
            Condition(
                "elif",
                "self.is_hybrid_swa and (not is_deepseek_v4(self.model_config.hf_config))",
                True,
                3,
            ),
            Condition(
                "if",
                "pd_enabled",
                True,
                4,
                (("pd_enabled", "get_disagg().disaggregation_mode != 'null'"),),
            ),
        ],
        qualname="KVCacheConfigurator._init_pools",
    )
    eum = Involvement("--enable-unified-memory", "enable_unified_memory", ("condition",), "on")
    dm = Involvement(
        "--disaggregation-mode", "disaggregation_mode", ("condition",), "ne", "'null'", "pd_enabled"
    )
    assert facts(ref, [eum, dm]) == [
        "--enable-unified-memory is on",
        "there is no request to token pool",
        "the model is hybrid sliding-window attention (SWA), is not DeepSeek V4 "
        "and has no Mamba-like configuration",
        "prefill/decode (PD) disaggregation is enabled (--disaggregation-mode is not null)",
    ]
    # the example fix's note says the rest of the guard in the same words, not as code
    needed = [dataclasses.replace(f, required=True) for f in (eum, dm)]
    ex = explain_error(ref, needed, None, project="sglang", vocabulary=VOCAB, launch_command=LAUNCH)
    assert ex.example_fix is not None and ex.example_fix.note is not None
    assert (
        "needs what the command line does not set: there is no request to token pool; the "
        "model is hybrid" in ex.example_fix.note
    ), ex.example_fix.note
    assert "`" not in ex.example_fix.note, ex.example_fix.note


def test_a_local_named_like_a_predicate_reads_as_what_it_stands_for() -> None:
    """0.5.19's guard names the call `is_dsv4`: said as the call ("the model is not DeepSeek
    V4"), never "DeepSeek-V4 is not is (...)"; `pd_enabled` keeps its name as the subject."""
    dsv4 = (("is_dsv4", "is_deepseek_v4(self.model_config.hf_config)"),)
    said = facts(site([Condition("elif", "self.is_hybrid_swa and (not is_dsv4)", True, 1, dsv4)]))
    assert said == ["the model is hybrid sliding-window attention (SWA) and is not DeepSeek V4"]
    pd = (("pd_enabled", "get_disagg().disaggregation_mode != 'null'"),)
    (said_pd,) = facts(site([Condition("if", "pd_enabled", True, 1, pd)]))
    assert said_pd.startswith("prefill/decode (PD) disaggregation is enabled ("), said_pd


def test_implied_clauses_of_an_elif_chain_are_dropped() -> None:
    s = site(
        [
            Condition("if", "a is not None and b and (not c)", False, 1),
            Condition("elif", "a is None", True, 2),
            Condition("if", "not (x or y)", True, 3),
            Condition("if", "not not z", True, 4),
        ]
    )
    got = [[ast.unparse(n) for n in g] for g in groups(s)]
    # `not (a is not None and ...)` is implied by `a is None`; `not (x or y)` splits in two
    assert got == [["a is None"], ["not x"], ["not y"], ["z"]]


@pytest.mark.parametrize(
    ("expr", "words"),
    [
        ("seconds_per_frame <= 0", "seconds per frame is zero or negative"),
        ("not isinstance(stop, (str, list))", "stop is neither a string nor a list"),
        ("len(prompts) != len(images)", "prompts and images differ in length"),
        ("tp_size % pp_size != 0", "tensor parallelism size is not a multiple of pipeline"),
        ("mode not in ('a', 'b')", 'mode is not "a" or "b"'),
        ("(pixel_values is None) != (grid is None)", "only one of pixel values and grid is given"),
        ("os.environ.get('SGLANG_FOO') == '1'", 'the environment variable SGLANG_FOO is "1"'),
        ("hf_config.architectures[0] not in SUPPORTED", "the model's architectures setting"),
        ("not 0 <= p <= 1", "p is outside the range from 0 to 1"),
        ("name.startswith('x')", 'name starts with "x"'),
        # calls are said, not dropped: set(), len(), getattr, zero-argument getters and methods
        ("len(names) != len(set(names))", "names contains duplicates"),
        ("len(set(a)) != len(set(b))", "number of distinct values in a differs from the number"),
        ("not get_platform().is_blackwell", "the platform is not blackwell"),
        ("getattr(self.model_config, 'is_multimodal', False)", "model configuration is multimodal"),
        ("hidden_states.dim() != 5", "the number of dimensions of hidden states is not 5"),
        ("x.shape[-1] != 8", "the size of the last dimension of x is not 8"),
        ("not w.is_contiguous()", "w is not contiguous"),
        ("modality == Modality.AUDIO", "modality equals Modality.AUDIO"),
        ("ptr % alignment", "ptr is not a multiple of alignment"),
        ("'{uuid}' not in template", 'template does not contain "{uuid}"'),
        ("kind not in {'a': 1, 'b': 2}", 'kind is not "a" or "b"'),
        # seen in the default pins: names that are verbs or predicates are not nouns
        (
            "bool(getattr(layer.lora_backend.batch_info, 'has_active_lora', False))",
            "the batch info has active LoRA",
        ),
        ("bias_given != self.has_bias", "bias given differs from whether it has bias"),
        ("self._set_to_none", "set to none is on"),
        ("module.a.dtype == torch.float32", "the data type of a equals torch.float32"),
        ("offset > len(self)", "offset is greater than the length of this object"),
        # a tuple compared whole is one value, not alternatives ("differs from 32 or 32")
        ("tuple(block_size) != (32, 32)", "block size differs from (32, 32)"),
        # `not (a and b)`: one of them fails, each said (not "`a and b` is false or empty")
        (
            "not (a.ndim == 2 and b.ndim == 3)",
            "either the number of dimensions of a is not 2, or the number of dimensions of b",
        ),
        # all/any over a loop: for every / for some item, the test said
        (
            "not all((isinstance(o, OutputBatch) for o in outputs))",
            "for some o in outputs, o is not an OutputBatch",
        ),
        ("any((x is None for x in items))", "for some x in items, there is no x"),
        # `is not True`: the value True itself
        ("return_hidden_states is not True", "return hidden states is not True"),
        # a one-element tensor's number is its value, not "the item of"
        ("pending.item() > 0", "the value of pending is positive"),
        # a value given and the object's own of the same name
        ("page_size != self.page_size", "the page size it is given differs from its own"),
        # a chain of equalities, failed: the values are not all equal
        ("not (len(keys) == len(locs) == len(sizes))", "are not all equal"),
    ],
)
def test_guards_in_english(expr: str, words: str) -> None:
    (said,) = facts(site([Condition("if", expr, True, 1)]))
    assert words in said and "`" not in said, said


@pytest.mark.parametrize(
    ("expr", "resolved", "words"),
    [
        # an accumulator (`tokens = []`, appended to later) is said by its name, not as `[]`
        ("not tokens", (("tokens", "[]"),), "tokens is unset or empty"),
        # the model's config object itself, not one of its settings
        ("quant_config is not None", (), "the model's quantization configuration is set"),
        # a glossary "number of" at the end of a name, or before "of"
        ("pool.layer_num != 0", (), "the layer number of pool is not 0"),
        ("num_of_layers > 2", (), "number of layers is more than 2"),
        # a local standing for an `or`, inside an `or`: one list, not "either either"
        (
            "skip or get_world_size() == 1",
            (("skip", "self.skip_sequence_parallel or override"),),
            "either skip sequence parallel is on, or override is set, or the world size is 1",
        ),
    ],
)
def test_names_and_locals_in_english(
    expr: str, resolved: tuple[tuple[str, str], ...], words: str
) -> None:
    (said,) = facts(site([Condition("if", expr, True, 1, resolved)]))
    assert said == words


def test_a_request_field_gets_its_solution_and_a_body_before_and_after() -> None:
    s = site(
        [Condition("if", "not 0.0 < self.top_p <= 1.0", True, 1)],
        "top_p must be in (0, 1], got {self.top_p}.",
        "python/sglang/srt/sampling/sampling_params.py",
        "SamplingParams.verify",
    )
    ex = explain_error(s, [], None, project="sglang", vocabulary=VOCAB)
    assert ex.who_hits_it.kind == "request_field"
    assert ex.solutions[0].kind == "request_field"
    fix = next(f for f in ex.solutions if f.kind == "request_field")
    assert fix.input == "top_p" and "of SamplingParams" in fix.text and "for example" in fix.text
    assert ex.example_fix is not None
    before, after = json.loads(ex.example_fix.before), json.loads(ex.example_fix.after)
    assert not 0 < before["top_p"] <= 1 and 0 < after["top_p"] <= 1
    assert ex.intent == "out_of_range"


def test_a_request_fields_fix_lists_the_values_a_module_constant_allows() -> None:
    s = dataclasses.replace(
        site(
            [Condition("if", "self.quality not in QUALITY_LEVELS", True, 1)],
            "quality must be one of {list(QUALITY_LEVELS)}, got {self.quality!r}",
            "python/sglang/multimodal_gen/configs/sample/sampling_params.py",
            "SamplingParams._validate",
        ),
        notes=SiteNotes(constants=(("QUALITY_LEVELS", "('lossless', 'high')"),)),
    )
    ex = explain_error(s, [], None, project="sglang", vocabulary=VOCAB)
    fix = next(f for f in ex.solutions if f.kind == "request_field")
    assert 'send a value for which the request\'s quality is "lossless" or "high"' in fix.text, fix
    assert "quality levels" not in fix.text


def test_a_request_field_names_what_the_openai_compatible_api_calls_it() -> None:
    s = site(
        [Condition("if", "self.max_new_tokens < 0", True, 1)],
        "max_new_tokens must be at least 0, got {self.max_new_tokens}.",
        "python/sglang/srt/sampling/sampling_params.py",
        "SamplingParams.verify",
    )
    ex = explain_error(s, [], None, project="sglang", vocabulary=VOCAB)
    fix = next(f for f in ex.solutions if f.kind == "request_field")
    assert "max_tokens or max_completion_tokens in the OpenAI-compatible API" in fix.text


def test_an_environment_variable_gets_the_line_that_unsets_it() -> None:
    s = site([Condition("if", "envs.SGLANG_ENABLE_X.get() and pp_size > 1", True, 1)])
    ex = explain_error(s, [], None, project="sglang", vocabulary=VOCAB, launch_command=LAUNCH)
    fix = next(f for f in ex.solutions if f.kind == "environment")
    assert fix.input == "SGLANG_ENABLE_X" and fix.command == "unset SGLANG_ENABLE_X"
    assert ex.example_fix is not None
    assert ex.example_fix.before == f"SGLANG_ENABLE_X=1 {LAUNCH}" and ex.example_fix.after == LAUNCH


def test_the_model_or_hardware_is_named_and_an_internal_invariant_is_reported() -> None:
    model = site([Condition("if", "self.model_config.hf_config.model_type == 'x'", True, 1)])
    ex = explain_error(model, [], None, project="sglang", vocabulary=VOCAB)
    assert ex.who_hits_it.kind == "model_config"
    assert ex.solutions[0].kind == "model" and "config.json (model_type)" in ex.solutions[0].text
    # the fix names the input to change and never restates the check as its reason
    assert "model_type == 'x'" not in ex.solutions[0].text
    parallel = site([Condition("if", "self.tp_size % num_heads != 0", True, 1)])
    ex = explain_error(parallel, [], None, project="sglang", vocabulary=VOCAB)
    assert ex.who_hits_it.kind == "hardware" and "parallelism" in ex.who_hits_it.text
    assert "parallel sizes" in ex.solutions[0].text and "num_heads != 0" not in ex.solutions[0].text
    package = site([Condition("if", "not is_flashinfer_available()", True, 1)])
    ex = explain_error(package, [], None, project="sglang", vocabulary=VOCAB)
    assert ex.who_hits_it.kind == "dependency"
    inner = site([Condition("if", "len(self._blocks) == 0", True, 1)], "no blocks")
    ex = explain_error(
        inner, [], None, project="sglang", vocabulary=VOCAB, web_url="https://github.com/o/p"
    )
    assert ex.who_hits_it.kind == "internal"
    assert ex.solutions[0].kind == "report"
    assert ex.solutions[0].url == "https://github.com/o/p/issues/new"


def test_intent_never_contradicts_the_guard_or_the_message() -> None:
    def of(message: str, expr: str) -> str | None:
        node = ast.parse(expr, mode="eval").body
        return intent(Template((Segment("text", message),), "literal"), [node])

    # range words, but the guard tests emptiness: a missing value, not a range
    assert of("no successful requests with positive latency", "not latencies") != "out_of_range"
    assert of("x must be a string", "not isinstance(x, str)") == "wrong_type"
    assert of("x must be positive", "x <= 0") == "out_of_range"
    assert of("x must be set", "x is None") == "missing"
    assert of("unknown mode {m}", "m not in MODES") == "unknown_choice"
    assert of("{scope}: '{key}' must be a string", "not isinstance(v, str)") == "wrong_type"


def test_values_that_hold_or_fail_a_test() -> None:
    test = ast.parse("not 0.0 < p <= 1.0", mode="eval").body
    is_p = lambda n: isinstance(n, ast.Name) and n.id == "p"  # noqa: E731
    raising, fixing = raising_and_fixing([test], is_p) or (None, None)
    assert raising is not None and not 0 < raising <= 1
    assert fixing is not None and 0 < fixing <= 1
    opaque = ast.parse("p > limit", mode="eval").body
    assert raising_and_fixing([opaque], is_p) is None  # never guesses a value it cannot check


def test_the_vocabulary_comes_from_the_pins(tmp_path: Path) -> None:
    assert dict(VOCAB.glossary)["swa"] == "sliding-window attention (SWA)"
    assert VOCAB.request_classes and VOCAB.env_prefixes == ("SGLANG_", "SGL_")
    assert "forward_mode" in VOCAB.internal_state
    assert Vocabulary.from_json(VOCAB.to_json()) == VOCAB
    bad = tmp_path / "bad.toml"
    bad.write_text('[[repos]]\nname = "a"\n[repos.glossary]\n"Bad Key" = "x"\n')
    with pytest.raises(ConfigError, match=r"repos\.0\.glossary: .*one lower-case name part"):
        load_pins(bad)
    bad.write_text('[[repos]]\nname = "a"\nrequest_classes = ["a:b:c"]\n')
    with pytest.raises(ConfigError, match=r"repos\.0\.request_classes"):
        load_pins(bad)


@pytest.mark.parametrize(
    "expr",
    [
        "self.config.x != other.config.x",  # both sides read "the x"
        "len(keys) == len(keys)",
    ],
)
def test_a_comparison_whose_sides_read_the_same_stays_code(expr: str) -> None:
    (said,) = facts(site([Condition("if", expr, True, 1)]))
    assert said.startswith("`") and said.endswith("`"), said


def test_a_module_constant_is_quoted_as_the_list_it_holds() -> None:
    notes = SiteNotes(constants=(("VALID_MODES", "('fast', 'slow')"),))
    s = dataclasses.replace(
        site([Condition("if", "mode not in VALID_MODES", True, 1)]),
        template=Template(
            (Segment("text", "mode must be one of "), Segment("placeholder", "VALID_MODES")),
            "fstring",
        ),
        notes=notes,
    )
    ex = explain_error(s, [], None, project="sglang", vocabulary=VOCAB)
    assert ex.facts.items == ('mode is not "fast" or "slow"',)
    texts = [ex.what_it_means.text, *(f.text for f in ex.solutions)]
    assert not any("VALID_MODES" in t for t in texts), texts


@pytest.mark.parametrize(
    ("printed", "shown"),
    [
        ("sorted(_QUANTS)", "['convrot_int8', 'fp8', 'mxfp4']"),
        ("list(_QUANTS)", "['fp8', 'convrot_int8', 'mxfp4']"),  # the source's order
        ("', '.join(sorted(_QUANTS))", "convrot_int8, fp8, mxfp4"),
    ],
)
def test_a_constant_put_in_order_or_joined_is_quoted_as_the_message_prints_it(
    printed: str, shown: str
) -> None:
    """`choose one of {sorted(_QUANTS)}`: the advice lists the values, not the expression."""
    notes = SiteNotes(constants=(("_QUANTS", "{'fp8', 'convrot_int8', 'mxfp4'}"),))
    s = dataclasses.replace(
        site([Condition("if", "quantization not in _QUANTS", True, 1)]),
        template=Template(
            (
                Segment("text", "Online quantization is not supported; choose one of "),
                Segment("placeholder", printed),
            ),
            "fstring",
        ),
        notes=notes,
    )
    ex = explain_error(s, [], None, project="sglang", vocabulary=VOCAB)
    assert ex.solutions[0].text == f"Choose one of {shown}"
    texts = [ex.what_it_means.text, *(f.text for f in ex.solutions)]
    assert not any("_QUANTS" in t for t in texts), texts


def test_a_call_on_a_constant_that_is_not_an_ordering_stays_as_written() -> None:
    notes = SiteNotes(constants=(("_QUANTS", "('fp8', 'mxfp4')"),))
    s = dataclasses.replace(
        site([Condition("if", "quantization not in _QUANTS", True, 1)]),
        template=Template(
            (Segment("text", "choose one of "), Segment("placeholder", "pick(_QUANTS)")),
            "fstring",
        ),
        notes=notes,
    )
    ex = explain_error(s, [], None, project="sglang", vocabulary=VOCAB)
    # the call is not resolved to values; the advice does not print it as code either
    assert ex.solutions[0].text == "Choose one of the values the message lists"


def test_a_registry_filled_at_run_time_is_not_listed_as_empty() -> None:
    """`_REGISTRY = {}` is empty where it is defined: "name is ." said nothing."""
    notes = SiteNotes(constants=(("_REGISTRY", "{}"),))
    s = dataclasses.replace(site([Condition("if", "name in _REGISTRY", True, 1)]), notes=notes)
    ex = explain_error(s, [], None, project="sglang", vocabulary=VOCAB)
    (fact,) = ex.facts.items
    assert fact.startswith("name is in ") and "registry" in fact, fact


def test_a_comment_explaining_a_test_gives_its_words_and_the_reason() -> None:
    notes = SiteNotes(
        comments=((-3, "Gated to the target worker (req_to_token_pool is None); more."),),
        docstring="Initialize the memory pools, sized from the server arguments.",
    )
    s = dataclasses.replace(
        site([Condition("if", "req_to_token_pool is None", True, 1)], qualname="C._init_pools"),
        notes=notes,
    )
    ex = explain_error(s, [], None, project="sglang", vocabulary=VOCAB)
    assert ex.facts.items == ("this is the target worker",)
    assert "A comment at the check says: “Gated to the target worker" in ex.what_it_means.text
    assert (
        "The function that raises it is documented as: “Initialize the memory pools"
        in ex.what_it_means.text
    )
    assert {"derived:comments", "derived:docstring"} <= set(ex.what_it_means.provenance)


def test_what_it_means_keeps_code_out_and_says_how_many_checks_it_left() -> None:
    s = site(
        [
            Condition("if", "self.server_args.tp_size > 8", True, 1),
            Condition("if", "x[i:j] @ y", True, 2),
        ]
    )
    ex = explain_error(s, [], None, project="sglang", vocabulary=VOCAB)
    text = ex.what_it_means.text
    assert "`" not in text and "x[i:j]" not in text, text
    # the frame that counted the checks left out is gone; both checks stay under their own
    # heading (facts), the one with no words as its code
    assert "shown in the source" not in text, text
    assert text.startswith("A setting you started sglang with is refused here"), text
    assert ex.facts.items == ("the tensor parallelism size is more than 8", "`x[i:j] @ y` is true")


def test_a_config_class_field_read_from_its_arguments_is_the_models_config() -> None:
    s = site(
        [Condition("if", "tie", True, 1, (("tie", "kwargs.pop('tie_word_embeddings', False)"),))],
        "tie_word_embeddings is not supported for these models.",
        "python/sglang/srt/configs/dbrx.py",
        "DbrxConfig.__init__",
    )
    ex = explain_error(s, [], None, project="sglang", vocabulary=VOCAB)
    assert ex.who_hits_it.kind == "model_config"
    assert "tie_word_embeddings" in ex.who_hits_it.text


def test_a_two_part_glossary_entry_wins_over_its_parts() -> None:
    glossary = {"mm": "multimodal", "scaled_mm": "scaled matrix multiplication"}
    assert phrase("triton_scaled_mm", glossary) == "triton scaled matrix multiplication"
    assert phrase("get_mm_data", glossary) == "get multimodal data"
    assert phrase("scaled", glossary) == "scaled"


@pytest.mark.parametrize(
    ("message", "first"),
    [
        (
            "--enable-ssl-refresh requires --ssl-certfile and --ssl-keyfile to be specified.",
            "Add --ssl-certfile, with the value you need, to the command line",
        ),
        ("--tokenize-prompt requires --gsp-num-turns=1", "Run with --gsp-num-turns 1"),
        ("--cp-strategy must be set when --enable-prefill-cp is enabled.", "Add --cp-strategy"),
    ],
)
def test_a_flag_the_message_asks_for_is_the_first_way_out(message: str, first: str) -> None:
    # the message names the flag the user must add: that comes before dropping the one set
    flags = [
        Involvement(flag=name, dest=name[2:].replace("-", "_"), sides=("message",))
        for name in re.findall(r"--[a-z][\w-]*[a-z0-9]", message)
    ]
    fixes = flag_fixes_of(flags, {}, message)
    assert fixes[0].text.startswith(first), fixes
    assert fixes[0].flag in message


def test_a_flag_the_message_asks_to_turn_off_is_not_one_to_add() -> None:
    message = "--enable-foo requires --enable-bar to be disabled."
    flags = [
        Involvement(flag=name, dest=name[2:].replace("-", "_"), sides=("message",))
        for name in ("--enable-foo", "--enable-bar")
    ]
    assert not any(f.text.startswith("Add") for f in flag_fixes_of(flags, {}, message))


def test_a_flag_fix_quotes_the_message_rather_than_the_guard_code() -> None:
    flag = Involvement(
        flag="--prompt-tokens-buckets",
        dest="prompt_tokens_buckets",
        sides=("condition",),
        polarity="other",
        condition="not (not buckets_rule)",
        via="buckets_rule",
    )
    resolved = {"buckets_rule": "(cfg.prompt_tokens_buckets, cfg.generation_tokens_buckets)"}
    asked = "custom rule bucket values must be numeric"
    (fix,) = flag_fixes_of([flag], resolved, "", asked)
    assert f"the message says what the check wants: “{asked}”" in fix.text, fix.text
    assert "`" not in fix.text
    (fix,) = flag_fixes_of([flag], resolved, "")  # no message: the guard's code is all we have
    assert "the guard tests `not (not buckets_rule)`" in fix.text


def test_a_flag_read_in_a_complex_way_is_named_as_set_not_as_code() -> None:
    flag = Involvement(
        flag="--prompt-tokens-buckets",
        dest="prompt_tokens_buckets",
        sides=("condition",),
        polarity="other",
        condition="not (not buckets_rule)",
    )
    said = flag_state(flag)
    assert said == "--prompt-tokens-buckets set to a value the check refuses", said


def test_a_flag_tested_against_none_is_said_as_set_or_unset() -> None:
    flag = Involvement(
        flag="--max-ep-size",
        dest="max_ep_size",
        sides=("condition",),
        polarity="ne",
        value="None",
        condition="cfg.max_ep_size is not None",
    )
    assert flag_state(flag) == "--max-ep-size is set"
    assert flag_state(dataclasses.replace(flag, polarity="eq")) == "--max-ep-size is unset"


def test_a_flag_that_must_be_given_is_not_given_the_choice_spelled_none() -> None:
    definition = FlagDef(
        ("--elastic-ep-backend",), "elastic_ep_backend", "str", "None",
        ("none", "mooncake"), None, "server_args.py", 1, "argparse",
    )  # fmt: skip
    flag = Involvement(
        flag="--elastic-ep-backend",
        dest="elastic_ep_backend",
        sides=("condition",),
        polarity="ne",
        value="None",
        condition="cfg.elastic_ep_backend is not None",
        definition=definition,
    )
    assert trigger_args(flag) == ("--elastic-ep-backend", "mooncake")


def test_assert_false_adds_no_clause() -> None:
    said = facts(
        site(
            [
                Condition("if", "rule == 'custom'", True, 1),
                Condition("except", "ValueError", True, 2),
                Condition("assert", "False", False, 3),
            ]
        )
    )
    assert not any("False" in s for s in said), said


def test_a_flag_that_holds_a_path_is_set_or_unset_not_on_or_off() -> None:
    definition = FlagDef(
        ("--dataset-path",), "dataset_path", "str", "''", None, "Path to the dataset.",
        "bench_serving.py", 1, "argparse",
    )  # fmt: skip
    flag = Involvement(
        flag="--dataset-path",
        dest="dataset_path",
        sides=("condition",),
        polarity="off",
        condition="not args.dataset_path",
        definition=definition,
    )
    said = facts(site([Condition("if", "not args.dataset_path", True, 1)]), [flag])
    assert said == ["--dataset-path is unset or empty"], said
