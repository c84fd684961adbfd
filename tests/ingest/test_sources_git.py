"""Git source: full-SHA pins, blobs from the object store, mirrors of URLs, unreachable remotes."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from gitrepo import commit, new_repo

from errkb.core.errors import SourceError
from errkb.ingest.sources.base import blob_sha
from errkb.ingest.sources.git import GitSource, reachable


@pytest.fixture
def repo_dir(tmp_path: Path) -> Path:
    repo = new_repo(tmp_path / "repo")
    commit(repo, "one", {"pkg/a.py": "raise ValueError('one')\n", "README.md": "hi"}, day=0)
    commit(repo, "two", {"pkg/b.py": "x = 1\n" * 400}, day=1)
    os.symlink("/etc/passwd", tmp_path / "repo" / "pkg" / "link.py")
    repo.index.add(["pkg/link.py"])
    when = "2026-01-03T12:00:00+0000"
    repo.index.commit("link", author_date=when, commit_date=when)
    repo.create_tag("v1")
    repo.close()
    return tmp_path / "repo"


def test_refs_are_pinned_to_full_shas(repo_dir: Path, tmp_path: Path) -> None:
    with GitSource(str(repo_dir), "v1", cache_dir=tmp_path / "cache") as source:
        snap = source.snapshot()
        head = source.repo.head.commit.hexsha
    assert re.fullmatch(r"[0-9a-f]{40}", snap.commit) and snap.commit == head
    assert snap.label == f"v1@{head[:10]}" and snap.kind == "git" and snap.ref == "v1"
    assert snap.sort_key == "2026-01-03T12:00:00Z"


def test_blobs_are_read_from_the_object_store(repo_dir: Path, tmp_path: Path) -> None:
    (repo_dir / "pkg" / "a.py").write_text("raise ValueError('dirty working tree')\n")
    with GitSource(str(repo_dir), "main", cache_dir=tmp_path / "c", max_bytes=1000) as source:
        files = {f.path: f for f in source.files()}
    assert files["pkg/a.py"].data == b"raise ValueError('one')\n"  # the commit, not the checkout
    assert files["pkg/a.py"].content_hash == blob_sha(files["pkg/a.py"].data)
    assert files["pkg/b.py"].skip == "too_large"
    assert files["pkg/link.py"].skip == "unsafe"
    assert "README.md" not in files


def test_link_base_pins_the_commit(repo_dir: Path, tmp_path: Path) -> None:
    with GitSource(str(repo_dir), "main", cache_dir=tmp_path, web_url="https://x.test/o/r/") as s:
        snap = s.snapshot()
    assert snap.link_base == f"https://x.test/o/r/blob/{snap.commit}/"


def test_a_url_is_mirrored_with_only_the_pinned_commits(repo_dir: Path, tmp_path: Path) -> None:
    url = repo_dir.as_uri()  # file://: a real fetch, without a network
    cache = tmp_path / "cache"
    with GitSource(url, "main", cache_dir=cache) as source:
        first = source.snapshot().commit
        assert source.repo.git.rev_list("--count", "--all") == "1"  # depth 1, no history
        assert {f.path for f in source.files()} == {"pkg/a.py", "pkg/b.py", "pkg/link.py"}
    mirrors = list((cache / "git").iterdir())
    assert len(mirrors) == 1 and (mirrors[0] / "HEAD").exists()
    import git

    later = commit(git.Repo(repo_dir), "three", {"pkg/c.py": "y = 2\n"}, day=5)
    with GitSource(url, "main", cache_dir=cache) as source:
        assert source.snapshot().commit == later != first
    with GitSource(url, first, cache_dir=cache) as source:  # a full SHA is fetched alone too
        assert source.snapshot().commit == first
    with GitSource(url, first[:8], cache_dir=cache) as source:  # abbreviated: full fetch
        assert source.snapshot().commit == first and source.snapshot().label.startswith(first[:8])
    assert len(list((cache / "git").iterdir())) == 1


def test_unknown_ref_and_missing_repo_are_source_errors(repo_dir: Path, tmp_path: Path) -> None:
    with pytest.raises(SourceError, match="unknown git ref"):
        GitSource(str(repo_dir), "no-such-branch", cache_dir=tmp_path)
    with pytest.raises(SourceError, match="cannot fetch 'main'"):
        GitSource((tmp_path / "missing.git").as_uri(), "main", cache_dir=tmp_path)


def test_reachable(repo_dir: Path, tmp_path: Path) -> None:
    assert reachable(str(repo_dir))
    assert reachable(repo_dir.as_uri())
    assert not reachable((tmp_path / "nothing-here").as_uri(), timeout=5)
