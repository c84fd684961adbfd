"""Failed imports told in other words: restated as the line Python prints, then matched.

A user writes "it says it can't import build_regex_from_object", "No module named sgl_kernel"
(quotes lost), or pastes an `undefined symbol` error whose only trace of the module is the path of
its compiled library. Each is restated as the message of the import entry it points to
(`cannot import name 'build_regex_from_object'`, `No module named 'sgl_kernel'`), matched like any
text, and the import entries found are added at the span of the words they came from.

Only `str` scanning here (no regular expression meets the untrusted text): linear in the input.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace

from errkb.service.match.matcher import Match
from errkb.service.match.matcher.score import WEAK_BELOW

IMPORT_CLASSES = frozenset({"ModuleNotFoundError", "ImportError"})
# Words before "import" that say it failed: "can't import", "unable to import", "failed to import".
_FAILED = frozenset(
    "cannot can't cant couldn't couldnt not unable failed fails fail failing error".split()
)
_LIBRARY = ("undefined symbol", "cannot open shared object file", "DLL load failed")
_PACKAGES = ("site-packages/", "dist-packages/")
_STRIP = "'\"`‘’“”.,:;()[]!?"
PROSE_SCORE = 0.9  # a restated text is surer of the module than of the words around it
_MAX_PHRASES = 20


@dataclass(frozen=True)
class Restated:
    """A message restated from the input's words, and where those words are."""

    start: int
    end: int
    message: str


def restated(text: str) -> list[Restated]:
    """The import failures that `text` tells in words other than Python's, as Python's."""
    out = [*_prose(text), *_unquoted(text), *_libraries(text)]
    return list({r.message: r for r in out}.values())[:_MAX_PHRASES]


def _words(text: str) -> Iterator[tuple[int, str]]:
    """Each whitespace-separated word and its offset."""
    i, n = 0, len(text)
    while i < n:
        while i < n and text[i].isspace():
            i += 1
        start = i
        while i < n and not text[i].isspace():
            i += 1
        if start < i:
            yield start, text[start:i]


def _name(word: str) -> str:
    """A dotted Python name a word holds, without quotes and punctuation ("" when none)."""
    name = word.strip(_STRIP)
    return name if name and all(p.isidentifier() for p in name.split(".")) else ""


def _prose(text: str) -> Iterator[Restated]:
    """ "can't import X", "failed to import name X from Y"."""
    words = list(_words(text))
    for k, (start, word) in enumerate(words):
        if word.lower().strip(_STRIP) != "import" or k == 0:
            continue
        before = {w.lower().strip(_STRIP) for _, w in words[max(0, k - 3) : k]}
        if not before & _FAILED:
            continue
        rest = words[k + 1 : k + 5]
        if rest and rest[0][1].lower() == "name":
            rest = rest[1:]
        name = _name(rest[0][1]) if rest else ""
        if not name:
            continue
        end = rest[0][0] + len(rest[0][1])
        module = ""
        if len(rest) > 2 and rest[1][1].lower() == "from":
            module = _name(rest[2][1])
            end = rest[2][0] + len(rest[2][1]) if module else end
        if module:
            yield Restated(start, end, f"cannot import name '{name}' from '{module}'")
        else:
            yield Restated(start, end, f"cannot import name '{name}'")
            yield Restated(start, end, f"No module named '{name}'")


def _unquoted(text: str) -> Iterator[Restated]:
    """ "No module named sgl_kernel": the quotes lost in a retelling."""
    lowered, at = text.lower(), 0
    key = "no module named "
    while (at := lowered.find(key, at)) >= 0:
        start, at = at, at + len(key)
        word = next(_words(text[at : at + 200]), None)
        if word is None or word[1][:1] in "'\"":
            continue
        name = _name(word[1])
        if name:
            yield Restated(start, at + word[0] + len(word[1]), f"No module named '{name}'")


def _libraries(text: str) -> Iterator[Restated]:
    """An `undefined symbol` or unloadable library: the package its path lies in."""
    for marker in _LIBRARY:
        at = 0
        while (at := text.find(marker, at)) >= 0:
            line_start = text.rfind("\n", 0, at) + 1
            package = _package_in(text[line_start:at])
            if package:
                yield Restated(line_start, at + len(marker), f"No module named '{package}'")
            at += len(marker)


def _package_in(line: str) -> str:
    """The top-level package of the last installed path on a line: `.../site-packages/
    sgl_kernel/common_ops.so` -> `sgl_kernel`."""
    best = max(line.rfind(p) for p in _PACKAGES)
    if best < 0:
        return ""
    rest = line[best:].split("/", 2)
    if len(rest) < 3:  # the library itself sits in site-packages: its name is the module's
        return _name(rest[-1].split(".", 1)[0])
    return _name(rest[1])


def with_import_matches(
    matches: list[Match], text: str, match: Callable[[str], list[Match]], limit: int
) -> list[Match]:
    """`matches` plus the import entries that `text` tells in other words, each the best match
    of its restated message; the matcher's own order is kept, and each addition goes before the
    first match it outscores."""
    have = {m.entry.id: m.score for m in matches}
    added: dict[str, Match] = {}
    for r in restated(text):
        found = [m for m in match(r.message) if m.entry.exception in IMPORT_CLASSES]
        if not found:
            continue
        best = max(found, key=lambda m: m.score)
        scored = replace(best, score=round(best.score * PROSE_SCORE, 4), start=r.start, end=r.end)
        if have.get(best.entry.id, -1.0) < scored.score and (
            best.entry.id not in added or added[best.entry.id].score < scored.score
        ):
            added[best.entry.id] = scored
    out = [m for m in matches if m.entry.id not in added]
    for m in sorted(added.values(), key=lambda m: -m.score):
        at = next((i for i, o in enumerate(out) if o.score < m.score), len(out))
        out.insert(at, m)
    out = _without_longer_modules(out, text)
    if any(m.score >= WEAK_BELOW for m in out):  # a weak guess never stands beside a match
        out = [m for m in out if m.score >= WEAK_BELOW]
    return out[:limit]


def _without_longer_modules(matches: list[Match], text: str) -> list[Match]:
    """Without `No module named 'x.sub'` when the text names `'x'` itself, whole: the longer
    message only reads alike up to the quote."""
    whole = [
        m.entry.title[:-1]
        for m in matches
        if m.entry.exception in IMPORT_CLASSES and m.entry.title in text
    ]
    return [
        m
        for m in matches
        if m.entry.exception not in IMPORT_CLASSES
        or not any(m.entry.title.startswith(w) and m.entry.title != w + "'" for w in whole)
    ]
