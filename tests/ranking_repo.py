"""A small two-version project for the ranking of matches: an out-of-memory raise of the server
beside a fake one in its own tests, an error whose line moves between the versions, one that
only v2 raises, and a short message a few shared words can guess at.
"""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

from errkb.core.db import make_engine, upgrade
from errkb.ingest.pins import RepoPin
from errkb.ingest.pipeline import Job, ingest_snapshot
from errkb.ingest.sources.folder import FolderSource

REPO = RepoPin(
    name="acme/ranked", web_url="https://example.org/acme/ranked", exceptions=("*",), asserts=True
)

SERVER_OOM = "CUDA out of memory. Tried to allocate {size}"
TEST_OOM = "CUDA out of memory. Tried to allocate {size} GiB on device {device}"
MOVED = "The page pool cannot hold the requested number of tokens"
ONLY_V2 = "Speculative decoding with the page pool needs a draft model path"
WEAK = "server_args must be set"

ALLOC = """
class Allocator:
    def alloc(self, size):
        assert self.free_pages >= 0
        if size > self.free:
            raise RuntimeError(f"CUDA out of memory. Tried to allocate {size}")
        return size
"""
FAKE_OOM = """
class FakeAllocator:
    def alloc(self, size, device):
        raise RuntimeError(f"CUDA out of memory. Tried to allocate {size} GiB on device {device}")
"""
POOL = """
class PagePool:
    def reserve(self, tokens):{padding}
        if tokens > self.size:
            raise ValueError("The page pool cannot hold the requested number of tokens")
        return tokens
"""
SPEC = """
def check_draft(args):
    if args.draft_model_path is None:
        raise ValueError("Speculative decoding with the page pool needs a draft model path")
"""
PROCESSOR = """
class Processor:
    def __init__(self, server_args):
        assert server_args is not None, "server_args must be set"
"""


def write_version(root: Path, version: int) -> Path:
    """The project's files for v1 or v2 under `root`, dated so v2 sorts after v1."""
    folder = root / f"v{version}"
    padding = "\n        self.calls += 1" * (0 if version == 1 else 6)  # the raise moves down
    files = {
        "srv/alloc.py": ALLOC,
        "srv/pool.py": POOL.format(padding=padding),
        "srv/processor.py": PROCESSOR,
        "tests/test_alloc.py": FAKE_OOM,
    }
    if version == 2:
        files["srv/spec.py"] = SPEC
    for rel, text in files.items():
        path = folder / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip())
        stamp = 1_700_000_000 + version * 86_400
        os.utime(path, (stamp, stamp))
    return folder


def raise_line(root: Path, version: int, rel: str, words: str) -> int:
    """The line of `rel` in that version whose text holds `words` (1-based)."""
    lines = (root / f"v{version}" / rel).read_text().splitlines()
    return next(n for n, line in enumerate(lines, 1) if words in line)


def ingest_ranking_repo(url: str, root: Path) -> None:
    """Ingest v1 then v2 of the project into the database at `url`."""
    engine = make_engine(url)
    try:
        upgrade(engine)
        for version in (1, 2):
            source = FolderSource(write_version(root, version), f"v{version}")
            ingest_snapshot(source, REPO, REPO.extract_config(2_000_000), Job(engine, workers=1))
    finally:
        engine.dispose()
