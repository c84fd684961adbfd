"""Frozen records produced by the pure extraction core and consumed by the store and the service.

These dataclasses are the contract between `ingest.extract` (which builds them from source
text), `ingest.store` (which persists them) and `service` (which reads them back as JSON).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from pydantic import TypeAdapter

SegmentKind = Literal["text", "placeholder"]
# The statement a guard comes from (see Condition).
ConditionKind = Literal["if", "elif", "while", "for", "with", "case", "except", "try"]
# Where a snapshot was read from.
SnapshotKind = Literal["git", "pypi", "dir"]
# What an ingest did with one snapshot.
SnapshotStatus = Literal["ingested", "already ingested"]


@dataclass(frozen=True)
class Segment:
    """A piece of a message template: literal text, or a placeholder holding source text."""

    kind: SegmentKind
    text: str
    conversion: str | None = None  # "r", "s" or "a" for f-string conversions
    format_spec: str | None = None  # f-string / .format spec, e.g. ".2f"


_WS = re.compile(r"\s+")


@dataclass(frozen=True)
class Template:
    """An ordered message template and the syntactic form it was written in."""

    segments: tuple[Segment, ...]
    form: str  # literal | fstring | concat | format | percent | name | constant | none | other

    @property
    def display(self) -> str:
        """The message as a reader sees it, placeholders shown as `{expr}`."""
        return "".join(
            s.text if s.kind == "text" else "{" + s.text + _suffix(s) + "}" for s in self.segments
        )

    @property
    def normalized(self) -> str:
        """Whitespace-folded display form used for identity."""
        return _WS.sub(" ", self.display).strip()

    @property
    def literal_text(self) -> str:
        """Concatenated literal segments (what a log line certainly contains)."""
        return "".join(s.text for s in self.segments if s.kind == "text")

    @property
    def is_opaque(self) -> bool:
        """True when nothing of the message is known: empty-less single placeholder."""
        return not self.literal_text.strip() and any(s.kind == "placeholder" for s in self.segments)


def _suffix(seg: Segment) -> str:
    conv = f"!{seg.conversion}" if seg.conversion else ""
    spec = f":{seg.format_spec}" if seg.format_spec else ""
    return conv + spec


def error_id(repo: str, exception: str, template: Template) -> str:
    """16 hex digits identifying an error across snapshots and file moves."""
    key = "\x1f".join((repo, exception, template.normalized))
    return hashlib.sha256(key.encode()).hexdigest()[:16]


@dataclass(frozen=True)
class Condition:
    """One link of the guard chain that must hold for control to reach a raise.

    `expr` is the source text of the test (ast.unparse). `holds` is False when the raise needs the
    test to be false (an earlier `if`/`elif` branch, or the `else` of a loop/try). `kind` says which
    statement produced it (`ConditionKind`); a `try` guard's expr says which part of the try.
    `resolved` maps local names used in `expr` to the expression assigned to them before.
    """

    kind: ConditionKind
    expr: str
    holds: bool
    line: int
    resolved: tuple[tuple[str, str], ...] = ()

    @property
    def text(self) -> str:
        """The condition as it must hold, e.g. `not (x is not None)`."""
        return self.expr if self.holds else f"not ({self.expr})"


@dataclass(frozen=True)
class Snippet:
    """Source lines around a raise: first line number, the lines, and the raise's line span."""

    start: int
    lines: tuple[str, ...]
    raise_start: int
    raise_end: int


@dataclass(frozen=True)
class SiteNotes:
    """What the source says about a raise beside its code: the comments directly above (or
    beside) the raise and its guards, the enclosing function's docstring, and the literal values
    of the module constants its message and guards name (so `{MODES}` can be shown as the list).

    Comment anchors are line offsets from the raise line, so a moved site keeps its notes.
    """

    comments: tuple[tuple[int, str], ...] = ()  # (anchor line - raise line, comment text)
    docstring: str = ""
    constants: tuple[tuple[str, str], ...] = ()  # (name, source of its literal value)


@dataclass(frozen=True)
class Site:
    """One `raise <Exception>(...)` site in one file."""

    exception: str
    template: Template
    path: str  # repo path (prefix already applied by the pipeline)
    line: int
    end_line: int
    qualname: str  # "KVCacheConfigurator._init_pools", "<module>"
    conditions: tuple[Condition, ...]
    snippet: Snippet
    raise_source: str  # source of the message argument, "" for a bare raise
    notes: SiteNotes = field(default_factory=SiteNotes)


@dataclass(frozen=True)
class FlagDef:
    """A command-line option defined by the project (argparse call or settings dataclass field)."""

    flags: tuple[str, ...]  # ("--tp-size", "--tensor-parallel-size")
    dest: str  # "tp_size"
    type: str | None
    default: str | None  # source text of the default
    choices: tuple[str, ...] | None
    help: str | None
    path: str
    line: int
    origin: Literal["argparse", "dataclass"]
    cli: bool = True  # False for a settings field marked as not exposed on the command line


