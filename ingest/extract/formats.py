"""Parsers for `%`-style and `str.format` format strings (hand-written: no regex on scanned text).

Each parser returns a list of pieces: a `str` for literal text, or a `Field` for a replacement
field; `fill` turns the pieces into template segments, each field holding its argument's source.
Malformed format strings return None so the caller keeps the expression as one placeholder.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from errkb.core.records import Segment


@dataclass(frozen=True)
class Field:
    """A replacement field: `key` is an int index, a keyword name, or None for the next position.

    `attr` is the rest of a `str.format` field name (`.name` or `[0]`) applied to the argument.
    """

    key: int | str | None
    conversion: str | None = None
    format_spec: str | None = None
    attr: str = ""


Piece = str | Field

_PERCENT_FLAGS = "#0- +"
_PERCENT_TYPES = "diouxXeEfFgGcrsa"


def percent_pieces(fmt: str) -> list[Piece] | None:
    """Pieces of a printf-style format (`%s`, `%(name)r`, `%5.2f`, `%%`)."""
    pieces: list[Piece] = []
    text: list[str] = []
    i, n = 0, len(fmt)
    while i < n:
        ch = fmt[i]
        if ch != "%":
            text.append(ch)
            i += 1
            continue
        i += 1
        if i < n and fmt[i] == "%":
            text.append("%")
            i += 1
            continue
        key: str | None = None
        if i < n and fmt[i] == "(":
            close = fmt.find(")", i)
            if close < 0:
                return None
            key, i = fmt[i + 1 : close], close + 1
        start = i
        while i < n and (fmt[i] in _PERCENT_FLAGS or fmt[i].isdigit() or fmt[i] in ".*"):
            i += 1
        while i < n and fmt[i] in "hlL":
            i += 1
        if i >= n or fmt[i] not in _PERCENT_TYPES:
            return None
        spec, kind = fmt[start:i].replace("*", ""), fmt[i]
        i += 1
        if text:
            pieces.append("".join(text))
            text = []
        conversion = kind if kind in "ra" else None
        plain = kind in "rsa" or (kind in "diu" and not spec)
        pieces.append(Field(key, conversion, None if plain else spec + kind))
    if text:
        pieces.append("".join(text))
    return pieces


def _split_field(field: str) -> tuple[str, str | None, str | None]:
    """Split `name!r:spec` into its three parts (the spec may hold nested fields)."""
    name_end = len(field)
    for k, ch in enumerate(field):
        if ch in "!:":
            name_end = k
            break
    name, rest = field[:name_end], field[name_end:]
    conversion = spec = None
    if rest.startswith("!"):
        conversion, rest = rest[1:2] or None, rest[2:]
    if rest.startswith(":"):
        spec = rest[1:] or None
    return name, conversion, spec


def format_pieces(fmt: str) -> list[Piece] | None:
    """Pieces of a `str.format` template (`{}`, `{0}`, `{name!r:>10}`, `{{`)."""
    pieces: list[Piece] = []
    text: list[str] = []
    i, n = 0, len(fmt)
    while i < n:
        ch = fmt[i]
        if ch == "}":
            if fmt[i + 1 : i + 2] != "}":
                return None
            text.append("}")
            i += 2
            continue
        if ch != "{":
            text.append(ch)
            i += 1
            continue
        if fmt[i + 1 : i + 2] == "{":
            text.append("{")
            i += 2
            continue
        depth, j = 1, i + 1
        while j < n and depth:
            depth += {"{": 1, "}": -1}.get(fmt[j], 0)
            j += 1
        if depth:
            return None
        name, conversion, spec = _split_field(fmt[i + 1 : j - 1])
        split = min((k for k in (name.find("."), name.find("[")) if k >= 0), default=len(name))
        first, attr = name[:split], name[split:]
        key: int | str | None = int(first) if first.isdigit() else (first or None)
        if text:
            pieces.append("".join(text))
            text = []
        pieces.append(Field(key, conversion, spec, attr))
        i = j
    if text:
        pieces.append("".join(text))
    return pieces


Args = tuple[list[str], dict[str, str]] | str


def percent_args(right: ast.expr) -> Args:
    """The `%` operand as positional and named argument texts (or one opaque operand)."""
    if isinstance(right, ast.Tuple):
        return ([ast.unparse(e) for e in right.elts], {})
    if isinstance(right, ast.Dict):
        named = {
            k.value: ast.unparse(v)
            for k, v in zip(right.keys, right.values, strict=True)
            if isinstance(k, ast.Constant) and isinstance(k.value, str)
        }
        return ([], named)
    return ast.unparse(right)


def fill(pieces: list[Piece], args: Args) -> list[Segment]:
    """Segments of a parsed format string with each field replaced by its argument's source."""
    fields = [p for p in pieces if isinstance(p, Field)]
    out: list[Segment] = []
    auto = 0
    for piece in pieces:
        if isinstance(piece, str):
            out.append(Segment("text", piece))
            continue
        if isinstance(args, str):  # `"..." % x`: x itself, or x[i] / x['key'] (tuple or dict)
            if isinstance(piece.key, str):
                expr = f"{args}[{piece.key!r}]"
            else:
                expr = args if len(fields) == 1 else f"{args}[{auto}]"
                auto += 1
        else:
            positional, named = args
            key = piece.key
            if key is None:
                key, auto = auto, auto + 1
            if isinstance(key, int):
                expr = positional[key] if key < len(positional) else f"{{{key}}}"
            else:
                expr = named.get(key, key)
            expr += piece.attr
        out.append(Segment("placeholder", expr, piece.conversion, piece.format_spec))
    return out
