"""How a project names the inputs its users control: the pins' vocabulary, stored with the repo."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Vocabulary:
    """How a project names the inputs its users control, and the words for its abbreviations.

    Set per repo in pins.toml and stored with the repo, so that explanations can say
    "sliding-window attention" for `swa`, tell a request field from an internal attribute, and
    recognise the project's environment helpers.
    """

    glossary: tuple[tuple[str, str], ...] = ()  # ("swa", "sliding-window attention")
    request_classes: tuple[str, ...] = ()  # "path-glob:class-glob" of request/parameter classes
    env_prefixes: tuple[str, ...] = ()  # "SGLANG_": a name with it is an environment variable
    env_helpers: tuple[str, ...] = ()  # "envs", "get_bool_env_var": reads of the environment
    model_config_names: tuple[str, ...] = ()  # "hf_config": names holding the model's config
    model_paths: tuple[str, ...] = ()  # path globs of model implementations (`config` = model's)
    # base classes of model configurations ("PretrainedConfig"): built from a model's config.json
    model_config_bases: tuple[str, ...] = ()
    # names of state the project decides as it runs ("forward_mode"): reading one is internal
    internal_state: tuple[str, ...] = ()
    # a request field -> what another API of the project calls it ("max_tokens" for the
    # OpenAI-compatible API's name of max_new_tokens)
    request_aliases: tuple[tuple[str, str], ...] = ()
    # a module -> a distribution that installs it, where the names differ ("cv2" ->
    # "opencv-python"), one pair per distribution (in the pins' order): what a failed import's
    # entry names to install
    distributions: tuple[tuple[str, str], ...] = ()
    # a path glob -> the flag or environment variable that chooses the code in those files
    path_flags: tuple[tuple[str, str], ...] = ()
    # what to change when a message says memory ran out: the settings that size the memory
    memory_advice: str = ""

    @classmethod
    def from_json(cls, raw: Mapping[str, Any] | None) -> Vocabulary:
        """From the repo row's stored JSON (None or missing keys: empty)."""
        raw = raw or {}

        def names(key: str) -> tuple[str, ...]:
            return tuple(str(x) for x in raw.get(key) or ())

        glossary = raw.get("glossary") or {}
        aliases = raw.get("request_aliases") or {}
        distributions = raw.get("distributions") or {}
        pairs = tuple(
            (str(module), str(d))
            for module, dists in distributions.items()
            for d in ([dists] if isinstance(dists, str) else dists)
        )
        return cls(
            glossary=tuple(sorted((str(k), str(v)) for k, v in glossary.items())),
            request_classes=names("request_classes"),
            env_prefixes=names("env_prefixes"),
            env_helpers=names("env_helpers"),
            model_config_names=names("model_config_names"),
            model_paths=names("model_paths"),
            model_config_bases=names("model_config_bases"),
            internal_state=names("internal_state"),
            request_aliases=tuple(sorted((str(k), str(v)) for k, v in aliases.items())),
            distributions=pairs,
            path_flags=tuple((str(k), str(v)) for k, v in (raw.get("path_flags") or {}).items()),
            memory_advice=str(raw.get("memory_advice") or ""),
        )

    def to_json(self) -> dict[str, object]:
        """The repo row's stored JSON."""
        return {
            "glossary": dict(self.glossary),
            "request_classes": list(self.request_classes),
            "env_prefixes": list(self.env_prefixes),
            "env_helpers": list(self.env_helpers),
            "model_config_names": list(self.model_config_names),
            "model_paths": list(self.model_paths),
            "model_config_bases": list(self.model_config_bases),
            "internal_state": list(self.internal_state),
            "request_aliases": dict(self.request_aliases),
            "distributions": _grouped(self.distributions),
            "path_flags": dict(self.path_flags),
            "memory_advice": self.memory_advice,
        }


def _grouped(pairs: tuple[tuple[str, str], ...]) -> dict[str, list[str]]:
    """(module, distribution) pairs as {module: [distributions]}."""
    out: dict[str, list[str]] = {}
    for module, dist in pairs:
        out.setdefault(module, []).append(dist)
    return out
