"""The package version the code requires, from a version check in the guard or the message.

`version.parse(transformers.__version__) < version.parse("4.50.0")` raising means the code needs
transformers >= 4.50.0; "Please install bitsandbytes>=0.44.0" says it in words. Either way the
entry can name the package, the version and the install line, instead of "check the installed
packages". Only a version literal the code spells out is used.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from errkb.core.records import Template
from errkb.knowledge.facts import ExampleFix, Provenance

_VERSION = re.compile(r"^v?(\d+(?:\.\d+)+(?:[.+-]?\w+)?)$")
# The requirement a raising comparison leaves: `installed < V` raises, so `>= V` is needed.
_NEEDED = {ast.Lt: ">=", ast.LtE: ">", ast.Gt: "<=", ast.GtE: "<", ast.Eq: "!=", ast.NotEq: "=="}
_MIRROR = {ast.Lt: ast.Gt, ast.Gt: ast.Lt, ast.LtE: ast.GtE, ast.GtE: ast.LtE}
_INVERSE = {">=": "<", ">": "<=", "<=": ">", "<": ">=", "==": "!=", "!=": "==", "~=": "<"}
_SAID = re.compile(
    r"(?<![\w-])([a-z][a-z0-9_.-]*[a-z0-9])(?:\s+version)?\s*(>=|==|<=|~=|>|<)\s*"
    r"v?(\d+(?:\.\d+)+\w*)"
    r"|(?<![\w-])([a-z][a-z0-9_.-]*[a-z0-9])\s+(?:version\s+)?v?(\d+(?:\.\d+)+)\s+or\s+"
    r"(?:later|newer|above|higher)",
    re.I,
)
# A message states a package requirement only in these words ("top_p >= 0.5" is no package).
_PACKAGE_WORDS = re.compile(r"\b(?:install|upgrade|version|pip|package|library)\b", re.I)
# Names a version is compared for that pip does not install.
_NOT_PACKAGES = frozenset(
    "cuda python sm gpu driver rocm hip cudnn nvcc compute capability version sglang_version "
    "os glibc the a".split()
)


@dataclass(frozen=True)
class Requirement:
    """`package op version`, and where the code says it."""

    package: str
    op: str
    version: str
    source: str  # the check as code, or the message's words
    provenance: Provenance

    @property
    def spec(self) -> str:
        """`transformers>=4.50.0`."""
        return f"{self.package}{self.op}{self.version}"


def _version_of(node: ast.expr) -> str | None:
    """The version literal a side of a comparison holds (`"4.50"`, `Version("4.50")`)."""
    if isinstance(node, ast.Call) and len(node.args) == 1 and not node.keywords:
        node = node.args[0]
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        m = _VERSION.match(node.value.strip())
        return m.group(1) if m else None
    return None


def _package_of(node: ast.expr) -> str | None:
    """The package a side reads the installed version of (`torch.__version__`,
    `version("flashinfer-python")`, `parse(transformers.__version__)`)."""
    for sub in ast.walk(node):
        if isinstance(sub, ast.Attribute) and sub.attr == "__version__":
            root = sub.value
            while isinstance(root, ast.Attribute):
                root = root.value
            return root.id if isinstance(root, ast.Name) else None
        if isinstance(sub, ast.Call) and sub.args:
            name = ast.unparse(sub.func).rsplit(".", 1)[-1]
            arg = sub.args[0]
            if name.endswith("version") and isinstance(arg, ast.Constant):
                return str(arg.value) if isinstance(arg.value, str) else None
    return None


def _from_test(node: ast.expr) -> Requirement | None:
    negated = isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not)
    test = node.operand if isinstance(node, ast.UnaryOp) and negated else node
    if not isinstance(test, ast.Compare) or len(test.ops) != 1:
        return None
    left, right, op = test.left, test.comparators[0], type(test.ops[0])
    if _version_of(left) is not None and _package_of(right) is not None:
        left, right, op = right, left, _MIRROR.get(op, op)
    package, version = _package_of(left), _version_of(right)
    needed = _NEEDED.get(op)
    if package is None or version is None or needed is None:
        return None
    if negated:
        needed = _INVERSE[needed]
    if package.lower() in _NOT_PACKAGES:
        return None
    return Requirement(package, needed, version, ast.unparse(node), "derived:conditions")


def required_version(tests: list[ast.expr], template: Template) -> Requirement | None:
    """The package version the guard's checks or the message require, if either spells one."""
    for node in tests:
        found = _from_test(node)
        if found is not None:
            return found
    said = template.literal_text
    for m in _SAID.finditer(said) if _PACKAGE_WORDS.search(said) else ():
        package = m.group(1) or m.group(4)
        if package.lower() in _NOT_PACKAGES or package.lower().startswith("sm"):
            continue
        op, version = (m.group(2), m.group(3)) if m.group(1) else (">=", m.group(5))
        return Requirement(package, op, version, m.group(0), "derived:message")
    return None


def requirement_example(req: Requirement) -> ExampleFix:
    """The installed version before, the install line after."""
    inverse = _INVERSE.get(req.op, "!=")
    return ExampleFix(
        f"{req.package}{inverse}{req.version} installed (as `pip show {req.package}` reports)",
        f"pip install '{req.spec}'",
        f"The code requires {req.spec}: install it in the same environment as the server.",
        (req.provenance,),
    )
