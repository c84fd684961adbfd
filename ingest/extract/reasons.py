"""What the source says about a raise besides its code: the why a reader needs.

The best reason for a check is often written next to it: a comment above the raise or above the
`if` that guards it ("draft workers pass their own pool"), the enclosing function's docstring, or
the list a module constant holds (`SUPPORTED_MODES = ("a", "b")`, printed by the message as
`{SUPPORTED_MODES}`). None of that survives in the guard's expressions, so it is collected here,
once, while the file's tree and lines are at hand (see `SiteNotes`).
"""

from __future__ import annotations

import ast
import io
import tokenize
from collections.abc import Iterable

from errkb.core.records import Condition, SiteNotes, Template
from errkb.ingest.extract.scope import Assigned, Scope
from errkb.ingest.extract.source import SourceLines

MAX_COMMENT_LINES = 6  # a longer block above a line is a section header, not a reason
MAX_TEXT = 400  # characters kept of one comment, a docstring or a constant's value
_WRAPPERS = frozenset({"tuple", "list", "set", "frozenset", "sorted"})


def _comment_of(line: str) -> str | None:
    """The text of a comment on a line of code or on its own line (None when it has none)."""
    if "#" not in line:
        return None
    try:
        for tok in tokenize.generate_tokens(io.StringIO(line.strip() + "\n").readline):
            if tok.type == tokenize.COMMENT:
                return tok.string.lstrip("#").strip() or None
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return None  # a line of a longer statement: its comment is not worth the guesswork
    return None


def comment_above(lines: SourceLines, line: int) -> str | None:
    """The comment block directly above a line (no blank line between), and its own trailing
    comment, as one text."""
    found: list[str] = []
    at = line - 1
    while at >= 1 and len(found) < MAX_COMMENT_LINES:
        text = lines.window(at, at)[0].strip()
        if not text.startswith("#"):
            break
        found.append(text.lstrip("#").strip())
        at -= 1
    beside = _comment_of(lines.window(line, line)[0]) if line <= len(lines) else None
    words = [t for t in found[::-1] if t] + ([beside] if beside else [])
    joined = " ".join(words)
    return joined[:MAX_TEXT] if joined else None


def docstring(scope: Scope) -> str:
    """The first paragraph of the enclosing function's docstring ("" when it has none)."""
    node = scope.node
    if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
        return ""
    doc = ast.get_docstring(node) or ""
    return " ".join(doc.split("\n\n", 1)[0].split())[:MAX_TEXT]


def _names(texts: Iterable[str]) -> list[str]:
    out: list[str] = []
    for text in texts:
        try:
            tree = ast.parse(text, mode="eval")
        except (SyntaxError, ValueError, RecursionError):
            continue
        out += [n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id not in out]
    return out


def _literal_source(value: ast.expr) -> str | None:
    """The source of a literal value: a container of constants (a dict as its keys), a
    constant, or one of those wrapped in `tuple(...)`/`frozenset(...)`."""
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and len(value.args) == 1:
        if value.func.id in _WRAPPERS and not value.keywords:
            value = value.args[0]
    if isinstance(value, ast.Dict):
        if not all(isinstance(k, ast.Constant) for k in value.keys):
            return None
        value = ast.Tuple([k for k in value.keys if k is not None], ast.Load())
    try:
        ast.literal_eval(value)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None
    text = ast.unparse(value)
    return text if len(text) <= MAX_TEXT else None


def constants(scope: Scope, texts: Iterable[str]) -> tuple[tuple[str, str], ...]:
    """Module constants named in the texts, with the source of their literal values."""
    module = scope
    shadowing: set[str] = set()
    while module.parent is not None:
        if module.is_function:
            shadowing |= module.local_names
        module = module.parent
    out: list[tuple[str, str]] = []
    for name in _names(texts):
        if name in shadowing or name not in module.assigned_names:
            continue
        found = module.lookup(name, module.end())
        if isinstance(found, Assigned):
            text = _literal_source(found.value)
            if text is not None:
                out.append((name, text))
    return tuple(out)


def site_notes(
    lines: SourceLines,
    scope: Scope,
    line: int,
    conditions: tuple[Condition, ...],
    template: Template,
) -> SiteNotes:
    """The comments, docstring and constants that explain the raise at `line`."""
    comments: list[tuple[int, str]] = []
    # Only the tests that hold on the way to the raise: a comment above an earlier, skipped
    # branch of an if/elif chain is about that branch.
    held = (c.line for c in conditions if c.holds and 0 < c.line <= line)
    for anchor in sorted({line, *held}):
        text = comment_above(lines, anchor)
        if text and all(text != t for _, t in comments):
            comments.append((anchor - line, text))
    placeholders = [s.text for s in template.segments if s.kind == "placeholder"]
    guards = [c.expr for c in conditions] + [v for c in conditions for _, v in c.resolved]
    return SiteNotes(
        comments=tuple(comments),
        docstring=docstring(scope),
        constants=constants(scope, placeholders + guards),
    )
