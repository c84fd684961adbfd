"""A package index on loopback for tests: its simple API and JSON API, and files built here.

It serves the simple API `/simple/<name>/` (PEP 691 JSON, or PEP 503 HTML when `html` is set),
`/pypi/<name>/json` (every release, with file URLs relative to the page, as some mirrors give
them), `/pypi/<name>/<version>/json` (absolute URLs, as PyPI gives them) and `/files/<filename>`,
and records every path asked so a test can tell what was downloaded. `failing` and `delay` make
it answer an error status or too slowly.
"""

from __future__ import annotations

import hashlib
import io
import json
import sys
import tarfile
import threading
import time
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any


@dataclass
class LocalIndex:
    """Releases by project and version: (filename, bytes, sha256 to announce) per file."""

    releases: dict[str, dict[str, list[tuple[str, bytes, str]]]] = field(default_factory=dict)
    asked: list[str] = field(default_factory=list)
    sizes: dict[str, int] = field(default_factory=dict)  # announced sizes that differ from true
    url: str = ""  # the JSON API's base, e.g. http://127.0.0.1:PORT/pypi
    failing: int = 0  # answer every request with this HTTP status instead (e.g. 500)
    delay: float = 0.0  # seconds to wait before answering (an index that times out)
    html: bool = False  # the simple API answers in PEP 503 HTML only

    @property
    def simple_url(self) -> str:
        """The simple API's base (PEP 691 JSON), e.g. http://127.0.0.1:PORT/simple."""
        return self.url.removesuffix("/pypi") + "/simple"

    def add(self, name: str, version: str, filename: str, data: bytes, sha256: str = "") -> None:
        """Publish a file; `sha256` overrides the true hash (to announce a wrong one)."""
        files = self.releases.setdefault(name, {}).setdefault(version, [])
        files.append((filename, data, sha256 or hashlib.sha256(data).hexdigest()))

    def files_downloaded(self) -> list[str]:
        """The file names fetched so far, in order."""
        return [p.rsplit("/", 1)[-1] for p in self.asked if p.startswith("/files/")]

    def _listing(self, files: list[tuple[str, bytes, str]], relative: bool) -> list[dict]:  # type: ignore[type-arg]
        base = "../../files/" if relative else self.url.removesuffix("/pypi") + "/files/"
        return [
            {
                "filename": fname,
                "url": base + fname,
                "digests": {"sha256": sha},
                "size": self.sizes.get(fname, len(data)),
                "yanked": False,
            }
            for fname, data, sha in files
        ]

    def answer(self, path: str) -> tuple[int, str, bytes]:
        """Status, content type and body for a request path."""
        self.asked.append(path)
        if self.failing:
            return self.failing, "text/plain", b"the index is unwell"
        parts = [p for p in path.split("/") if p]
        if parts[:1] == ["simple"] and len(parts) == 2 and parts[1] in self.releases:
            files = [
                {"filename": f, "url": f"../../files/{f}", "hashes": {"sha256": sha}}
                for version in self.releases[parts[1]].values()
                for f, _, sha in version
            ]
            if self.html:
                links = "".join(
                    f'<a href="{f["url"]}#sha256={f["hashes"]["sha256"]}">{f["filename"]}</a>'
                    for f in files
                )
                return 200, "text/html", f"<html><body>{links}</body></html>".encode()
            body = {"meta": {"api-version": "1.1"}, "name": parts[1], "files": files}
            return 200, "application/vnd.pypi.simple.v1+json", json.dumps(body).encode()
        if parts[:1] == ["files"] and len(parts) == 2:
            for versions in self.releases.values():
                for files in versions.values():
                    for fname, data, _ in files:
                        if fname == parts[1]:
                            return 200, "application/octet-stream", data
        if parts[:1] == ["pypi"] and parts[-1:] == ["json"] and len(parts) in (3, 4):
            versions = self.releases.get(parts[1])
            if versions is not None and len(parts) == 3:
                body = {
                    "info": {"name": parts[1]},
                    "releases": {v: self._listing(f, True) for v, f in versions.items()},
                }
                return 200, "application/json", json.dumps(body).encode()
            if versions is not None and parts[2] in versions:
                body = {"info": {}, "urls": self._listing(versions[parts[2]], False)}
                return 200, "application/json", json.dumps(body).encode()
        return 404, "text/plain", b"not found"


class _Server(ThreadingHTTPServer):
    """The index's HTTP server, quiet when a client hangs up first (a test's timeout does): the
    traceback socketserver prints would land in the output of an in-process CLI run."""

    def handle_error(self, request: Any, client_address: Any) -> None:
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


@contextmanager
def serving(index: LocalIndex) -> Iterator[LocalIndex]:
    """Serve the index on a free loopback port for the duration of the block."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802
            if index.delay:
                time.sleep(index.delay)
            status, kind, body = index.answer(self.path)
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:  # noqa: A002
            pass

    server = _Server(("127.0.0.1", 0), Handler)
    index.url = f"http://127.0.0.1:{server.server_address[1]}/pypi"
    # shutdown() waits for the next poll: 0.5 s by default, paid by every test that uses it
    thread = threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    try:
        yield index
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def wheel_bytes(members: dict[str, bytes]) -> bytes:
    """A zip archive holding these members."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return buf.getvalue()


def sdist_bytes(top: str, members: dict[str, bytes]) -> bytes:
    """A .tar.gz whose members sit under the folder `top`, as an sdist's do."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        for name, data in members.items():
            info = tarfile.TarInfo(f"{top}/{name}")
            info.size, info.mtime = len(data), 1_700_000_000
            tf.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def probe_sdist(marker: Path) -> bytes:
    """`errkbprobe-1.0.tar.gz`: an sdist whose in-tree build backend writes `marker` as soon as
    anything imports it or asks it for metadata (what `pip download` of an sdist does)."""
    backend = (
        "from pathlib import Path\n"
        f"Path({str(marker)!r}).write_text('the build backend ran')\n"
        "def get_requires_for_build_wheel(config_settings=None):\n"
        f"    Path({str(marker)!r}).write_text('get_requires_for_build_wheel ran')\n"
        "    return []\n"
        "def prepare_metadata_for_build_wheel(directory, config_settings=None):\n"
        f"    Path({str(marker)!r}).write_text('prepare_metadata ran')\n"
        "    raise SystemExit(1)\n"
        "build_wheel = build_sdist = prepare_metadata_for_build_wheel\n"
    )
    setup = f"open({str(marker)!r}, 'w').write('setup.py ran')\n"
    return sdist_bytes(
        "errkbprobe-1.0",
        {
            "pyproject.toml": (
                b'[build-system]\nrequires = []\nbuild-backend = "probe_backend"\n'
                b'backend-path = ["."]\n\n[project]\nname = "errkbprobe"\nversion = "1.0"\n'
            ),
            "probe_backend.py": backend.encode(),
            "setup.py": setup.encode(),
            "errkbprobe/__init__.py": (
                b"def check(n):\n    if n < 0:\n"
                b"        raise ValueError(f'probe value must be positive, got {n}')\n"
            ),
        },
    )
