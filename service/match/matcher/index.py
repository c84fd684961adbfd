"""The matcher's immutable index: compiled templates plus a token index for candidate search.

A request must not try every template. Each template's literal words go into an inverted index
weighted by rarity (idf); a request looks up the distinct words of its text once, so its cost
is linear in the text plus the postings it touches (bounded by the index size, and by
`DF_CAP` per word: very common words carry no signal and are not posted). The best-scoring few
templates are then aligned exactly (see `align`). The index is built once from database rows
and never mutated, so a rebuilt index can replace the old one with a single assignment.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, NamedTuple

from errkb.service.match.matcher.align import anchor_order, probes
from errkb.service.match.matcher.literals import shown_literals
from errkb.service.match.matcher.mentions import Mentions, build_mentions
from errkb.service.match.matcher.normalize import WORD_CHARS, fold, squeeze, tokens
from errkb.service.match.matcher.raise_lines import RaiseLines, raise_lines
from errkb.service.match.matcher.statements import Statements, statement_key, statement_sites

DF_CAP = 150  # words in more templates than this are not posted (like stop words)
_MASS_SCALE = 8.0  # idf mass added to every template's total (about one rare word)


class OccurrenceRow(NamedTuple):
    """One raise site of an error in one snapshot, as read from the database (a named tuple:
    a whole history reads over a hundred thousand, and a frozen dataclass's init costs five
    times a tuple's)."""

    path: str  # repo path, e.g. python/sglang/srt/x.py
    line: int
    end_line: int
    qualname: str
    snapshot: str  # label
    sort_key: str
    path_prefix: str = ""  # the repo's path prefix ("python/"), stripped for frame matching


@dataclass(frozen=True)
class ErrorRow:
    """One error as read from the database: identity, template segments, occurrences."""

    id: str
    title: str
    exception: str
    template: list[dict[str, Any]]
    occurrences: tuple[OccurrenceRow, ...] = ()
    kind: str = "raise"  # records.SiteKind
    check: str | None = None  # the assert's condition, the lookup's subscript (records.Site)


class FrameSite(NamedTuple):
    """A raise site prepared for traceback comparison (one per occurrence: a named tuple)."""

    path: str
    module_path: str  # path without the repo prefix: "sglang/srt/x.py"
    line: int
    end_line: int
    qualname: str
    function: str  # last component of the qualname
    snapshot: str
    sort_key: str


@dataclass(frozen=True, slots=True)
class CompiledTemplate:
    """A message template compiled for matching: squeezed literal pieces and the placeholders
    around them."""

    id: str
    title: str
    exception: str
    pieces: tuple[str, ...]
    gaps: tuple[tuple[str, ...], ...]  # gaps[i]: placeholders before pieces[i]; gaps[-1]: after
    literal_len: int
    anchors: tuple[int, ...]  # pieces to seed an alignment from, best first (see align)
    sites: tuple[FrameSite, ...]
    snapshots: tuple[str, ...]  # labels in snapshot order
    roots: tuple[str, ...]  # top-level folders of the sites' module paths ("sglang")
    # The failing statement as a traceback prints it, squeezed and without quotes
    # (`assertx>0`, `params_dict[name]`): for frames whose line no snapshot has (see `statements`).
    statement: str = ""
    # Every site lies in the project's own tests (`build_index`'s `test_path`): code that a
    # server never runs, ranked below the code it does (see `matcher.runs_in_test`).
    test_code: bool = False
    # Other forms the message may take: a literal a placeholder's source shows, alone (see
    # `literals`). Each shares this entry's identity and sites.
    variants: tuple[CompiledTemplate, ...] = ()
    # At least one of these shows in any text the pieces align in (see `align.probes`).
    probes: tuple[str, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "probes", probes(self.pieces, self.anchors))


def _no_tests(path: str) -> bool:
    return False


@dataclass(frozen=True)
class MatchIndex:
    """Everything a request needs, immutable once built."""

    entries: tuple[CompiledTemplate, ...]
    postings: Mapping[bytes, dict[int, float]]  # word -> {entry: share of its key}
    generation: str = ""
    stats: dict[str, Any] = field(default_factory=dict)
    # File name -> the distinct raise spans in files of that name, across every snapshot: what a
    # traceback frame is looked up in (see `RaiseLines`).
    raise_lines: Mapping[str, RaiseLines] = field(default_factory=dict)
    # (function, file name) -> (statement key, entry) of the sites with a `statement`.
    statements: Statements = field(default_factory=dict)
    # File name -> function -> the entries raised there in any snapshot: the errors a frame
    # names by its file and function alone, when its line is no ingested release's.
    functions: Mapping[str, Mapping[str, tuple[int, ...]]] = field(default_factory=dict)
    # Asserts and missing-key lookups as prose names them (see `mentions`).
    mentions: Mentions = field(default_factory=lambda: Mentions({}, {}))
    # A class's name as a folded word (`importerror`) -> its entries: a text that names a class
    # gets that class's best candidates too (see `candidates`).
    classes: Mapping[bytes, frozenset[int]] = field(default_factory=dict)
    # Each entry's key in `classes` (b"" for none), in entry order: one pass over the scored
    # entries sorts them by class, however many classes the text names.
    class_of: tuple[bytes, ...] = ()
    # Whether a file belongs to the project's own tests (given by the caller, so the matcher
    # keeps no project's layout): a text whose traceback runs there ranks test code as usual.
    test_path: Callable[[str], bool] = field(default=_no_tests, compare=False)

    def raised_at(self, path: str, line: int) -> list[int]:
        """Entries with a raise spanning `line` in a file named like `path`'s (path suffixes
        are compared by `frames.pinned_sites`)."""
        spans = self.raise_lines.get(path.rsplit("/", 1)[-1])
        return spans.entries_at(line) if spans is not None else []

    def candidates(self, words: Collection[bytes], limit: int, per_class: int = 0) -> list[int]:
        """Indexes of the `limit` entries whose posted words the text covers best, then of the
        `per_class` best of each class the words name (`ImportError: DeepEP is not installed`
        in prose full of words that other errors share: the class narrows it down)."""
        # Each posting carries the word's share of its entry's smoothed total weight: the sums
        # are the keys, the best a C sort (`_best`); the longest posting, copied in C, starts
        # them. Words in order, not a set's: sums and ties alike whatever the hash seed.
        postings = self.postings
        posted = sorted((p for p in map(postings.get, sorted(words)) if p is not None), key=len)
        mass: dict[int, float] = posted.pop().copy() if posted else {}
        get = mass.get
        for posting in posted:
            for e, share in posting.items():
                mass[e] = get(e, 0.0) + share
        best = _best(limit, mass)
        if per_class and len(mass) > limit:
            best.extend(self._class_best(words, mass, best, per_class))
        return list(dict.fromkeys(best))

    def _class_best(
        self, words: Collection[bytes], mass: dict[int, float], best: list[int], per_class: int
    ) -> list[int]:
        """The `per_class` best of each class the words name, where `best` (the best of all)
        holds fewer than that many of the class: otherwise those it holds are the class's best."""
        class_of = self.class_of
        held = [class_of[e] for e in best]
        short = {w for w in words if w in self.classes and held.count(w) < per_class}
        if not short:
            return []
        by_class: dict[bytes, dict[int, float]] = {}
        for e, m in mass.items():
            if class_of[e] in short:
                by_class.setdefault(class_of[e], {})[e] = m
        return [e for members in by_class.values() for e in _best(per_class, members)]


_SORT_BELOW = 2000  # scored entries: below this many, a full sort beats a heap (measured)


def _best(n: int, mass: dict[int, float]) -> list[int]:
    """The `n` entries of most mass, as `heapq.nlargest` orders them (it is documented to equal
    the sorted list's head; ties keep the dict's order). A text's words usually score a few
    hundred entries, where `sorted` runs in C in 12 us and `nlargest`'s Python loop in 20 us;
    for thousands, the heap. (Sorting the keys by `mass.__getitem__` beat sorting the items by
    their second field: 11.6 against 14.6 us on the bench's texts.)"""
    if len(mass) < _SORT_BELOW:
        return sorted(mass, key=mass.__getitem__, reverse=True)[:n]
    return heapq.nlargest(n, mass, key=mass.__getitem__)


def compile_entry(
    row: ErrorRow,
    names: dict[tuple[str, str, str], tuple[str, str, str, str]] | None = None,
    test_path: Callable[[str], bool] | None = None,
) -> tuple[CompiledTemplate, list[bytes]]:
    """The compiled entry for one error row and its distinct literal words (`names`: the
    site strings worked out so far, shared by every site with the same path and function;
    `test_path`: whether a module path lies in the project's own tests)."""
    pieces: list[str] = []
    gaps: list[list[str]] = [[]]
    words: list[bytes] = []
    segs = row.template
    for n, seg in enumerate(segs):
        if seg["kind"] != "text":
            gaps[-1].append(seg["text"])
            continue
        text = seg["text"]
        words.extend(_whole_words(text, segs, n))
        squeezed = fold(squeeze(text))
        if not squeezed:
            continue
        if pieces and not gaps[-1]:
            pieces[-1] += squeezed
        else:
            pieces.append(squeezed)
            gaps.append([])
    sites = tuple(
        sorted(
            (_site(o, {} if names is None else names) for o in row.occurrences),
            key=lambda s: (s.sort_key, s.path, s.line),
        )
    )
    snapshots = tuple(dict.fromkeys(s.snapshot for s in sites))
    variants = []
    for literal in (
        t for seg in segs if seg["kind"] != "text" for t in shown_literals(seg["text"])
    ):
        words.extend(tokens(literal))
        piece = (fold(squeeze(literal)),)
        variants.append((piece, len(piece[0])))
    entry = CompiledTemplate(
        id=row.id,
        title=row.title,
        exception=row.exception,
        pieces=tuple(pieces),
        gaps=tuple(tuple(g) for g in gaps),
        literal_len=sum(len(p) for p in pieces),
        anchors=anchor_order(tuple(pieces)),
        sites=sites,
        snapshots=snapshots,
        roots=_roots(sites),
        statement=statement_key(row),
        test_code=test_path is not None
        and bool(sites)
        and all(test_path(p) for p in {s.module_path for s in sites}),
    )
    if variants:
        forms = (
            replace(entry, pieces=piece, gaps=((), ()), literal_len=size, anchors=(0,))
            for piece, size in dict.fromkeys(variants)
        )
        entry = replace(entry, variants=tuple(forms))
    return entry, list(dict.fromkeys(words))


def _whole_words(text: str, segs: list[dict[str, Any]], n: int) -> list[bytes]:
    """Words of a literal segment, minus those glued to a neighbouring placeholder."""
    found = tokens(text)
    if found and text[0] in WORD_CHARS and n > 0 and segs[n - 1]["kind"] != "text":
        found = found[1:]
    if found and text[-1] in WORD_CHARS and n + 1 < len(segs) and segs[n + 1]["kind"] != "text":
        found = found[:-1]
    return found


def _roots(sites: tuple[FrameSite, ...]) -> tuple[str, ...]:
    """Top-level folders of the sites; none when a site sits at the top (nothing to compare)."""
    if any("/" not in s.module_path for s in sites):
        return ()
    return tuple(sorted({s.module_path.split("/", 1)[0] for s in sites}))


def _site(
    o: OccurrenceRow, names: dict[tuple[str, str, str], tuple[str, str, str, str]]
) -> FrameSite:
    """The frame site of an occurrence. A site's strings are the same in every snapshot that
    has it, so they are made once per (path, prefix, function) and shared: a whole history has
    a hundred thousand occurrences but a few thousand distinct places."""
    key = (o.path, o.path_prefix, o.qualname)
    strings = names.get(key)
    if strings is None:
        module_path = o.path
        if o.path_prefix and module_path.startswith(o.path_prefix):
            module_path = module_path[len(o.path_prefix) :]
        strings = names[key] = (o.path, module_path, o.qualname, o.qualname.rsplit(".", 1)[-1])
    path, module_path, qualname, function = strings
    return FrameSite(
        path,
        module_path,
        o.line,
        max(o.end_line, o.line),
        qualname,
        function,
        o.snapshot,
        o.sort_key,
    )


def build_index(
    rows: Iterable[ErrorRow],
    generation: str = "",
    test_path: Callable[[str], bool] | None = None,
) -> MatchIndex:
    """Compile every error with some literal text and post its words; `test_path` tells a
    file of the project's own tests (none is, without it)."""
    entries: list[CompiledTemplate] = []
    entry_words: list[list[bytes]] = []
    opaque = 0
    names: dict[tuple[str, str, str], tuple[str, str, str, str]] = {}
    imports: set[int] = set()  # failed imports: found by their words, never as a class's best
    for row in rows:
        entry, words = compile_entry(row, names, test_path)
        if not entry.pieces and not entry.variants:
            opaque += 1  # no literal text: only a traceback's frame can identify it
            if not entry.statement:
                continue
        if row.kind == "import":
            imports.add(len(entries))
        entries.append(entry)
        entry_words.append(words)
    df: dict[bytes, int] = {}
    for words in entry_words:
        for w in words:
            df[w] = df.get(w, 0) + 1
    n = max(len(entries), 1)
    weights = {w: math.log(1.0 + n / d) for w, d in df.items()}
    lists: dict[bytes, list[tuple[int, float]]] = {}
    unposted = 0
    for e, words in enumerate(entry_words):
        posted = [w for w in words if df[w] <= DF_CAP]
        if not posted and words:
            posted = [min(words, key=lambda w: df[w])]  # keep the template reachable
        if not posted:
            unposted += 1
        # Smoothing the total favours entries with more evidence over one-word templates.
        total = sum(weights[w] for w in posted) + _MASS_SCALE
        for w in posted:
            lists.setdefault(w, []).append((e, weights[w] / total))
    spans = raise_lines(entries)
    statements = statement_sites(entries)
    stats = {
        "raise_lines": sum(len(v.spans) for v in spans.values()),
        "entries": len(entries),
        "opaque": opaque,
        "unposted": unposted,
        "words": len(lists),
        "postings": sum(len(v) for v in lists.values()),
    }
    return MatchIndex(
        entries=tuple(entries),
        postings={w: dict(v) for w, v in lists.items()},  # an entry is once in a posting
        generation=generation,
        stats=stats,
        raise_lines=spans,
        statements=statements,
        functions=_functions(entries),
        mentions=build_mentions(entries),
        classes=_classes(entries),
        # An import's few words (`cannot import name 'server' from 'grpc'`) would crowd the
        # ImportErrors that a text naming the class is narrowed to (`ImportError: DeepEP is not
        # installed`): thousands of them, each as sure as the message it only shares a word with.
        class_of=tuple(
            b"" if e in imports else _class_key(entry) for e, entry in enumerate(entries)
        ),
        test_path=test_path or _no_tests,
    )


def _functions(entries: list[CompiledTemplate]) -> dict[str, dict[str, tuple[int, ...]]]:
    """The entries raised in each (file name, function) across every snapshot."""
    found: dict[str, dict[str, dict[int, None]]] = {}
    for e, entry in enumerate(entries):
        for site in entry.sites:
            name = site.module_path.rsplit("/", 1)[-1]
            found.setdefault(name, {}).setdefault(site.function, {})[e] = None
    return {n: {f: tuple(es) for f, es in fs.items()} for n, fs in found.items()}


def names_a_class(exception: str) -> bool:
    """True for an entry's class written as a name (`KVTransferError`); an indirect raise
    holds the callee's source instead (`self._error`), and any class may show for it."""
    return exception.isidentifier() and exception.lstrip("_")[:1].isupper()


def _class_key(entry: CompiledTemplate) -> bytes:
    """The entry's class as a folded word; b"" for an indirect raise (no class name)."""
    return entry.exception.lower().encode() if names_a_class(entry.exception) else b""


def _classes(entries: list[CompiledTemplate]) -> dict[bytes, frozenset[int]]:
    """Entries by their class's folded name (an indirect raise has no class name)."""
    found: dict[bytes, set[int]] = {}
    for e, entry in enumerate(entries):
        if key := _class_key(entry):
            found.setdefault(key, set()).add(e)
    return {name: frozenset(members) for name, members in found.items()}
