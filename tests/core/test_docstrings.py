"""Docstrings that are true: every module a docstring names exists.

A docstring that points a reader to `errkb.service.foo`, `service.foo` or `service/foo.py` sends
them looking for code; when that code has moved or gone, the pointer is worse than none. This
reads every docstring (module, class, function) of the package and resolves each reference:
a dotted name must import as a module or be an attribute of one, a path must exist.
"""

from __future__ import annotations

import ast
import importlib
import re
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TOPS = ("core", "ingest", "knowledge", "service", "migrations")
# `errkb.x.y` anywhere; `service.x` (the package name left out) only in backticks, where prose
# cannot end a sentence with it.
DOTTED = re.compile(r"\berrkb(?:\.\w+)+|(?<=`)(?:" + "|".join(TOPS) + r")(?:\.\w+)+")
PATH = re.compile(r"(?<![\w./-])(?:errkb|ingest|knowledge|service|migrations|bench|tests)/[\w/.-]*")


def package_files() -> list[Path]:
    """Every .py file of the folders that pyproject maps into the `errkb` package."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    folders = sorted(set(config["package-dir"].values()))
    return sorted(f for folder in folders for f in (ROOT / folder).rglob("*.py"))


def docstrings(source: str) -> list[tuple[int, str]]:
    """(line, text) of the module's docstring and of each class and function docstring."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            text = ast.get_docstring(node, clean=False)
            if text:
                out.append((node.body[0].lineno, text))
    return out


def resolves(name: str) -> bool:
    """Whether a dotted name is a module of the package or an attribute of one."""
    if not name.startswith("errkb."):
        name = "errkb." + name  # `service.x` is errkb.service.x, `core.x` errkb.core.x
    parts = name.split(".")
    for cut in range(len(parts), 1, -1):
        try:
            obj: object = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attr in parts[cut:]:
            if not hasattr(obj, attr):
                return False
            obj = getattr(obj, attr)
        return True
    return False


def broken_references(source: str) -> list[tuple[int, str]]:
    """(line, reference) of each module or path named in a docstring that does not resolve."""
    found = []
    for line, text in docstrings(source):
        found += [(line, m) for m in DOTTED.findall(text) if not resolves(m)]
        paths = [m.rstrip(".-") for m in PATH.findall(text)]  # a trailing dot ends the sentence
        found += [(line, m) for m in paths if not (ROOT / m).exists()]
    return found


def test_every_module_named_in_a_docstring_exists() -> None:
    files = package_files()
    assert len(files) > 100
    broken = [
        f"{f.relative_to(ROOT)}:{line} names {ref}"
        for f in files
        for line, ref in broken_references(f.read_text())
    ]
    assert not broken, "docstrings name what does not exist:\n" + "\n".join(broken)


@pytest.mark.parametrize(
    ("doc", "broken"),
    [
        ("`errkb.service.entries.build` builds", []),
        ("see errkb.service.entries.build.build_entry.", []),
        ("see `errkb.service.nowhere`", ["errkb.service.nowhere"]),
        ("see `service.match.offload`", ["service.match.offload"]),
        ("the `service.read.entries` module", []),
        ("in service/read/entries.py, then service/gone.py.", ["service/gone.py"]),
        ("the service. It reads", []),
    ],
)
def test_a_reference_that_does_not_resolve_is_reported(doc: str, broken: list[str]) -> None:
    source = f'"""{doc}"""\n'
    assert [ref for _, ref in broken_references(source)] == broken
