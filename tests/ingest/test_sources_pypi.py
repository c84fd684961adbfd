"""PyPI source: real downloads through the index, wheel and sdist reading, paths, links."""

from __future__ import annotations

import io
import tarfile
import tracemalloc
import zipfile
from pathlib import Path

import git
import pytest
from kbcache import CACHE

from errkb.ingest.sources.base import blob_sha, version_sort_key
from errkb.ingest.sources.pypi import PypiSource, archive_files, cached_archive, repo_path


def test_blob_sha_is_gits_blob_hash(tmp_path: Path) -> None:
    data = b"raise ValueError('x')\n\x00\xff"
    (tmp_path / "f.py").write_bytes(data)
    assert blob_sha(data) == git.Git(tmp_path).hash_object("f.py")


def test_version_sort_key_orders_like_packaging() -> None:
    ordered = [
        "0.4.1",
        "0.5.9",
        "0.5.18",
        "0.5.19rc1",
        "0.5.19",
        "0.5.19.post1",
        "0.5.20",
        "1.0.dev1",
        "1.0a1",
        "1.0b2",
        "1.0rc1",
        "1.0",
        "1.0.1",
        "2!0.1",
    ]
    keys = [version_sort_key(v) for v in ordered]
    assert keys == sorted(keys)
    assert len(set(keys)) == len(keys)


def test_repo_path_maps_wheel_and_sdist_members() -> None:
    assert repo_path("sglang/srt/x.py", "python/", sdist=False) == "python/sglang/srt/x.py"
    assert (
        repo_path("sglang-0.5.18/sglang/srt/x.py", "python/", sdist=True)
        == "python/sglang/srt/x.py"
    )
    assert repo_path("sglang-0.5.18/setup.py", "python/", sdist=True) == "python/setup.py"
    assert repo_path("../evil.py", "", sdist=False) is None
    assert repo_path("/abs/evil.py", "", sdist=False) is None


