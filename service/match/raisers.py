"""Who raised the error a traceback ends with: another package, or a project line with no raise.

Read from the text's last traceback (after its last `Traceback (most recent call last):`):
- its innermost frame lies in an installed package (`site-packages/transformers/...`) or the
  standard library: the error is that package's, and the last frame of the project (if any) is
  where the project called it (`Raiser`);
- its innermost frame is the project's, the error is a KeyError, AttributeError, TypeError or
  IndexError, and that line raises nothing the knowledge base holds (`Unraised`): the answer is
  the nearest entry of the same function, said to be only that.

Only `str` scanning (no regular expression meets the untrusted text): linear in the input.
"""

from __future__ import annotations

from dataclasses import dataclass

_FILE = 'File "'
_LINE = '", line '
_LAST = "Traceback (most recent call last)"
_PACKAGES = ("/site-packages/", "/dist-packages/")
_STDLIB = "/lib/python3"
# Errors Python raises itself, at a line with no raise statement.
IMPLICIT = frozenset({"KeyError", "AttributeError", "TypeError", "IndexError"})
_MAX_FRAMES = 512


@dataclass(frozen=True)
class TextFrame:
    """A frame of a pasted traceback, and where its line is in the text."""

    path: str
    line: int
    function: str
    start: int
    end: int


@dataclass(frozen=True)
class Raiser:
    """Another package raised the error; `frame` is the project's last frame before it."""

    package: str  # "transformers", "the standard library (json)"
    frame: TextFrame | None


def frames(text: str) -> tuple[list[TextFrame], int]:
    """The frames of the text's last traceback, outermost first, and where that traceback ends
    (after its innermost frame's line)."""
    begin = text.rfind(_LAST)
    begin = 0 if begin < 0 else begin
    out: list[TextFrame] = []
    at = text.find(_FILE, begin)
    while at >= 0 and len(out) < _MAX_FRAMES:
        frame = _frame_at(text, at)
        if frame is not None:
            out.append(frame)
        at = text.find(_FILE, at + len(_FILE))
    return out, (out[-1].end if out else begin)


def _frame_at(text: str, at: int) -> TextFrame | None:
    """`File "path", line N, in function` starting at `at`."""
    path_start = at + len(_FILE)
    path_end = text.find(_LINE, path_start, path_start + 1000)
    if path_end < 0:
        return None
    digits_start = path_end + len(_LINE)
    digits_end = digits_start
    while digits_end < len(text) and digits_end - digits_start < 9 and text[digits_end].isdigit():
        digits_end += 1
    if digits_end == digits_start:
        return None
    end = text.find("\n", digits_end)
    end = len(text) if end < 0 else end
    rest = text[digits_end:end].strip()
    function = rest.removeprefix(", in ").strip() if rest.startswith(", in ") else ""
    path = text[path_start:path_end]
    return TextFrame(path, int(text[digits_start:digits_end]), function, at, end)


def is_project(frame: TextFrame, roots: frozenset[str]) -> bool:
    """True when the frame's file lies in one of the project's top-level folders."""
    path = "/" + frame.path.replace("\\", "/")
    return any(f"/{root}/" in path for root in roots)


def package_of(path: str) -> str:
    """The installed package a file belongs to ("" for a file of no package: a script)."""
    path = path.replace("\\", "/")
    for marker in _PACKAGES:
        at = path.rfind(marker)
        if at >= 0:
            top = path[at + len(marker) :].split("/", 1)[0]
            return top.removesuffix(".py")
    at = path.find(_STDLIB)
    if at >= 0:
        parts = path[at + 1 :].split("/")
        if len(parts) > 2:
            return f"the standard library ({parts[2].removesuffix('.py')})"
    return ""


def raiser_of(text: str, roots: frozenset[str]) -> Raiser | None:
    """The package that raised the error of the text's last traceback, when it is not the
    project's own code."""
    found, _ = frames(text)
    if not found or is_project(found[-1], roots):
        return None
    package = package_of(found[-1].path)
    if not package or package in roots:
        return None
    mine = [f for f in found if is_project(f, roots)]
    return Raiser(package, mine[-1] if mine else None)


def implicit_error(text: str, roots: frozenset[str]) -> tuple[str, TextFrame] | None:
    """(class, frame) when the last traceback ends in a project frame with an error that Python
    raises by itself (`KeyError: 'x'`), else None."""
    found, end = frames(text)
    if not found or not is_project(found[-1], roots):
        return None
    for line in text[end : end + 2000].splitlines():
        head = line.strip().split(":", 1)[0].strip()
        name = head.rsplit(".", 1)[-1]
        if name.isidentifier() and name.endswith(("Error", "Exception")):
            return (name, found[-1]) if name in IMPLICIT else None
    return None
