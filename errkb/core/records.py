"""Frozen records produced by the pure extraction core and consumed by the store and the service.

These dataclasses are the contract between `ingest.extract` (which builds them from source
text), `ingest.store` (which persists them) and `service` (which reads them back as JSON).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from typing import Literal

from pydantic import TypeAdapter

from errkb.core.flag_link import FlagLink, FlagSide, Polarity, flag_links
from errkb.core.origin import Origin
from errkb.core.vocabulary import Vocabulary

# Re-exported: they lived here before they had their own modules.
__all__ = ["FlagLink", "FlagSide", "Polarity", "Vocabulary", "flag_links"]

SegmentKind = Literal["text", "placeholder"]
# The statement a guard comes from (see Condition).
# "assert": an assert's own check, added when it is explained (`knowledge.with_own_check`).
ConditionKind = Literal["if", "elif", "while", "for", "with", "case", "except", "try", "assert"]
# Where a snapshot was read from.
SnapshotKind = Literal["git", "pypi", "dir"]
# What an ingest did with one snapshot.
SnapshotStatus = Literal["ingested", "already ingested"]
# How a site raises: `raise X(...)` of a class named in the code; `raise f(...)` or `raise e`
# where the class is only known at run time; an `assert`; a subscript of a mapping that raises
# KeyError for a missing key (`params_dict[name]`); an import of another package, which fails
# with ModuleNotFoundError or ImportError (`ingest.extract.imports`).
SiteKind = Literal["raise", "indirect", "assert", "lookup", "import"]


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


def error_id(repo: str, exception: str, template: Template, place: str = "") -> str:
    """16 hex digits identifying an error across snapshots and file moves.

    `place` is given only for a site without a message (see `site_error_id`); ids of errors
    with a message are the hash of (repo, exception, template) alone, as they always were.
    """
    parts = (repo, exception, template.normalized) + ((place,) if place else ())
    return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()[:16]


def site_error_id(repo: str, site: Site) -> str:
    """The error a site raises: by its message, or, with no message to tell errors apart (most
    asserts, a bare `raise NotImplementedError`, a missing key), by its enclosing function and
    its check (the assert's condition, the subscript, or the innermost guard)."""
    if site.template.segments and site.kind != "lookup":
        return error_id(repo, site.exception, site.template)
    return error_id(repo, site.exception, site.template, f"{site.qualname}\x1f{site.check}")


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
    kind: SiteKind = "raise"
    # What must hold for the site not to fail, normalized (`ast.unparse`): an assert's condition,
    # a lookup's subscript; for a message-less raise, the innermost guard. "" otherwise.
    check: str = ""
    # Where the values its guard reads come from, across the snapshot (`ingest.origins`); None
    # until the snapshot's origins are traced, and for the project's own tests.
    origin: Origin | None = None


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


FileStatus = Literal[
    "ok", "prefiltered", "syntax_error", "not_utf8", "null_bytes", "too_deep", "too_large", "unsafe"
]


@dataclass(frozen=True)
class ClassDef:
    """A class statement and the names of its bases (`nn.Module` -> "Module"): what a snapshot's
    exception hierarchy is resolved from (`ingest.hierarchy`)."""

    name: str
    bases: tuple[str, ...]


@dataclass(frozen=True)
class FileResult:
    """Everything extracted from one file; cached by content hash (paths rewritten on reuse)."""

    status: FileStatus
    sites: tuple[Site, ...] = ()
    flags: tuple[FlagDef, ...] = ()
    detail: str = ""
    parsed: bool = field(default=False)
    classes: tuple[ClassDef, ...] = ()  # classes with bases, at module and class level


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

    exceptions: tuple[str, ...] = ("ValueError",)  # class names; "*" is every class
    flag_classes: tuple[str, ...] = ()  # settings dataclasses whose fields become flags
    max_bytes: int = 2_000_000
    asserts: bool = False  # every `assert` is a site too
    lookups: tuple[str, ...] = ()  # mappings whose subscripts are KeyError sites ("params_dict")
    # The project's own top-level packages ("sglang"): every import of another non-standard
    # module is a site (`ingest.extract.imports`); empty, imports are not read.
    own_packages: tuple[str, ...] = ()

    @property
    def every_class(self) -> bool:
        """True when every raised class is a site, not only the named ones."""
        return ANY_CLASS in self.exceptions

    @property
    def markers(self) -> tuple[str, ...]:
        """Words one of which a file (or statement) spells when it may hold a site: the class
        names, or with every class `raise` and the words exception classes are named with (so
        that a file defining `class FooError(BarError)` is read for the hierarchy)."""
        named = tuple(e for e in self.exceptions if e != ANY_CLASS)
        every = ("raise", "Error", "Exception", "Warning") if self.every_class else ()
        return named + every + (("assert",) if self.asserts else ()) + self.lookups

    @property
    def digest(self) -> str:
        """A stable digest of this config, combined with the extractor version in cache keys."""
        fields = (self.exceptions, self.flag_classes, self.max_bytes, self.asserts, self.lookups)
        # A config without imports keeps the digest (and the cached results) it always had.
        raw = repr(fields + ((self.own_packages,) if self.own_packages else ()))
        return hashlib.sha256(raw.encode()).hexdigest()[:12]


ANY_CLASS = "*"
