"""Which attribute reads count as reads of a catalog flag: the rule against false links.

Dests are plain words and most attribute reads of `.model` or `.port` are not the server's
options. A read counts only when the object it is read from looks like settings - a name or
attribute ending in `args`, `settings`, `options` or `opts`, or a no-argument `get_*()` call (the
runtime's settings namespaces) - or when the dest itself is specific: at least three words or 16
characters (`enable_unified_memory`, `disaggregation_mode`), which projects do not reuse for
unrelated attributes. Two-word names such as `model_config` or `tp_size` are often other objects'
attributes (`self.model_config` is a model's config object, not `--model-config`), so they need a
settings-like object. Flags that come from argparse calls (scripts, benchmarks, tools) are read
from `args.x`-like objects only in the file that defines them or in the settings module: a
benchmark's `--backend` says nothing about `self.args.backend` elsewhere.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache

from errkb.core.records import FlagDef

SETTINGS_SUFFIXES = ("args", "settings", "options", "opts")
SETTINGS_CALL_PREFIX = "get_"
_SPECIFIC_MIN_LEN = 16


def looks_like_settings(obj: ast.expr) -> bool:
    """True for `args`, `server_args`, `self.server_args`, `get_memory()`-style objects."""
    if isinstance(obj, ast.Call):
        name = ast.unparse(obj.func).split(".")[-1]
        return name.startswith(SETTINGS_CALL_PREFIX) and not obj.args and not obj.keywords
    name = obj.attr if isinstance(obj, ast.Attribute) else getattr(obj, "id", "")
    return name.lower().endswith(SETTINGS_SUFFIXES)


def is_specific(dest: str) -> bool:
    """A dest distinctive enough to be linked from any attribute read."""
    return dest.count("_") >= 2 or (dest.count("_") >= 1 and len(dest) >= _SPECIFIC_MIN_LEN)


@dataclass(frozen=True)
class Reads:
    """Which reads count as reads of a catalog flag at one site (the rule against false links).

    A settings-class field is read from a settings-like object, or from any object when its
    name is specific. An argparse flag (scripts, benchmarks) is read only from an args-like
    object, and only in the file that defines it or in the settings module itself.
    """

    catalog: Mapping[str, FlagDef]
    site_path: str = ""
    server_paths: frozenset[str] = frozenset()

    def dest(self, node: ast.AST) -> str | None:
        """The dest a node reads (`x.dest` or `getattr(x, "dest", ...)`), if it counts."""
        if isinstance(node, ast.Attribute):
            name, obj = node.attr, node.value
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "getattr"
            and len(node.args) >= 2
            and isinstance(node.args[1], ast.Constant)
            and isinstance(node.args[1].value, str)
        ):
            name, obj = node.args[1].value, node.args[0]
        else:
            return None
        flag = self.catalog.get(name)
        if flag is None:
            return None
        settings = looks_like_settings(obj)
        if flag.origin == "dataclass":
            return name if settings or is_specific(name) else None
        own = flag.path == self.site_path or flag.path in self.server_paths
        return name if settings and own else None


@lru_cache(maxsize=65536)
def parse_expr(expr: str) -> ast.expr | None:
    """The expression's tree, or None when it does not parse."""
    # Cached: the same guard and placeholder texts recur across the sites of a function, and
    # nothing here mutates the returned tree.
    try:
        return ast.parse(expr, mode="eval").body
    except (SyntaxError, ValueError, RecursionError):
        return None
