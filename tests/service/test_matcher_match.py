"""The pure matcher end to end on a small hand-built index: ranking, spans, values, evidence."""

from __future__ import annotations

import random

from matcher_rows import occ, row

from errkb.service.match.matcher import build_index, match_text
from errkb.service.match.matcher.normalize import squeeze

SWA = (
    "--enable-unified-memory with PD disaggregation does not support hybrid-SWA models yet "
    "(no whole-envelope transfer scheme for the SWA sub-pool). Drop --enable-unified-memory "
    "or run without PD."
)
KV = "python/sglang/srt/mem_cache/kv_cache_configurator.py"
ROWS = [
    row(SWA, occ(KV, 406, "KVCacheConfigurator._init_pools", "0.5.18", 411),
        occ(KV, 451, "KVCacheConfigurator._init_pools", "0.5.19", 456)),
    row("Model architectures {architectures} are not supported for now. "
        "Supported architectures: {all_supported_archs}",
        occ("python/sglang/srt/models/registry.py", 70, "ModelRegistry._raise", "0.5.18")),
    row("The input ({input_token_num} tokens) is longer than the model's context length "
        "({self.context_len} tokens).",
        occ("python/sglang/srt/managers/tokenizer_manager.py", 600, "T.check", "0.5.18")),
    row("{name} is not a valid quantization method; choose one of {choices}",
        occ("python/sglang/srt/q.py", 5, "pick", "0.5.18")),
    row("Global server args is not set yet!", occ("python/sglang/srt/a.py", 1, "g", "0.5.18")),
    row("Global server args is not set yet!", occ("python/sglang/srt/b.py", 9, "h", "0.5.19"),
        exception="RuntimeError"),
    row("Invalid mode: forward_mode={forward_mode}",
        occ("python/sglang/srt/c.py", 3, "f", "0.5.19")),
    row("Invalid {what}", occ("python/sglang/srt/d.py", 3, "f", "0.5.19")),
]  # fmt: skip
INDEX = build_index(ROWS)
IDS = {r.template[0]["text"][:12] if r.template[0]["kind"] == "text" else "lead": r.id
       for r in ROWS if r.exception == "ValueError"}  # fmt: skip


def _top(text: str):  # type: ignore[no-untyped-def]
    found = match_text(INDEX, text)
    assert found, f"no match for {text[:80]!r}"
    return found[0]


def _hard_wrap(text: str, width: int = 80) -> str:
    return "\n".join(text[i : i + width] for i in range(0, len(text), width))


def test_a_prefixed_wrapped_message_is_found_with_its_span() -> None:
    log = (
        "[2026-01-05 10:00:01 TP0] Load weight end. type=Qwen3ForCausalLM\n"
        + _hard_wrap(f"[2026-01-05 10:00:02 TP0] ValueError: {SWA}")
        + "\n[2026-01-05 10:00:02 TP0] Received sigquit from a child process."
    )
    m = _top(log)
    assert m.entry.id == ROWS[0].id and m.score >= 0.9
    assert squeeze(log[m.start : m.end]) == squeeze(SWA)
    assert m.site is None and m.snapshots == ("0.5.18", "0.5.19")


def test_values_are_captured_under_their_expressions() -> None:
    text = (
        "I got: `ValueError: The input (85050 tokens) is longer than the model's context "
        "length (32768 tokens).`"
    )
    m = _top(text)
    assert m.entry.id == ROWS[2].id
    assert m.params == {"input_token_num": "85050", "self.context_len": "32768"}
    arch = _top("ValueError: Model architectures ['Glm4ForCausalLM'] are not supported for now. "
                "Supported architectures: dict_keys(['A', 'B'])")  # fmt: skip
    assert arch.params == {
        "architectures": "['Glm4ForCausalLM']",
        "all_supported_archs": "dict_keys(['A', 'B'])",
    }


def test_a_message_retyped_in_other_case_is_found_and_keeps_the_posters_values() -> None:
    # People retype what they saw: case changes, words run together or apart.
    m = _top("the server said: the INPUT (85050 Tokens) is longer than the model's context "
             "length (32768 TOKENS)")  # fmt: skip
    assert m.entry.id == ROWS[2].id and m.score >= 0.8
    assert m.params == {"input_token_num": "85050", "self.context_len": "32768"}
    retyped = _top("GLOBAL SERVER ARGS IS NOT SET YET!")
    assert retyped.entry.id in {ROWS[4].id, ROWS[5].id} and retyped.score >= 0.8


def test_a_json_escaped_message_in_an_api_error() -> None:
    body = (
        '{"object": "error", "message": "ValueError: Model architectures [\\"Glm4\\"] are not '
        'supported for now. \\nSupported architectures: dict_keys([\\"A\\"])", "code": 400}'
    )
    m = _top(body)
    assert m.entry.id == ROWS[1].id and m.score >= 0.9
    assert m.params == {
        "architectures": '["Glm4"]',
        "all_supported_archs": 'dict_keys(["A"])',
    }


