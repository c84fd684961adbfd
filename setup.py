"""The build's one step beyond pyproject.toml: the log matcher compiled to C with mypyc.

`POST /api/match` spends most of its time in `errkb.service.match.matcher`, pure typed Python
that mypyc (part of mypy, a build requirement) compiles as it is: the same results, about a third
less time per text (bench/serve.py and docs/figures.md have the figures). The compiled modules
sit beside their sources and Python imports them first; where no C compiler is at hand the
extensions are optional, so the build goes on and the matcher runs as plain Python.
`ERRKB_PURE=1` skips the compilation.

mypyc names a module after its path, so it reads a copy of the matcher laid out as the installed
package (`errkb/service/match/matcher/`), not `service/match/matcher/` of this checkout.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from setuptools import setup

ROOT = Path(__file__).resolve().parent
MATCHER = ROOT / "service" / "match" / "matcher"
TREE = ROOT / "build" / "mypyc-src"
# The package files mypy reads on the way to the matcher, by their place in the installed package.
PARENTS = {
    "errkb/__init__.py": "errkb/__init__.py",
    "errkb/service/__init__.py": "service/__init__.py",
    "errkb/service/match/__init__.py": "service/match/__init__.py",
    "errkb/service/match/matcher/__init__.py": "service/match/matcher/__init__.py",
}


def compiled_matcher() -> list:  # type: ignore[type-arg]
    """The matcher's modules as mypyc extensions (none with ERRKB_PURE=1)."""
    if os.environ.get("ERRKB_PURE") == "1":
        return []
    from mypyc.build import mypycify

    shutil.rmtree(TREE, ignore_errors=True)
    for dest, src in PARENTS.items():
        (TREE / dest).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(ROOT / src, TREE / dest)
    modules = []
    for source in sorted(MATCHER.glob("*.py")):
        if source.name not in ("__init__.py", "compiled.py"):  # these two decide, in Python
            copy = TREE / "errkb" / "service" / "match" / "matcher" / source.name
            shutil.copyfile(source, copy)
            modules.append(str(copy.relative_to(ROOT)))
    extensions = mypycify(modules, opt_level="3", group_name="errkb.service.match.matcher.native")
    for extension in extensions:
        extension.optional = True  # no compiler: warn, and leave the matcher in Python
    return extensions


setup(ext_modules=compiled_matcher())
