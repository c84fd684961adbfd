"""The layer contract: core <- ingest, knowledge <- the read side <- front ends, on every module.

Each module's imports (function-local ones included) are read from its syntax tree; an import of
a layer above its own, or of a peer layer, fails the test with the module and line.
"""

from __future__ import annotations

import ast
import importlib
import importlib.machinery
import importlib.util
import pkgutil
import tomllib
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# Layer of each package prefix (longest prefix wins) and what each layer may import.
LAYERS = {
    "errkb": "core",  # the package root holds only its version
    "errkb.core": "core",
    "errkb.migrations": "migrations",
    "errkb.ingest": "ingest",
    "errkb.knowledge": "knowledge",
    "errkb.service": "service",
    "errkb.service.cli": "cli",
}
# Alembic runs these as scripts inside its own context; they are checked but not imported.
SCRIPTS = ("errkb.migrations.env", "errkb.migrations.versions")
ALLOWED = {
    "core": {"core"},
    "migrations": {"core", "migrations"},
    "ingest": {"core", "ingest"},
    "knowledge": {"core", "knowledge"},
    "service": {"core", "knowledge", "service"},
    "cli": {"core", "ingest", "knowledge", "service", "cli"},
}


@dataclass(frozen=True)
class Violation:
    module: str
    line: int
    imported: str

    def __str__(self) -> str:
        return f"{self.module}:{self.line} imports {self.imported} ({layer_of(self.imported)})"


def layer_of(module: str) -> str | None:
    """The layer a module belongs to, or None outside the package."""
    best = max(
        (p for p in LAYERS if module == p or module.startswith(p + ".")), key=len, default=None
    )
    return LAYERS[best] if best else None


def imports_of(source: str, module: str, is_package: bool) -> list[tuple[int, str]]:
    """Every (line, imported module) of a module's source, relative imports resolved."""
    out: list[tuple[int, str]] = []
    package = module if is_package else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            out += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1] + ([base] if base else []))
            out.append((node.lineno, base))
            out += [(node.lineno, f"{base}.{alias.name}") for alias in node.names]
    return out


def violations(module: str, source: str, is_package: bool = False) -> list[Violation]:
    """The imports of one module that break the layer contract."""
    own = layer_of(module)
    assert own is not None, module
    found = []
    for line, imported in imports_of(source, module, is_package):
        target = layer_of(imported)
        # `from errkb.core import db` names errkb.core.db; only a real module counts once.
        if target is not None and target not in ALLOWED[own]:
            found.append(Violation(module, line, imported))
    first_per_line = {v.line: v for v in reversed(found)}  # `from a import b`: report `a`
    return sorted(first_per_line.values(), key=lambda v: v.line)


def all_modules() -> list[tuple[str, bool]]:
    """Every module of the installed package, found by walking it (nothing listed by hand)."""
    # The mapped folders (ingest/, service/, ...) are not under errkb/ on disk, so each top
    # package is walked from its own __path__.
    mods: dict[str, bool] = {}
    for top in LAYERS:
        package = importlib.import_module(top)
        mods[top] = True
        for info in pkgutil.walk_packages(package.__path__, top + "."):
            if not info.name.endswith("__mypyc"):  # the compiled matcher's shared library
                mods[info.name] = info.ispkg
    return sorted(mods.items())


def source_of(spec: importlib.machinery.ModuleSpec) -> str:
    """A module's source, also where the build compiled it (the matcher, see setup.py): then
    the `.py` beside the compiled module in its package's folder."""
    assert spec.origin is not None, spec.name
    if spec.origin.endswith(".py"):
        return Path(spec.origin).read_text()
    package, _, leaf = spec.name.rpartition(".")
    parent = importlib.util.find_spec(package)
    assert parent is not None and parent.submodule_search_locations, spec.name
    return (Path(parent.submodule_search_locations[0]) / f"{leaf}.py").read_text()


