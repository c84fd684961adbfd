"""Local folders: every `.py` file under a directory, read in place.

A folder has no commit, so its identity is a digest of its (path, blob SHA) pairs: the same
content ingested twice is the same snapshot. Symlinks that leave the tree or loop, names that are
not UTF-8 (no repo path can name them) and oversized files are skipped, counted, before reading:
a hostile folder never stops the walk.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

from errkb.core.declared import Declared
from errkb.core.errors import SourceError
from errkb.core.records import SnapshotKind
from errkb.ingest.sources.base import KnownFiles, SnapshotInfo, SourceFile, blob_sha, date_sort_key
from errkb.ingest.sources.requirements import from_pyproject


def _is_utf8(name: str) -> bool:
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _printable(name: str) -> str:
    """A name with undecodable bytes shown as \\xNN escapes."""
    return os.fsencode(name).decode("utf-8", errors="backslashreplace")


class FolderSource:
    """A directory on this machine, labelled by the user."""

    kind: SnapshotKind = "dir"

    def __init__(
        self, root: Path, label: str, *, path_prefix: str = "", max_bytes: int = 2_000_000
    ):
        self.root = Path(root).expanduser().resolve()
        if not self.root.is_dir():
            raise SourceError(f"not a directory: {root}")
        self.label = label
        self.path_prefix = path_prefix
        self.max_bytes = max_bytes
        self._files: list[SourceFile] | None = None
        self._newest = 0.0

    def _scan(self) -> list[SourceFile]:
        if self._files is None:
            self._files = sorted(self._walk(), key=lambda f: f.path)
        return self._files

    def _walk(self) -> Iterator[SourceFile]:
        for dirpath, dirnames, filenames in os.walk(self.root, followlinks=False):
            dirnames[:] = sorted(d for d in dirnames if d not in (".git", "__pycache__"))
            for name in filenames:
                if not name.endswith(".py"):
                    continue
                full = Path(dirpath) / name
                rel = self.path_prefix + full.relative_to(self.root).as_posix()
                if not _is_utf8(rel):  # os.walk hands undecodable bytes back as surrogates
                    yield SourceFile(_printable(rel), "", b"", skip="unsafe")
                    continue
                try:
                    target = full.resolve(strict=True)
                    if not target.is_relative_to(self.root) or not target.is_file():
                        yield SourceFile(rel, "", b"", skip="unsafe")
                        continue
                    stat = target.stat()
                    if stat.st_size > self.max_bytes:
                        yield SourceFile(rel, "", b"", skip="too_large")
                        continue
                    data = target.read_bytes()
                # A dangling link, a file removed while scanning, or a symlink loop (3.11's
                # resolve raises RuntimeError for it, later versions OSError).
                except (OSError, RuntimeError):
                    yield SourceFile(rel, "", b"", skip="unsafe")
                    continue
                self._newest = max(self._newest, stat.st_mtime)
                yield SourceFile(rel, blob_sha(data), data)

    def snapshot(self) -> SnapshotInfo:
        """The folder's identity: a digest of its files' paths and contents."""
        digest = hashlib.sha256()
        for f in self._scan():
            digest.update(f"{f.path}\0{f.content_hash}\0{f.skip or ''}\n".encode())
        date = datetime.fromtimestamp(self._newest, tz=UTC) if self._newest else None
        return SnapshotInfo(
            label=self.label,
            kind=self.kind,
            ref=str(self.root),
            commit=digest.hexdigest(),
            date=date,
            link_base=None,
            sort_key=date_sort_key(date),
            requirements=self._requirements(),
        )

    def _requirements(self) -> tuple[Declared, ...]:
        """The folder's `pyproject.toml` dependencies (none without one)."""
        pyproject = self.root / "pyproject.toml"
        try:
            return from_pyproject(pyproject.read_text("utf-8")) if pyproject.is_file() else ()
        except (OSError, UnicodeDecodeError):
            return ()

    def files(self, known: KnownFiles | None = None) -> Iterator[SourceFile]:
        """The scanned files, in path order (`known` is not asked: every file is read)."""
        yield from self._scan()

    def close(self) -> None:
        """Drop the file contents held since the scan."""
        self._files = None
