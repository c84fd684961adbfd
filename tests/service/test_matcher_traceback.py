"""Traceback frames: parsed through wrapping and prefixes, tied to the message, pinned to sites."""

from __future__ import annotations

from matcher_rows import occ, row

from errkb.service.match.matcher.frames import Frame, frame_before, is_foreign, pinned_sites
from errkb.service.match.matcher.index import OccurrenceRow, compile_entry
from errkb.service.match.matcher.normalize import prepare

SITE_PACKAGES = "/usr/lib/python3.11/site-packages"
TRACEBACK = f"""Traceback (most recent call last):
  File "{SITE_PACKAGES}/sglang/srt/managers/scheduler.py", line 2741, in run
    scheduler = Scheduler(server_args)
  File "{SITE_PACKAGES}/sglang/srt/mem_cache/kv_cache_configurator.py", line 406, in _init_pools
    raise ValueError(
ValueError: --enable-unified-memory with PD disaggregation does not support hybrid-SWA models yet
"""


def _frames(text: str) -> list[tuple[str, int, str]]:
    """Every frame, found the way the matcher looks: backwards from just after each one."""
    sq = prepare(text).squeezed
    found: list[Frame] = []
    at = sq.find('File"')
    while at >= 0:
        nxt = sq.find('File"', at + 1)
        frame = frame_before(sq, len(sq) if nxt < 0 else nxt)
        if frame is not None and frame.start == at:
            found.append(frame)
        at = nxt
    return [(f.path, f.line, f.tail[:11]) for f in found]


def test_frames_are_parsed() -> None:
    assert _frames(TRACEBACK) == [
        (f"{SITE_PACKAGES}/sglang/srt/managers/scheduler.py", 2741, "runschedule"),
        (f"{SITE_PACKAGES}/sglang/srt/mem_cache/kv_cache_configurator.py", 406, "_init_pools"),
    ]


def test_frames_survive_hard_wrapping_and_per_line_prefixes() -> None:
    wrapped = "\n".join(
        "(Worker pid=12) " + line[i : i + 40]
        for line in TRACEBACK.splitlines()
        for i in range(0, max(len(line), 1), 40)
    )
    assert _frames(wrapped) == _frames(TRACEBACK)


def test_windows_paths_and_garbage_frames() -> None:
    text = 'File "C:\\py\\Lib\\site-packages\\pkg\\a.py", line 7, in f\nFile "x", line , in g'
    sq = prepare(text).squeezed
    frame = frame_before(sq, len(sq))
    assert frame is not None and (frame.path, frame.line) == ("C:/py/Lib/site-packages/pkg/a.py", 7)
    assert frame.tail.startswith("fFile")  # the function name, glued to what follows


def test_the_message_after_a_traceback_belongs_to_its_innermost_frame() -> None:
    sq = prepare(TRACEBACK + "\n" + "unrelated log line " * 200 + "ValueError: later").squeezed
    frame = frame_before(sq, sq.index("ValueError:--enable"))
    assert frame is not None and frame.line == 406
    assert frame_before(sq, sq.index("ValueError:later")) is None
    assert frame_before(sq, 0) is None


def test_thousands_of_frames_are_not_all_parsed() -> None:
    sq = prepare('File "/x/a.py", line 1, in f\n' * 50_000 + "ValueError: boom").squeezed
    frame = frame_before(sq, sq.index("ValueError:"))
    assert frame is not None and frame.line == 1 and frame.start > len(sq) - 100


def test_pinning_uses_path_suffix_line_range_and_function() -> None:
    occurrences = (
        OccurrenceRow(
            "python/sglang/srt/mem_cache/kv_cache_configurator.py",
            406,
            411,
            "KVCacheConfigurator._init_pools",
            "0.5.18",
            "a",
            "python/",
        ),
        OccurrenceRow(
            "python/sglang/srt/mem_cache/kv_cache_configurator.py",
            451,
            456,
            "KVCacheConfigurator._init_pools",
            "0.5.19",
            "b",
            "python/",
        ),
        OccurrenceRow("python/sglang/srt/other.py", 406, 409, "f", "0.5.19", "b", "python/"),
    )
    entry, _ = compile_entry(row("message text", *occurrences))

    def innermost(text: str) -> Frame:
        sq = prepare(text).squeezed
        frame = frame_before(sq, sq.index("ValueError:--"))
        assert frame is not None
        return frame

    assert [s.snapshot for s in pinned_sites(innermost(TRACEBACK), entry.sites)] == ["0.5.18"]
    moved = innermost(TRACEBACK.replace("line 406", "line 453"))
    assert [s.snapshot for s in pinned_sites(moved, entry.sites)] == ["0.5.19"]
    elsewhere = innermost(TRACEBACK.replace("line 406", "line 300"))
    assert pinned_sites(elsewhere, entry.sites) == []
    other_file = innermost(TRACEBACK.replace("mem_cache/kv_cache_configurator", "x"))
    assert pinned_sites(other_file, entry.sites) == []


def test_foreign_frames_need_a_project_folder_to_compare_with() -> None:
    sq = prepare('File "/venv/site-packages/vllm/engine.py", line 9, in f\nValueError: x').squeezed
    frame = frame_before(sq, sq.index("ValueError"))
    assert frame is not None
    nested, _ = compile_entry(row("x", occ("python/sglang/srt/a.py", 9, "f", "1")))
    flat, _ = compile_entry(row("x", occ("python/engine.py", 9, "f", "1")))
    assert nested.roots == ("sglang",) and is_foreign(frame, nested.roots)
    assert flat.roots == () and not is_foreign(frame, flat.roots)
