"""The match index kept in the cache folder, so that a match process starts without building it.

Every match process builds its index before it answers (every error of the database read and
compiled: about 6 s for one sglang release on a busy 2-core machine), so the first match of a
server or of `errkb mcp` waited for it. The process that builds it now also writes it to the
cache folder (`match-index/`, one file per database), and the next one started on the same
knowledge base reads it back instead, in a tenth of that time (docs/figures.md).

A file is read only when it was built from what an index built now would be built from (its
key): the same code (the matcher's modules, compiled or not, these two modules, Python's
version), the same database (its URL, a SQLite file by its absolute path) and the same content
(`queries.content_key`: the ingest generation and every snapshot's identity and ingest time).
So a match is never answered from an index older than the last committed ingest: a process
reads the key, then builds or reads the index of that key, and checks the generation again
before each batch of requests, as before. A file of another key is left unread; one cut short,
or whose bytes do not hash to the checksum of its header, is ignored and written again; its
payload is read by an unpickler that builds only the matcher's own objects (`index_pickle`).

Files are written to a temporary name and renamed, so a reader sees a whole file or none. The
folder is private (mode 0700, this user's, not a link): when it cannot be, nothing is kept. The
`KEEP` files used last are kept; the others are removed when a new one is written.
"""

from __future__ import annotations

import hashlib
import logging
import os
import struct
import sys
import tempfile
import time
from functools import cache
from importlib import metadata
from pathlib import Path

from errkb.knowledge.who import evidence
from errkb.service.match import index_pickle, queries
from errkb.service.match.matcher import MatchIndex
from errkb.service.match.matcher import index as index_module
from errkb.service.private_folder import private_folder

FOLDER = "match-index"
SUFFIX = ".index"
KEEP = 8  # files of other databases (a test run makes many) are removed past this many
MAGIC = b"errkb match index\n"
# After MAGIC: the key (16 bytes), the payload's blake2b (32 bytes) and its size.
HEADER = struct.Struct("!16s32sQ")
_PART_SECONDS = 3600  # a temporary file this old was left by a process that died writing it
log = logging.getLogger(__name__)


@cache
def code_digest() -> bytes:
    """A hash of the code whose objects the file holds, and of how it runs (compiled or not)."""
    matcher = Path(index_module.__file__).parent
    sources = [*sorted(matcher.glob("*.py")), Path(__file__), Path(index_pickle.__file__)]
    sources += [Path(queries.__file__), Path(evidence.__file__)]
    digest = hashlib.blake2b(digest_size=16)
    for path in sources:
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    # the installed version from its metadata: `errkb.__version__` is missing where a process
    # resolved `errkb` as a namespace package (a folder named errkb in its working directory)
    runs = f"{Path(index_module.__file__).suffix} {sys.version} {_installed_version()}"
    digest.update(runs.encode())
    return digest.digest()


def _installed_version() -> str:
    try:
        return metadata.version("errkb")
    except metadata.PackageNotFoundError:  # run from a source tree that was not installed
        return ""


def database_name(database_url: str) -> str:
    """The database as a file name: its URL (a SQLite file's absolute path), hashed."""
    rendered = queries.database_identity(database_url)
    return hashlib.blake2b(rendered.encode(), digest_size=16).hexdigest()


def kept_index(engine: queries.DbEngine, kept: IndexFile | None) -> MatchIndex:
    """The index of the database now: read from its file when that was built from the current
    content, else built and kept (with no file, only built)."""
    if kept is not None:
        index = kept.read(queries.content_key_now(engine))
        if index is not None:
            log.info("the match index was read from %s", kept.path)
            return index
    index, key = queries.keyed_index(engine)
    if kept is not None:
        kept.write(index, key)
    return index


class IndexFile:
    """The kept index of one database in a cache folder."""

    def __init__(self, cache_dir: Path, database_url: str) -> None:
        self.folder = cache_dir / FOLDER
        self.path = self.folder / (database_name(database_url) + SUFFIX)

    def key(self, content_key: str) -> bytes:
        """The file's key for a content key of the database (`queries.content_key`)."""
        digest = hashlib.blake2b(code_digest(), digest_size=16)
        digest.update(self.path.name.encode() + b"\0" + content_key.encode())
        return digest.digest()

    def read(self, content_key: str) -> MatchIndex | None:
        """The kept index of this content key, or None (none kept, another key, damaged)."""
        if not private_folder(self.folder, make=False):
            return None
        try:
            with self.path.open("rb") as file:
                head = file.read(len(MAGIC) + HEADER.size)
                if not head.startswith(MAGIC):
                    return self._ignored("it is not a match index file")
                key, checksum, size = HEADER.unpack_from(head, len(MAGIC))
                if key != self.key(content_key):
                    return None  # another ingest, database or code: built again
                payload = file.read(size + 1)
        except FileNotFoundError:
            return None
        except (OSError, struct.error) as exc:
            return self._ignored(str(exc))
        if len(payload) != size or hashlib.blake2b(payload, digest_size=32).digest() != checksum:
            return self._ignored("its bytes do not match its checksum")
        try:
            index = index_pickle.index_from_bytes(payload)
        except Exception as exc:  # noqa: BLE001 - any failure to read it: build it again
            return self._ignored(f"{type(exc).__name__}: {exc}")
        try:
            os.utime(self.path)  # used now: kept the longest (see `_prune`)
        except OSError:
            pass  # removed meanwhile: what was read is whole
        return index

    def _ignored(self, why: str) -> MatchIndex | None:
        """None, after saying why the file is not read."""
        log.warning("the kept match index %s was ignored and is built again: %s", self.path, why)
        return None

    def write(self, index: MatchIndex, content_key: str) -> None:
        """Keep the index under this content key; a full disk or a lost folder costs only the
        next start's time."""
        try:
            self.folder.parent.mkdir(parents=True, exist_ok=True)
        except OSError:
            return
        if not private_folder(self.folder):
            return
        payload = index_pickle.index_bytes(index)
        checksum = hashlib.blake2b(payload, digest_size=32).digest()
        head = MAGIC + HEADER.pack(self.key(content_key), checksum, len(payload))
        try:
            fd, partial = tempfile.mkstemp(dir=self.folder, prefix=".part-", suffix=SUFFIX)
        except OSError:
            return
        try:
            with os.fdopen(fd, "wb") as file:
                file.write(head)
                file.write(payload)
            os.replace(partial, self.path)  # readers see the whole file or none
        except OSError as exc:
            Path(partial).unlink(missing_ok=True)
            log.warning("the match index could not be kept in %s: %s", self.folder, exc)
            return
        _prune(self.folder, self.path)


def _prune(folder: Path, kept: Path) -> None:
    """Remove the files past the `KEEP` used last, and temporary files left by a dead writer."""
    now = time.time()
    found: list[tuple[float, Path]] = []
    for path in folder.iterdir():
        try:
            modified = path.stat().st_mtime
        except OSError:
            continue  # removed meanwhile
        if path.name.startswith(".part-"):
            if now - modified > _PART_SECONDS:
                path.unlink(missing_ok=True)
        elif path.suffix == SUFFIX and path != kept:
            found.append((modified, path))
    for _, path in sorted(found, reverse=True)[KEEP - 1 :]:
        path.unlink(missing_ok=True)
