"""pins.toml: the repositories to ingest and their pinned releases and commits.

Everything project-specific (sglang's path prefix, tag pattern, flag classes) lives in this file,
validated by pydantic so that a typo is reported with its location instead of surfacing later.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from errkb.core.errors import BadInput, ConfigError
from errkb.core.records import ExtractConfig
from errkb.ingest.sources.index import releases_spec


class RepoPin(BaseModel):
    """One repository: where it lives, how its paths map, and what to ingest from it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(min_length=1)
    git_url: str | None = None
    web_url: str | None = None
    pypi_name: str | None = None
    path_prefix: str = ""
    tag_pattern: str = "v{version}"
    exceptions: tuple[str, ...] = ("ValueError",)
    flag_classes: tuple[str, ...] = ()
    launch_command: str | None = None
    # PyPI releases: a list of versions, "all" (every final release), or a bound like ">=0.4".
    releases: tuple[str, ...] | str = ()
    commits: tuple[str, ...] = ()

    @field_validator("path_prefix")
    @classmethod
    def _prefix_is_a_folder(cls, value: str) -> str:
        if value and not value.endswith("/"):
            raise ValueError("must be empty or end with '/'")
        return value

    @field_validator("releases")
    @classmethod
    def _releases_list_or_bound(cls, value: tuple[str, ...] | str) -> tuple[str, ...] | str:
        if isinstance(value, str):
            try:
                releases_spec(value)
            except BadInput as exc:
                raise ValueError(exc.message) from exc
        return value

    @field_validator("tag_pattern")
    @classmethod
    def _pattern_names_version(cls, value: str) -> str:
        try:
            value.format(version="1.0")
        except (KeyError, IndexError, ValueError) as exc:
            raise ValueError(f"must only use the {{version}} placeholder ({exc})") from exc
        return value

    def extract_config(self, max_bytes: int) -> ExtractConfig:
        """The extraction settings for this repo's files."""
        return ExtractConfig(
            exceptions=self.exceptions, flag_classes=self.flag_classes, max_bytes=max_bytes
        )


class Pins(BaseModel):
    """The whole pins file."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    repos: tuple[RepoPin, ...] = ()

    def repo(self, name: str) -> RepoPin:
        """The repo with this name, or a ConfigError naming the known ones."""
        for repo in self.repos:
            if repo.name == name:
                return repo
        known = ", ".join(r.name for r in self.repos) or "none"
        raise ConfigError(f"no repo named {name!r} in pins (known: {known})")


def load_pins(path: Path) -> Pins:
    """Read and validate a pins file; every problem becomes a ConfigError with its location."""
    try:
        raw = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise ConfigError(f"pins file not found: {path}") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from exc
    try:
        pins = Pins.model_validate(raw)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc'])}: {err['msg']}" for err in exc.errors()
        )
        raise ConfigError(f"{path}: {problems}") from exc
    names = [r.name for r in pins.repos]
    if len(set(names)) != len(names):
        raise ConfigError(f"{path}: repo names must be unique")
    return pins
