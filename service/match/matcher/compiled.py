"""Whether the matcher runs compiled: its mypyc modules, unless a source is newer than them.

Left in Python by the build (setup.py), as `__init__`: it decides about the compiled modules.
`ERRKB_PURE=1`, which makes the build skip the compilation, makes an installed matcher run from
its sources too (the tests compare the two; it is not a setting of the service).
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import logging
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

log = logging.getLogger(__name__)
PURE = ("__init__.py", "compiled.py")  # the build compiles every other module of the package


def compiled_modules(folder: Path) -> list[Path]:
    """The package's compiled modules (mypyc's shared library among them)."""
    suffixes = tuple(importlib.machinery.EXTENSION_SUFFIXES)
    return [p for p in folder.iterdir() if p.name.endswith(suffixes)]


def stale(folder: Path) -> bool:
    """True in a checkout whose compiled modules are older than one of the sources they were
    built from. (An installed wheel writes both in one go, in no set order: never stale.)"""
    built = compiled_modules(folder)
    if not built or {"site-packages", "dist-packages"} & set(folder.parts):
        return False
    oldest = min(p.stat().st_mtime for p in built)
    sources = (p for p in folder.glob("*.py") if p.name not in PURE)
    return any(p.stat().st_mtime > oldest for p in sources)


class _Sources(importlib.abc.MetaPathFinder):
    """Finds the package's modules as their `.py` files, ahead of the compiled ones."""

    def __init__(self, package: str, folder: Path) -> None:
        self._prefix = package + "."
        self._folder = folder

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if not fullname.startswith(self._prefix):
            return None
        source = self._folder / (fullname[len(self._prefix) :] + ".py")
        return importlib.util.spec_from_file_location(fullname, source) if source.exists() else None


def prefer_sources(package: str, folder: str) -> None:
    """Run the package from its sources when its compiled modules are stale (see `stale`)."""
    where = Path(folder)
    if os.environ.get("ERRKB_PURE") == "1":
        sys.meta_path.insert(0, _Sources(package, where))
    elif stale(where):
        log.warning(
            "the compiled matcher in %s is older than its sources, which run instead (slower): "
            "run `make install` to compile it again",
            where,
        )
        sys.meta_path.insert(0, _Sources(package, where))
