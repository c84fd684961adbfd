"""Input normalization for matching: blank log prefixes, squeeze out whitespace, map back.

People paste text with per-line log prefixes (`[2025-01-01 12:00:00 TP0] `, `(Worker pid=12) `,
`svc-1  | `), markdown backticks and line breaks inserted by terminals, sometimes in the middle of
a word. Matching therefore runs on a *squeezed* copy: prefixes and backticks are blanked to spaces
(so offsets stay those of the input) and then every whitespace character is removed, which makes
word-boundary and mid-word wrapping alike invisible. Templates are squeezed the same way.

Messages are compared without regard to case: people retype what they saw (`SGlang only
supports sm 75 and above`), and a title-cased log line or an upper-cased tag changes no meaning.
The folded copy keeps every offset, so what is captured and shown
is the input's own text. Frames and class names are read from the unfolded copy.

Everything here is plain `str` work, linear in the input: no regular expressions.
"""

from __future__ import annotations

import string
from bisect import bisect_right
from dataclasses import dataclass, field

_BLOCK = 128  # granularity of the squeezed -> input offset map
_LEVELS = frozenset({"TRACE", "DEBUG", "INFO", "WARN", "WARNING", "ERROR", "CRITICAL", "FATAL"})
_STARTERS = frozenset("[(>0123456789")
_DATE_CHARS = frozenset("0123456789-/:.,TZ+ ")
_NAME_CHARS = frozenset(string.ascii_letters + string.digits + "-_.")
WORD_CHARS = frozenset(string.ascii_letters + string.digits + "_")
# Bytes other than ASCII letters, digits and `_` become spaces, and ASCII capitals lower case;
# UTF-8 bytes of non-ASCII characters stay inside words. Working on bytes keeps tokenizing a
# 1 MiB body in C.
_WORD_BYTES = bytes(
    ord(chr(b).lower()) if b < 0x80 and chr(b) in WORD_CHARS else b if b >= 0x80 else 0x20
    for b in range(256)
)
_FOLD = str.maketrans(string.ascii_uppercase, string.ascii_lowercase)


def squeeze(text: str) -> str:
    """The text without whitespace or backticks (the form inputs and templates are matched in)."""
    return "".join(text.replace("`", " ").split())


def fold(text: str) -> str:
    """The text in lower case, with the same length and offsets (where lowering would change
    the length, as for `İ`, only ASCII capitals are lowered)."""
    low = text.lower()
    return low if len(low) == len(text) else text.translate(_FOLD)


def words(text: str) -> list[bytes]:
    """Word tokens as UTF-8 bytes, folded (ASCII letters, digits and `_`; non-ASCII kept
    inside)."""
    return text.encode("utf-8", "replace").translate(_WORD_BYTES).split()


# The lines Python prints around every traceback. Their words tell no error from another, and
# as candidate words they gave candidates' places to the messages that say "last" or "call":
# on 848 texts (the bench's, the posted ones of tests/data/match-dev, generated ones) the best
# match stayed the same for every text, 15 found better runners-up, and a match cost 19% less.
TRACEBACK_LINES = (
    "Traceback (most recent call last):",
    "During handling of the above exception, another exception occurred:",
    "The above exception was the direct cause of the following exception:",
)


def text_words(work: str) -> set[bytes]:
    """The distinct words of a (blanked) input, without those of Python's traceback lines."""
    for line in TRACEBACK_LINES:
        if line in work:
            work = work.replace(line, " ")
    return set(words(work))


def tokens(text: str) -> list[bytes]:
    """Word tokens of at least two bytes: what the candidate index posts."""
    return [t for t in words(text) if len(t) > 1]


@dataclass(frozen=True)
class Prepared:
    """One input ready for matching: blanked text, its squeezed form and the offset map."""

    text: str  # the input as given
    work: str  # the input, same length, with log prefixes, backticks, escapes turned into spaces
    squeezed: str  # `work` without whitespace
    folded: str  # `squeezed` with ASCII capitals in lower case (what messages are aligned in)
    cum: tuple[int, ...]  # cum[b] = non-whitespace characters in work[: b * _BLOCK]
    _blocks: dict[int, list[int]] = field(default_factory=dict, compare=False, repr=False)

    def to_input(self, q: int) -> int:
        """Input offset of the squeezed character at position `q` (len(work) past the end)."""
        if q >= len(self.squeezed):
            return len(self.work)
        block = bisect_right(self.cum, q) - 1
        positions = self._blocks.get(block)
        if positions is None:  # only blocks holding a span end are ever mapped
            start = block * _BLOCK
            chunk = self.work[start : start + _BLOCK]
            positions = [start + i for i, c in enumerate(chunk) if not c.isspace()]
            self._blocks[block] = positions
        return positions[q - self.cum[block]]

    def end_to_input(self, q_end: int) -> int:
        """Input offset just past the squeezed character at `q_end - 1` (an exclusive end)."""
        if q_end <= 0:
            return 0
        return self.to_input(q_end - 1) + 1

    def value(self, start: int, end: int) -> str:
        """A captured value: the input's own characters on one line, else the blanked text."""
        raw = self.text[start:end]
        if "\n" in raw:  # a wrapped value: other lines' prefixes are blanked only in `work`
            raw = self.work[start:end]
        elif "\\" in raw:
            raw = raw.replace('\\"', '"').replace("\\'", "'")
        return " ".join(raw.split())

    def line_bounds(self, pos: int) -> tuple[int, int]:
        """Start and end (exclusive, before the newline) of the input line holding `pos`."""
        start = self.work.rfind("\n", 0, pos) + 1
        end = self.work.find("\n", pos)
        return start, len(self.work) if end < 0 else end


