"""A project with a long history: one error raised in every version, its line moving as code
is added above it, for the size of an entry as the history grows; and a busier one, whose error
gains a site in a new file every few versions (as an import error does), loses some, and has its
guard rewritten every ten."""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

from sqlalchemy import text

from errkb.core.db import make_engine, session_factory, upgrade
from errkb.core.settings import Settings
from errkb.ingest.pins import RepoPin
from errkb.ingest.pipeline import Job, ingest_snapshot
from errkb.ingest.sources.folder import FolderSource
from errkb.service.read.entries import Entry, entry_json

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


BUSY_MESSAGE = "The pool needs at least one page per request"
BUSY = """
# module {k}, release {version}
class Pool{k}:
    def init(self, pages, requests):{padding}
        if pages < requests and self.strict_{era}:
            # a comment that the snippet shows, so that each site carries some code
            raise ValueError("The pool needs at least one page per request")
"""


def ingest_busy_history(url: str, root: Path, versions: range) -> None:
    """Ingest these versions (labels 2.0.N) of the busy project into the database at `url`:
    version N raises the error in modules 0..N//4 (but not modules 3 to 5 between versions 40
    and 59), its lines moving each version and its guard changing every ten."""
    engine = make_engine(url)
    try:
        upgrade(engine)
        for n in versions:
            folder = root / f"v{n}"
            for k in range(n // 4 + 1):
                if 40 <= n < 60 and 3 <= k <= 5:
                    continue
                path = folder / "srv" / f"pool_{k}.py"
                path.parent.mkdir(parents=True, exist_ok=True)
                padding = "\n        self.calls += 1" * ((n + k) % 5)
                text = BUSY.format(k=k, version=n, padding=padding, era=n // 10)
                path.write_text(textwrap.dedent(text).lstrip())
                os.utime(path, (1_600_000_000 + n * 86_400,) * 2)
            source = FolderSource(folder, f"2.0.{n}")
            ingest_snapshot(source, REPO, REPO.extract_config(2_000_000), Job(engine, workers=1))
    finally:
        engine.dispose()


def served_entry(url: str, error_id: str | None = None) -> tuple[int, Entry]:
    """The JSON the API serves for an error (the only one when no id is given): its size in
    bytes, and the entry it holds."""
    engine = make_engine(url)
    try:
        with session_factory(engine)() as s:
            if error_id is None:
                error_id = s.execute(text("SELECT id FROM errors")).scalar_one()
            body = entry_json(
                s, error_id, key="k", snapshot=None, settings=Settings(database_url=url)
            )
            return len(body), Entry.model_validate_json(body)
    finally:
        engine.dispose()
