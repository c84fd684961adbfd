"""Real sglang releases for tests: fetched once from PyPI into a reusable cache folder."""

from __future__ import annotations

import os
from pathlib import Path

import kbcache

from errkb.ingest.sources.download import download

ROOT = Path(__file__).resolve().parent.parent

# The folder the test knowledge bases download into too: each wheel is fetched once per machine,
# into the user's cache folder, never into the checkout.
CACHE = Path(os.environ.get("ERRKB_TEST_PYPI_CACHE") or kbcache.CACHE / "pypi")


def sglang_wheel(version: str) -> Path:
    """The sglang wheel of `version`, downloaded by the ingester's own downloader when missing."""
    found = sorted(CACHE.glob(f"sglang-{version}-*.whl"))
    if found:
        return found[0]
    path = download("sglang", version, CACHE)
    assert path.suffix == ".whl", f"sglang {version} has no wheel on PyPI"
    return path
