"""The config's `flag_classes` entries: which classes, in which files, declare flags (pure).

An entry is a class name (`ServerArgs`) or `path-glob:class-glob` for settings split over many
classes (`*/arg_groups/fields/*.py:*`: every class of those files). A path glob decides by the
file's path alone whether its classes are read at all; this module answers that for the
extractor (`flag_class_globs`), the byte prefilter (`class_markers`) and the file cache's key
(`path_variant`).
"""

from __future__ import annotations

import hashlib
from fnmatch import fnmatchcase


def _split_spec(spec: str) -> tuple[str | None, str]:
    """`"ServerArgs"` -> (None, "ServerArgs"); `"*/fields/*.py:*"` -> ("*/fields/*.py", "*")."""
    path, sep, cls = spec.rpartition(":")
    return (path, cls) if sep else (None, spec)


def flag_class_globs(flag_classes: tuple[str, ...], path: str) -> tuple[str, ...]:
    """The class-name globs of the flag classes a file at `path` can define."""
    specs = (_split_spec(spec) for spec in flag_classes)
    return tuple(cls for glob, cls in specs if glob is None or fnmatchcase(path, glob))


def path_variant(flag_classes: tuple[str, ...], path: str) -> str:
    """A short digest of the path-glob entries matching `path` ("" when none does)."""
    matched = [spec for spec in flag_classes if _matches_path(spec, path)]
    return hashlib.sha256("\n".join(matched).encode()).hexdigest()[:8] if matched else ""


def _matches_path(spec: str, path: str) -> bool:
    glob, _ = _split_spec(spec)
    return glob is not None and fnmatchcase(path, glob)


def class_markers(flag_classes: tuple[str, ...], path: str | None = None) -> tuple[bytes, ...]:
    """Bytes a file must contain to define one of the flag classes (for the prefilter).

    With `path`, entries whose path glob does not match it are left out: the file cannot define
    those classes, and a class glob's marker (`class `) would let almost every file through.
    """
    out = []
    for spec in flag_classes:
        glob, cls = _split_spec(spec)
        if path is not None and glob is not None and not fnmatchcase(path, glob):
            continue
        out.append(b"class " if any(ch in cls for ch in "*?[") else cls.encode())
    return tuple(out)
