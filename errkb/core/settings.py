"""The one settings object: the only place that reads the environment (prefix `ERRKB_`)."""

from __future__ import annotations

import os
from pathlib import Path

from pydantic import AliasChoices, Field
from pydantic_settings import BaseSettings, SettingsConfigDict

# The default pins (sglang), installed with the package.
DEFAULT_PINS = Path(__file__).resolve().parent.parent / "pins.toml"


def _user_cache() -> Path:
    """The user's cache folder: $XDG_CACHE_HOME, else ~/.cache."""
    folder = os.environ.get("XDG_CACHE_HOME", "")
    return Path(folder) if os.path.isabs(folder) else Path.home() / ".cache"


class Settings(BaseSettings):
    """Runtime configuration for the CLI, the ingester and the service."""

    model_config = SettingsConfigDict(env_prefix="ERRKB_", env_file=".env", extra="ignore")

    data_dir: Path = Path("data")
    database_url: str = ""  # empty: SQLite file under data_dir
    pins_file: Path | None = None  # unset: ./pins.toml if present, else the packaged default
    # Downloaded wheels and git mirrors: the user's cache folder (XDG), never the current one.
    cache_dir: Path = Field(default_factory=lambda: _user_cache() / "errkb")
    index_url: str = "https://pypi.org/pypi"  # a package index's JSON API (PyPI's by default)
    # The simple API (PEP 691) `errkb watch` follows: ERRKB_SIMPLE_INDEX_URL, else pip's own
    # PIP_INDEX_URL, else what `pip config` names, else PyPI's (see ingest/sources/simple.py).
    simple_index_url: str = Field(
        default="",
        validation_alias=AliasChoices(
            "simple_index_url", "ERRKB_SIMPLE_INDEX_URL", "PIP_INDEX_URL"
        ),
    )
    index_timeout_seconds: float = Field(
        default=30.0, gt=0, description="how long the package index has to answer a request"
    )
    workers: int = Field(default=0, description="parse processes; 0 = all cores")
    workers_nice: int = Field(
        default=10,
        ge=0,
        le=19,
        description="niceness the parse and entry-doc processes add to the ingest's",
    )
    max_file_bytes: int = 2_000_000
    max_body_bytes: int = 1 << 20
    match_refresh_seconds: float = 2.0  # how often the matcher checks for a newer ingest
    match_processes: int = Field(default=1, ge=1, description="processes matching /api/match")
    # 64: as many as a load balancer's usual connection pool to one process, so a busy client
    # pool waits rather than gets 503s (bench/serve.py at 64 connections: 4,007 refused at 16);
    # the bodies held stay bounded at 64 x max_body_bytes (64 MiB).
    match_queue: int = Field(
        default=64, ge=1, description="matches a server process holds at once; more get a 503"
    )
    # 5, not 10: at 10 a busy machine's other work starved the matches (6-8 matches a minute
    # in the soak against 14-15 at 5), for no measurable gain in /healthz.
    match_nice: int = Field(
        default=5, ge=0, le=19, description="niceness the match processes add to the server's"
    )
    request_timeout_seconds: float = Field(
        default=30.0, gt=0, description="time a client has to send a whole request"
    )
    # Python's default is 5 ms: the server's event loop waited that long per step behind page
    # renders in the threadpool (see README, "bench/soak.py").
    switch_interval_ms: float = Field(
        default=1.0, gt=0, description="how long a server thread keeps the GIL while another waits"
    )
    keep_alive_seconds: float = Field(default=5.0, gt=0, description="idle keep-alive limit")
    health_check_seconds: float = Field(
        default=1.0, gt=0, description="period of the database round trip /healthz reports"
    )
    host: str = "127.0.0.1"
    port: int = 8000
    serve_workers: int = Field(default=1, ge=1, description="server processes of `errkb serve`")
    # Off where the database user may not change the schema: `errkb db upgrade` does it instead,
    # and the server refuses to start while the schema is behind.
    auto_migrate: bool = True
    http_max_age: int = Field(
        default=0, ge=0, description="seconds a CDN or browser may reuse an answer unchecked"
    )
    entry_cache_mb: int = Field(
        default=256, ge=0, description="serialized entries and pages kept per server process"
    )
    # Entry documents built in bulk after each ingest of `errkb watch`, so a first read is one
    # row, not a build (`errkb ingest` leaves them to the server unless given --docs).
    materialize_entries: bool = True
    # `errkb serve` builds missing entry docs in a background process (see cli/serve_docs.py),
    # and looks this often whether an ingest beside it left some out of date.
    serve_builds_docs: bool = True
    serve_docs_check_seconds: float = Field(default=30.0, gt=0)
    access_log: bool = Field(default=True, description="log one line per request (uvicorn's)")
    llm_url: str = ""
    llm_model: str = ""
    llm_api_key: str = ""
    public_url: str = ""  # canonical base URL for pages, e.g. https://errkb.example.org

    @property
    def resolved_pins_file(self) -> Path:
        """The pins file: the configured one, ./pins.toml, or the default shipped with errkb."""
        if self.pins_file is not None:
            return self.pins_file
        local = Path("pins.toml")
        return local if local.is_file() else DEFAULT_PINS

    @property
    def resolved_database_url(self) -> str:
        """The SQLAlchemy URL, defaulting to the embedded SQLite file."""
        if self.database_url:
            return self.database_url
        return f"sqlite:///{(self.data_dir / 'errkb.sqlite3').as_posix()}"
