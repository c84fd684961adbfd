"""What guards an import: a `try` whose handler catches the failure (and what it does instead),
and the `if` tests around it (a platform or availability check).

`ingest.extract.imports` keeps the handler as the `try` condition's resolved pair
`("except ImportError", "<one short line per statement>")`; this turns those lines into words.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from errkb.core.records import Site

_ASSIGN = re.compile(r"^([\w.\[\]'\"]+)\s*=\s*(.+)$")
_IMPORT = re.compile(r"^(?:from\s+([\w.]+)\s+)?import\s+(.+)$")
_WARN = re.compile(r"^(?:\w+\.)*(?:warning|warn|info|debug|error|exception|print_warning)\(")
_CALL = re.compile(r"^([\w.]+)\(")


@dataclass(frozen=True)
class ImportGuard:
    """How an import is protected."""

    caught: str = ""  # "ImportError": what the handler catches ("" when no try guards it)
    fallback: tuple[str, ...] = ()  # the handler's statements, one short line each
    checks: tuple[tuple[str, bool], ...] = ()  # the `if` tests around it, and whether they hold

    @property
    def reraises(self) -> bool:
        """True when the handler raises an error of its own instead of going on."""
        return any(line.startswith("raise") for line in self.fallback)

    @property
    def falls_back(self) -> bool:
        """True when a failure of the import is caught and the code goes on without it."""
        return bool(self.caught) and not self.reraises


def guard_of(site: Site) -> ImportGuard:
    """The guard of an import site, from its conditions."""
    caught, fallback = "", tuple[str, ...]()
    checks: list[tuple[str, bool]] = []
    for c in site.conditions:
        if c.kind == "try" and c.resolved:
            label, text = c.resolved[0]
            caught, fallback = label.removeprefix("except ").strip(), tuple(text.split("\n"))
        elif c.kind in ("if", "elif"):
            checks.append((c.expr, c.holds))
    return ImportGuard(caught, fallback, tuple(checks))


def fallback_words(guard: ImportGuard) -> str:
    """What the code does when the import fails, in a sentence ("" when nothing catches it)."""
    if not guard.caught:
        return ""
    if guard.reraises:
        raised = next(line for line in guard.fallback if line.startswith("raise"))
        return f"When it fails, the handler raises another error instead (`{raised}`)."
    said = [_words(line) for line in guard.fallback if line != "..."]
    said = [s for s in dict.fromkeys(said) if s]
    if not said:
        return "When it fails, the code goes on without it."
    return "When it fails, the code " + _joined(said) + ", and goes on."


def _words(line: str) -> str:
    """One fallback statement in words."""
    if line == "pass":
        return "does nothing"
    if m := _IMPORT.match(line):
        names = m.group(2)
        return (
            f"imports `{names}` from `{m.group(1)}` instead"
            if m.group(1)
            else f"imports `{names}` instead"
        )
    if line.startswith("def ") or line.startswith("class "):
        name = line.split()[1].split("(")[0]
        return f"defines its own `{name}`"
    if _WARN.match(line) or line.startswith("print("):
        return "logs a message"
    if m := _ASSIGN.match(line):
        return f"sets `{m.group(1)}` to `{m.group(2)}`"
    if m := _CALL.match(line):
        return f"calls `{m.group(1)}`"
    return f"runs `{line}`"


def _joined(parts: list[str]) -> str:
    if len(parts) == 1:
        return parts[0]
    return ", ".join(parts[:-1]) + " and " + parts[-1]


def checks_words(guard: ImportGuard) -> str:
    """The `if` tests an import sits under, in a sentence ("" when none)."""
    if not guard.checks:
        return ""
    tests = [f"`{expr}`" if holds else f"`not ({expr})`" for expr, holds in guard.checks]
    return f"It is imported only when {_joined(tests)} holds."
