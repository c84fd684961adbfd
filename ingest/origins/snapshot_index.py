"""A snapshot's text, indexed for following values: who calls a function, where a class is defined.

Built once per snapshot from its file texts (the project's own tests left out: a call from a test
is not how a user reaches a check). Calls are found as `name(` in the text, by a regex pass over
each file (`file_scan`); each module's facts are read from its syntax tree when first asked for.
Both are kept by content (`kept`), so that a file unchanged across releases is read once.
"""

from __future__ import annotations

import re
import sys
from collections import defaultdict
from collections.abc import Iterable, Mapping

from errkb.ingest.origins.callers import find_callers
from errkb.ingest.origins.kept import Kept, text_digest
from errkb.ingest.origins.module_facts import Func, ModuleFacts

# a remembered trace: what it found (class, input, step), its internal and its unknown steps,
# how many callers and assignments it followed, the names it read (of the site's budget), and
# whether it reached a `None` (`trace.Walk._remembered`)
Remembered = tuple[
    tuple[tuple[str, str, str], ...], tuple[str, ...], tuple[str, ...], int, int, bool
]
_SUPER = re.compile(r"super\((?:\w+, *self)?\)\.$")
MAX_DEF_FILES = 40  # files read for the module-level functions of one name
_TEST_PATH = re.compile(r"(^|/)(tests?|testing)/|(^|/)(test_[^/]*|[^/]*_test|conftest)\.py$")


_CAPITALISED = re.compile(r"\b[A-Z]\w*")
_FROM_IMPORT = re.compile(r"^[ \t]*from[ \t]+(\w[\w.]*)[ \t]+import[ \t]+(\([^)]*\)|[^\n]*)", re.M)


_IMPORT = re.compile(r"^[ \t]*import[ \t]+([\w. \t,]+)", re.M)


def _imported_names(text: str) -> dict[str, str]:
    """The names a module imports with `from x import a, b as c` (name -> module, absolute
    imports only) and with `import x.y as z` (z -> x.y; `import x.y` binds x)."""
    out: dict[str, str] = {}
    for m in _IMPORT.finditer(text):
        for part in m.group(1).split(","):
            words = part.split()
            if words:
                bound = words[0] if len(words) == 3 else words[0].split(".")[0]
                out[words[-1] if len(words) == 3 else bound] = bound
    for m in _FROM_IMPORT.finditer(text):
        for part in m.group(2).strip("()").split(","):
            words = part.split("#")[0].split()
            if words and words[0] != "*":
                out[words[-1]] = m.group(1)
    return out


def in_tests(path: str) -> bool:
    """True for a file of the project's own tests."""
    return bool(_TEST_PATH.search(path))