def test_every_module_imports_and_respects_the_layers() -> None:
    modules = all_modules()
    assert len(modules) > 100  # the walk really went through the subpackages
    for prefix in LAYERS:
        assert any(m == prefix or m.startswith(prefix + ".") for m, _ in modules), prefix
    problems: list[Violation] = []
    for name, is_package in modules:
        spec = importlib.util.find_spec(name)
        assert spec is not None and spec.origin is not None, name
        if not name.startswith(SCRIPTS):
            importlib.import_module(name)
        problems += violations(name, source_of(spec), is_package)
    assert not problems, "\n".join(map(str, problems))


@pytest.mark.parametrize(
    ("module", "source", "bad"),
    [
        (
            "errkb.ingest.store",
            "from errkb.service.search import queries\n",
            "errkb.service.search",
        ),
        (
            "errkb.ingest.pipeline",
            "def f():\n    import errkb.knowledge.words.explain\n",
            "errkb.knowledge.words.explain",
        ),
        (
            "errkb.knowledge.fixes.solutions",
            "from errkb.ingest.pins import RepoPin\n",
            "errkb.ingest.pins",
        ),
        ("errkb.core.models", "from errkb.service.cli.main import app\n", "errkb.service.cli.main"),
        ("errkb.service.entries.build", "from ..cli import main\n", "errkb.service.cli"),
    ],
)
def test_a_backward_import_is_reported(module: str, source: str, bad: str) -> None:
    found = violations(module, source, is_package=False)
    assert [v.imported for v in found][:1] == [bad]


def test_downward_imports_pass() -> None:
    source = "from errkb.core.db import make_engine\nfrom errkb.knowledge.words import explain\n"
    assert violations("errkb.service.entries.build", source) == []
    assert (
        violations("errkb.service.cli.main", "import errkb.service.app\nimport errkb.ingest.plan\n")
        == []
    )


