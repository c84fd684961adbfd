"""The final order of the matches: code a server runs before the project's own tests, weak
guesses dropped beside a match, and scores alike decided by the traceback's frame."""

from __future__ import annotations

from dataclasses import replace

from matcher_rows import occ, row

from errkb.knowledge.who.evidence import in_test_code
from errkb.service.match.matcher import build_index, match_text
from errkb.service.match.matcher.score import TEST_CODE_PENALTY, WEAK_BELOW

SP = "/opt/venv/lib/python3.11/site-packages"

SERVER_OOM = row(
    "CUDA out of memory. Tried to allocate {size}",
    occ("python/sglang/srt/mem_cache/allocator.py", 40, "Allocator.alloc", "0.5.23"),
    exception="RuntimeError",
)
# A unit test's fake out-of-memory raise: more of its literal text shows in the line below.
TEST_OOM = row(
    "CUDA out of memory. Tried to allocate {size} GiB on device {device}",
    occ("python/sglang/test/test_fake_oom.py", 12, "FakeAllocator.alloc", "0.5.23"),
    exception="RuntimeError",
)
OOM_LINE = "RuntimeError: CUDA out of memory. Tried to allocate 2 GiB on device 0\n"


def _ids(text: str, **kw: object) -> list[str]:
    index = build_index([SERVER_OOM, TEST_OOM], **kw)  # type: ignore[arg-type]
    return [m.entry.id for m in match_text(index, text)]


def test_test_code_ranks_below_the_code_a_server_runs() -> None:
    # Without knowing which files are tests, the test's raise reads best: that is the trap.
    assert _ids(OOM_LINE) == [TEST_OOM.id, SERVER_OOM.id]
    index = build_index([SERVER_OOM, TEST_OOM], test_path=in_test_code)
    found = match_text(index, OOM_LINE)
    assert [m.entry.id for m in found] == [SERVER_OOM.id, TEST_OOM.id]
    assert found[1].entry.test_code and not found[0].entry.test_code
    plain = match_text(build_index([TEST_OOM]), OOM_LINE)[0].score
    assert found[1].score == round(plain * TEST_CODE_PENALTY, 4)


def test_a_traceback_that_runs_in_a_test_ranks_test_code_as_usual() -> None:
    text = (
        "Traceback (most recent call last):\n"
        '  File "/home/me/proj/tests/test_serving.py", line 30, in test_alloc\n'
        "    alloc.alloc(2)\n"
        f'  File "{SP}/sglang/test/test_fake_oom.py", line 12, in alloc\n'
        "    raise RuntimeError(\n" + OOM_LINE
    )
    assert _ids(text, test_path=in_test_code)[0] == TEST_OOM.id
    server_side = text.replace("/home/me/proj/tests/test_serving.py", "/srv/app/launch.py")
    server_side = server_side.replace("sglang/test/test_fake_oom.py", "sglang/srt/x/alloc.py")
    assert _ids(server_side, test_path=in_test_code)[0] == SERVER_OOM.id


STRONG = row(
    "Unknown quantization method: {method}. Must be one of {known}",
    occ("python/sglang/srt/layers/quant.py", 10, "get_quant", "0.5.23"),
)
WEAK = row(
    "server_args must be set",
    occ("python/sglang/srt/multimodal/processor.py", 10, "Processor.__init__", "0.5.23"),
    exception="AssertionError",
)


def test_a_weak_guess_is_dropped_when_a_match_exists() -> None:
    index = build_index([STRONG, WEAK])
    alone = match_text(index, "the log says server_args was not set")
    assert [m.entry.id for m in alone] == [WEAK.id]
    assert alone[0].score < WEAK_BELOW  # a weak guess, kept when nothing better shows
    both = "ValueError: Unknown quantization method: foo. Must be one of ['fp8']\n"
    found = match_text(index, both + "the log says server_args was not set")
    assert [m.entry.id for m in found] == [STRONG.id]


