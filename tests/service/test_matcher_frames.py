"""Matching by frame: a traceback whose message is missing or cut is matched by its innermost
frame when that frame is on a raise line; a quoted opening of a message in prose is found."""

from __future__ import annotations

from matcher_rows import occ, row

from errkb.service.match.matcher import build_index, match_text
from errkb.service.match.matcher.frames import innermost_frames
from errkb.service.match.matcher.normalize import prepare

SP = "/opt/venv/lib/python3.10/site-packages"
RUNNER = "python/sglang/srt/managers/router/model_runner.py"


def _rows():  # type: ignore[no-untyped-def]
    """One error whose raise moved across releases, one raised nearby, one elsewhere."""
    moved = row(
        "Unsupported architectures: {arch}. Supported list: {names}",
        occ(RUNNER, 57, "get_model_cls_by_arch_name", "0.1.3", end_line=59),
        occ(RUNNER, 57, "get_model_cls_by_arch_name", "0.1.4", end_line=59),
        occ(RUNNER, 61, "get_model_cls_by_arch_name", "0.1.5", end_line=63),
    )
    nearby = row(
        "Unknown quantization method: {method}. Must be one of {known}",
        occ(RUNNER, 120, "ModelRunner.load_model", "0.1.4"),
        occ(RUNNER, 120, "ModelRunner.load_model", "0.1.5"),
    )
    elsewhere = row(
        "Unknown quantization config: {cfg}",
        occ("python/sglang/srt/layers/quant.py", 57, "get_config", "0.1.5"),
    )
    return [moved, nearby, elsewhere]


def _traceback(line: int, function: str, message: str | None = None) -> str:
    text = (
        "Traceback (most recent call last):\n"
        f'  File "{SP}/sglang/launch_server.py", line 14, in <module>\n'
        "    launch_server(server_args)\n"
        f'  File "{SP}/sglang/srt/managers/router/model_runner.py", line {line}, in {function}\n'
        "    raise ValueError(\n"
    )
    return text + (message + "\n" if message is not None else "")


def test_innermost_frames_one_per_traceback() -> None:
    two = _traceback(57, "f", "ValueError: a") + "\nlater\n" + _traceback(120, "g")
    frames = innermost_frames(prepare(two).squeezed)
    assert [(f.path.rsplit("/", 1)[-1], f.line) for f in frames] == [
        ("model_runner.py", 57),
        ("model_runner.py", 120),
    ]
    chained = _traceback(57, "f", "ValueError: a").replace("Traceback", "During handling of the")
    assert len(innermost_frames(prepare(chained + _traceback(120, "g")).squeezed)) == 2


def test_a_traceback_without_its_message_is_matched_by_its_frame() -> None:
    index = build_index(_rows())
    (top, *rest) = match_text(index, _traceback(57, "get_model_cls_by_arch_name"))
    assert top.entry.title.startswith("Unsupported architectures")
    assert top.snapshots == ("0.1.3", "0.1.4") and top.site_line == 57 and top.matched == 0
    assert top.score == 0.7  # file, line and function; no class named, no message read
    assert rest == []  # the raise of quant.py:57 is in another file
    moved = match_text(index, _traceback(62, "get_model_cls_by_arch_name", "ValueError"))[0]
    assert moved.snapshots == ("0.1.5",) and moved.score == 0.8
    # Only the line: a call line of the same function that is no raise finds nothing.
    assert match_text(index, _traceback(58 + 40, "get_model_cls_by_arch_name")) == []
    # A frame that is not the innermost is a call, not a raise.
    deeper = _traceback(57, "get_model_cls_by_arch_name") + f'  File "{SP}/torch/x.py", line 3\n'
    assert match_text(index, deeper) == []


def test_a_cut_message_ranks_by_its_frame_and_a_full_one_by_its_text() -> None:
    index = build_index(_rows())
    cut = _traceback(120, "load_model", "ValueError: Unkn")
    (top, *_) = match_text(index, cut)
    assert top.entry.title.startswith("Unknown quantization method")
    assert top.snapshots == ("0.1.4", "0.1.5") and top.score == 0.8
    full = _traceback(
        57, "get_model_cls_by_arch_name", "ValueError: Unknown quantization config: x"
    )
    titles = [m.entry.title for m in match_text(index, full)]
    # The message is read: the frame's error is not added on top of the one the text shows.
    assert titles[0].startswith("Unknown quantization config")
    assert not any(t.startswith("Unsupported") for t in titles)


def test_a_quoted_opening_in_prose_is_found_when_it_is_distinctive() -> None:
    index = build_index(_rows())
    prose = "After upgrading, load_model raised `Unknown quantization method` and the server quit."
    (top, *_) = match_text(index, prose)
    assert top.entry.title.startswith("Unknown quantization method") and top.score >= 0.6
    quoted_same = prose.replace("`", "'")
    assert match_text(index, quoted_same)[0].score == top.score
    unquoted = match_text(index, prose.replace("`", ""))
    assert not unquoted or unquoted[0].score < top.score
    short = match_text(index, "it raised `Unknown quant` at start")  # too short to tell
    assert not short or short[0].score < 0.5
    # The class's name may sit inside the quotes, before the opening words.
    with_class = prose.replace("`Unknown", "`ValueError: Unknown")
    assert match_text(index, with_class)[0].score >= top.score  # and the class is named


def test_raise_lines_lookup_finds_every_span_holding_the_line() -> None:
    rows = [
        row(f"error number {i} is raised here", occ(RUNNER, lo, "f", "1", end_line=hi))
        for i, (lo, hi) in enumerate([(10, 40), (12, 12), (20, 22), (41, 45), (5, 9)])
    ]
    index = build_index(rows)
    ids = {e.id: n for n, e in enumerate(index.entries)}
    by_title = {e.title: ids[e.id] for e in index.entries}

    def at(line: int) -> set[str]:
        found = index.raised_at("/x/sglang/srt/managers/router/model_runner.py", line)
        return {t.split()[2] for t, n in by_title.items() if n in found}

    assert at(12) == {"0", "1"} and at(21) == {"0", "2"} and at(40) == {"0"}
    assert at(41) == {"3"} and at(9) == {"4"} and at(46) == set() and at(4) == set()
    assert index.raised_at("/x/other.py", 12) == []
