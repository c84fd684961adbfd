"""Tokenizing documents and queries for full-text search (pure).

Both backends index text that this module has already split into lowercase ASCII words joined by
single spaces, so SQLite's `unicode61` tokenizer and PostgreSQL's `simple` configuration see the
same tokens, and a query means the same thing on either database. No regex: the query is
untrusted text and every step here is a single linear pass.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass

MAX_TOKEN = 60  # PostgreSQL ignores words past 2047 bytes; keep both sides well inside that
MAX_QUERY_CHARS = 500
MAX_PHRASES = 12


# ASCII letters and digits lowercased, every other ASCII character a space: one C-level pass.
_WORD_CHARS = str.maketrans(
    {chr(i): chr(i).lower() if chr(i).isalnum() else " " for i in range(128)}
)


def terms(text: str) -> list[str]:
    """Lowercase ASCII alphanumeric words of `text`; everything else separates words.

    Text is NFKD-folded first (fullwidth and accented letters give their ASCII base); every
    character still outside ASCII becomes `?`, a separator like any other non-alphanumeric one.
    """
    if not text.isascii():  # NFKD leaves ASCII as it is
        text = unicodedata.normalize("NFKD", text).encode("ascii", "replace").decode("ascii")
    return [w[:MAX_TOKEN] for w in text.translate(_WORD_CHARS).split()]


def document(*texts: str) -> str:
    """The indexed form of some texts: their terms joined by spaces."""
    return " ".join(t for text in texts for t in terms(text))


@dataclass(frozen=True)
class Phrase:
    """Words that must appear adjacent and in order; `prefix` lets the last be a prefix."""

    words: tuple[str, ...]
    prefix: bool = False


def parse_query(q: str) -> tuple[Phrase, ...]:
    """Split a user query into phrases that must all match.

    Each whitespace-separated chunk is a phrase of its words (`enable-unified-memory` needs the
    three words adjacent), text inside double quotes is one phrase, and a trailing `*` makes the
    phrase's last word a prefix.
    """
    q = q[:MAX_QUERY_CHARS]
    chunks: list[str] = []
    for i, part in enumerate(q.split('"')):
        if i % 2:  # inside quotes
            chunks.append(part)
        else:
            chunks.extend(part.split())
    phrases: list[Phrase] = []
    for chunk in chunks:
        words = tuple(terms(chunk))
        if words:
            phrases.append(Phrase(words, prefix=chunk.rstrip().endswith("*")))
    return tuple(phrases[:MAX_PHRASES])


def fts5_query(phrases: tuple[Phrase, ...], column: str | None = None) -> str:
    """An FTS5 MATCH expression; words are plain alphanumerics, so quoting them is safe."""
    parts = ['"' + " ".join(p.words) + '"' + (" *" if p.prefix else "") for p in phrases]
    expr = " AND ".join(parts)
    return f"{{{column}}} : ({expr})" if column else expr


def tsquery(phrases: tuple[Phrase, ...], weight: str = "") -> str:
    """A PostgreSQL `to_tsquery('simple', ...)` string; `weight` restricts matches to a label."""
    label = weight

    def word(w: str, last_prefix: bool) -> str:
        suffix = ":" + ("*" if last_prefix else "") + label if (label or last_prefix) else ""
        return f"'{w}'{suffix}"

    parts = []
    for p in phrases:
        n = len(p.words)
        inner = " <-> ".join(word(w, p.prefix and i == n - 1) for i, w in enumerate(p.words))
        parts.append(f"({inner})")
    return " & ".join(parts)
