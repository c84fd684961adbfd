"""Sites in the project's own tests are classed as such, with the solution that fits a failing
test, instead of "we could not tell which input leads here"."""

from __future__ import annotations

import textwrap

import pytest

from errkb.core.records import ExtractConfig
from errkb.ingest.extract import extract_file
from errkb.knowledge import explain_error
from errkb.knowledge.who.evidence import in_test_code

EVERY = ExtractConfig(exceptions=("*",), asserts=True, lookups=("params_dict",))
SOURCE = textwrap.dedent(
    """
    def test_resize(server_args):
        size = server_args.max_total_tokens
        assert size == 1280
    """
).encode()


@pytest.mark.parametrize(
    "path,expected",
    [
        ("python/sglang/test/test_utils.py", True),
        ("python/sglang/multimodal_gen/test/unit/realtime/helpers.py", True),
        ("pkg/tests/conftest.py", True),
        ("pkg/ops/kv_test.py", True),
        ("pkg/testing_tools/x.py", False),  # a folder named like a test is not one
        ("pkg/srt/contest.py", False),
        ("pkg/srt/latest_checks.py", False),
    ],
)
def test_the_layout_convention_decides(path: str, expected: bool) -> None:
    assert in_test_code(path) is expected


def test_an_assert_in_a_test_file_is_a_failed_test_not_a_server_error() -> None:
    site = extract_file(SOURCE, "pkg/test/unit/test_resize.py", EVERY).sites[0]
    ex = explain_error(site, [], None, project="demo")
    assert ex.who_hits_it.kind == "test"
    assert ex.what_it_means.text.startswith("This check is part of demo's own test code")
    first = ex.solutions[0]
    assert "demo's own tests" in first.text and "pkg/test/unit/test_resize.py" in first.text
    assert not any(s.kind == "report" for s in ex.solutions)


def test_the_same_assert_outside_the_tests_is_not_classed_as_one() -> None:
    site = extract_file(SOURCE, "pkg/srt/resize.py", EVERY).sites[0]
    ex = explain_error(site, [], None, project="demo")
    assert ex.who_hits_it.kind != "test"
    text = ex.what_it_means.text
    assert "test code" not in text and text.startswith("We could not tell"), text
    assert not any("own tests" in s.text for s in ex.solutions)
