"""Sites no message identifies (asserts, missing keys, bare raises) matched by the traceback's
frame: its line when a snapshot has it, else the statement it prints in the same function."""

from __future__ import annotations

from matcher_rows import occ, row

from errkb.service.match.matcher import ErrorRow, build_index, match_text

PATH = "python/sglang/srt/models/qwen2.py"


def _bare(eid: str, kind: str, exception: str, check: str, line: int, fn: str) -> ErrorRow:
    base = row("", occ(PATH, line, f"Qwen2ForCausalLM.{fn}", "0.5.23", line), exception=exception)
    return ErrorRow(eid, base.title, exception, [], base.occurrences, kind, check)


INDEX = build_index(
    [
        _bare("a" * 16, "assert", "AssertionError", "x.shape[0] == y", 120, "forward"),
        _bare("b" * 16, "assert", "AssertionError", "self.tp_size > 1", 130, "forward"),
        _bare("c" * 16, "lookup", "KeyError", "params_dict[name]", 400, "load_weights"),
        _bare("d" * 16, "raise", "NotImplementedError", "", 500, "extend"),
        row("Unsupported head size {n}", occ(PATH, 130, "Qwen2ForCausalLM.forward", "0.5.23")),
    ]
)


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
    moved = other.replace("models/qwen2.py", "models/llama.py").replace("load_weights", "forward")
    assert all(m.entry.id != "b" * 16 for m in match_text(INDEX, moved))


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
