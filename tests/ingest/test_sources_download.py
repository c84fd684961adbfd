"""The safe downloader: the index's JSON API, the archive chosen, the sha256 checked, the cache."""

from __future__ import annotations

from pathlib import Path

import pytest
from local_index import LocalIndex, serving, wheel_bytes
from packaging.specifiers import SpecifierSet

from errkb.core.errors import BadInput, SourceError
from errkb.ingest.sources.download import Downloads, download
from errkb.ingest.sources.index import (
    IndexFile,
    chosen_file,
    client,
    matching_versions,
    project_releases,
    release_files,
    releases_spec,
)


def _file(name: str, size: int = 10) -> IndexFile:
    return IndexFile(name, f"https://x.test/{name}", "0" * 64, size)


def test_a_pure_wheel_is_chosen_then_the_smallest_wheel_then_the_sdist() -> None:
    sdist = _file("demo-1.0.tar.gz", 1)
    big = _file("demo-1.0-cp311-cp311-manylinux_x86_64.whl", 900)
    small = _file("demo-1.0-cp311-cp311-manylinux_aarch64.whl", 800)
    pure = _file("demo-1.0-py3-none-any.whl", 5000)
    assert chosen_file([sdist, big, small, pure]) == pure
    assert chosen_file([sdist, big, small]) == small
    assert chosen_file([sdist]) == sdist
    # Names that are not plain archive names are never written to the cache folder.
    assert chosen_file([_file("../demo-1.0.tar.gz"), _file("demo-1.0.exe"), _file(".whl")]) is None


def test_release_bounds() -> None:
    assert releases_spec("all") == SpecifierSet()
    assert releases_spec(">=0.4") == SpecifierSet(">=0.4")
    with pytest.raises(BadInput, match='"all" or a version specifier'):
        releases_spec("every one")
    listing = {v: [_file(f"d-{v}.tar.gz")] for v in ("0.3", "0.4", "1.0rc1", "1.0", "junk")}
    listing["1.1"] = []  # every file yanked
    assert matching_versions(listing, SpecifierSet()) == ["0.3", "0.4", "1.0"]
    assert matching_versions(listing, SpecifierSet(">=0.4")) == ["0.4", "1.0"]
    assert matching_versions(listing, SpecifierSet(">=1.0rc1")) == ["1.0rc1", "1.0"]


def test_listing_urls_are_resolved_and_yanked_files_left_out(tmp_path: Path) -> None:
    index = LocalIndex()
    index.add("demo", "1.0", "demo-1.0-py3-none-any.whl", wheel_bytes({"demo/a.py": b"x = 1\n"}))
    with serving(index), client() as http:
        listing = project_releases(http, index.url, "Demo")
        (entry,) = listing["1.0"]
        assert entry.url == index.url.removesuffix("/pypi") + "/files/demo-1.0-py3-none-any.whl"
        # The release's own page answers when the listing does not name the version.
        assert release_files(http, index.url, "demo", "1.0", {}) == [entry]
        with pytest.raises(SourceError, match=r"demo==2\.0: not found on the package index"):
            release_files(http, index.url, "demo", "2.0", {})


def test_an_archive_not_matching_its_sha256_is_refused_and_not_cached(tmp_path: Path) -> None:
    index = LocalIndex()
    good = wheel_bytes({"demo/a.py": b"raise ValueError('a')\n"})
    index.add("demo", "1.0", "demo-1.0-py3-none-any.whl", good, sha256="f" * 64)
    index.add("demo", "1.1", "demo-1.1-py3-none-any.whl", good)
    cache = tmp_path / "cache"
    with serving(index):
        with pytest.raises(SourceError, match="does not match the sha256"):
            download("demo", "1.0", cache, index_url=index.url)
        assert sorted(p.name for p in cache.iterdir()) == []  # no partial or forged file
        # A body longer than announced is cut off: the index's size bounds the transfer.
        index.sizes["demo-1.1-py3-none-any.whl"] = 50
        with pytest.raises(SourceError, match="larger than the index says"):
            download("demo", "1.1", cache, index_url=index.url)
        assert sorted(p.name for p in cache.iterdir()) == []
        index.sizes.clear()
        path = download("demo", "1.1", cache, index_url=index.url)
        assert path.read_bytes() == good and path.parent == cache
        # Cached: asked again, nothing is fetched.
        before = len(index.asked)
        assert download("demo", "1.1", cache, index_url=index.url) == path
        assert len(index.asked) == before


def test_downloads_run_ahead_and_a_failure_stays_with_its_release(tmp_path: Path) -> None:
    index = LocalIndex()
    for v in ("1.0", "1.1", "1.2"):
        index.add("demo", v, f"demo-{v}-py3-none-any.whl", wheel_bytes({"demo/a.py": v.encode()}))
    with serving(index), Downloads(tmp_path, index.url) as downloads:
        waits = {v: downloads.start("demo", v) for v in ("1.0", "9.9", "1.2")}
        assert waits["1.2"]().name == "demo-1.2-py3-none-any.whl"
        assert waits["1.0"]().name == "demo-1.0-py3-none-any.whl"
        with pytest.raises(SourceError, match=r"demo==9\.9"):
            waits["9.9"]()
        assert downloads.fetched == 2
        assert index.asked.count("/pypi/demo/json") == 1  # one listing serves every release
