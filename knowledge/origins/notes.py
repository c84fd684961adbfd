"""The source's own words about a raise (its `SiteNotes`) made ready for an entry.

Three uses: a module constant the message prints (`{SUPPORTED_MODES}`) is shown as the value the
user sees in the log; a comment or docstring that says why the check exists becomes the entry's
"why" sentence; and a comment that explains a test in parentheses ("Gated to the target worker
(req_to_token_pool is None)") gives that test its words, where a paraphrase of the names would
only guess.
"""

from __future__ import annotations

import ast
import re
from dataclasses import replace

from errkb.core.records import Segment, Site, Template
from errkb.knowledge.facts import Provenance

MAX_REASON = 220  # characters of a quoted comment or docstring
_NOISE = re.compile(
    r"^(?:todo|fixme|xxx|hack|noqa|type:|pragma|fmt:|pylint|isort|mypy|ruff|nosec)\b", re.I
)
# Words of a comment that gives a reason or a consequence, not only a description.
_WHY_WORDS = (
    "because",
    "since",
    "so",
    "otherwise",
    "would",
    "cannot",
    "can't",
    "must",
    "only",
    "not",
    "no",
    "avoid",
    "prevent",
    "unsupported",
    "limitation",
    "yet",
    "fail",
    "loud",
    "silently",
)
_SECTIONS = re.compile(r"\b(?:Args|Arguments|Parameters|Returns|Raises|Example|Note)s?:")
_END = re.compile(r"(?<!e\.g)(?<!i\.e)(?<!etc)(?<!vs)[.!?](?=\s|$)")
# A name written as a constant (`FLAG`, `SUPPORTED_MODES`, `consts.MAX_SIZE`), not a short
# kernel dimension such as `D` or `HV`, which the message prints as the value it has.
_CONSTANT = re.compile(
    r"(?:[A-Za-z_]\w*\.)*_?[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+|(?:[A-Za-z_]\w*\.)*_?[A-Z]{4,}"
)
_PAREN = re.compile(r"\(([^()]{3,120})\)")
_GATE = re.compile(
    r"^(?:gated|limited|restricted|applies|applied|only|used|reached|taken)\s+(?:to|for|on|when)?\s*",
    re.I,
)


def constant_values(site: Site) -> dict[str, str]:
    """The module constants the site's notes hold, name -> source of the value."""
    return dict(site.notes.constants)


def with_constants(site: Site) -> Site:
    """The site with the constants its message prints shown as their values (`{MODES}` ->
    `('a', 'b')`, as Python prints them), so every quote of the message reads as the log does.

    A constant whose value the snapshot does not give (imported from another module, or computed)
    is said in words, `<value of MODES>`: a bare `{MODES}` reads as a broken template."""
    values = constant_values(site)
    segments: list[Segment] = []
    for seg in site.template.segments:
        value = _value_of(seg.text, values) if seg.kind == "placeholder" else None
        if seg.kind == "placeholder" and value is None and _CONSTANT.fullmatch(seg.text):
            shown = f"<value of {seg.text}>"
        elif value is None or seg.format_spec:
            segments.append(seg)
            continue
        else:
            shown = _printed(value, seg.conversion)
        if segments and segments[-1].kind == "text":
            segments[-1] = Segment("text", segments[-1].text + shown)
        else:
            segments.append(Segment("text", shown))
    return replace(site, template=Template(tuple(segments), site.template.form))


_ORDERING = frozenset({"sorted", "list", "tuple"})


def _value_of(expr: str, values: dict[str, str]) -> str | None:
    """The source of what a placeholder prints, when it is a module constant or the constant
    put in order or joined (`sorted(MODES)`, `list(MODES)`, `", ".join(MODES)`: the "choose one
    of ..." of a message); None when it is anything else or the value is not a literal."""
    if expr in values:
        return values[expr]
    try:
        node = ast.parse(expr, mode="eval").body
    except (SyntaxError, ValueError, RecursionError):
        return None
    if not isinstance(node, ast.Call) or len(node.args) != 1 or node.keywords:
        return None
    func, (arg,) = node.func, node.args
    if isinstance(func, ast.Name) and func.id in _ORDERING:
        items = _items(arg, values)
        if items is None:
            return None
        if func.id == "sorted":
            try:
                items = sorted(items)  # type: ignore[type-var]
            except TypeError:  # values that do not compare
                return None
        return repr(tuple(items) if func.id == "tuple" else items)
    if (  # ", ".join(MODES), ", ".join(sorted(MODES))
        isinstance(func, ast.Attribute)
        and func.attr == "join"
        and isinstance(func.value, ast.Constant)
        and isinstance(func.value.value, str)
    ):
        items = _items(arg, values)
        if items is None and (inner := _value_of(ast.unparse(arg), values)) is not None:
            items = _literal(inner)  # type: ignore[assignment]
        if isinstance(items, list | tuple) and all(isinstance(i, str) for i in items):
            return repr(func.value.value.join(items))  # type: ignore[arg-type]
    return None


