"""Linking with the read filter against exhaustive linking, on every site of a real release.

The pipeline analyzes only the texts `ingest.read_filter` keeps; these tests run every site of
sglang 0.5.23 through both paths and check every text the filter drops against the exact rule.
"""

from __future__ import annotations

import ast
import warnings
from collections import Counter

import pytest
from wheels import ROOT, sglang_wheel

from errkb.core.flag_catalog import flag_catalog
from errkb.core.records import FlagDef, Site
from errkb.ingest.extract import extract_file
from errkb.ingest.flag_links.linker import Linker, linked_sites
from errkb.ingest.flag_links.reads import Reads, parse_expr
from errkb.ingest.pins import load_pins
from errkb.ingest.sources.pypi import archive_files

pytestmark = pytest.mark.sglang

MAX_BYTES = 2_000_000


@pytest.fixture(scope="module")
def release_0523() -> tuple[list[Site], dict[str, FlagDef]]:
    """Every site of the release at its repo path, and the release's flag catalog."""
    repo = load_pins(ROOT / "pins.toml").repo("sgl-project/sglang")
    config = repo.extract_config(MAX_BYTES)
    sites: list[Site] = []
    flags: list[FlagDef] = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scanned code's invalid escapes are not our warnings
        for f in archive_files(sglang_wheel("0.5.23"), repo.path_prefix, MAX_BYTES):
            if f.skip is None:
                result = extract_file(f.data, f.path, config)
                sites += result.sites
                flags += result.flags
    return sites, flag_catalog(flags)


def test_filtered_linking_equals_exhaustive_linking_on_every_site(
    release_0523: tuple[list[Site], dict[str, FlagDef]],
) -> None:
    sites, catalog = release_0523
    exhaustive = Linker(catalog, exhaustive=True)
    expected = [exhaustive.involvements(site) for site in sites]
    linked = linked_sites(sites, catalog)
    assert [site for site, _ in linked] == sites
    for (site, links), want in zip(linked, expected, strict=True):
        assert links == want, f"{site.path}:{site.line}"
    sides = Counter(side for links in expected for e in links for side in e.sides)
    involved = sum(1 for links in expected if links)
    print(f"\n{len(sites)} sites, {involved} involve flags; sides {dict(sides)}")
    # The comparison covers the whole release (every class, every assert) and real links.
    # 29,146 raises and asserts, and 17,896 sites of failed imports of other packages
    # (issue 45), which link no flag
    raised = [s for s in sites if s.kind != "import"]
    assert len(raised) == 29146 and len(sites) - len(raised) == 17896 and involved > 900
    assert sum(1 for site in sites if site.exception == "ValueError") == 9196
    assert sides["message"] > 100 and sides["condition"] > 800


def test_read_filter_keeps_every_text_that_reads_a_flag(
    release_0523: tuple[list[Site], dict[str, FlagDef]],
) -> None:
    sites, catalog = release_0523
    linker = Linker(catalog)
    assert linker.filter is not None
    texts = {
        (text, site.path)
        for site in sites
        for text in [
            *(seg.text for seg in site.template.segments if seg.kind == "placeholder"),
            *(
                text
                for cond in site.conditions
                for text in (cond.expr, *dict(cond.resolved).values())
            ),
        ]
    }
    reading = {(text, path) for text, path in texts if reads_exactly(text, path, linker)}
    kept = {(text, path) for text, path in texts if linker.filter.may_read(text, path)}
    assert reading <= kept, sorted(reading - kept)[:5]
    print(f"\n{len(texts)} texts, {len(reading)} read a flag, {len(kept)} kept")
    assert len(reading) > 500 and len(kept) < len(texts) / 10


def reads_exactly(text: str, path: str, linker: Linker) -> bool:
    """Whether some node of the text counts as a flag read at a site in `path` (the exact rule)."""
    node = parse_expr(text)
    reads = Reads(linker.catalog, path, linker.server_paths)
    return node is not None and any(reads.dest(child) is not None for child in ast.walk(node))
