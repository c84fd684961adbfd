"""Folder source: digest identity, symlinks that escape the tree, oversized files."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from errkb.core.errors import SourceError
from errkb.ingest.sources.base import blob_sha
from errkb.ingest.sources.folder import FolderSource


def _tree(root: Path) -> Path:
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "a.py").write_text("raise ValueError('a')\n")
    (root / "pkg" / "notes.txt").write_text("ignored")
    (root / "__pycache__").mkdir()
    (root / "__pycache__" / "x.py").write_text("cached = 1\n")
    return root


def test_folder_lists_py_files_with_blob_hashes(tmp_path: Path) -> None:
    root = _tree(tmp_path / "proj")
    files = list(FolderSource(root, "local").files())
    assert [f.path for f in files] == ["pkg/a.py"]
    assert files[0].content_hash == blob_sha(b"raise ValueError('a')\n")


def test_symlinks_inside_are_read_and_escaping_ones_skipped(tmp_path: Path) -> None:
    root = _tree(tmp_path / "proj")
    outside = tmp_path / "secret.py"
    outside.write_text("token = 'x'\n")
    os.symlink(outside, root / "pkg" / "escape.py")
    os.symlink(root / "pkg" / "a.py", root / "pkg" / "alias.py")
    os.symlink(tmp_path / "missing.py", root / "pkg" / "dangling.py")
    files = {f.path: f for f in FolderSource(root, "local").files()}
    assert files["pkg/escape.py"].skip == "unsafe" and files["pkg/escape.py"].data == b""
    assert files["pkg/dangling.py"].skip == "unsafe"
    assert files["pkg/alias.py"].data == files["pkg/a.py"].data


def test_oversized_files_are_skipped(tmp_path: Path) -> None:
    root = _tree(tmp_path / "proj")
    (root / "pkg" / "huge.py").write_text("x = 1\n" * 1000)
    files = {f.path: f for f in FolderSource(root, "local", max_bytes=1000).files()}
    assert files["pkg/huge.py"].skip == "too_large" and files["pkg/huge.py"].data == b""
    assert files["pkg/a.py"].skip is None


def test_digest_follows_content_not_label(tmp_path: Path) -> None:
    root = _tree(tmp_path / "proj")
    first = FolderSource(root, "one").snapshot()
    assert FolderSource(root, "two").snapshot().commit == first.commit
    assert first.kind == "dir" and first.label == "one" and first.link_base is None
    (root / "pkg" / "a.py").write_text("raise ValueError('changed')\n")
    assert FolderSource(root, "one").snapshot().commit != first.commit


def test_missing_folder_is_a_source_error(tmp_path: Path) -> None:
    with pytest.raises(SourceError, match="not a directory"):
        FolderSource(tmp_path / "nope", "x")
