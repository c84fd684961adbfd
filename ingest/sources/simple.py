"""A package index read through its simple API (PEP 691 JSON, PEP 503 HTML as a fallback).

The simple API is what pip reads, so following the index pip is configured with (a mirror, a
proxy, a private index) works the same as following PyPI. A project's page lists its files with
their sha256; the release each file belongs to is read from its name (PEP 427 wheels, PEP 625
sdists). The listing has the shape `index.project_releases` gives, so downloads and the choice
of file are shared with the JSON API.
"""

from __future__ import annotations

import re
import subprocess
import sys
from html.parser import HTMLParser
from typing import Any

import httpx
from packaging.utils import (
    InvalidSdistFilename,
    InvalidWheelFilename,
    canonicalize_name,
    parse_sdist_filename,
    parse_wheel_filename,
)

from errkb.core.errors import SourceError
from errkb.ingest.sources.index import IndexFile

PYPI_SIMPLE = "https://pypi.org/simple"
SIMPLE_JSON = "application/vnd.pypi.simple.v1+json"
# JSON first; an index that only speaks PEP 503 answers with its HTML page.
ACCEPT = f"{SIMPLE_JSON}, application/vnd.pypi.simple.v1+html;q=0.2, text/html;q=0.01"
_SHA256 = re.compile(r"[0-9a-f]{64}")


def pip_index_url(configured: str) -> str:
    """The simple index to follow: `configured` (ERRKB_SIMPLE_INDEX_URL or PIP_INDEX_URL, as
    settings read them), else pip's own configuration (`pip config`), else PyPI's."""
    if configured:
        return configured.rstrip("/")
    try:
        found = subprocess.run(  # noqa: S603 - our own interpreter's pip, fixed arguments
            [sys.executable, "-m", "pip", "config", "get", "global.index-url"],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return PYPI_SIMPLE
    value = found.stdout.strip()
    return value.rstrip("/") if found.returncode == 0 and value else PYPI_SIMPLE


def version_of(filename: str) -> str | None:
    """The release a distribution file belongs to, from its name (None if not one)."""
    try:
        if filename.endswith(".whl"):
            return str(parse_wheel_filename(filename)[1])
        return str(parse_sdist_filename(filename)[1])
    except (InvalidWheelFilename, InvalidSdistFilename):
        return None


def simple_releases(http: httpx.Client, index_url: str, name: str) -> dict[str, list[IndexFile]]:
    """Every release of `name` on a simple index, with its usable files."""
    url = f"{index_url.rstrip('/')}/{canonicalize_name(name)}/"
    try:
        response = http.get(url, headers={"Accept": ACCEPT})
    except httpx.HTTPError as exc:
        raise SourceError(f"{name}: the package index did not answer ({exc})") from exc
    if response.status_code == 404:
        raise SourceError(f"{name}: not found on the package index ({url})")
    if response.status_code != 200:
        raise SourceError(f"{name}: the package index answered HTTP {response.status_code}")
    kind = response.headers.get("content-type", "").split(";")[0].strip()
    if kind == SIMPLE_JSON or kind.endswith("json"):
        try:
            data = response.json()
        except ValueError as exc:
            raise SourceError(f"{name}: the package index sent broken JSON") from exc
        raw = data.get("files") if isinstance(data, dict) else None
    else:
        raw = _html_files(response.text)
    return _by_version(raw if isinstance(raw, list) else [], response.url)


def _by_version(raw: list[Any], base: httpx.URL) -> dict[str, list[IndexFile]]:
    out: dict[str, list[IndexFile]] = {}
    for item in raw:
        if not isinstance(item, dict) or item.get("yanked"):
            continue
        filename, url, hashes = item.get("filename"), item.get("url"), item.get("hashes")
        sha256 = hashes.get("sha256") if isinstance(hashes, dict) else None
        if not (isinstance(filename, str) and isinstance(url, str) and isinstance(sha256, str)):
            continue
        version = version_of(filename)
        try:
            absolute = base.join(url)
        except httpx.InvalidURL:
            continue
        if version is None or absolute.scheme not in ("https", "http"):
            continue
        if not _SHA256.fullmatch(sha256):
            continue
        size = item.get("size")
        file = IndexFile(filename, str(absolute), sha256, size if isinstance(size, int) else None)
        out.setdefault(version, []).append(file)
    return out


class _Anchors(HTMLParser):
    """The file links of a PEP 503 page, as PEP 691 items."""

    def __init__(self) -> None:
        super().__init__()
        self.files: list[dict[str, Any]] = []
        self._href: str | None = None
        self._yanked = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        """Remember an anchor's link until its text (the file name) arrives."""
        if tag == "a":
            found = dict(attrs)
            self._href = found.get("href")
            self._yanked = "data-yanked" in found

    def handle_data(self, data: str) -> None:
        """The anchor's text: the file name."""
        if self._href is None:
            return
        url, _, fragment = self._href.partition("#")
        algo, _, digest = fragment.partition("=")
        self.files.append(
            {
                "filename": data.strip(),
                "url": url,
                "hashes": {algo: digest} if algo else {},
                "yanked": self._yanked,
            }
        )
        self._href = None


def _html_files(text: str) -> list[dict[str, Any]]:
    parser = _Anchors()
    parser.feed(text)
    return parser.files
