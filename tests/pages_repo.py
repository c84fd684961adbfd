"""The small two-version project of `knowledge_repo`, plus a file whose messages carry HTML.

Page, export and browser tests ingest it with the real pipeline (folder source), so an error
whose message contains `<script>alert(1)</script>` reaches the pages exactly as a hostile
repository would deliver it.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

from knowledge_repo import REPO, write_version

from errkb.core.db import make_engine, upgrade
from errkb.ingest.pipeline import Job, ingest_snapshot
from errkb.ingest.sources.folder import FolderSource

XSS_MESSAGE = "Invalid value <script>alert(1)</script> for --tp-size"
EVIL = """
def render(value, server_args):
    if value == "<b>":
        raise ValueError("Invalid value <script>alert(1)</script> for --tp-size")
    if server_args.tp_size > 1:
        raise ValueError(f"bad </textarea><img src=x onerror=alert(2)> {value!r} & more")
"""


def write_pages_version(root: Path, version: int) -> Path:
    """The knowledge repo's version `version` with the hostile file added."""
    folder = write_version(root, version)
    (folder / "srv" / "evil.py").write_text(textwrap.dedent(EVIL).lstrip())
    return folder


def ingest_pages_repo(url: str, root: Path, versions: tuple[int, ...] = (1, 2)) -> None:
    """Ingest the given versions of the project into the database at `url`."""
    engine = make_engine(url)
    try:
        upgrade(engine)
        for version in versions:
            source = FolderSource(write_pages_version(root, version), f"v{version}")
            ingest_snapshot(source, REPO, REPO.extract_config(2_000_000), Job(engine, workers=1))
    finally:
        engine.dispose()
