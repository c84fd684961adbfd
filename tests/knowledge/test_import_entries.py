"""Failed-import entries (pure): the distribution behind a module, the declared range, the fixes."""

from __future__ import annotations

import textwrap

from errkb.core.declared import Declared
from errkb.core.records import ExtractConfig, Site, Vocabulary
from errkb.ingest.extract import extract_file
from errkb.knowledge.imports import explain_import, import_facts
from errkb.knowledge.imports.distributions import distribution_of
from errkb.knowledge.imports.fixes import pinned_spec

TABLE = (
    ("sgl_kernel", "sglang-kernel"),
    ("sgl_kernel", "sgl-kernel"),
    ("cv2", "opencv-python"),
    ("flashinfer", "flashinfer-python"),
)
DECLARED = (
    Declared("sglang-kernel", "==0.4.10"),
    Declared("outlines", ">=0.0.27", extra="srt"),
    Declared("flashinfer_python", "==0.7.2", extras=("cu13",)),
    Declared("sglang", extra="all", extras=("srt",)),
)


def site(source: str, message: str) -> Site:
    result = extract_file(
        textwrap.dedent(source).encode(),
        "python/sglang/srt/x.py",
        ExtractConfig(own_packages=("sglang",)),
    )
    return next(s for s in result.sites if s.template.display == message)


def test_the_distribution_by_name_by_table_or_undeclared() -> None:
    kernel = distribution_of("sgl_kernel.moe", DECLARED, TABLE, "sglang")
    assert (kernel.name, kernel.spec, kernel.extras) == (
        "sglang-kernel",
        "sglang-kernel==0.4.10",
        (),
    )
    outlines = distribution_of("outlines.fsm", DECLARED, TABLE, "sglang")
    assert (outlines.spec, outlines.extras) == ("outlines>=0.0.27", ("srt", "all"))
    # the table's name, found among the requirements as pip compares names, spelled as declared
    assert distribution_of("flashinfer", DECLARED, TABLE, "sglang").name == "flashinfer_python"
    assert distribution_of("flashinfer", DECLARED, (), "sglang").requirement is None
    cv2 = distribution_of("cv2", DECLARED, TABLE, "sglang")
    assert (cv2.name, cv2.requirement) == ("opencv-python", None)


def test_the_version_to_install() -> None:
    vocabulary = Vocabulary(distributions=TABLE)

    def spec(source: str, message: str) -> str:
        facts = import_facts(
            site(source, message),
            requirements=DECLARED,
            vocabulary=vocabulary,
            release="0.5.23",
            project="sglang",
        )
        return pinned_spec(facts)

    # a missing name: the lowest version the release accepts, the one it was written against
    assert spec("from outlines.fsm import x\n", "cannot import name 'x' from 'outlines.fsm'") == (
        "outlines==0.0.27"
    )
    # a missing module: the release's range as it stands
    assert spec("import outlines\n", "No module named 'outlines'") == "outlines>=0.0.27"
    assert spec("import sgl_kernel\n", "No module named 'sgl_kernel'") == "sglang-kernel==0.4.10"
    assert spec("import cv2\n", "No module named 'cv2'") == "opencv-python"


def test_an_undeclared_module_is_said_to_be_optional() -> None:
    ex = explain_import(
        site("import cv2\n", "No module named 'cv2'"),
        [],
        None,
        requirements=DECLARED,
        vocabulary=Vocabulary(distributions=TABLE),
        release="0.5.23",
        project="sglang",
    )
    assert "sglang 0.5.23 does not declare opencv-python" in ex.what_it_means.text
    assert ex.solutions[0].command == "pip install 'opencv-python'"
    assert ex.who_hits_it.kind == "dependency"


def test_requirements_never_read_are_said_so() -> None:
    ex = explain_import(
        site("import cv2\n", "No module named 'cv2'"),
        [],
        None,
        requirements=None,
        vocabulary=Vocabulary(),
        release="0.5.23",
        project="sglang",
    )
    assert "were not read" in ex.what_it_means.text


def test_the_trigger_shows_a_long_import_on_one_line() -> None:
    source = """
        from aiter import (  # noqa: F401
            flash_attn_varlen_func,
            get_mla_metadata_v1,
            get_ps_metadata_v1,
            mha_batch_prefill_func,
        )
        """
    found = extract_file(
        textwrap.dedent(source).encode(),
        "python/sglang/srt/x.py",
        ExtractConfig(own_packages=("sglang",)),
    )
    imported = next(s for s in found.sites if "aiter" in s.template.display)
    ex = explain_import(
        imported,
        [],
        None,
        requirements=DECLARED,
        vocabulary=Vocabulary(),
        release="0.5.23",
        project="sglang",
    )
    shown = "`from aiter import (flash_attn_varlen_func, get_mla_metadata_v1, get_ps_metadata_v1"
    assert ex.trigger.text.startswith("Running " + shown + ", and 1 more)`"), ex.trigger.text
    assert "\n" not in ex.trigger.text and "noqa" not in ex.trigger.text
