"""Traceback frames: parsed through wrapping and prefixes, tied to the message, pinned to sites."""

from __future__ import annotations

from matcher_rows import row

from service.matcher.index import OccurrenceRow, compile_entry
from service.matcher.normalize import prepare
from service.matcher.traceback import frames, owning_frame, pinned_sites

SITE_PACKAGES = "/usr/lib/python3.11/site-packages"
TRACEBACK = f"""Traceback (most recent call last):
  File "{SITE_PACKAGES}/sglang/srt/managers/scheduler.py", line 2741, in run
    scheduler = Scheduler(server_args)
  File "{SITE_PACKAGES}/sglang/srt/mem_cache/kv_cache_configurator.py", line 406, in _init_pools
    raise ValueError(
ValueError: --enable-unified-memory with PD disaggregation does not support hybrid-SWA models yet
"""


def _frames(text: str) -> list[tuple[str, int, str]]:
    return [(f.path, f.line, f.tail[:11]) for f in frames(prepare(text).squeezed)]


def test_frames_are_parsed_in_order() -> None:
    assert _frames(TRACEBACK) == [
        ("/usr/lib/python3.11/site-packages/sglang/srt/managers/scheduler.py", 2741, "runschedule"),
        (
            "/usr/lib/python3.11/site-packages/sglang/srt/mem_cache/kv_cache_configurator.py",
            406,
            "_init_pools",
        ),
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
    found = frames(prepare(text).squeezed)
    assert [(f.path, f.line) for f in found] == [("C:/py/Lib/site-packages/pkg/a.py", 7)]
    assert found[0].tail.startswith("fFile")  # the function name, glued to what follows


def test_the_message_after_a_traceback_belongs_to_its_innermost_frame() -> None:
    sq = prepare(TRACEBACK + "\n" + "unrelated log line " * 200 + "ValueError: later").squeezed
    found = frames(sq)
    starts = [f.start for f in found]
    message_at = sq.index("ValueError:--enable")
    assert owning_frame(found, starts, message_at) is found[1]
    assert owning_frame(found, starts, sq.index("ValueError:later")) is None
    assert owning_frame(found, starts, 0) is None


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
    sq = prepare(TRACEBACK).squeezed
    frame = frames(sq)[1]
    assert [s.snapshot for s in pinned_sites(frame, entry.sites)] == ["0.5.18"]
    moved = frames(prepare(TRACEBACK.replace("line 406", "line 453")).squeezed)[1]
    assert [s.snapshot for s in pinned_sites(moved, entry.sites)] == ["0.5.19"]
    elsewhere = frames(prepare(TRACEBACK.replace("line 406", "line 300")).squeezed)[1]
    assert pinned_sites(elsewhere, entry.sites) == []
    other_file = frames(prepare(TRACEBACK.replace("mem_cache/kv_cache_configurator", "x")).squeezed)
    assert pinned_sites(other_file[1], entry.sites) == []