def prepare(text: str) -> Prepared:
    """Blank prefixes, backticks and escapes, then squeeze, keeping a block-wise offset map."""
    work = _blank_escapes(text.replace("`", " ").replace("\r", " "))
    work = _blank_prefixes(work)
    parts: list[str] = []
    cum = [0]
    for b in range(0, len(work), _BLOCK):
        part = "".join(work[b : b + _BLOCK].split())
        parts.append(part)
        cum.append(cum[-1] + len(part))
    cum.pop()
    squeezed = "".join(parts)
    return Prepared(text=text, work=work, squeezed=squeezed, folded=fold(squeezed), cum=tuple(cum))


def _blank_escapes(work: str) -> str:
    """Undo JSON/repr escaping of a message (`\\"`, `\\n`) as spaces, keeping offsets."""
    work = work.replace('\\"', ' "').replace("\\'", " '")
    if ("\\n" in work or "\\t" in work) and not ('File "' in work and ":\\" in work):
        # (a Windows traceback's paths hold `\\n...` too: it is left alone)
        work = work.replace("\\n", "  ").replace("\\t", "  ")
    return work


def _blank_prefixes(work: str) -> str:
    piped = " | " in work
    lines = work.split("\n")
    changed = False
    for n, line in enumerate(lines):
        if not line or (line[0] not in _STARTERS and not piped):
            continue
        k = prefix_length(line, piped=piped)
        if k:
            lines[n] = " " * k + line[k:]
            changed = True
    return "\n".join(lines) if changed else work


def prefix_length(line: str, *, piped: bool = True) -> int:
    """Length of the log-decoration prefix of one line (0 when there is none)."""
    end = 0
    for _ in range(6):  # prefixes stack: "[rank0]: [2025-01-01 10:00:00 TP0] WARNING x.py:12: "
        nxt = _one_prefix(line, end, piped)
        if nxt <= end:
            break
        end = nxt
    return end


def _one_prefix(line: str, i: int, piped: bool) -> int:
    n = len(line)
    while i < n and line[i] in " \t":
        i += 1
    if i >= n:
        return i
    ch = line[i]
    if i and ch in "-|:" and line[i + 1 : i + 2] == " ":  # separator after a timestamp or level
        return i + 1
    if ch == "[":
        k = line.find("]", i, i + 100)
        inner = line[i + 1 : k]
        if k > i + 1 and _is_tag(inner):
            return _after_colon(line, k + 1)
        return i
    if ch == "(":
        k = line.find(")", i, i + 120)
        if k > 0 and "pid=" in line[i:k]:
            return k + 1
        return i
    if ch == ">":
        while i < n and line[i] == ">":
            i += 1
        return i
    if ch.isdigit():
        return _after_timestamp(line, i)
    word_end = i
    while word_end < n and line[word_end] in _NAME_CHARS:
        word_end += 1
    word = line[i:word_end]
    if word.rstrip(":") in _LEVELS:
        return _after_colon(line, word_end)
    if piped and word:  # docker compose: "sglang-1  | message"
        bar = line.find(" | ", word_end, word_end + 40)
        if bar >= 0 and not line[word_end:bar].strip():
            return bar + 3
    if word.endswith(".py"):
        return _after_location(line, i, word_end)
    return i


def _is_tag(inner: str) -> bool:
    """Bracket contents that decorate log lines: timestamps, ranks, `TP0`, levels."""
    if not inner or any(c in inner for c in "'\",[{"):
        return False
    return any(c.isdigit() for c in inner) or inner.strip().upper() in _LEVELS


def _after_colon(line: str, k: int) -> int:
    if k < len(line) and line[k] == ":":
        return k + 1
    return k


def _after_timestamp(line: str, i: int) -> int:
    head = line[i : i + 10]
    if len(head) < 10 or head[4] not in "-/" or head[7] not in "-/":
        return i
    if not (head[:4].isdigit() and head[5:7].isdigit() and head[8:10].isdigit()):
        return i
    j = i + 10
    limit = min(len(line), i + 40)
    while j < limit and line[j] in _DATE_CHARS:
        j += 1
    rest = line[j : j + 3]
    if rest.startswith("- ") or rest.startswith("| "):
        j += 2
    return j


def _after_location(line: str, i: int, word_end: int) -> int:
    """Skip `model_config.py:1098:` (a logger's file:line) but nothing that merely ends in .py."""
    if line[word_end : word_end + 1] != ":":
        return i
    j = word_end + 1
    while j < len(line) and line[j].isdigit():
        j += 1
    if j == word_end + 1 or line[j : j + 1] != ":":
        return i
    return j + 1
