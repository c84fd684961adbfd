"""Example fixes from the message's own advice, and constants the snapshot gives no value for.

Hand-built sites and flag definitions, no database.
"""

from __future__ import annotations

import dataclasses
import json
import re
import shlex
from pathlib import Path

import pytest

from errkb.core.records import Condition, FlagDef, Segment, Site, SiteNotes, Snippet, Template
from errkb.ingest.pins import load_pins
from errkb.knowledge import explain_error
from errkb.knowledge.facts import Involvement

LAUNCH = "python -m sglang.launch_server --model-path <model>"
PLACEHOLDER = re.compile(r"\{_?[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\}|\{_?[A-Z]{4,}\}")


def _flag(name: str, type_: str, choices: tuple[str, ...] | None = None) -> Involvement:
    dest = name[2:].replace("-", "_")
    default = "False" if type_ == "bool" else None
    d = FlagDef((name,), dest, type_, default, choices, "help", "args.py", 1, "dataclass")
    return Involvement(name, dest, ("message",), definition=d)


FLAGS = [
    _flag("--speculative-eagle-topk", "Optional[int]"),
    _flag("--enable-unified-memory", "bool"),
    _flag("--moe-runner-backend", "str", ("auto", "triton", "hpc_ops")),
    _flag("--lora-target-modules", "Optional[List[str]]"),
]


def _site(*segments: Segment, notes: SiteNotes | None = None) -> Site:
    return Site(
        "ValueError",
        Template(tuple(segments), "fstring"),
        "python/sglang/srt/x.py",
        1,
        1,
        "f",
        (Condition("if", "topk > 1", True, 1),),
        Snippet(1, (), 1, 1),
        "",
        notes=notes or SiteNotes(),
    )


def _example(text: str) -> tuple[list[str], list[str]] | None:
    ex = explain_error(
        _site(Segment("text", text)), FLAGS, None, project="sglang", launch_command=LAUNCH
    )
    if ex.example_fix is None:
        return None
    return shlex.split(ex.example_fix.before), shlex.split(ex.example_fix.after)


def test_the_advised_flag_value_is_the_after_line() -> None:
    found = _example("Only topk=1 is supported. Use --speculative-eagle-topk 1.")
    assert found is not None
    before, after = found
    assert "--speculative-eagle-topk" not in before
    assert after[-2:] == ["--speculative-eagle-topk", "1"]


@pytest.mark.parametrize(
    ("text", "dropped"),
    [
        (
            "No SWA transfer yet. Drop --enable-unified-memory or run without PD.",
            ["--enable-unified-memory"],
        ),
        (
            "Remove --moe-runner-backend hpc_ops for this model.",
            ["--moe-runner-backend", "hpc_ops"],
        ),
    ],
)
def test_an_advised_removal_is_in_the_before_line_only(text: str, dropped: list[str]) -> None:
    found = _example(text)
    assert found is not None
    before, after = found
    assert before[-len(dropped) :] == dropped
    assert dropped[0] not in after


@pytest.mark.parametrize(
    "text",
    [
        "Set --speculative-eagle-topk to at least 2.",  # a bound, not a value
        "Use --moe-runner-backend fa.",  # not one of the flag's choices
        "Use --unknown-flag 3.",  # not a flag the project defines
        "Please reduce --speculative-eagle-topk.",  # no value at all
    ],
)
def test_advice_without_an_exact_accepted_value_gives_no_example(text: str) -> None:
    assert _example(text) is None


@pytest.mark.parametrize("word", ["during", "when", "before", "explicitly"])
def test_a_word_of_the_sentence_after_a_flag_is_not_its_value(word: str) -> None:
    found = _example(f"Please specify `--lora-target-modules` {word} server startup.")
    assert found is None or word not in found[1], found


def test_a_constant_without_a_known_value_is_said_in_words() -> None:
    s = _site(
        Segment("placeholder", "FLAG"),
        Segment("text", " cannot run this setup; expected one of "),
        Segment("placeholder", "SUPPORTED_MODES"),
        notes=SiteNotes(constants=(("SUPPORTED_MODES", "('a', 'b')"),)),
    )
    s = dataclasses.replace(s, template=dataclasses.replace(s.template, form="fstring"))
    ex = explain_error(s, [], None, project="sglang")
    texts = [ex.what_it_means.text, ex.trigger.text, *(f.text for f in ex.solutions)]
    assert not any(PLACEHOLDER.search(t) for t in texts), texts
    quoted = [t for t in texts if "cannot run this setup" in t]
    assert quoted and all("<value of FLAG>" in t and "('a', 'b')" in t for t in quoted), quoted
    # the quote runs past the ";" to the end of the sentence, and ends it once ("setup;." was cut)
    assert not any(";.”" in t or ";”" in t for t in texts), texts


