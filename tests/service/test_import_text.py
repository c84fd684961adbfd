"""Failed imports told in other words are restated as Python's message (pure, no DB)."""

from __future__ import annotations

from errkb.service.match.import_text import restated


def said(text: str) -> list[str]:
    return [r.message for r in restated(text)]


def test_prose_names_the_missing_name_and_module() -> None:
    assert said("it says it can't import build_regex_from_object") == [
        "cannot import name 'build_regex_from_object'",
        "No module named 'build_regex_from_object'",
    ]
    assert said("Failed to import `fused_moe` from `sgl_kernel.moe`.") == [
        "cannot import name 'fused_moe' from 'sgl_kernel.moe'"
    ]


def test_an_import_that_did_not_fail_is_not_restated() -> None:
    assert said("we import numpy here and everything works") == []
    assert said("from outlines import generate") == []


def test_an_unquoted_module_gets_its_quotes_back() -> None:
    assert said("error: No module named sgl_kernel, what now?") == ["No module named 'sgl_kernel'"]
    assert said("ModuleNotFoundError: No module named 'sgl_kernel'") == []


def test_an_undefined_symbol_names_the_package_its_library_lies_in() -> None:
    text = (
        "ImportError: /opt/venv/lib/python3.12/site-packages/sgl_kernel/common_ops.abi3.so: "
        "undefined symbol: _ZN3c104cuda9SetDeviceEi"
    )
    found = restated(text)
    assert [r.message for r in found] == ["No module named 'sgl_kernel'"]
    assert text[found[0].start : found[0].end].endswith("undefined symbol")
    assert said("libcudart.so.12: cannot open shared object file") == []


def test_restating_is_bounded_on_huge_input() -> None:
    text = "".join(f"can't import x{i}\n" for i in range(10_000))
    assert len(restated(text)) == 20