class SnapshotIndex:
    """Calls by callee name, classes by name, and each module's facts, of one snapshot.

    `digests` names each file's content (its hash, path -> digest); a digest of the text is
    taken where it has none. `kept` is what earlier snapshots left (`kept.Kept`)."""

    def __init__(
        self,
        texts: Mapping[str, str],
        digests: Mapping[str, str] | None = None,
        kept: Kept | None = None,
    ) -> None:
        self.texts = {p: t for p, t in texts.items() if not in_tests(p)}
        self.kept = kept or Kept()
        given = digests or {}
        self.digests = {p: given.get(p) or text_digest(t) for p, t in self.texts.items()}
        self.classes: dict[str, list[str]] = defaultdict(list)
        self.defs: dict[str, list[str]] = defaultdict(list)
        # a class assigned to a name (`pool_cls = Pool`): class -> (path, name)
        self.aliases: dict[str, list[tuple[str, str]]] = defaultdict(list)
        # traces already followed in this snapshot (`trace.Walk._remembered`)
        self.memo: dict[tuple[object, ...], Remembered] = {}
        self._scans = self.kept.scans(self.digests, self.texts)
        self._call_paths: dict[str, list[str]] = defaultdict(list)
        for path, scan in self._scans.items():
            for name in scan.calls:
                self._call_paths[name].append(path)
            for name in scan.classes:
                self.classes[name].append(path)
            for name in scan.defs:
                self.defs[name].append(path)
            for cls, alias in scan.aliases:
                self.aliases[cls].append((path, alias))
        self._calls: dict[str, list[tuple[str, int]]] = {}
        self._facts: dict[str, ModuleFacts] = {}
        self._callers: dict[tuple[str, int, str], list[tuple[str, int, Func | None]]] = {}
        self._call_texts: dict[tuple[str, int], str] = {}
        self._supers: dict[str, list[tuple[str, int]]] | None = None  # base -> super() calls
        self._imports: dict[str, dict[str, str]] = {}
        self._import_spots: dict[str, list[tuple[int, dict[str, str]]]] = {}
        self._folders: set[str] | None = None
        self.unsure_of: set[str] = set()  # methods whose calls were told apart by receiver
        self._named: dict[str, frozenset[str]] = {}
        self._folder_files: dict[str, list[str]] | None = None  # the capitalised words of a module

    @classmethod
    def of(cls, files: Iterable[tuple[str, str]]) -> SnapshotIndex:
        """The index of (path, text) pairs."""
        return cls(dict(files))

    def calls(self, name: str) -> list[tuple[str, int]]:
        """Where `name(` is written: (path, offset of the name), file by file in order."""
        found = self._calls.get(name)
        if found is None:
            scans = self._scans
            found = [(p, at) for p in self._call_paths.get(name, ()) for at in scans[p].calls[name]]
            self._calls[name] = found
        return found

    def imports(self, path: str, name: str) -> bool:
        """True when a module imports `name` with `from x import name`."""
        return name in self._imported(path)

    def foreign(self, path: str, name: str) -> bool:
        """True when a module imports `name` from another project's module or the standard
        library's (`from PIL import Image`), not from this project's own."""
        root = self._imported(path).get(name, "").split(".")[0]
        return bool(root) and root not in self._top_folders()

    def _imported(self, path: str) -> dict[str, str]:
        names = self._imports.get(path)
        if names is None:
            names = self._imports[path] = _imported_names(self.texts.get(path, ""))
        return names

    def package_of(self, path: str, name: str) -> str:
        """The installed package a module imports `name` from (`from nixl import agent`:
        "nixl"), "" for a name it does not import so, the standard library's or the project's
        own (a folder of the snapshot)."""
        module = self._imported(path).get(name, "")
        root = module.split(".")[0]
        if not root or root in sys.stdlib_module_names:
            return ""
        return "" if root in self._top_folders() else root

    def _top_folders(self) -> set[str]:
        if self._folders is None:  # the top packages: the shallowest folders with `__init__.py`
            inits = [p.split("/")[:-1] for p in self.texts if p.endswith("__init__.py")]
            top = min((len(d) for d in inits if d), default=0)
            self._folders = {d[-1] for d in inits if d and len(d) == top}
        return self._folders

    def facts(self, path: str) -> ModuleFacts:
        """The facts of one module (empty for a path the snapshot does not hold)."""
        known = self._facts.get(path)
        if known is not None:
            return known
        digest = self.digests.get(path) or text_digest("")
        facts = self.kept.facts(digest, lambda: self.texts.get(path, ""))
        self._facts[path] = facts
        return facts

    def line_of(self, path: str, offset: int) -> int:
        """The 1-based line of an offset in a file."""
        return self.texts.get(path, "").count("\n", 0, offset) + 1

    def call_text(self, path: str, offset: int, limit: int = 2_000) -> str:
        """The source of the call starting at `offset` (the callee name), up to its closing
        bracket; "" when it does not close within `limit` characters."""
        key = (path, offset)
        found = self._call_texts.get(key)
        if found is None:
            found = self._call_texts[key] = self._call_text(path, offset, limit)
        return found

    def _call_text(self, path: str, offset: int, limit: int) -> str:
        text = self.texts.get(path, "")
        open_at = text.find("(", offset)
        depth = 0
        for i in range(open_at, min(len(text), open_at + limit)):
            ch = text[i]
            if ch in "([{":
                depth += 1
            elif ch in ")]}":
                depth -= 1
                if depth == 0:
                    start = offset
                    while start > 0 and (text[start - 1].isalnum() or text[start - 1] in "._"):
                        start -= 1
                    # `super().__init__(...)` reads as the call `__init__(...)`
                    return text[start : i + 1].lstrip(".")
        return ""

    def callers(self, func: Func, limit: int = 12) -> list[tuple[str, int, Func | None]]:
        """Where a function is called: (path, offset of the callee name, the calling function).
        A method is looked for as `.name(` (any receiver); `__init__` as its class's name, and as
        `super().__init__(` in the classes that name it as a base."""
        key = (func.qualname, func.start, func.owner)
        if key in self._callers:
            return self._callers[key]
        self._callers[key] = found = find_callers(self, func, limit)
        return found

    def unsure(self, func: Func) -> bool:
        """True when calls of a method of that name were left out as another class's: finding
        none of its own does not show that nothing calls it."""
        return func.qualname in self.unsure_of

    def handed(self, path: str, func: Func) -> bool:
        """True when a function's name is written, not as a call nor its definition, in its own
        module or another of its folder or the folder above (`HOOKS = [handle_x]`,
        `register(handle_x)`): it is called through what it was handed to."""
        name = func.qualname.rsplit(".", 1)[-1]
        if func.owner or name.startswith("__"):
            return False
        folder = path.rpartition("/")[0]
        if self._folder_files is None:
            self._folder_files = defaultdict(list)
            for p in self.texts:
                self._folder_files[p.rpartition("/")[0]].append(p)
        near = self._folder_files.get(folder, []) + self._folder_files.get(
            folder.rpartition("/")[0], []
        )
        word = re.compile(rf"(?<![\w.'\"`]){re.escape(name)}\b(?![\s'\"`]*\()(?!['\"`])")
        for other in near:
            text = self.texts[other]
            if name not in text:
                continue
            for m in word.finditer(text):
                if not text.startswith("def ", max(0, m.start() - 4)):
                    return True
        return False

    def names(self, path: str, word: str) -> bool:
        """True when a module's text has the capitalised word (a class's name) anywhere."""
        words = self._named.get(path)
        if words is None:
            words = self._named[path] = frozenset(_CAPITALISED.findall(self.texts[path]))
        return word in words

    def from_imports(self, path: str) -> list[tuple[int, dict[str, str]]]:
        """Each `from x import ...` statement of a module: (its offset, name -> module)."""
        found = self._import_spots.get(path)
        if found is None:
            text = self.texts.get(path, "")
            found = self._import_spots[path] = [
                (m.start(), _imported_names(m.group(0))) for m in _FROM_IMPORT.finditer(text)
            ]
        return found

    def super_calls(self, owner: str, limit: int = 6) -> list[tuple[str, int]]:
        """`super().__init__(` calls in classes whose statement names `owner` among its bases."""
        if self._supers is None:
            self._supers = self._super_calls_by_base()
        return self._supers.get(owner, [])[:limit]

    def _super_calls_by_base(self) -> dict[str, list[tuple[str, int]]]:
        """Every `super().__init__(` call (or `super(Cls, self).__init__(`) by each name its
        class statement lists among its bases, read once per snapshot."""
        found: dict[str, list[tuple[str, int]]] = defaultdict(list)
        for path, at in self.calls("__init__"):
            text = self.texts[path]
            if not _SUPER.search(text, max(0, at - 60), at):
                continue
            head = text.rfind("\nclass ", 0, at)
            line = text[head : text.find("\n", head + 1)] if head >= 0 else ""
            bases = line.partition("(")[2]
            for base in dict.fromkeys(re.findall(r"(\w+)\s*[,)]", bases)):
                found[base].append((path, at))
        return found

    def alias_calls(self, owner: str, limit: int = 6) -> list[tuple[str, int]]:
        """Calls of a name a module assigns the class to (`pool_cls = Owner`, then
        `pool_cls(...)`), in that module."""
        out: list[tuple[str, int]] = []
        for path, alias in self.aliases.get(owner, ()):
            out += [(path, at) for at in self._scans[path].calls.get(alias, ())][:limit]
        return out[:limit]

    def called(self, path: str, name: str) -> tuple[str, Func] | None:
        """The module-level function a call of `name` in module `path` runs: the module's own,
        else the one its `from x import name` names, else one in the module's own package (a
        relative import), else the first of that name anywhere. A same-named function of an
        unrelated module is not the one called."""
        defs = list(dict.fromkeys(self.defs.get(name, ())))
        module = self._imported(path).get(name, "").replace(".", "/")
        package = path.rpartition("/")[0] + "/"
        ranked = sorted(
            defs,
            key=lambda p: (
                p != path,
                not module or not (p.removesuffix(".py").endswith(module) or f"{module}/" in p),
                not p.startswith(package),
            ),
        )
        for candidate in ranked[:MAX_DEF_FILES]:
            func = self.facts(candidate).funcs.get(name)
            if func is not None:
                return candidate, func
        return None

    def class_facts(self, name: str) -> list[tuple[str, ModuleFacts]]:
        """The modules that define a class of that name, with their facts."""
        return [(p, self.facts(p)) for p in self.classes.get(name, ())[:3]]
