"""Rendered entry pages shared by the server's processes, as files.

Each process keeps the pages it has served in memory (`EntryCache`), but with `errkb serve
--workers N` every process rendered every page again on its own first request for it: about
2 ms of CPU a page, which at 4 processes took most of the machine (`bench/serve.py`: pages fell
to 0.25x of the minimal app while JSON, one stored row, held 0.6x). So the first process to
render a page also writes it here, compressed, and the others read it back.

A page depends on the stored doc it shows, on what was asked (id, root path, canonical base) and
on the code that renders it. The caller names each page by all of it, the doc by a hash of its
bytes (the content key is a counter, which a new database at the same place starts again); the
folder is named by the content key, to remove old pages, and by a hash of the rendering code,
so neither an ingest nor an upgrade of errkb serves an old page. Folders of other keys are
removed when a new one is made, once nothing was written to them for ten minutes (a process may
not have seen the ingest yet). The files live in a private folder (mode 0700,
owned by this user, not a link) under the system's temporary folder, named by the database URL:
disposable, shared by the processes of one server, and never in a folder the user chose. When
the folder cannot be made private, pages are simply rendered, as before.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
import time
import zlib
from collections.abc import Hashable
from functools import cache
from pathlib import Path

import errkb.service.pages
from errkb.service.private_folder import private_folder

_COMPRESSION = 1  # zlib's fastest: a page shrinks about 5 times in a tenth of a millisecond
_IDLE_SECONDS = 600  # a folder of another key unwritten this long is removed


@cache
def rendering_code_version() -> str:
    """A hash of the templates and modules that render pages: a new errkb renders anew."""
    here = Path(errkb.service.pages.__file__).parent
    digest = hashlib.sha256()
    for path in sorted([*here.glob("*.py"), *(here / "templates").glob("*.html")]):
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:12]


def _remove_idle(root: Path, keep: Path) -> None:
    """Remove the folders of other keys that nothing wrote to for a while."""
    now = time.time()
    try:
        others = [p for p in root.iterdir() if p != keep]
    except OSError:
        return
    for other in others:
        try:
            idle = now - other.stat().st_mtime > _IDLE_SECONDS
        except OSError:
            continue
        if idle:
            shutil.rmtree(other, ignore_errors=True)


class PageFiles:
    """Pages rendered under one content key, readable by every process of the server."""

    def __init__(self, database_url: str, root: Path | None = None) -> None:
        name = hashlib.sha256(database_url.encode()).hexdigest()[:16]
        self._root = (root or Path(tempfile.gettempdir())) / f"errkb-pages-{os.getuid()}-{name}"
        self._usable = private_folder(self._root)
        self._folder: tuple[str, Path | None] = ("", None)

    def _folder_of(self, key: str, make: bool) -> Path | None:
        if not self._usable or not key:
            return None
        known_key, folder = self._folder
        if known_key == key and folder is not None:
            return folder
        folder = self._root / f"{rendering_code_version()}-{key}"
        if make:
            if not private_folder(folder):
                return None
            _remove_idle(self._root, keep=folder)
        elif not folder.is_dir():
            return None
        self._folder = (key, folder)
        return folder

    @staticmethod
    def _name(item: Hashable) -> str:
        return hashlib.sha256(repr(item).encode()).hexdigest()[:32] + ".html.z"

    def get(self, key: str, item: Hashable) -> bytes | None:
        """The page another process (or this one) rendered for `item` under `key`, if any."""
        folder = self._folder_of(key, make=False)
        if folder is None:
            return None
        try:
            return zlib.decompress((folder / self._name(item)).read_bytes())
        except (OSError, zlib.error):
            return None

    def put(self, key: str, item: Hashable, page: bytes) -> None:
        """Share a rendered page; a full disk or a removed folder only costs the sharing."""
        folder = self._folder_of(key, make=True)
        if folder is None:
            return
        target = folder / self._name(item)
        partial = target.with_suffix(f".{os.getpid()}.part")
        try:
            partial.write_bytes(zlib.compress(page, _COMPRESSION))
            os.replace(partial, target)  # readers see the whole file or none
        except OSError:
            partial.unlink(missing_ok=True)
            self._folder = ("", None)  # removed meanwhile? made again on the next page