def _wheel(path: Path, members: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(path, "w") as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return path


def test_wheel_members_read_without_installing(tmp_path: Path) -> None:
    wheel = _wheel(
        tmp_path / "demo-1.0-py3-none-any.whl",
        {
            "demo/__init__.py": b"raise ValueError('a')\n",
            "demo/big.py": b"#" * 5000,
            "demo/data.txt": b"not python",
            "demo-1.0.dist-info/METADATA": b"Name: demo\n",
            "../escape.py": b"x = 1\n",
        },
    )
    files = {f.path: f for f in archive_files(wheel, "src/", max_bytes=1000)}
    assert set(files) == {"src/demo/__init__.py", "src/demo/big.py", "../escape.py"}
    ok = files["src/demo/__init__.py"]
    assert ok.skip is None and ok.data == b"raise ValueError('a')\n"
    assert ok.content_hash == blob_sha(ok.data)
    assert files["src/demo/big.py"].skip == "too_large" and files["src/demo/big.py"].data == b""
    assert files["../escape.py"].skip == "unsafe"


def test_members_of_every_compression_read_exactly_and_corruption_is_an_error(
    tmp_path: Path,
) -> None:
    """Stored and deflated members are inflated straight from the archive; others go through
    `ZipFile.read`; either way the bytes equal `ZipFile.read`'s, and a damaged member raises."""
    body = "".join(f"raise ValueError('message {i}')\n" for i in range(400)).encode()
    wheel = tmp_path / "demo-1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as zf:
        zf.writestr("demo/stored.py", body, compress_type=zipfile.ZIP_STORED)
        zf.writestr("demo/deflated.py", body + b"#", compress_type=zipfile.ZIP_DEFLATED)
        zf.writestr("demo/bzip2.py", body + b"##", compress_type=zipfile.ZIP_BZIP2)
        zf.writestr("demo/empty.py", b"", compress_type=zipfile.ZIP_DEFLATED)
    files = {f.path: f.data for f in archive_files(wheel, "", max_bytes=10**6)}
    with zipfile.ZipFile(wheel) as zf:
        assert files == {n: zf.read(n) for n in zf.namelist()}
    assert files["demo/bzip2.py"] == body + b"##"

    damaged = bytearray(wheel.read_bytes())
    at = bytes(damaged).index(body[:40])  # inside the stored member's data
    damaged[at] ^= 1
    bad = tmp_path / "damaged-1.0-py3-none-any.whl"
    bad.write_bytes(bytes(damaged))
    with pytest.raises(zipfile.BadZipFile, match="stored.py"):
        list(archive_files(bad, "", max_bytes=10**6))


def test_members_the_caller_knows_are_not_inflated(tmp_path: Path) -> None:
    """`known` is asked about every readable member by the digest of its compressed stream; the
    members it answers for are yielded unread with the hash it gave."""
    body = {f"demo/m{i}.py": f"raise ValueError('{i}')\n".encode() * (i + 1) for i in range(3)}
    wheel = _wheel(
        tmp_path / "a-1.0-py3-none-any.whl", body | {"../x.py": b"", "demo/big.py": b"#" * 2000}
    )
    asked: list[tuple[str, str]] = []

    def known(members):  # type: ignore[no-untyped-def]
        asked.extend(members)
        return {d: "f" * 40 for p, d in members if p == "demo/m0.py"}

    files = {f.path: f for f in archive_files(wheel, "", max_bytes=1000, known=known)}
    assert [p for p, _ in asked] == sorted(body)  # not the unsafe or the too large member
    digests = dict(asked)
    assert len(set(digests.values())) == 3
    settled = files["demo/m0.py"]
    assert (settled.known, settled.data, settled.content_hash) == (True, b"", "f" * 40)
    for path in ("demo/m1.py", "demo/m2.py"):
        f = files[path]
        assert not f.known and f.data == body[path] and f.content_hash == blob_sha(body[path])
        assert f.stored == digests[path]
    # The same member in another archive has the same digest; other bytes have another.
    again = _wheel(tmp_path / "b-1.0-py3-none-any.whl", {"demo/m1.py": body["demo/m1.py"]})
    assert next(iter(archive_files(again, "", max_bytes=1000))).stored == digests["demo/m1.py"]
    edited = _wheel(tmp_path / "c-1.0-py3-none-any.whl", {"demo/m1.py": body["demo/m1.py"] + b"#"})
    assert next(iter(archive_files(edited, "", max_bytes=1000))).stored != digests["demo/m1.py"]


def test_a_member_inflating_past_its_stated_size_is_refused_without_inflating_it(
    tmp_path: Path,
) -> None:
    """A zip bomb: 10 MB of zeros whose central directory says 100 bytes."""
    wheel = tmp_path / "bomb-1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("demo/bomb.py", b"\0" * 10_000_000)
    raw = bytearray(wheel.read_bytes())
    entry = bytes(raw).index(b"PK\x01\x02")  # the member's central directory entry
    raw[entry + 24 : entry + 28] = (100).to_bytes(4, "little")  # its uncompressed size
    wheel.write_bytes(bytes(raw))
    tracemalloc.start()
    try:
        with pytest.raises(zipfile.BadZipFile, match="bomb.py"):
            list(archive_files(wheel, "", max_bytes=10**6))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 1_000_000


def test_sdist_strips_top_folder_and_never_follows_links(tmp_path: Path) -> None:
    sdist = tmp_path / "demo-1.0.tar.gz"
    with tarfile.open(sdist, "w:gz") as tf:
        body = b"raise ValueError('b')\n"
        info = tarfile.TarInfo("demo-1.0/demo/core.py")
        info.size, info.mtime = len(body), 1_700_000_000
        tf.addfile(info, io.BytesIO(body))
        link = tarfile.TarInfo("demo-1.0/demo/link.py")
        link.type, link.linkname = tarfile.SYMTYPE, "/etc/passwd"
        tf.addfile(link)
    source = PypiSource("demo", "1.0", cache_dir=tmp_path, path_prefix="python/", archive=sdist)
    files = {f.path: f for f in source.files()}
    assert files["python/demo/core.py"].data == b"raise ValueError('b')\n"
    assert files["demo-1.0/demo/link.py"].skip == "unsafe"
    snap = source.snapshot()
    assert snap.date is not None and int(snap.date.timestamp()) == 1_700_000_000


def test_cached_archive_prefers_wheels(tmp_path: Path) -> None:
    (tmp_path / "demo_pkg-1.0.tar.gz").write_bytes(b"")
    assert cached_archive("demo-pkg", "1.0", tmp_path) == tmp_path / "demo_pkg-1.0.tar.gz"
    _wheel(tmp_path / "demo_pkg-1.0-py3-none-any.whl", {})
    assert cached_archive("Demo.Pkg", "1.0", tmp_path).suffix == ".whl"
    assert cached_archive("demo-pkg", "1.0.1", tmp_path) is None


@pytest.mark.sglang
def test_real_release_downloaded_with_pip_and_mapped_to_repo_paths() -> None:
    source = PypiSource(
        "sglang",
        "0.5.18",
        cache_dir=CACHE / "pypi",
        path_prefix="python/",
        web_url="https://github.com/sgl-project/sglang",
        tag_pattern="v{version}",
    )
    snap = source.snapshot()
    assert (snap.label, snap.kind, snap.commit) == ("0.5.18", "pypi", "0.5.18")
    assert snap.link_base == "https://github.com/sgl-project/sglang/blob/v0.5.18/"
    assert snap.date is not None
    paths = {f.path for f in source.files()}
    assert "python/sglang/srt/mem_cache/kv_cache_configurator.py" in paths
    assert all(p.startswith("python/sglang/") for p in paths)
