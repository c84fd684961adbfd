"""Sites no message identifies (asserts, missing keys, bare raises) matched by the traceback's
frame: its line when a snapshot has it, else the statement it prints in the same function."""

from __future__ import annotations

from matcher_rows import occ, row

from errkb.service.match.matcher import ErrorRow, build_index, match_text

PATH = "python/sglang/srt/models/qwen2.py"


def _bare(eid: str, kind: str, exception: str, check: str, line: int, fn: str) -> ErrorRow:
    base = row("", occ(PATH, line, f"Qwen2ForCausalLM.{fn}", "0.5.23", line), exception=exception)
    return ErrorRow(eid, base.title, exception, [], base.occurrences, kind, check)


ROWS = [
        _bare("a" * 16, "assert", "AssertionError", "x.shape[0] == y", 120, "forward"),
        _bare("b" * 16, "assert", "AssertionError", "self.tp_size > 1", 130, "forward"),
        _bare("c" * 16, "lookup", "KeyError", "params_dict[name]", 400, "load_weights"),
        _bare("d" * 16, "raise", "NotImplementedError", "", 500, "extend"),
        row("Unsupported head size {n}", occ(PATH, 130, "Qwen2ForCausalLM.forward", "0.5.23")),
]  # fmt: skip
INDEX = build_index(ROWS)


def _traceback(line: int, function: str, printed: str, last: str) -> str:
    return (
        "Traceback (most recent call last):\n"
        '  File "/usr/lib/python3/site-packages/sglang/launch_server.py", line 10, in <module>\n'
        "    main()\n"
        f'  File "/usr/lib/python3/site-packages/sglang/srt/models/qwen2.py", line {line}, '
        f"in {function}\n    {printed}\n{last}\n[2026-01-02 10:00:00] scheduler exited\n"
    )


def test_a_bare_assertion_error_is_matched_by_its_printed_line_at_another_line() -> None:
    text = _traceback(171, "forward", "assert self.tp_size>1", "AssertionError")
    best = match_text(INDEX, text)[0]
    assert best.entry.id == "b" * 16 and best.score >= 0.7


def test_the_same_assert_printed_in_another_function_or_file_is_not_matched() -> None:
    other = _traceback(171, "load_weights", "assert self.tp_size > 1", "AssertionError")
    assert all(m.entry.id != "b" * 16 for m in match_text(INDEX, other))
    # A file whose function still raises in the knowledge base was not split: another file's
    # assert is not its.
    llama = row("llama only", occ("python/sglang/srt/models/llama.py", 5, "L.forward", "0.5.23"))
    index = build_index([*ROWS, llama])
    moved = other.replace("models/qwen2.py", "models/llama.py").replace("load_weights", "forward")
    assert all(m.entry.id != "b" * 16 for m in match_text(index, moved))


def test_a_key_error_from_load_weights_is_matched_by_its_subscript() -> None:
    text = _traceback(
        388,
        "load_weights",
        "param = params_dict[name]",
        "KeyError: 'model.layers.0.mlp.gate.weight'",
    )
    best = match_text(INDEX, text)[0]
    assert best.entry.id == "c" * 16 and best.score >= 0.7


def test_a_bare_not_implemented_error_is_matched_by_line_or_by_statement() -> None:
    for line in (500, 512):
        text = _traceback(line, "extend", "raise NotImplementedError()", "NotImplementedError")
        assert match_text(INDEX, text)[0].entry.id == "d" * 16


def test_opaque_entries_are_indexed_for_frames_but_not_for_words() -> None:
    assert INDEX.stats["entries"] == 5 and INDEX.stats["opaque"] == 4
    assert not match_text(INDEX, "self.tp_size > 1 params_dict name")


def test_an_indirect_raise_is_not_penalized_for_the_class_the_text_names() -> None:
    message = "the scheduler received a request it cannot route to any worker"
    direct = build_index([row(message, occ(PATH, 10, "Router.route", "0.5.23"))])
    indirect_row = row(message, occ(PATH, 10, "Router.route", "0.5.23"), exception="self._error")
    indirect = build_index([indirect_row])
    text = f"RouterError: {message}"
    assert match_text(indirect, text)[0].score > match_text(direct, text)[0].score


