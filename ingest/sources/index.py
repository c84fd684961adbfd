"""A package index read through its JSON API: which releases exist and which file to take.

Only metadata is read here (`<index>/<name>/json`, `<index>/<name>/<version>/json`); nothing is
built, installed or run. The file chosen for a release is the archive whose sources we read: a
pure-Python wheel, else any wheel (its `.py` members are the same on every platform), else the
sdist archive, which is only ever opened as a zip or tar file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import httpx
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from errkb.core.errors import BadInput, SourceError

PYPI_JSON = "https://pypi.org/pypi"
ARCHIVE_SUFFIXES = (".whl", ".zip", ".tar.gz", ".tgz", ".tar.bz2", ".tar.xz", ".tar")
_SHA256 = re.compile(r"[0-9a-f]{64}")
_TIMEOUT = httpx.Timeout(30.0, connect=10.0)


@dataclass(frozen=True)
class IndexFile:
    """One file of a release as the index lists it."""

    filename: str
    url: str
    sha256: str
    size: int | None


def client(timeout: float | None = None) -> httpx.Client:
    """An HTTP client for the index and its files (redirects followed, bounded timeouts)."""
    limit = _TIMEOUT if timeout is None else httpx.Timeout(timeout)
    return httpx.Client(timeout=limit, follow_redirects=True, headers={"User-Agent": "errkb"})


def _json(http: httpx.Client, url: str, what: str) -> tuple[dict[str, Any], httpx.URL]:
    try:
        response = http.get(url)
    except httpx.HTTPError as exc:
        raise SourceError(f"{what}: the package index did not answer ({exc})") from exc
    if response.status_code == 404:
        raise SourceError(f"{what}: not found on the package index")
    if response.status_code != 200:
        raise SourceError(f"{what}: the package index answered HTTP {response.status_code}")
    try:
        data = response.json()
    except ValueError as exc:
        raise SourceError(f"{what}: the package index sent something that is not JSON") from exc
    if not isinstance(data, dict):
        raise SourceError(f"{what}: the package index sent an unexpected answer")
    return data, response.url


def project_releases(http: httpx.Client, index_url: str, name: str) -> dict[str, list[IndexFile]]:
    """Every release of `name` with its usable files, from the project's one JSON page."""
    url = f"{index_url.rstrip('/')}/{canonicalize_name(name)}/json"
    data, base = _json(http, url, name)
    raw = data.get("releases")
    if not isinstance(raw, dict):
        return {}
    return {str(key): _files(files, base) for key, files in raw.items()}


def release_files(
    http: httpx.Client,
    index_url: str,
    name: str,
    version: str,
    listing: dict[str, list[IndexFile]] | None = None,
) -> list[IndexFile]:
    """The downloadable archives of `name==version`, yanked files left out.

    The project's listing answers when it names the version (one request serves every
    release); otherwise the release's own page is asked (PyPI serves both, some mirrors one).
    """
    if listing is None:
        try:
            listing = project_releases(http, index_url, name)
        except SourceError:
            listing = {}
    if version in listing:
        return listing[version]
    url = f"{index_url.rstrip('/')}/{canonicalize_name(name)}/{version}/json"
    data, base = _json(http, url, f"{name}=={version}")
    return _files(data.get("urls"), base)


def _files(raw: Any, base: httpx.URL) -> list[IndexFile]:
    """The usable files of a listing; a relative URL (some mirrors give them) is resolved
    against the listing's own URL."""
    out: list[IndexFile] = []
    for item in raw if isinstance(raw, list) else []:
        if not isinstance(item, dict) or item.get("yanked"):
            continue
        filename, url = item.get("filename"), item.get("url")
        digests = item.get("digests")
        sha256 = digests.get("sha256") if isinstance(digests, dict) else None
        if not (isinstance(filename, str) and isinstance(url, str) and isinstance(sha256, str)):
            continue
        try:
            absolute = base.join(url)
        except httpx.InvalidURL:
            continue
        if absolute.scheme not in ("https", "http") or not _SHA256.fullmatch(sha256):
            continue
        size = item.get("size")
        out.append(
            IndexFile(filename, str(absolute), sha256, size if isinstance(size, int) else None)
        )
    return out


def chosen_file(files: list[IndexFile]) -> IndexFile | None:
    """The archive to read: a pure-Python wheel, else any wheel, else an sdist archive."""
    archives = [f for f in files if safe_filename(f.filename)]

    def rank(f: IndexFile) -> tuple[int, int, str]:
        # Among platform wheels the smallest: their `.py` members are the same.
        name = f.filename.lower()
        kind = 2
        if name.endswith(".whl"):
            kind = 0 if name.endswith("-none-any.whl") else 1
        return kind, f.size if f.size is not None else 1 << 62, name

    return min(archives, key=rank) if archives else None


def safe_filename(filename: str) -> bool:
    """True for a plain archive name that can be written in the cache folder as it is."""
    return (
        bool(filename)
        and "/" not in filename
        and "\\" not in filename
        and not filename.startswith(".")
        and filename.lower().endswith(ARCHIVE_SUFFIXES)
        and filename.isprintable()
    )


def releases_spec(text: str) -> SpecifierSet:
    """A release bound: "all" (every final release) or a PEP 440 specifier such as ">=0.4"."""
    if text.strip().lower() == "all":
        return SpecifierSet()
    try:
        return SpecifierSet(text)
    except InvalidSpecifier as exc:
        wanted = 'releases must be "all" or a version specifier like ">=0.4"'
        raise BadInput(f"{wanted}: {text!r}") from exc


def matching_versions(listing: dict[str, list[IndexFile]], spec: SpecifierSet) -> list[str]:
    """The releases of a project listing that the specifier allows, oldest first.

    Pre-releases count only when the specifier names one (as pip does); releases whose every
    file is yanked, or that have no file, are left out.
    """
    found: list[tuple[Version, str]] = []
    for key, files in listing.items():
        try:
            version = Version(key)
        except InvalidVersion:
            continue
        # A pre-release counts only when the bound names one (`spec.prereleases`).
        if files and spec.contains(version, prereleases=bool(spec.prereleases)):
            found.append((version, key))
    return [key for _, key in sorted(found)]