FlagSide = Literal["message", "condition"]
# What a guard needs of a flag: set (on) or unset (off), equal or not to `value`, in or not in
# `value`, or some other comparison (`value` then holds the operator and operand).
Polarity = Literal["on", "off", "eq", "ne", "in", "not_in", "other"]


@dataclass(frozen=True)
class FlagLink:
    """A flag one raise site involves: named or printed by its message, read by its guard, or both.

    Built by the linker (`errkb.ingest.flag_links`), stored as JSON with each occurrence, and
    read back by the service; `to_json`/`from_json` are the one place its stored shape is spelled.
    """

    flag: str  # the flag's main spelling, "--tp-size"
    dest: str  # the settings attribute, "tp_size"
    sides: tuple[FlagSide, ...]
    polarity: Polarity | None = None
    value: str | None = None  # source text of the compared value
    condition: str | None = None  # the guard that reads the flag
    required: bool = False  # the raise needs this use to hold (not one branch of an `or`)
    via: str | None = None  # a local name the guard reads the flag through
    cli: bool = True
    mentioned_as: str | None = None  # the alias the message spells the flag with

    def to_json(self) -> dict[str, Any]:
        """The stored form (keys as stored since the first schema)."""
        out: dict[str, Any] = {
            "flag": self.flag,
            "dest": self.dest,
            "sides": list(self.sides),
            "polarity": self.polarity,
            "value": self.value,
            "condition": self.condition,
            "required": self.required,
            "via": self.via,
            "cli": self.cli,
        }
        if self.mentioned_as is not None:
            out["mentioned_as"] = self.mentioned_as
        return out

    @classmethod
    def from_json(cls, raw: dict[str, Any]) -> FlagLink:
        """Read the stored form back; unknown keys are ignored."""
        return cls(
            flag=str(raw["flag"]),
            dest=str(raw["dest"]),
            sides=tuple(raw.get("sides") or ()),
            polarity=raw.get("polarity"),
            value=raw.get("value"),
            condition=raw.get("condition"),
            required=bool(raw.get("required")),
            via=raw.get("via"),
            cli=bool(raw.get("cli", True)),
            mentioned_as=raw.get("mentioned_as"),
        )

    def joined(self, other: FlagLink) -> FlagLink:
        """This link with the other's sides added (the same flag at another site)."""
        extra = tuple(s for s in other.sides if s not in self.sides)
        return replace(self, sides=self.sides + extra) if extra else self


def flag_links(raw: list[dict[str, Any]] | None) -> list[FlagLink]:
    """Stored links (a JSON list, or NULL) as records."""
    return [FlagLink.from_json(x) for x in raw or ()]


FileStatus = Literal[
    "ok", "prefiltered", "syntax_error", "not_utf8", "null_bytes", "too_deep", "too_large", "unsafe"
]


@dataclass(frozen=True)
class FileResult:
    """Everything extracted from one file; cached by content hash (paths rewritten on reuse)."""

    status: FileStatus
    sites: tuple[Site, ...] = ()
    flags: tuple[FlagDef, ...] = ()
    detail: str = ""
    parsed: bool = field(default=False)


@dataclass(frozen=True)
class UnitResult:
    """The sites of one function unit (see `ingest.extract.units`), cached by the unit's text.

    `start` is the unit's first line when it was extracted (sites are shifted by the distance to
    where the unit is now); `context` digests what the extraction read outside the unit.
    """

    context: str
    start: int
    sites: tuple[Site, ...] = ()
    names: tuple[str, ...] = ()  # the identifiers in the unit's text (what `context` covers)


FILE_RESULT = TypeAdapter(FileResult)
UNIT_RESULT = TypeAdapter(UnitResult)


@dataclass(frozen=True)
class ExtractConfig:
    """What to look for in each file; part of the file-cache key (see `digest`)."""

    exceptions: tuple[str, ...] = ("ValueError",)
    flag_classes: tuple[str, ...] = ()  # settings dataclasses whose fields become flags
    max_bytes: int = 2_000_000

    @property
    def digest(self) -> str:
        """A stable digest of this config, combined with the extractor version in cache keys."""
        raw = repr((self.exceptions, self.flag_classes, self.max_bytes))
        return hashlib.sha256(raw.encode()).hexdigest()[:12]


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

    @classmethod
    def from_json(cls, raw: Mapping[str, Any] | None) -> Vocabulary:
        """From the repo row's stored JSON (None or missing keys: empty)."""
        raw = raw or {}

        def names(key: str) -> tuple[str, ...]:
            return tuple(str(x) for x in raw.get(key) or ())

        glossary = raw.get("glossary") or {}
        return cls(
            glossary=tuple(sorted((str(k), str(v)) for k, v in glossary.items())),
            request_classes=names("request_classes"),
            env_prefixes=names("env_prefixes"),
            env_helpers=names("env_helpers"),
            model_config_names=names("model_config_names"),
            model_paths=names("model_paths"),
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
        }