def _unsupported(name: str, path: str, function: str) -> object:
    return row(
        "{" + name + "} is not supported with this attention backend",
        occ(f"python/sglang/srt/models/{path}", 700, function, "0.5.23"),
    )


def test_the_file_and_function_of_the_frame_decide_between_errors_alike() -> None:
    # Four errors read the same words; the frame's line (683) is of a release between the pins.
    rows = [
        _unsupported("method", "llama.py", "LlamaAttention.forward"),
        _unsupported("kind", "qwen2.py", "Qwen2Attention.forward"),
        _unsupported("feature", "deepseek_v2.py", "DeepseekV2Model.init_weights"),
        _unsupported("backend", "deepseek_v2.py", "DeepseekV2AttentionMLA.forward_absorb"),
    ]
    text = (
        "Traceback (most recent call last):\n"
        f'  File "{SP}/sglang/srt/models/deepseek_v2.py", line 683, in forward_absorb\n'
        "    raise ValueError(\n"
        "ValueError: MLA is not supported with this attention backend\n"
    )
    ids = [r.id for r in rows]  # type: ignore[attr-defined]
    assert min(ids) == ids[0]  # the ids alone would put llama's error first
    alone = match_text(build_index(rows[:1] + rows[3:]), text.replace("683", "9"))
    index = build_index(rows)  # type: ignore[arg-type]
    found = match_text(index, text)
    assert [m.entry.id for m in found] == [ids[3], ids[2], ids[0], ids[1]]
    # Its file and function: read as surely as a pinned site would be, the others raised
    # elsewhere are contradicted; among those, the same file first, then alike by id.
    assert found[0].score > found[1].score == found[2].score == found[3].score
    assert found[0].affinity == 2 and found[1].affinity == 1
    assert len(alone) == 2 and alone[0].entry.id == ids[3]
    in_qwen = text.replace("deepseek_v2.py", "qwen2.py").replace("forward_absorb", "forward")
    assert match_text(index, in_qwen)[0].entry.id == ids[1]


def test_a_frame_brings_its_function_s_errors_however_few_words_they_share() -> None:
    generic = row(
        "Unsupported activation: {act}.",
        occ("python/sglang/srt/models/llama.py", 90, "LlamaMLP.__init__", "0.5.23"),
    )
    tails = {"laguna": "for now", "apertus": "by this checkpoint", "mimo": "here"}
    rows = [generic] + [
        row(
            "Unsupported activation: {act}. Only silu is supported " + tail + ".",
            occ(f"python/sglang/srt/models/{model}.py", 90, f"{model}MLP.__init__", "0.5.23"),
        )
        for model, tail in tails.items()
    ]
    # Many shorter messages share the words and outrank it among the candidates by words.
    rows += [
        row(
            "Unsupported activation: {act} in layer " + f"kind {n}",
            occ(f"python/sglang/srt/layers/kind{n}.py", 5, "make", "0.5.23"),
        )
        for n in range(60)
    ]
    text = (
        "Traceback (most recent call last):\n"
        f'  File "{SP}/sglang/srt/models/apertus.py", line 999, in __init__\n'
        "    raise ValueError(\n"
        "ValueError: Unsupported activation: gelu."
    )
    index = build_index(rows)
    found = match_text(index, text)
    assert found[0].entry.id == rows[2].id and found[0].affinity == 2
    unnamed = match_text(replace(index, functions={}), text)  # candidates by words alone
    assert rows[2].id not in [m.entry.id for m in unnamed]


def test_a_test_raise_read_weakly_outside_a_test_is_not_offered() -> None:
    torch = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a"
    index = build_index([TEST_OOM], test_path=in_test_code)
    unmarked = match_text(build_index([TEST_OOM]), torch)
    assert [m.entry.id for m in unmarked] == [TEST_OOM.id]  # it reads some of the words
    assert match_text(index, torch) == []
    in_test = '  File "/home/me/proj/tests/test_oom.py", line 3, in test_big\n    f()\n' + torch
    assert [m.entry.id for m in match_text(index, in_test)] == [TEST_OOM.id]
