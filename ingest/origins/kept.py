"""What the value-origin index keeps between snapshots: each file content's scan and module facts,
and each site's origin.

Kept in this process (a history ingested in one run reads each distinct file once) and, when the
ingest gives one, in a `Store` that outlives it (the cache folder, `ingest/origin_store.py`), so
that another process ingesting the same files (a second database, a re-ingest) traces nothing.
Every key holds a digest of the code that made the value: a change to the rules, the facts or
the scan reads everything again.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from hashlib import blake2b
from pathlib import Path
from typing import Protocol

from errkb.core import origin as _origin_module
from errkb.core import records as _records_module
from errkb.core import vocabulary as _vocabulary_module
from errkb.core.origin import Origin
from errkb.core.records import Site, Vocabulary
from errkb.ingest.origins.file_scan import FileScan
from errkb.ingest.origins.module_facts import ModuleFacts
from errkb.ingest.origins.stored_facts import facts_bytes, facts_from_bytes

_HERE = Path(__file__).resolve().parent


def _code(paths: Iterable[Path]) -> bytes:
    h = blake2b(digest_size=16)
    for path in sorted(paths):
        h.update(path.name.encode() + b"\0" + path.read_bytes())
    return h.digest()


FACTS_CODE = _code([_HERE / "module_facts.py", _HERE / "stored_facts.py"])
SCAN_CODE = _code([_HERE / "file_scan.py"])
# The rules: every module of the index, with the records it reads and writes.
ORIGINS_CODE = _code(
    [
        *_HERE.glob("*.py"),
        *(Path(str(m.__file__)) for m in (_origin_module, _records_module, _vocabulary_module)),
    ]
)

_KEEP = {"facts": 20_000, "scans": 20_000, "origins": 400_000}  # per process
_MEMORY: dict[str, dict[bytes, object]] = {table: {} for table in _KEEP}


class Store(Protocol):
    """Bytes by key in named tables ("facts", "scans", "origins"), across processes."""

    def get(self, table: str, keys: Sequence[bytes]) -> dict[bytes, bytes]:
        """The values held of these keys."""
        ...

    def put(self, table: str, rows: Mapping[bytes, bytes]) -> None:
        """Keep these values."""
        ...

    def has(self, table: str, keys: Sequence[bytes]) -> set[bytes]:
        """Which of these keys are held (their values left unread)."""
        ...


def text_digest(text: str) -> str:
    """A file's digest from its text (where the caller has no content hash of its bytes)."""
    return blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


def forget(*tables: str) -> None:
    """Drop what this process keeps of these tables, or of all (a benchmark's cold run)."""
    for table in tables or tuple(_MEMORY):
        _MEMORY[table].clear()


class Kept:
    """The process's memory and the optional store, read through; what is new goes to both
    (to the store at `flush`)."""

    def __init__(self, store: Store | None = None) -> None:
        self.store = store
        self._new: dict[str, dict[bytes, bytes]] = {table: {} for table in _KEEP}

    def detach(self) -> None:
        """Read and write no store from now on (in a forked copy of the process, which must
        not use the store's connection)."""
        self.store = None

    def _get(self, table: str, keys: Sequence[bytes]) -> dict[bytes, object]:
        held = _MEMORY[table]
        found = {k: held[k] for k in keys if k in held}
        missing = [k for k in dict.fromkeys(keys) if k not in found]
        if missing and self.store is not None:
            decode = _DECODERS[table]
            for k, raw in self.store.get(table, missing).items():
                found[k] = self._remember(table, k, decode(raw))
        return found

    def _add(self, table: str, key: bytes, value: object, encoded: Callable[[], bytes]) -> None:
        self._remember(table, key, value)
        if self.store is not None:
            self._new[table][key] = encoded()

    @staticmethod
    def _remember(table: str, key: bytes, value: object) -> object:
        held = _MEMORY[table]
        if len(held) >= _KEEP[table]:
            held.clear()
        held[key] = value
        return value

    def scans(self, files: Mapping[str, str], texts: Mapping[str, str]) -> dict[str, FileScan]:
        """The scan of each path of `files` (path -> content digest), made where not kept."""
        keys = {path: _key(SCAN_CODE, digest) for path, digest in files.items()}
        found = self._get("scans", list(keys.values()))
        out: dict[str, FileScan] = {}
        for path, key in keys.items():
            scan = found.get(key)
            if scan is None:
                scan = found[key] = FileScan.of(texts.get(path, ""))
                self._add("scans", key, scan, scan.to_bytes)
            out[path] = scan  # type: ignore[assignment]
        return out

    def facts(self, digest: str, text: Callable[[], str]) -> ModuleFacts:
        """The facts of one file content, read from `text()` where not kept."""
        key = _key(FACTS_CODE, digest)
        facts = self._get("facts", [key]).get(key)
        if facts is None:
            made = ModuleFacts.of(text())
            self._add("facts", key, made, lambda: facts_bytes(made))
            return made
        return facts  # type: ignore[return-value]

    def facts_to_make(self, files: Mapping[str, str]) -> dict[str, str]:
        """Of these files (path -> content digest), one path per content whose facts are kept
        nowhere: digest -> path."""
        held = _MEMORY["facts"]
        todo: dict[bytes, tuple[str, str]] = {}
        for path, digest in files.items():
            key = _key(FACTS_CODE, digest)
            if key not in held and key not in todo:
                todo[key] = (digest, path)
        if todo and self.store is not None:
            for key in self.store.has("facts", list(todo)):
                del todo[key]
        return dict(todo.values())

    def add_facts(self, digest: str, facts: ModuleFacts, encoded: bytes) -> None:
        """Keep the facts of a file content made elsewhere (`facts_of_texts`)."""
        self._add("facts", _key(FACTS_CODE, digest), facts, lambda: encoded)

    def origins(self, keys: Sequence[bytes]) -> dict[bytes, Origin]:
        """The origins kept of these site keys (`site_key`)."""
        return self._get("origins", keys)  # type: ignore[return-value]

    def add_origin(self, key: bytes, origin: Origin) -> None:
        """Keep a site's origin."""
        self._add("origins", key, origin, lambda: json.dumps(origin.to_json()).encode())

    def flush(self) -> None:
        """Hand what is new to the store."""
        if self.store is None:
            return
        for table, rows in self._new.items():
            if rows:
                self.store.put(table, rows)
            rows.clear()


_DECODERS: dict[str, Callable[[bytes], object]] = {
    "facts": facts_from_bytes,
    "scans": FileScan.from_bytes,
    "origins": lambda raw: Origin.from_json(json.loads(raw)),
}


def _key(code: bytes, *parts: str) -> bytes:
    h = blake2b(code, digest_size=16)
    for part in parts:
        h.update(part.encode("utf-8", "surrogatepass") + b"\0")
    return h.digest()


def config_digest(vocabulary: Vocabulary, flag_classes: tuple[str, ...]) -> str:
    """What a snapshot's configuration adds to every site key."""
    raw = json.dumps([vocabulary.to_json(), list(flag_classes)], sort_keys=True)
    return blake2b(raw.encode(), digest_size=16).hexdigest()


def site_key(site: Site, file_digest: str, config: str) -> bytes:
    """What a site's origin depends on in its own file: the file's content, the site's place and
    guard, the snapshot's configuration and the rules' code."""
    guard = [[c.kind, c.expr, c.holds, c.line, c.resolved] for c in site.conditions]
    fields = [site.path, site.line, site.qualname, site.kind, site.exception, site.check, guard]
    return _key(ORIGINS_CODE, config, file_digest, json.dumps(fields))