def _release_pair_index() -> object:
    """One file in two releases: line 305 raises in `init_new` in one, in `other` in the next;
    `init_new` also raises the same bare statement at other lines."""
    return build_index(
        [
            _bare("e" * 16, "raise", "NotImplementedError", "", 305, "init_new"),
            _bare("f" * 16, "raise", "NotImplementedError", "", 340, "init_new"),
            _bare("g" * 16, "raise", "NotImplementedError", "", 352, "init_new"),
            _bare("h" * 16, "assert", "AssertionError", "self.ready", 305, "other"),
        ]
    )


def test_a_frame_keeps_only_the_raise_at_its_line_that_prints_as_it_does() -> None:
    index = _release_pair_index()
    text = _traceback(305, "init_new", "raise NotImplementedError", "NotImplementedError")
    found = match_text(index, text)  # type: ignore[arg-type]
    assert [m.entry.id for m in found] == ["e" * 16]
    assert found[0].score >= 0.7  # not shared with the same statement at other lines


def test_a_frame_of_another_function_at_a_known_line_is_no_evidence() -> None:
    index = _release_pair_index()
    text = _traceback(305, "init_cache", "self.tree_cache = make()", "")
    assert match_text(index, text) == []  # type: ignore[arg-type]


def test_an_assert_named_in_prose_or_a_title_is_matched() -> None:
    index = build_index(
        [
            _bare("i" * 16, "assert", "AssertionError", "self.chunked_req is None", 90, "step"),
            _bare("j" * 16, "assert", "AssertionError", "self.chunked_req is None", 95, "run"),
            row("chunked_prefill_size must be divisible by page_size", occ(PATH, 9, "f", "0.5")),
        ]
    )
    title = "[Bug] AssertionError: assert self.chunked_req is None, related to chunked_prefill_size"
    prose = "Assertion `assert self.chunked_req is None` in line 1839 of qwen2.py is triggered"
    for text in (title, prose):
        best = match_text(index, text)[0]
        assert best.entry.id in ("i" * 16, "j" * 16) and best.score >= 0.7, text
    assert match_text(index, "we assert nothing about self.chunked_req here") == []


def test_a_key_error_whose_loader_is_named_in_prose_is_matched() -> None:
    other = "python/sglang/srt/models/gemma3_causal.py"
    index = build_index(
        [
            _bare("k" * 16, "lookup", "KeyError", "params_dict[name]", 400, "load_weights"),
            ErrorRow(
                "l" * 16,
                "KeyError",
                "KeyError",
                [],
                (occ(other, 410, "Gemma3ForCausalLM.load_weights", "0.5.23", 410),),
                "lookup",
                "params_dict[name]",
            ),
        ]
    )
    text = (
        "The failure happens in `Gemma3ForCausalLM.load_weights` while loading scales:\n"
        "KeyError: 'language_model.model.layers.0.self_attn.qkv_proj.k_scale'\n"
    )
    best = match_text(index, text)[0]
    assert best.entry.id == "l" * 16 and best.score >= 0.6
    assert match_text(index, text.replace("KeyError", "ValueError")) == []


def test_an_assert_whose_file_was_renamed_is_matched_by_its_function_and_check() -> None:
    renamed = "python/sglang/srt/mem_cache/unified_cache/unified_tree_core.py"
    index = build_index(
        [
            ErrorRow(
                "m" * 16,
                "assert cd.lock_ref == 0",
                "AssertionError",
                [],
                (occ(renamed, 1544, "UnifiedTreeCore._cascade_evict", "0.5.18", 1544),),
                "assert",
                "cd.lock_ref == 0",
            )
        ]
    )
    text = (
        "Traceback (most recent call last):\n"
        '  File "/venv/lib/python3.12/site-packages/sglang/srt/mem_cache/unified_radix_cache.py",'
        " line 892, in _cascade_evict\n    assert cd.lock_ref == 0\n           ^^^^^^^^^^\n"
        "AssertionError\n"
    )
    best = match_text(index, text)[0]
    assert best.entry.id == "m" * 16 and 0.5 <= best.score < 0.8  # weaker than its own file
    other_function = text.replace("in _cascade_evict", "in _evict_leaf")
    assert match_text(index, other_function) == []
