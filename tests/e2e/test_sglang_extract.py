"""Extraction on real sglang releases: every ValueError site found, messages resolved, reference
error reproduced (acceptance of issue 2 for the pure core; the pipeline tests cover the store)."""

from __future__ import annotations

import ast
import warnings
import zipfile
from collections import Counter

import pytest
from wheels import sglang_wheel

from errkb.core.records import ExtractConfig, FileResult, Site
from errkb.ingest.extract import extract_file

pytestmark = pytest.mark.sglang

CONFIG = ExtractConfig()
REFERENCE_PATH = "sglang/srt/mem_cache/kv_cache_configurator.py"
REFERENCE_MESSAGE = (
    "--enable-unified-memory with PD disaggregation does not support hybrid-SWA models yet "
    "(no whole-envelope transfer scheme for the SWA sub-pool). Drop --enable-unified-memory "
    "or run without PD."
)


def python_files(version: str) -> dict[str, bytes]:
    """Every .py member of the release's wheel, read straight from the zip."""
    with zipfile.ZipFile(sglang_wheel(version)) as wheel:
        return {n: wheel.read(n) for n in wheel.namelist() if n.endswith(".py")}


def independent_sites(files: dict[str, bytes]) -> set[tuple[str, int]]:
    """(path, line) of every `raise ValueError` / `raise ValueError(...)`, by a plain ast.walk.

    Every file is parsed (no byte prefilter), so a site the extractor's prefilter or pruning
    would miss still counts here.
    """
    found = set()
    for path, data in files.items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # invalid escapes: DeprecationWarning in 3.11
            tree = ast.parse(data, path)
        for node in ast.walk(tree):
            if not isinstance(node, ast.Raise) or node.exc is None:
                continue
            exc = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
            name = exc.id if isinstance(exc, ast.Name) else getattr(exc, "attr", None)
            if name == "ValueError":
                found.add((path, node.lineno))
    return found


@pytest.fixture(scope="module")
def release_0523() -> dict[str, bytes]:
    return python_files("0.5.23")


@pytest.fixture(scope="module")
def extracted_0523(release_0523: dict[str, bytes]) -> dict[str, FileResult]:
    return {path: extract_file(data, path, CONFIG) for path, data in release_0523.items()}


def test_every_valueerror_site_of_0_5_23_is_found(
    release_0523: dict[str, bytes], extracted_0523: dict[str, FileResult]
) -> None:
    expected = independent_sites(release_0523)
    found = [(s.path, s.line) for r in extracted_0523.values() for s in r.sites]
    assert len(found) == len(set(found)), "a site reported twice"
    assert set(found) == expected
    assert len(expected) == 9196, "the fact in DESIGN.md"
    statuses = Counter(r.status for r in extracted_0523.values())
    print(f"\nfiles {len(release_0523)}: {dict(statuses)}")
    assert set(statuses) == {"ok", "prefiltered"}
    assert statuses["prefiltered"] / len(release_0523) > 0.5


def test_messages_of_0_5_23_are_resolved(extracted_0523: dict[str, FileResult]) -> None:
    sites = [s for r in extracted_0523.values() for s in r.sites]
    forms = Counter(s.template.form for s in sites)
    opaque = [s for s in sites if s.template.is_opaque]
    print(f"\nforms {dict(forms.most_common())}; opaque {len(opaque)} of {len(sites)}")
    for site in opaque:
        print(f"  opaque: {site.path}:{site.line} {site.raise_source!r}")
    assert 1 - len(opaque) / len(sites) >= 0.995
    assert forms["fstring"] > 5000 and forms["literal"] > 3800
    assert forms["none"] == sum(1 for s in sites if not s.raise_source)


def reference_site() -> Site:
    data = python_files("0.5.18")[REFERENCE_PATH]
    result = extract_file(data, REFERENCE_PATH, CONFIG)
    assert result.status == "ok"
    matches = [s for s in result.sites if s.template.display == REFERENCE_MESSAGE]
    assert len(matches) == 1
    return matches[0]


def test_reference_error_of_0_5_18() -> None:
    site = reference_site()
    assert (site.path, site.line, site.qualname) == (
        REFERENCE_PATH,
        406,
        "KVCacheConfigurator._init_pools",
    )
    assert site.template.form == "literal" and site.exception == "ValueError"
    held = {(c.expr, c.holds) for c in site.conditions}
    assert ("get_memory().enable_unified_memory and req_to_token_pool is None", True) in held
    assert ("self.mambaish_config is not None", False) in held
    swa = ast.unparse(
        ast.parse("self.is_hybrid_swa and not is_deepseek_v4(self.model_config.hf_config)")
    )
    assert (swa, True) in held
    (pd,) = [c for c in site.conditions if c.expr == "pd_enabled"]
    assert pd.holds and pd.resolved == (
        ("pd_enabled", "get_disagg().disaggregation_mode != 'null'"),
    )
    assert [c.kind for c in site.conditions] == ["if", "if", "elif", "if"]
    snippet = site.snippet
    assert (snippet.raise_start, snippet.raise_end) == (406, 411)
    assert snippet.start <= 389 < 406 < snippet.start + len(snippet.lines) - 1
    assert snippet.lines[406 - snippet.start].strip() == "raise ValueError("
