"""A tiny two-version project, ingested by the real pipeline, for the match API and CLI tests.

Like sglang, its repository paths carry a `python/` prefix that installed paths lack. v2 moves
the SWA raise further down the file and adds an error of its own.
"""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

from errkb.core.db import make_engine, upgrade
from errkb.core.records import Segment, Template, error_id
from errkb.ingest.pins import RepoPin
from errkb.ingest.pipeline import Job, ingest_snapshot
from errkb.ingest.sources.folder import FolderSource

REPO = RepoPin(name="acme/pools", path_prefix="python/")
PATH = "python/pkg/pool.py"
SWA = (
    "--enable-unified-memory with PD does not support SWA models yet. "
    "Drop --enable-unified-memory or run without PD."
)
LAYOUT = "Unsupported layout {layout!r} for the paged KV cache"

POOL = """
class Pools:
    def init_pools(self, model):{padding}
        if model.is_swa:
            raise ValueError(
                "--enable-unified-memory with PD does not support SWA models yet. "
                "Drop --enable-unified-memory or run without PD."
            )
        if model.tp > 8:
            raise ValueError(f"tp_size {{model.tp}} is too large for {{model.heads}} heads")
{extra}"""
EXTRA = """

def paged(layout):
    raise ValueError(f"Unsupported layout {layout!r} for the paged KV cache")
"""


def swa_id() -> str:
    """The id of the SWA error (a plain literal)."""
    return error_id(REPO.name, "ValueError", Template((Segment("text", SWA),), "literal"))


def source_text(version: int) -> str:
    """pool.py as released in v1 or v2."""
    padding = "\n        pass" * (0 if version == 1 else 20)
    return (
        textwrap.dedent(POOL).lstrip().format(padding=padding, extra=EXTRA if version == 2 else "")
    )


def swa_line(version: int) -> int:
    """The line of the SWA raise statement in that version."""
    return source_text(version).splitlines().index("            raise ValueError(") + 1


def ingest_version(url: str, root: Path, version: int) -> None:
    """Ingest one version of the project with the real pipeline."""
    folder = root / f"v{version}"
    path = folder / "pkg" / "pool.py"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(source_text(version))
    stamp = 1_700_000_000 + version * 86_400  # v2 sorts after v1
    os.utime(path, (stamp, stamp))
    engine = make_engine(url)
    try:
        upgrade(engine)
        source = FolderSource(folder, f"v{version}", path_prefix=REPO.path_prefix)
        ingest_snapshot(source, REPO, REPO.extract_config(2_000_000), Job(engine, workers=1))
    finally:
        engine.dispose()


def traceback(version_line: int, message: str = SWA) -> str:
    """A traceback as an installed copy of the project prints it."""
    return (
        "Traceback (most recent call last):\n"
        '  File "/srv/venv/lib/python3.12/site-packages/pkg/engine.py", line 88, in start\n'
        "    pools.init_pools(model)\n"
        f'  File "/srv/venv/lib/python3.12/site-packages/pkg/pool.py", line {version_line}, '
        "in init_pools\n"
        "    raise ValueError(\n"
        f"ValueError: {message}\n"
    )
