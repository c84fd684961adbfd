"""A PostgreSQL server for one test run, when none answers where the tests look for one.

The database tests run on SQLite and PostgreSQL. CI and a developer's machine have a server
running (at 127.0.0.1:5432, or at ERRKB_TEST_POSTGRES_URL); a fresh machine often has only the
packaged binaries. Then the run makes its own cluster in a temporary folder, on a free loopback
port, with trust authentication and without fsync (nothing in it outlives the run), and removes
it at the end. PostgreSQL refuses to run as root, so as root the server runs as the `postgres`
user (or `nobody`). With no binaries either, the run stops with one line saying what to install.
"""

from __future__ import annotations

import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path

import psycopg

# Where Debian and Ubuntu install each major version; ERRKB_TEST_POSTGRES_BIN overrides it.
BIN_GLOB = "/usr/lib/postgresql/*/bin"
INSTALL_HINT = (
    "install PostgreSQL's server binaries (apt-get install postgresql) or start a server and "
    "point ERRKB_TEST_POSTGRES_URL at it"
)


def answers(url: str) -> bool:
    """Whether a PostgreSQL server accepts a connection at `url` (within a few seconds)."""
    try:
        psycopg.connect(url, connect_timeout=3).close()
    except psycopg.OperationalError:
        return False
    return True


def binaries() -> Path | None:
    """The folder of the newest installed `initdb` and `pg_ctl`, if any."""
    wanted = os.environ.get("ERRKB_TEST_POSTGRES_BIN")
    found = [Path(wanted)] if wanted else sorted(Path("/").glob(BIN_GLOB.lstrip("/")))
    if not wanted and shutil.which("initdb"):
        found.append(Path(str(shutil.which("initdb"))).parent)
    usable = [d for d in found if (d / "initdb").is_file() and (d / "pg_ctl").is_file()]
    return max(usable, key=_major, default=None)


def _major(folder: Path) -> int:
    name = folder.parent.name
    return int(name) if name.isdigit() else 0


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class ThrowawayPostgres:
    """A cluster in a temporary folder, started by `start` and removed by `stop`."""

    def __init__(self, bin_dir: Path) -> None:
        self.bin_dir = bin_dir
        self.folder = Path(tempfile.mkdtemp(prefix="errkb-test-pg-"))
        self.port = _free_port()
        self.user = _unprivileged_user()

    @property
    def admin_url(self) -> str:
        """The superuser's URL on the server's maintenance database."""
        return f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    def start(self) -> None:
        """initdb and start the server; raises CalledProcessError with its output on failure."""
        if self.user is not None:
            os.chmod(self.folder, 0o700)
            os.chown(self.folder, self.user.pw_uid, self.user.pw_gid)
        data = self.folder / "data"
        self._run("initdb", "-D", str(data), "-U", "postgres", "-A", "trust", "-E", "UTF8")
        options = (
            f"-p {self.port} -k {self.folder} -c listen_addresses=127.0.0.1 -c fsync=off "
            "-c synchronous_commit=off -c full_page_writes=off -c max_connections=200"
        )
        self._run(
            "pg_ctl", "-D", str(data), "-o", options, "-l", str(self.folder / "log"), "-w", "start"
        )

    def stop(self) -> None:
        """Stop the server and remove its folder."""
        try:
            self._run("pg_ctl", "-D", str(self.folder / "data"), "-m", "immediate", "stop")
        except subprocess.CalledProcessError:
            pass  # not running (start failed): the folder still goes
        shutil.rmtree(self.folder, ignore_errors=True)

    def _run(self, program: str, *args: str) -> None:
        cmd = [str(self.bin_dir / program), *args]
        if self.user is not None:
            cmd = ["runuser", "-u", self.user.pw_name, "--", *cmd]
        subprocess.run(cmd, check=True, capture_output=True, text=True, timeout=120, cwd="/")


def _unprivileged_user() -> pwd.struct_passwd | None:
    """The user to run the server as when we are root (None when we are not)."""
    if os.geteuid() != 0:
        return None
    for name in ("postgres", "nobody"):
        try:
            return pwd.getpwnam(name)
        except KeyError:
            continue
    raise RuntimeError("running as root, and there is no postgres or nobody user to run as")