def _guarded(expr: str, text: str) -> Site:
    s = _site(Segment("text", text))
    return dataclasses.replace(s, conditions=(Condition("if", expr, True, 1),))


@pytest.mark.parametrize(
    ("expr", "text", "spec"),
    [
        (
            "version.parse(transformers.__version__) < version.parse('4.50.0')",
            "too old",
            "transformers>=4.50.0",
        ),
        ("not torch.__version__ >= '2.6'", "unsupported torch", "torch>=2.6"),
        (
            "x is None",
            "Please install bitsandbytes>=0.44.0 to use bitsandbytes quantizer.",
            "bitsandbytes>=0.44.0",
        ),
    ],
)
def test_a_version_check_names_the_package_and_the_version_it_requires(
    expr: str, text: str, spec: str
) -> None:
    ex = explain_error(_guarded(expr, text), [], None, project="sglang", launch_command=LAUNCH)
    commands = [f.command for f in ex.solutions]
    assert f"pip install '{spec}'" in commands, [f.text for f in ex.solutions]
    (install,) = [f for f in ex.solutions if f.command == f"pip install '{spec}'"]
    assert install.kind == "environment"  # installing a package changes the environment
    assert ex.example_fix is not None and ex.example_fix.after == f"pip install '{spec}'"
    assert not ex.example_fix.before.startswith("pip install")  # not an sglang version change


@pytest.mark.parametrize(
    "text", ["top_p must be >= 0.0 and <= 1.0", "--mem-fraction-static >= 0.9 needs version 2"]
)
def test_a_value_range_is_no_package_requirement(text: str) -> None:
    ex = explain_error(_guarded("x > 1", text), [], None, project="sglang")
    assert not any((f.command or "").startswith("pip install") for f in ex.solutions)


def test_advice_in_backticks_with_choices_given_as_an_expression() -> None:
    d = FlagDef(
        ("--attention-backend",),
        "attention_backend",
        "Optional[str]",
        "None",
        ("ATTENTION_BACKEND_CHOICES",),
        "help",
        "args.py",
        1,
        "dataclass",
    )
    flags = [Involvement("--attention-backend", "attention_backend", ("message",), definition=d)]
    s = _site(Segment("text", "FA3 requires SM>=80. Please use `--attention-backend flashinfer`."))
    ex = explain_error(s, flags, None, project="sglang", launch_command=LAUNCH)
    assert ex.example_fix is not None
    assert ex.example_fix.after.endswith("--attention-backend flashinfer")


@pytest.mark.parametrize(
    ("expr", "text", "said"),
    [
        (
            "torch.cuda.get_device_capability() < (9, 0)",
            "no kernel",
            "compute capability 9.0 or higher",
        ),
        (
            "not _is_cuda",
            "FlashAttention v3 requires SM>=80 and SM<=90.",
            "“FlashAttention v3 requires SM>=80 and SM<=90.”",
        ),
    ],
)
def test_a_hardware_check_says_what_the_code_accepts(expr: str, text: str, said: str) -> None:
    ex = explain_error(_guarded(expr, text), [], None, project="sglang")
    hardware = [f.text for f in ex.solutions if f.text.startswith("Run it on")]
    assert hardware and said in hardware[0], [f.text for f in ex.solutions]
    assert ex.solutions[0].text == hardware[0]  # what to do, first
    assert ex.solutions[0].kind == "hardware", ex.solutions[0]  # not "model"
    assert "for which the check shown below does not hold" not in hardware[0]


