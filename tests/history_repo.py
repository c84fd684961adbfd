"""A project with a long history: one error raised in every version, its line moving as code
is added above it, for the size of an entry as the history grows."""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

from errkb.core.db import make_engine, upgrade
from errkb.ingest.pins import RepoPin
from errkb.ingest.pipeline import Job, ingest_snapshot
from errkb.ingest.sources.folder import FolderSource

REPO = RepoPin(name="acme/long", web_url="https://example.org/acme/long")
MESSAGE = "The pool cannot hold more pages than the device has memory for"
POOL = """
# release {version}
class Pool:
    def init(self, pages):{padding}
        if pages > self.capacity:
            raise ValueError("The pool cannot hold more pages than the device has memory for")
"""


def ingest_history(url: str, root: Path, versions: range) -> None:
    """Ingest these versions (labels 1.0.N) of the project into the database at `url`."""
    engine = make_engine(url)
    try:
        upgrade(engine)
        for n in versions:
            folder = root / f"v{n}"
            path = folder / "srv" / "pool.py"
            path.parent.mkdir(parents=True, exist_ok=True)
            padding = "\n        self.calls += 1" * (n % 7)  # the raise moves every release
            path.write_text(textwrap.dedent(POOL.format(version=n, padding=padding)).lstrip())
            os.utime(path, (1_600_000_000 + n * 86_400,) * 2)
            source = FolderSource(folder, f"1.0.{n}")
            ingest_snapshot(source, REPO, REPO.extract_config(2_000_000), Job(engine, workers=1))
    finally:
        engine.dispose()
