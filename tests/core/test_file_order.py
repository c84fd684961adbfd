"""The order test files start in (tests/file_order.py): the longest first, the knowledge base's
builder first when it is still to be built, and the times kept for the next run."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import file_order
import pytest


def _item(nodeid: str, *marks: str, fixtures: tuple[str, ...] = ()) -> Any:
    markers = [SimpleNamespace(name=m) for m in marks]
    return SimpleNamespace(nodeid=nodeid, iter_markers=lambda: iter(markers), fixturenames=fixtures)


ITEMS = [
    _item("tests/a.py::one"),
    _item("tests/e2e/kb.py::one", "sglang", fixtures=("sglang_kb_url",)),
    _item("tests/a.py::two"),
    _item("tests/e2e/kb2.py::one", "sglang", fixtures=("sglang_kb_extended_url",)),
    _item("tests/e2e/alone.py::one", "sglang"),
    _item("tests/b.py::one"),
]


def _files(items: list[Any]) -> list[str]:
    return [i.nodeid for i in items]


def test_files_start_longest_first_with_their_tests_together_and_in_order() -> None:
    seconds = {"tests/a.py": 50.0, "tests/e2e/kb.py": 10.0, "tests/b.py": 300.0}
    assert _files(file_order.ordered(ITEMS, seconds, kb_ready=True)) == [
        "tests/b.py::one",
        "tests/e2e/kb2.py::one",  # never timed here, but a whole-release file: 60 s
        "tests/e2e/alone.py::one",
        "tests/a.py::one",
        "tests/a.py::two",
        "tests/e2e/kb.py::one",
    ]


def test_without_the_knowledge_base_one_file_builds_it_and_the_others_wait_their_turn() -> None:
    seconds = {"tests/e2e/kb2.py": 500.0, "tests/e2e/kb.py": 400.0, "tests/b.py": 2.0}
    assert _files(file_order.ordered(ITEMS, seconds, kb_ready=False)) == [
        "tests/e2e/kb2.py::one",  # the longest that needs it: builds it
        "tests/e2e/alone.py::one",  # then every file that does not need it, longest first
        "tests/b.py::one",
        "tests/a.py::one",
        "tests/a.py::two",
        "tests/e2e/kb.py::one",  # the others that need it, once it is there
    ]


def test_times_are_kept_per_file_and_merged_with_earlier_runs(tmp_path: Path) -> None:
    first = file_order.Timer()
    for nodeid, seconds in (
        ("tests/a.py::one", 1.5),
        ("tests/a.py::two", 2.0),
        ("tests/b.py::x", 4.0),
    ):
        first.add(
            pytest.TestReport(nodeid, ("", 0, ""), {}, "passed", None, "call", duration=seconds)
        )
    first.save(tmp_path)
    second = file_order.Timer()
    second.add(
        pytest.TestReport("tests/b.py::x", ("", 0, ""), {}, "passed", None, "setup", duration=7.0)
    )
    second.save(tmp_path)
    assert file_order.load(tmp_path) == {"tests/a.py": 3.5, "tests/b.py": 7.0}
    assert list(tmp_path.iterdir()) == [tmp_path / "durations.json"]  # no partial file left


def test_unreadable_times_count_as_none(tmp_path: Path) -> None:
    (tmp_path / "durations.json").write_text("not json")
    assert file_order.load(tmp_path) == {}