def _items(node: ast.expr, values: dict[str, str]) -> list[object] | None:
    """The items of a constant collection in its source's order (a dict's keys)."""
    source = values.get(node.id) if isinstance(node, ast.Name) else None
    value = _literal(source) if source is not None else None
    if isinstance(value, set | frozenset):
        return [ast.literal_eval(e) for e in _set_items(source or "")]
    if isinstance(value, dict | list | tuple):
        return list(value)
    return None


def _literal(source: str) -> object:
    try:
        return ast.literal_eval(source)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None


def _printed(source: str, conversion: str | None) -> str:
    """How `{value}` prints a literal: strings bare (or quoted with `!r`), containers as repr."""
    value = _literal(source)
    if value is None:  # not a literal (or `None`, which prints as its source)
        return source
    if isinstance(value, str) and conversion != "r":
        return value
    items = _set_items(source) if isinstance(value, set) else []
    if items:  # in the source's order: a set's own changes with each process's hash seed
        return "{" + ", ".join(dict.fromkeys(repr(ast.literal_eval(e)) for e in items)) + "}"
    return repr(value)


def _set_items(source: str) -> list[ast.expr]:
    node = ast.parse(source, mode="eval").body
    return node.elts if isinstance(node, ast.Set) else []


def _prose(text: str) -> bool:
    """A comment that reads as a sentence about the code, not a marker or a line of code."""
    words = text.split()
    if len(words) < 4 or _NOISE.match(text):
        return False
    letters = sum(c.isalpha() or c == " " for c in text)
    return letters / len(text) > 0.75


def _sentence(text: str, sentences: int = 2) -> str:
    """The first sentences of a comment or docstring, without its parameter sections."""
    text = " ".join(_SECTIONS.split(text, 1)[0].split())
    ends = [m.end() for m in _END.finditer(text)]
    if len(ends) >= sentences:
        text = text[: ends[sentences - 1]].strip()
    if len(text) > MAX_REASON:
        cut = text.rfind(" ", 0, MAX_REASON)
        text = text[: cut if cut > 0 else MAX_REASON].rstrip(",;:") + " …"
    return text if text[-1:] in ".!?…" else text + "."


def _says_why(text: str) -> bool:
    low = f" {text.lower()} "
    return any(f" {w} " in low for w in _WHY_WORDS)


def reasons(site: Site) -> list[tuple[str, Provenance]]:
    """Why the check is there, in the source's words: the nearest comment that gives a reason
    (else the nearest comment), then the enclosing function's docstring."""
    out: list[tuple[str, Provenance]] = []
    comments = [t for _, t in sorted(site.notes.comments, key=lambda c: -c[0]) if _prose(t)]
    best = next((t for t in comments if _says_why(t)), comments[0] if comments else None)
    if best is not None:
        out.append((_sentence(best), "derived:comments"))
    doc = site.notes.docstring
    if doc and _prose(doc):
        out.append((_sentence(doc, 1), "derived:docstring"))
    return out


def _normal(code: str) -> str | None:
    try:
        return ast.unparse(ast.parse(code.strip(), mode="eval").body)
    except (SyntaxError, ValueError, RecursionError):
        return None


def glosses(site: Site) -> dict[str, str]:
    """Tests a comment explains in parentheses, normalized code -> the comment's words for it
    ("Gated to the target worker (req_to_token_pool is None)" -> "this is the target worker")."""
    out: dict[str, str] = {}
    for _, text in site.notes.comments:
        for m in _PAREN.finditer(text):
            code = _normal(m.group(1))
            if code is None or code.isidentifier():
                continue  # a bare name in parentheses is an aside, not a test
            before = re.split(r"[.;:!?]\s", text[: m.start()])[-1].strip(" ,")
            words = _GATE.sub("", before).strip()
            if len(words.split()) < 2 or "(" in words:
                continue
            out.setdefault(code, f"this is {words}" if words.startswith("the ") else words)
    return out