def test_a_trailing_value_stops_at_the_quote_that_opened_the_message() -> None:
    for text, value in [
        ("`ValueError: Invalid mode: forward_mode=<ForwardMode.EXTEND: 1>` in the log",
         "<ForwardMode.EXTEND: 1>"),
        ("raised ValueError('Invalid mode: forward_mode=decode') twice", "decode"),
        ("ValueError: Invalid mode: forward_mode=decode, then it exits", "decode, then it exits"),
    ]:  # fmt: skip
        assert _top(text).params == {"forward_mode": value}


def test_a_leading_placeholder_value_starts_after_the_class() -> None:
    m = _top("[TP1] ValueError: 'awq_marlin2' is not a valid quantization method; choose one of x")
    assert m.entry.id == ROWS[3].id
    assert m.params == {"name": "'awq_marlin2'", "choices": "x"}


def test_several_errors_in_one_text_each_with_its_span() -> None:
    first = "ValueError: Global server args is not set yet!"
    second = (
        "ValueError: The input (5 tokens) is longer than the model's context length (2 tokens)."
    )
    text = f"{first}\nsome other line\n{second}\n"
    found = match_text(INDEX, text)
    by_id = {m.entry.id: m for m in found[:2]}
    assert set(by_id) == {ROWS[4].id, ROWS[2].id}
    assert all(m.score >= 0.9 for m in found[:2])
    a, b = by_id[ROWS[4].id], by_id[ROWS[2].id]
    assert a.end <= b.start
    assert text[a.start : a.end] == first.removeprefix("ValueError: ")
    assert text[b.start : b.end] == second.removeprefix("ValueError: ")


def test_the_named_exception_class_decides_between_identical_messages() -> None:
    assert _top("ValueError: Global server args is not set yet!").entry.id == ROWS[4].id
    assert _top("RuntimeError: Global server args is not set yet!").entry.id == ROWS[5].id


def test_traceback_frame_pins_site_and_snapshots() -> None:
    def traceback(line: int) -> str:
        return (
            "Traceback (most recent call last):\n"
            '  File "/opt/venv/lib/python3.11/site-packages/sglang/srt/mem_cache/'
            f'kv_cache_configurator.py", line {line}, in _init_pools\n'
            "    raise ValueError(\n"
            f"ValueError: {SWA}\n"
        )

    old = _top(traceback(406))
    assert old.entry.id == ROWS[0].id and old.snapshots == ("0.5.18",)
    assert old.site is not None and old.site.qualname == "KVCacheConfigurator._init_pools"
    assert old.site_line == 406
    new = _top(traceback(452))
    assert new.snapshots == ("0.5.19",) and new.site_line == 452
    unknown = _top(traceback(999))
    assert unknown.entry.id == ROWS[0].id and unknown.site is None
    assert unknown.snapshots == ("0.5.18", "0.5.19")


def test_the_same_words_raised_by_another_project_are_not_confident() -> None:
    def raised_in(path: str) -> str:
        return (
            "Traceback (most recent call last):\n"
            f'  File "/usr/lib/python3.12/site-packages/{path}", line 88, in check\n'
            f"ValueError: {SWA}\n"
        )

    ours = _top(raised_in("sglang/srt/mem_cache/allocator.py"))
    theirs = _top(raised_in("vllm/v1/core/kv_cache_utils.py"))
    assert ours.entry.id == theirs.entry.id == ROWS[0].id
    assert ours.score >= 0.9 and theirs.score < 0.8


def test_a_cut_message_still_matches_with_a_lower_score() -> None:
    full = _top(f"ValueError: {SWA}")
    cut = _top(f"ValueError: {SWA[:70]}")
    assert full.entry.id == cut.entry.id == ROWS[0].id
    assert full.score >= 0.9 > 0.8 > cut.score > 0.6


def test_short_templates_stay_weak() -> None:
    found = match_text(INDEX, "Invalid token")
    assert found and all(m.score < 0.5 for m in found)


def test_unrelated_text_matches_nothing() -> None:
    assert match_text(INDEX, "INFO: 127.0.0.1 - GET /health 200 OK\n") == []
    assert match_text(INDEX, "") == []


def test_results_are_ranked_and_limited() -> None:
    text = "ValueError: Invalid mode: forward_mode=<ForwardMode.DECODE: 2>"
    found = match_text(INDEX, text)
    assert [m.entry.id for m in found[:2]] == [ROWS[6].id, ROWS[7].id]
    assert [m.score for m in found] == sorted((m.score for m in found), reverse=True)
    assert len(match_text(INDEX, text, limit=1)) == 1


