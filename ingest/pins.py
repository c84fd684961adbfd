"""pins.toml: the repositories to ingest and their pinned releases and commits.

Everything project-specific (sglang's path prefix, tag pattern, flag classes) lives in this file,
validated by pydantic so that a typo is reported with its location instead of surfacing later.
"""

from __future__ import annotations

import string
import tomllib
from pathlib import Path
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from errkb.core.errors import BadInput, ConfigError
from errkb.core.records import ANY_CLASS, ExtractConfig, Vocabulary
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
    # The classes whose raises are sites: names, or ["*"] for every class (resolved through the
    # snapshot's class hierarchy); `asserts` adds every `assert`; `lookups` names the mappings
    # whose subscripts raise KeyError for a missing key (`params_dict[name]`).
    exceptions: tuple[str, ...] = ("ValueError",)
    asserts: bool = False
    lookups: tuple[str, ...] = ()
    flag_classes: tuple[str, ...] = ()
    launch_command: str | None = None
    # PyPI releases: a list of versions, "all" (every final release), or a bound like ">=0.4".
    releases: tuple[str, ...] | str = ()
    commits: tuple[str, ...] = ()
    # The inputs users control beyond flags, and the words for the project's abbreviations.
    request_classes: tuple[str, ...] = ()  # "path-glob:class-glob" of request/parameter classes
    env_prefixes: tuple[str, ...] = ()  # "SGLANG_": names with it are environment variables
    env_helpers: tuple[str, ...] = ()  # "envs", "get_bool_env_var": reads of the environment
    model_config_names: tuple[str, ...] = ()  # "hf_config": names holding the model's config
    model_paths: tuple[str, ...] = ()  # globs of model code: there `config` is the model's
    model_config_bases: tuple[str, ...] = ()  # "PretrainedConfig": classes built from config.json
    # Names of state the project decides itself as it runs ("forward_mode": the kind of batch
    # the scheduler chose): a check that reads one is the project's own
    internal_state: tuple[str, ...] = ()
    # [repos.glossary] swa = "sliding-window attention", kept as sorted pairs (the pin is hashable)
    glossary: tuple[tuple[str, str], ...] = ()
    # [repos.request_aliases] max_new_tokens = "max_tokens ... in the OpenAI-compatible API"
    request_aliases: tuple[tuple[str, str], ...] = ()
    # The project's own top-level packages: an import of any other (not standard) module is a
    # site, the ModuleNotFoundError or ImportError it raises when it fails. Empty: not read.
    own_packages: tuple[str, ...] = ()
    # [repos.distributions] cv2 = "opencv-python": the distribution that installs a module, where
    # their names differ (where they agree, the release's own requirements tell); a list names
    # each distribution that has installed it (`sgl_kernel = ["sglang-kernel", "sgl-kernel"]`).
    distributions: tuple[tuple[str, str], ...] = ()
    # [repos.path_flags] "*/layers/attention/*" = "--attention-backend": the flag or environment
    # variable that chooses the code in those files, offered as the way around an internal check
    path_flags: tuple[tuple[str, str], ...] = ()
    # What to change when a message says memory ran out ("Prefill out of memory"): the project's
    # own advice on the settings that size the memory its server takes. Empty: none.
    memory_advice: str = ""

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
        # Parsed, not tried: `str.format` would follow `{version.__class__}` or `{version[0]}`.
        try:
            fields = [(f, spec, conv) for _, f, spec, conv in string.Formatter().parse(value)]
        except ValueError as exc:  # unbalanced braces
            raise ValueError(f"must only use the {{version}} placeholder ({exc})") from exc
        used = [f for f in fields if f[0] is not None]
        if not used or any(f != ("version", "", None) for f in used):
            raise ValueError("must contain {version} and no other placeholder, e.g. 'v{version}'")
        return value

    @field_validator("web_url")
    @classmethod
    def _web_url_is_http(cls, value: str | None) -> str | None:
        if value is not None and not _is_http_url(value):
            raise ValueError("must be an http:// or https:// URL, e.g. https://github.com/o/r")
        return value

    @field_validator("git_url")
    @classmethod
    def _git_url_is_safe(cls, value: str | None) -> str | None:
        if value is not None and not _is_git_location(value):
            raise ValueError(
                "must be an http(s), ssh or file URL, user@host:path, or a local folder path"
            )
        return value

    @field_validator("glossary", mode="before")
    @classmethod
    def _glossary_table(cls, value: object) -> object:
        if not isinstance(value, dict):
            raise ValueError('must be a table of name part = words, like swa = "sliding-window"')
        return tuple(sorted(value.items()))

    @field_validator("path_flags", mode="before")
    @classmethod
    def _path_flag_table(cls, value: object) -> object:
        if not isinstance(value, dict) or not all(
            isinstance(k, str) and isinstance(v, str) and v.strip() for k, v in value.items()
        ):
            raise ValueError('must be a table of path glob = flag, like "*/attention/*" = "--x"')
        return tuple(value.items())

    @field_validator("distributions", mode="before")
    @classmethod
    def _distribution_table(cls, value: object) -> object:
        if not isinstance(value, dict):
            raise ValueError('must be a table of module = distribution, like cv2 = "opencv-python"')
        pairs: list[tuple[str, str]] = []
        for module, dists in value.items():
            names = [dists] if isinstance(dists, str) else dists
            if (
                not isinstance(names, list)
                or not names
                or not all(isinstance(d, str) and d.strip() for d in names)
            ):
                raise ValueError(f"{module!r}: must be a distribution name or a list of them")
            pairs.extend((module, d) for d in names)
        return tuple(pairs)

    @field_validator("request_aliases", mode="before")
    @classmethod
    def _alias_table(cls, value: object) -> object:
        if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
            raise ValueError('must be a table of field = words, like max_new_tokens = "max_tokens"')
        return tuple(sorted(value.items()))

    @field_validator("glossary")
    @classmethod
    def _glossary_words(cls, value: tuple[tuple[str, str], ...]) -> tuple[tuple[str, str], ...]:
        for key, words in value:
            if not key.isidentifier() or key != key.lower():
                raise ValueError(f"{key!r}: a glossary key is one lower-case name part, like 'swa'")
            if not words.strip():
                raise ValueError(f"{key!r}: the words for it are empty")
        return value

    @field_validator("request_classes")
    @classmethod
    def _class_specs(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for spec in value:
            if not spec.strip() or spec.count(":") > 1:
                raise ValueError(f"{spec!r}: must be a class glob or 'path-glob:class-glob'")
        return value

    def vocabulary(self) -> Vocabulary:
        """What explanations need to know of this project's words and inputs."""
        return Vocabulary(
            glossary=self.glossary,
            request_classes=self.request_classes,
            env_prefixes=self.env_prefixes,
            env_helpers=self.env_helpers,
            model_config_names=self.model_config_names,
            model_paths=self.model_paths,
            model_config_bases=self.model_config_bases,
            internal_state=self.internal_state,
            request_aliases=self.request_aliases,
            distributions=self.distributions,
            path_flags=self.path_flags,
            memory_advice=self.memory_advice,
        )

    @field_validator("exceptions", "lookups", "own_packages")
    @classmethod
    def _names(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for name in value:
            if name != ANY_CLASS and not name.isidentifier():
                raise ValueError(f"{name!r}: must be a Python name, or '*' for every class")
        return value

    def extract_config(self, max_bytes: int) -> ExtractConfig:
        """The extraction settings for this repo's files."""
        return ExtractConfig(
            exceptions=self.exceptions,
            flag_classes=self.flag_classes,
            max_bytes=max_bytes,
            asserts=self.asserts,
            lookups=self.lookups,
            own_packages=self.own_packages,
        )

    def only(self, classes: tuple[str, ...]) -> RepoPin:
        """This repo limited to raises of `classes` (no asserts, no lookups, no imports of other
        packages): `--classes`."""
        return self.model_copy(
            update={"exceptions": classes, "asserts": False, "lookups": (), "own_packages": ()}
        )


def _is_http_url(value: str) -> bool:
    """True for an http(s) URL with a host and no whitespace or control characters."""
    if any(c.isspace() or ord(c) < 32 or ord(c) == 127 for c in value):
        return False
    try:
        parts = urlsplit(value)
    except ValueError:
        return False
    return parts.scheme in ("http", "https") and bool(parts.hostname)


def _is_git_location(value: str) -> bool:
    """True for a location git reaches by http(s) or ssh, or a local path; never a transport
    that runs commands (`ext::`) or an argument-looking string."""
    if not value or value.startswith("-") or "::" in value:
        return False
    if any(c.isspace() or ord(c) < 32 or ord(c) == 127 for c in value):
        return False
    if "://" in value:
        parts = urlsplit(value)
        if parts.scheme == "file":  # a local path, spelled as a URL
            return True
        return parts.scheme in ("http", "https", "ssh") and bool(parts.hostname)
    return True  # a local path, or scp-like user@host:path (git's ssh form)


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
    except IsADirectoryError as exc:
        raise ConfigError(f"pins file is a folder, not a file: {path}") from exc
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not a text (TOML) file: byte {exc.start} is not UTF-8") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from exc
    try:
        pins = Pins.model_validate(raw)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc'])}: {err['msg']}" for err in exc.errors()
        )
        raise ConfigError(f"{path}: {problems}") from exc
    if not pins.repos:
        raise ConfigError(f"{path}: no [[repos]] defined; a pins file lists at least one repo")
    names = [r.name for r in pins.repos]
    if len(set(names)) != len(names):
        raise ConfigError(f"{path}: repo names must be unique")
    return pins
