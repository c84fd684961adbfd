r"""A cheap, sound test of which texts can hold a read that counts as a flag read.

Linking parses and walks every placeholder, guard expression and resolved local of every raise
site, yet few of them read a flag (846 of the 24,102 texts of sglang 0.5.23's sites). Looking at
the text first skips the parse and the walk for the rest.

Invariant (what makes skipping safe): whenever some node of `parse_expr(text)` has
`Reads(catalog, path, server_paths).dest(node)` not None, `ReadFilter.may_read(text, path)` is
True. Linking takes flags only from such nodes (`ingest.flag_links.reads.Reads.dest` over the parsed
placeholders, guard expressions and the texts their local names resolve to) and from `--flag`
tokens of the message, so a text that may not read contributes nothing, and a site none of whose
texts may read and whose message names no catalog flag involves no flag.

Why it holds. Reads are `x.dest` (an Attribute) and `getattr(x, "dest", ...)`. A text that is not
ASCII may read: identifiers are NFKC-normalized, so the text may spell them otherwise. In an
ASCII text, identifiers, keywords and numbers are spelled verbatim, so:
- Without a `.` there is no attribute, and without `getattr` no getattr call: no read.
- Without `getattr`, `#` (a comment) or a backslash (a line continuation), tokens are separated
  by whitespace alone, so an attribute read is `.` + whitespace + its name (a whole `\w+` word),
  and its object ends right before: a settings-like name
  (`ingest.flag_links.reads.looks_like_settings`: ending in args/settings/options/opts, any
  case) or a call without arguments (`(` + whitespace + `)`), then closing parentheses and
  whitespace. A specific settings-class dest counts from any
  object; the others (non-specific settings-class dests, argparse dests) only from such objects.
- Otherwise the whole-word test stands alone: a name read is one of the text's words. A getattr
  constant is spelled verbatim too, unless it has escapes (a backslash), is joined from adjacent
  literals (quotes facing each other) or its dest is not an identifier (looked for as a
  substring); those texts may read. A settings-like object leaves its suffix in the text, or,
  for a call whose unparsed function has `get_` after its last dot, `get_` from an identifier or
  a quote from the string literal that spells it: texts without either cannot read the dests
  that need one.
- An argparse dest counts only in the file that defines it or when it is defined in the settings
  module, so other files' argparse dests are not looked for.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from errkb.core.records import FlagDef
from errkb.ingest.flag_links.reads import SETTINGS_CALL_PREFIX, SETTINGS_SUFFIXES, is_specific

_WORD = re.compile(r"\w+")
_SETTINGS_MARK = re.compile(
    "|".join(re.escape(m) for m in (*SETTINGS_SUFFIXES, SETTINGS_CALL_PREFIX, "'", '"')),
    re.IGNORECASE,
)
# Where token spacing is not only whitespace (comments, line continuations), or a string
# constant may be spelled other than its value (escapes, adjacent literals being joined).
_IRREGULAR = re.compile(r"[#\\]")
_ADJACENT_LITERALS = re.compile(r"['\"]\s*[rRbBuUfF]{0,2}['\"]")
_GETATTR = "getattr"
_GETATTR_OR_IRREGULAR = re.compile(rf"{_GETATTR}|{_IRREGULAR.pattern}")
_ATTRIBUTE = re.compile(r"\.\s*(\w+)")
# A lookahead, so that `x.args.args.tp_size` yields both `args` and `tp_size`.
_SUFFIXES = "|".join(SETTINGS_SUFFIXES)
_SETTINGS_ATTRIBUTE = re.compile(rf"(?:(?i:{_SUFFIXES})|\(\s*\))(?=[\s)]*\.\s*(\w+))")


class ReadFilter:
    """Which texts may read a flag of one catalog; built once per snapshot, answers memoized."""

    def __init__(self, catalog: Mapping[str, FlagDef], server_paths: frozenset[str]) -> None:
        anywhere: set[str] = set()
        settings_only: set[str] = set()
        own: dict[str, set[str]] = {}
        for dest, flag in catalog.items():
            if not dest.isidentifier():
                continue  # never an attribute name; `getattr` texts are kept anyway
            if flag.origin == "dataclass":
                (anywhere if is_specific(dest) else settings_only).add(dest)
            elif flag.path in server_paths:
                settings_only.add(dest)
            else:
                own.setdefault(flag.path, set()).add(dest)
        self._odd = tuple(dest for dest in catalog if not dest.isidentifier())
        self._anywhere = frozenset(anywhere)
        self._elsewhere = MayRead(self, frozenset(settings_only))
        # Files defining argparse flags: their own dests join the settings-only ones there.
        self._own = {
            path: MayRead(self, frozenset(settings_only | dests)) for path, dests in own.items()
        }

    def for_path(self, path: str) -> MayRead:
        """The answers for sites in `path` (the same for every file defining no argparse flag)."""
        return self._own.get(path, self._elsewhere)

    def may_read(self, text: str, path: str) -> bool:
        """False only when no read in `text` can count as a flag read at a site in `path`."""
        return self.for_path(path)[text]

    def test(self, text: str, settings_only: frozenset[str]) -> bool:
        """The answer for one text, given the dests that count only from settings-like objects."""
        if not text.isascii():
            return True
        if "." not in text and _GETATTR not in text:
            return False  # neither an attribute nor a `getattr` call: half the texts
        if not _GETATTR_OR_IRREGULAR.search(text):
            # Only `obj.dest` reads, tokens spaced by whitespace alone: the names after a dot,
            # and those after a dot that follows a settings-like name or an empty call.
            attributes = set(_ATTRIBUTE.findall(text))
            if not attributes.isdisjoint(self._anywhere):
                return True
            if attributes.isdisjoint(settings_only):
                return False
            return not settings_only.isdisjoint(_SETTINGS_ATTRIBUTE.findall(text))
        words = set(_WORD.findall(text))
        if _GETATTR in words and (
            _IRREGULAR.search(text)
            or _ADJACENT_LITERALS.search(text)
            or any(d in text for d in self._odd)
        ):
            return True
        if not words.isdisjoint(self._anywhere):
            return True
        return not words.isdisjoint(settings_only) and _SETTINGS_MARK.search(text) is not None


class MayRead(dict[str, bool]):
    """text -> whether it may read a flag, computed on the first lookup of each text.

    A dict, so that the lookups of texts seen before (most: guards recur across a function's
    sites) stay in C.
    """

    def __init__(self, owner: ReadFilter, settings_only: frozenset[str]) -> None:
        super().__init__()
        self._owner = owner
        self._settings_only = settings_only

    def __missing__(self, text: str) -> bool:
        found = self[text] = self._owner.test(text, self._settings_only)
        return found