def test_hostile_inputs_return_normally() -> None:
    rng = random.Random(0)
    junk = "".join(chr(rng.randrange(0x20, 0x3000)) for _ in range(50_000))
    assert isinstance(match_text(INDEX, junk), list)
    assert match_text(INDEX, "a" * (1 << 20)) == []
    repeated = match_text(INDEX, "Model " * 200_000)
    assert all(m.score < 0.5 for m in repeated)
    ladder = match_text(INDEX, 'File "x.py", line 1, in f\n' * 30_000 + f"ValueError: {SWA}")
    assert ladder[0].entry.id == ROWS[0].id


def test_a_frame_decides_between_messages_that_begin_alike_when_the_text_is_cut() -> None:
    runner = "python/sglang/srt/model_executor/cuda_graph_runner.py"
    ours = row(
        "Capture cuda graph failed: {e}\nPossible solutions:\n1. disable cuda graph by "
        "--disable-cuda-graph\n2. set --mem-fraction-static to a smaller value",
        occ(runner, 266, "CudaGraphRunner.__init__", "0.4.5", 275),
        exception="Exception",
    )
    moved = row(
        "Capture cuda graph failed: {e}\n{CUDA_GRAPH_CAPTURE_FAILED_MSG}",
        occ("python/sglang/srt/model_executor/graph_capture.py", 80, "capture", "0.5.23"),
        exception="Exception",
    )
    index = build_index([ours, moved])
    text = (
        "Traceback (most recent call last):\n"
        f'  File "/sgl-workspace/sglang/{runner}", line 269, in __init__\n'
        "    raise Exception(\n"
        "Exception: Capture cuda graph failed: CUDA out of memory. Tried to allocate 448.00 MiB. "
        "GPU 7 has a total capacity of 95.00"
    )
    found = match_text(index, text)
    assert [m.entry.id for m in found] == [ours.id, moved.id]
    assert found[0].site is not None and found[0].site.line == 266
    # Without a frame, nothing tells them apart but the share of each message shown.
    bare = match_text(index, text.split("\n")[-1])
    assert bare[0].entry.id == moved.id


def test_a_named_class_brings_its_best_entries_into_the_candidates() -> None:
    from errkb.service.match.matcher.normalize import words

    # The words favour the ValueError "Invalid mode" entry; the text names a RuntimeError.
    text = "Invalid mode: forward_mode=EXTEND then a RuntimeError about server args"
    found = set(words(text))
    (top,) = [INDEX.entries[e] for e in INDEX.candidates(found, 1)]
    assert top.id == ROWS[6].id
    named = [INDEX.entries[e].id for e in INDEX.candidates(found, 1, per_class=1)]
    assert named == [ROWS[6].id, ROWS[5].id]  # the RuntimeError's best follows
    unnamed = set(words(text.replace("RuntimeError", "error")))
    assert len(INDEX.candidates(unnamed, 1, per_class=1)) == 1


def test_class_candidates_are_each_named_class_best_whether_or_not_the_top_holds_them() -> None:
    """The top `limit` entries, then the `per_class` best of each named class: the top is not
    searched again for a class it already holds enough of, and the set is the same."""
    import heapq

    from errkb.service.match.matcher.normalize import words

    def naive(found: set[bytes], limit: int, per_class: int) -> set[int]:
        mass: dict[int, float] = {}
        for word in found:
            for e, share in INDEX.postings.get(word, {}).items():
                mass[e] = mass.get(e, 0.0) + share
        best = set(heapq.nlargest(limit, mass, key=mass.__getitem__))
        for word in found:
            members = [e for e in mass if e in INDEX.classes.get(word, ())]
            best |= set(heapq.nlargest(per_class, members, key=mass.__getitem__))
        return best

    texts = [
        "ValueError: Invalid mode: forward_mode=EXTEND, Global server args is not set yet!",
        "RuntimeError: Global server args is not set yet! Invalid quantization method",
        "ValueError RuntimeError Invalid Invalid mode args tokens context length architectures",
    ]
    for text in texts:
        found = set(words(text))
        for limit in (1, 2, 3):
            for per_class in (1, 2, 3):
                got = INDEX.candidates(found, limit, per_class)
                assert len(got) == len(set(got))
                assert set(got) == naive(found, limit, per_class), (text, limit, per_class)


def test_the_best_candidates_are_those_nlargest_gives_in_its_order_ties_included() -> None:
    import heapq
    from operator import itemgetter

    from errkb.service.match.matcher.index import _SORT_BELOW, _best

    rng = random.Random(7)
    for size in (0, 1, 39, 40, 41, 300, _SORT_BELOW - 1, _SORT_BELOW, _SORT_BELOW + 500):
        scored = {rng.randrange(10 * size + 1): rng.choice((0.1, 0.2, 0.25)) for _ in range(size)}
        for n in (1, 8, 40):
            want = [e for e, _ in heapq.nlargest(n, scored.items(), key=itemgetter(1))]
            assert _best(n, scored) == want, (size, n)
