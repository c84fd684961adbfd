"""The order in which test files start: the longest first.

`make test` hands whole files to its test processes (pytest-xdist, `--dist loadfile`), each
taking the next file in collection order when it is free. A long file that starts last keeps one
process busy while the others have nothing left, so files are ordered by how long they took in
the last run on this machine (kept beside the test knowledge bases), longest first; a file never
timed here counts as long when it holds a whole-release, browser or slow test. Tests within a file
keep their order.
"""

from __future__ import annotations

import json
import os
from collections import defaultdict
from pathlib import Path

import pytest

LONG = ("sglang", "browser", "slow")  # markers of the files that take minutes
UNTIMED_LONG, UNTIMED = 60.0, 1.0  # seconds assumed for a file never timed here
KB_FIXTURES = {"sglang_kb_url", "sglang_kb_pg_url", "sglang_kb_extended_url", "sglang_kb_docs_url"}


def _path(cache: Path) -> Path:
    return cache / "durations.json"


def load(cache: Path) -> dict[str, float]:
    """Seconds per test file (its node id's path) in the last runs here; empty when unknown."""
    try:
        data = json.loads(_path(cache).read_text())
    except (OSError, ValueError):
        return {}
    return {k: float(v) for k, v in data.items()} if isinstance(data, dict) else {}


def ordered(
    items: list[pytest.Item], seconds: dict[str, float], kb_ready: bool
) -> list[pytest.Item]:
    """`items` with their files longest first, each file's tests together and in their order.

    When the shared knowledge base is still to be built (`kb_ready` false), the first file that
    needs it starts first, and every file that does not comes before the other files that do:
    the other test processes keep busy while one builds it, instead of waiting for it."""
    files: dict[str, list[pytest.Item]] = defaultdict(list)
    for item in items:
        files[item.nodeid.split("::", 1)[0]].append(item)

    def length(name: str) -> float:
        if name in seconds:
            return seconds[name]
        long = any(m.name in LONG for item in files[name] for m in item.iter_markers())
        return UNTIMED_LONG if long else UNTIMED

    def needs_kb(name: str) -> bool:
        return any(KB_FIXTURES & set(getattr(item, "fixturenames", ())) for item in files[name])

    names = sorted(files, key=lambda name: -length(name))
    if not kb_ready:
        builder = next((name for name in names if needs_kb(name)), None)
        # stable: longest first within the builder, the files without it, the others with it
        names.sort(key=lambda name: 0 if name == builder else 1 + needs_kb(name))
    return [item for name in names for item in files[name]]


class Timer:
    """Adds up each file's setup, call and teardown times as reports arrive (in the process
    that runs pytest: with xdist, the main one receives every test process's reports)."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = defaultdict(float)

    def add(self, report: pytest.TestReport) -> None:
        self.seconds[report.nodeid.split("::", 1)[0]] += report.duration

    def save(self, cache: Path) -> None:
        """Merge this run's files into the kept times (a partial run updates only its files)."""
        if not self.seconds:
            return
        kept = load(cache) | {k: round(v, 1) for k, v in self.seconds.items()}
        cache.mkdir(parents=True, exist_ok=True)
        partial = _path(cache).with_suffix(f".{os.getpid()}")
        partial.write_text(json.dumps(kept, indent=0, sort_keys=True))
        os.replace(partial, _path(cache))
