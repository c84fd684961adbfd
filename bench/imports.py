"""Import sites of one release: how many, how many guarded, which distributions it declares, and
what reading them costs the extraction (against the same extraction without them, in this run).

    python bench/imports.py [VERSION ...]    (default 0.5.23; the wheel is downloaded once)

Every import statement of another package that an independent `ast` walk finds must be a site:
the script prints the statements missed (none expected) and exits 1 if there is one.
"""

from __future__ import annotations

import ast
import sys
import time
import zipfile
from collections import Counter
from pathlib import Path

from errkb.core.declared import canonical
from errkb.core.records import ExtractConfig, FileResult, Site
from errkb.ingest.extract import extract_file
from errkb.ingest.extract.imports import is_external
from errkb.ingest.pins import load_pins
from errkb.ingest.sources.download import download
from errkb.ingest.sources.pypi import archive_requirements
from errkb.knowledge.imports.distributions import distribution_of
from errkb.knowledge.imports.guards import guard_of

ROOT = Path(__file__).resolve().parent.parent
CACHE = Path.home() / ".cache" / "errkb-tests" / "pypi"


def independent(tree: ast.Module, own: tuple[str, ...]) -> set[int]:
    """Lines of the external import statements, by a plain walk (TYPE_CHECKING blocks left out)."""
    hidden: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            hidden |= {id(n) for stmt in node.body for n in ast.walk(stmt)}
    lines = set()
    for node in ast.walk(tree):
        if id(node) in hidden:
            continue
        if isinstance(node, ast.ImportFrom) and not node.level and node.module:
            if is_external(node.module, own):
                lines.add(node.lineno)
        elif isinstance(node, ast.Import) and any(is_external(a.name, own) for a in node.names):
            lines.add(node.lineno)
    return lines


def main(version: str) -> int:
    repo = load_pins(ROOT / "pins.toml").repos[0]
    config = repo.extract_config(2_000_000)
    plain = ExtractConfig(
        config.exceptions, config.flag_classes, config.max_bytes, config.asserts, config.lookups
    )
    wheel = download(repo.pypi_name or "sglang", version, CACHE)
    with zipfile.ZipFile(wheel) as zf:
        files = {repo.path_prefix + n: zf.read(n) for n in zf.namelist() if n.endswith(".py")}
    # Both configs file by file, alternating, so that the machine's load weighs on both alike.
    base = with_imports = 0.0
    results: dict[str, FileResult] = {}
    for path, data in files.items():
        started = time.process_time()
        extract_file(data, path, plain)
        middle = time.process_time()
        results[path] = extract_file(data, path, config)
        with_imports += time.process_time() - middle
        base += middle - started
    sites: list[Site] = []
    missed: list[str] = []
    for path, data in files.items():
        found = [s for s in results[path].sites if s.kind == "import"]
        sites.extend(found)
        try:
            tree = ast.parse(data)
        except (SyntaxError, ValueError):
            continue
        lines = {s.line for s in found}
        missed.extend(f"{path}:{n}" for n in sorted(independent(tree, config.own_packages) - lines))

    statements = {(s.path, s.line): s for s in sites}
    guards = {k: guard_of(s) for k, s in statements.items()}
    requirements = archive_requirements(wheel)
    tops = Counter(
        s.template.literal_text.split("'")[1].split(".")[0]
        for s in sites
        if s.exception == "ModuleNotFoundError"
    )
    project = repo.pypi_name or "sglang"
    dists = {top: distribution_of(top, requirements, repo.distributions, project) for top in tops}
    named = {canonical(d.name) for d in dists.values()}
    declared = {canonical(d.name) for d in dists.values() if d.requirement is not None}
    own = canonical(project)
    print(f"sglang {version}: {len(files)} files")
    print(
        f"import statements of other packages: {len(statements)} (independent walk missed by "
        f"the extraction: {len(missed)})"
    )
    print(
        f"import sites: {len(sites)}, entries (distinct errors): "
        f"{len({(s.exception, s.template.normalized) for s in sites})}"
    )
    print(
        f"  guarded by try/except: {sum(1 for g in guards.values() if g.caught)} statements, "
        f"{sum(1 for g in guards.values() if g.falls_back)} of them falling back"
    )
    print(
        f"  under an if (platform or availability check): "
        f"{sum(1 for g in guards.values() if g.checks)}"
    )
    print(
        f"  inside a function (lazy): "
        f"{sum(1 for s in statements.values() if s.qualname != '<module>')}"
    )
    print(
        f"top-level modules imported: {len(tops)}, from {len(named)} distributions, "
        f"{len(declared)} of them declared by the release"
    )
    print(
        f"Requires-Dist lines: {len(requirements)}, distinct distributions: "
        f"{len({canonical(r.name) for r in requirements if canonical(r.name) != own})}"
    )
    print(
        f"extraction: {base:.1f} s without imports, {with_imports:.1f} s with them "
        f"(CPU time; ratio {with_imports / base:.2f})"
    )
    for m in missed[:20]:
        print("missed", m)
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(max(main(v) for v in (sys.argv[1:] or ["0.5.23"])))