def test_every_package_folder_is_listed_for_the_wheel() -> None:
    """pyproject's explicit package list covers every folder with an __init__.py."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = set(config["packages"])
    for name, folder in config["package-dir"].items():
        for init in (ROOT / folder).rglob("__init__.py"):
            rel = init.parent.relative_to(ROOT / folder).parts
            package = ".".join((name, *rel))
            assert package in listed, f"{package} ({init.parent}) is missing from pyproject"


# Service modules that may import SQLAlchemy: the domains' queries modules, the service-wide
# reads, and the one module that owns the dialect differences.
SQL_MODULES = ("queries", "dialect")


def sql_importers(module: str, source: str, is_package: bool = False) -> list[int]:
    """Lines where a service module outside the queries modules imports SQLAlchemy."""
    if module.rpartition(".")[2] in SQL_MODULES:
        return []
    return sorted(
        {
            line
            for line, imported in imports_of(source, module, is_package)
            if (imported == "sqlalchemy" or imported.startswith("sqlalchemy."))
            # Catching a database failure (to report it in one line) is not writing SQL.
            and not imported.startswith("sqlalchemy.exc")
        }
    )


def test_only_queries_modules_of_the_service_import_sqlalchemy() -> None:
    found = []
    for name, is_package in all_modules():
        if name.startswith("errkb.service"):
            spec = importlib.util.find_spec(name)
            assert spec is not None and spec.origin is not None, name
            source = source_of(spec)
            found += [f"{name}:{line}" for line in sql_importers(name, source, is_package)]
    assert not found, "SQL outside the queries modules: " + ", ".join(found)


def test_an_sql_import_outside_queries_is_reported() -> None:
    source = "from sqlalchemy import select\nfrom sqlalchemy.exc import OperationalError\n"
    assert sql_importers("errkb.service.entries.build", source) == [1]
    assert sql_importers("errkb.service.cli.show", "import sqlalchemy.orm\n") == [1]
    assert sql_importers("errkb.service.entries.queries", source) == []


# The read-side rule: front ends call the read side (`errkb.service.read`) and format its
# answers. They never import a `queries` module, nor each other. Each front end is named by the
# prefixes of its modules; the JSON API is every domain's `routes` module. /healthz is one of its
# own: the app, not /healthz, mounts the other routers.
FRONT_ENDS = {
    "cli": ("errkb.service.cli",),
    "pages": ("errkb.service.pages",),  # the live pages and the static export share a renderer
    "mcp": ("errkb.service.mcp",),
    "health": ("errkb.service.health",),
    "api": (),  # every `errkb.service.<domain>.routes`
}
# What a front end starts rather than reuses: `errkb serve` runs the app (which assembles the
# HTTP front ends), `errkb export-site` the export and `errkb mcp` the MCP server.
LAUNCHERS = {
    "cli": ("errkb.service.app", "errkb.service.server", "errkb.service.pages.export")
    + ("errkb.service.mcp",),
}


def front_end_of(module: str) -> str | None:
    """The front end a module belongs to, or None for the read side and everything below."""
    for name, prefixes in FRONT_ENDS.items():
        if any(module == p or module.startswith(p + ".") for p in prefixes):
            return name
    parts = module.split(".")
    if len(parts) >= 4 and parts[:2] == ["errkb", "service"] and parts[3] == "routes":
        return "api"
    return None


def is_queries(module: str) -> bool:
    """Whether a module is a `queries` module (a domain's, or the service-wide one)."""
    return module.startswith("errkb.") and "queries" in module.split(".")


def front_end_violations(module: str, source: str, is_package: bool = False) -> list[Violation]:
    """The imports by which a front end reaches a queries module or another front end."""
    own = front_end_of(module)
    if own is None:
        return []
    found = []
    for line, imported in imports_of(source, module, is_package):
        other = front_end_of(imported)
        launched = any(
            imported == p or imported.startswith(p + ".") for p in LAUNCHERS.get(own, ())
        )
        if is_queries(imported) or (other not in (None, own) and not launched):
            found.append(Violation(module, line, imported))
    first_per_line = {v.line: v for v in reversed(found)}
    return sorted(first_per_line.values(), key=lambda v: v.line)


def test_front_ends_import_only_the_read_side_and_below() -> None:
    modules = all_modules()
    assert {front_end_of(m) for m, _ in modules} >= {"cli", "pages", "api", "health"}
    problems: list[Violation] = []
    for name, is_package in modules:
        spec = importlib.util.find_spec(name)
        assert spec is not None and spec.origin is not None, name
        problems += front_end_violations(name, source_of(spec), is_package)
    assert not problems, "\n".join(map(str, problems))


@pytest.mark.parametrize(
    ("module", "source", "bad"),
    [
        ("errkb.service.pages.routes", "from errkb.service.match.routes import x\n", "api"),
        ("errkb.service.cli.match", "from errkb.service.match.queries import load\n", "q"),
        ("errkb.service.entries.routes", "from ..queries import DbSession\n", "q"),
        ("errkb.service.mcp.tools", "from errkb.service.pages.render import r\n", "pages"),
        ("errkb.service.cli.show", "def f():\n    import errkb.service.search.routes\n", "api"),
        ("errkb.service.health", "from errkb.service.snapshots.routes import router\n", "api"),
    ],
)
def test_a_sideways_import_of_a_front_end_is_reported(module: str, source: str, bad: str) -> None:
    (found,) = front_end_violations(module, source)
    assert is_queries(found.imported) if bad == "q" else front_end_of(found.imported) == bad


def test_the_read_side_and_launchers_are_allowed() -> None:
    source = (
        "from errkb.service.read.entries import entry\n"
        "from errkb.service.entries.schemas import Entry\n"
        "from errkb.service.pages.render import render\n"
    )
    assert front_end_violations("errkb.service.pages.routes", source) == []
    launch = "from errkb.service.app import create_app\nfrom errkb.service.pages.export import e\n"
    assert front_end_violations("errkb.service.cli.main", launch) == []
    assert front_end_violations("errkb.service.read.entries", "from .. import queries\n") == []