def test_a_caught_error_in_a_retry_loop_says_the_code_goes_on_with_the_next_pass() -> None:
    from errkb.core.records import ExtractConfig
    from errkb.ingest.extract import extract_file

    src = (
        "import logging\nlogger = logging.getLogger()\n"
        "def handshake(sock):\n"
        "    for attempt in range(3):\n"
        "        try:\n"
        "            if sock.recv(1) != b'1':\n"
        "                raise RuntimeError('worker refused the transfer')\n"
        "            return True\n"
        "        except Exception as e:\n"
        "            logger.warning('attempt %s failed: %s', attempt, e)\n"
        "def once(sock):\n"
        "    try:\n"
        "        if sock.recv(1) != b'1':\n"
        "            raise RuntimeError('refused once')\n"
        "    except Exception as e:\n"
        "        logger.warning('failed: %s', e)\n"
    )
    config = ExtractConfig(exceptions=("RuntimeError",))
    sites = {s.template.literal_text: s for s in extract_file(src.encode(), "x.py", config).sites}
    looped = explain_error(sites["worker refused the transfer"], [], None, project="srv")
    assert "the loop's next pass" in looped.solutions[0].text, looped.solutions[0].text
    once = explain_error(sites["refused once"], [], None, project="srv")
    assert once.solutions[0].text.startswith("This error may not stop the program")
    assert "next pass" not in once.solutions[0].text


VOCAB = load_pins(Path(__file__).resolve().parents[2] / "pins.toml").repo("sgl-project/sglang")
VOCAB = VOCAB.vocabulary()


def _request_site(expr: str) -> Site:
    s = _guarded(expr, "bad request")
    return dataclasses.replace(
        s, path="python/sglang/srt/sampling/sampling_params.py", qualname="SamplingParams.verify"
    )


@pytest.mark.parametrize(
    ("expr", "before", "after"),
    [
        ("self.mode not in ('fast', 'slow')", {"mode": "<your value>"}, {"mode": "fast"}),
        ("self.image_path is not None", {"image_path": "<your value>"}, {}),
        ("self.stop == 'never'", {"stop": "never"}, {"stop": "<another value>"}),
    ],
)
def test_a_request_field_compared_with_a_value_gets_a_body_before_and_after(
    expr: str, before: dict[str, str], after: dict[str, str]
) -> None:
    ex = explain_error(_request_site(expr), [], None, project="sglang", vocabulary=VOCAB)
    assert ex.example_fix is not None, [f.text for f in ex.solutions]
    assert json.loads(ex.example_fix.before) == before
    assert json.loads(ex.example_fix.after) == after


@pytest.mark.parametrize(
    ("expr", "before", "after"),
    [
        (
            "os.environ.get('SGLANG_LAYOUT') == 'vectorized_5d'",
            f"SGLANG_LAYOUT=vectorized_5d {LAUNCH}",
            LAUNCH,
        ),
        ("os.environ.get('SGLANG_BASELINE') != '1'", LAUNCH, f"SGLANG_BASELINE=1 {LAUNCH}"),
    ],
)
def test_an_environment_variable_compared_with_a_value_gets_the_line_that_sets_it(
    expr: str, before: str, after: str
) -> None:
    ex = explain_error(
        _guarded(expr, "bad layout"),
        [],
        None,
        project="sglang",
        vocabulary=VOCAB,
        launch_command=LAUNCH,
    )
    assert ex.example_fix is not None, [f.text for f in ex.solutions]
    assert (ex.example_fix.before, ex.example_fix.after) == (before, after)


def test_flags_on_several_ways_of_a_guard_are_ways_out_each_said_once() -> None:
    def flag(name: str) -> Involvement:
        d = FlagDef((name,), name[2:].replace("-", "_"), "int", "1", None, "help", "a.py", 1, "x")
        return Involvement(
            name, d.dest, ("condition",), "other", "> 1", f"cfg.{d.dest} > 1", definition=d
        )

    guard = "cfg.dcp_size > 1 or cfg.attn_cp_size > 1"
    site = dataclasses.replace(
        _site(Segment("text", "no context parallelism")),
        conditions=(Condition("if", guard, True, 1),),
    )
    flags = [flag("--dcp-size"), flag("--attn-cp-size")]
    ex = explain_error(site, flags, None, project="sglang", launch_command=LAUNCH)
    ways = [s.text for s in ex.solutions if s.kind == "flag"]
    assert ways[0].startswith("One way out: run with"), ways
    assert ways[1].startswith("Another way out: run with"), ways
    assert not any("Alternatively" in w for w in ways)
