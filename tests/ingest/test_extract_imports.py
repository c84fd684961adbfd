"""Import sites: every import of another package, with its guard and fallback (pure, no DB)."""

from __future__ import annotations

import textwrap
import zipfile

import pytest
from wheels import sglang_wheel

from errkb.core.records import ExtractConfig, Site
from errkb.ingest.extract import extract_file
from errkb.ingest.sources.pypi import archive_requirements
from errkb.ingest.sources.requirements import from_metadata, from_pyproject
from errkb.knowledge.imports.guards import fallback_words, guard_of

CONFIG = ExtractConfig(exceptions=("*",), asserts=True, own_packages=("sglang",))
PATH = "python/sglang/srt/x.py"


def sites(source: str, config: ExtractConfig = CONFIG) -> list[Site]:
    """The import sites of a module's text."""
    result = extract_file(textwrap.dedent(source).encode(), PATH, config)
    assert result.status == "ok", result.detail
    return [s for s in result.sites if s.kind == "import"]


def messages(found: list[Site]) -> list[tuple[int, str, str]]:
    return [(s.line, s.exception, s.template.display) for s in found]


def test_each_import_of_another_package_is_the_errors_it_raises() -> None:
    found = sites(
        """
        import numpy as np
        from outlines.fsm.json_schema import build_regex_from_object, other
        """
    )
    assert messages(found) == [
        (2, "ModuleNotFoundError", "No module named 'numpy'"),
        (
            3,
            "ImportError",
            "cannot import name 'build_regex_from_object' from 'outlines.fsm.json_schema'",
        ),
        (3, "ImportError", "cannot import name 'other' from 'outlines.fsm.json_schema'"),
        (3, "ModuleNotFoundError", "No module named 'outlines'"),
        (3, "ModuleNotFoundError", "No module named 'outlines.fsm.json_schema'"),
    ]
    assert found[1].raise_source == (
        "from outlines.fsm.json_schema import build_regex_from_object, other"
    )


def test_own_relative_standard_and_type_checking_imports_are_not_sites() -> None:
    found = sites(
        """
        import os, json
        from typing import TYPE_CHECKING
        from sglang.srt.utils import is_cuda
        from . import sibling
        from __future__ import annotations
        if TYPE_CHECKING:
            import torch
        """
    )
    assert found == []


def test_no_import_sites_without_own_packages() -> None:
    plain = extract_file(b"import numpy\nraise ValueError('x')\n", PATH, ExtractConfig())
    assert [s.kind for s in plain.sites] == ["raise"]
    assert extract_file(b"import numpy\n", PATH, ExtractConfig()).status == "prefiltered"


def test_a_file_with_imports_only_is_not_prefiltered() -> None:
    result = extract_file(b"import sgl_kernel\n", PATH, CONFIG)
    assert [s.template.display for s in result.sites] == ["No module named 'sgl_kernel'"]


def test_a_guarded_import_says_it_falls_back_and_how() -> None:
    found = sites(
        """
        try:
            from flash_attn import flash_attn_varlen_func
        except ImportError:
            flash_attn_varlen_func = None
            logger.warning("flash_attn is not installed")
        """
    )
    guard = guard_of(found[0])
    assert guard.caught == "ImportError" and guard.falls_back
    assert fallback_words(guard) == (
        "When it fails, the code sets `flash_attn_varlen_func` to `None` and logs a message, "
        "and goes on."
    )


def test_a_handler_that_raises_is_no_fallback() -> None:
    found = sites(
        """
        try:
            import vllm
        except ImportError as e:
            raise ImportError("Please install vllm") from e
        """
    )
    guard = guard_of(found[0])
    assert guard.caught == "ImportError" and not guard.falls_back
    assert "raises another error" in fallback_words(guard)


def test_platform_checks_and_lazy_imports_are_kept() -> None:
    found = sites(
        """
        if _is_cuda:
            from sgl_kernel import fused_add_rmsnorm
        else:
            import vllm._custom_ops as ops

        class Layer:
            def forward(self):
                import triton
        """
    )
    by_message = {s.template.display: s for s in found}
    kernel = by_message["No module named 'sgl_kernel'"]
    assert [(c.kind, c.expr, c.holds) for c in kernel.conditions] == [("if", "_is_cuda", True)]
    assert by_message["No module named 'vllm._custom_ops'"].conditions[0].holds is False
    lazy = by_message["No module named 'triton'"]
    assert lazy.qualname == "Layer.forward" and lazy.conditions == ()


def test_pyproject_requirements_with_extras_and_markers() -> None:
    declared = from_pyproject(
        textwrap.dedent(
            """
            [project]
            dependencies = ["requests", "torch==2.9.1; sys_platform == 'linux'"]
            [project.optional-dependencies]
            srt = ["sgl-kernel==0.3.21", "outlines>=0.0.44,<0.1"]
            all = ["sglang[srt]"]
            """
        )
    )
    assert [(d.name, d.specifier, d.extra, d.marker, d.extras) for d in declared] == [
        ("requests", "", "", "", ()),
        ("torch", "==2.9.1", "", 'sys_platform == "linux"', ()),
        ("sgl-kernel", "==0.3.21", "srt", "", ()),
        ("outlines", "<0.1,>=0.0.44", "srt", "", ()),
        ("sglang", "", "all", "", ("srt",)),
    ]
    assert from_pyproject("not toml [") == ()


@pytest.mark.sglang
def test_the_requires_dist_of_a_real_wheel() -> None:
    """sglang 0.1.12 declares outlines>=0.0.27 in its srt extra, which `all` includes."""
    wheel = sglang_wheel("0.1.12")
    declared = archive_requirements(wheel)
    with zipfile.ZipFile(wheel) as zf:
        raw = zf.read("sglang-0.1.12.dist-info/METADATA").decode()
    assert declared == from_metadata(raw)
    assert len(declared) == raw.count("Requires-Dist:")
    outlines = [d for d in declared if d.name == "outlines"]
    assert [(d.specifier, d.extra) for d in outlines] == [(">=0.0.27", "srt")]
    assert any(d.name == "sglang" and d.extras == ("srt",) and d.extra == "all" for d in declared)
