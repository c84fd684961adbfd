"""Real sglang releases for tests: fetched once with pip into a reusable cache folder."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# Reused across runs (it is in .gitignore'd data/); a fresh clone downloads each wheel once.
CACHE = Path(os.environ.get("ERRKB_TEST_PYPI_CACHE", ROOT / "data" / "cache" / "pypi"))


def sglang_wheel(version: str) -> Path:
    """The sglang wheel of `version`, downloaded with `pip download --no-deps` when missing."""
    found = sorted(CACHE.glob(f"sglang-{version}-*.whl"))
    if found:
        return found[0]
    CACHE.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--no-deps",
            "--only-binary=:all:",
            "--disable-pip-version-check",
            "--quiet",
            f"sglang=={version}",
            "-d",
            str(CACHE),
        ],
        check=True,
        timeout=900,
    )
    return sorted(CACHE.glob(f"sglang-{version}-*.whl"))[0]
