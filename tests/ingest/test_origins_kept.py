"""What the value-origin index keeps (`ingest/origins/kept.py`) gives what it would compute again.

Run on a real project: this repository's own Python files (several hundred modules, classes that
call `super().__init__`, functions called across modules). Module facts and file scans survive
their stored form; the index's lookups agree with a plain search of the texts; origins read from
a store equal a cold trace, and a store is read without the texts.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from errkb.core.records import ExtractConfig, Site, Vocabulary
from errkb.ingest.extract import extract_file
from errkb.ingest.origin_store import FILE_NAME, OriginStore
from errkb.ingest.origins import kept
from errkb.ingest.origins.file_scan import FileScan
from errkb.ingest.origins.module_facts import ModuleFacts
from errkb.ingest.origins.snapshot_index import SnapshotIndex
from errkb.ingest.origins.snapshot_origins import snapshot_origins
from errkb.ingest.origins.stored_facts import facts_bytes, facts_from_bytes, facts_of_texts

ROOT = Path(__file__).resolve().parents[2]
FOLDERS = ("ingest", "knowledge", "service", "errkb/core")
CONFIG = ExtractConfig(exceptions=("*",), asserts=True)
VOCAB = Vocabulary()


@pytest.fixture(scope="module")
def texts() -> dict[str, str]:
    """path -> text of every Python file of the project's own packages."""
    out = {}
    for folder in FOLDERS:
        for path in sorted((ROOT / folder).rglob("*.py")):
            out[path.relative_to(ROOT).as_posix()] = path.read_text()
    assert len(out) > 200
    return out


@pytest.fixture(scope="module")
def sites(texts: dict[str, str]) -> list[Site]:
    found = [s for p, t in texts.items() for s in extract_file(t.encode(), p, CONFIG).sites]
    assert len(found) > 100
    return found


@pytest.fixture(autouse=True)
def _nothing_kept() -> None:
    kept.forget()


def test_module_facts_and_scans_read_back_equal(texts: dict[str, str]) -> None:
    for path, text in texts.items():
        facts = ModuleFacts.of(text)
        back = facts_from_bytes(facts_bytes(facts))
        assert back == facts, path
        for line in range(1, text.count("\n") + 2, 7):
            assert back.func_at(line) == facts.func_at(line), (path, line)
        scan = FileScan.of(text)
        assert FileScan.from_bytes(scan.to_bytes()) == scan, path


# Class statements the base search must read as a search per class would: dotted, spaced, split
# over lines, a name that only ends like a base, several bases.
BASES = """
class A(pkg.Base, Mixin):
    def __init__(self):
        super().__init__()
class B( Base ):
    def __init__(self):
        super().__init__(1)
class C(
    Base):
    def __init__(self):
        super().__init__()
class D(MyBase, metaclass=Meta):
    def __init__(self):
        super().__init__()
class E(Base,Mixin,Other) :
    def __init__(self):
        super(E, self).__init__(x)
pool_cls = pkg.Base
pool = pool_cls(1)
"""


TRICKY = (
    "class A:\n  class B(A): pass\n\tclass\tC: pass\n# subclass D\nxclass E: pass\n"
    "async def f(): pass\n  async  def g(): pass\nundef h\n  def def_i(): pass\n"
    "a = Pool\n  b = mod.sub.Pool  \nc.d = Pool\ne = Pool()\nf = pool\nx = 1; g = Pool\n"
    "class J: pass\r\n    def k(self): pass\r\nm = Pool\r\nn(o(p (q)))\n"
)


def test_a_file_scan_finds_what_the_anchored_patterns_find(texts: dict[str, str]) -> None:
    """The scan's quicker patterns, against the plain ones they stand for."""
    calls = re.compile(r"(?<![\w])(\w+)\(")
    classes = re.compile(r"^[ \t]*class[ \t]+(\w+)", re.M)
    defs = re.compile(r"^[ \t]*(?:async[ \t]+)?def[ \t]+(\w+)", re.M)
    aliases = re.compile(r"^[ \t]*(\w+)[ \t]*=[ \t]*(?:\w+\.)*([A-Z]\w*)[ \t]*$", re.M)
    for path, text in {**texts, "tricky.py": TRICKY}.items():
        scan = FileScan.of(text)
        found: dict[str, list[int]] = {}
        for m in calls.finditer(text):
            found.setdefault(m.group(1), []).append(m.start(1))
        assert scan.calls == found, path
        assert scan.classes == tuple(m.group(1) for m in classes.finditer(text)), path
        assert scan.defs == tuple(m.group(1) for m in defs.finditer(text)), path
        assert scan.aliases == tuple((m.group(2), m.group(1)) for m in aliases.finditer(text))
    tricky = FileScan.of(TRICKY)
    assert tricky.classes == ("A", "B", "C", "J") and "def_i" in tricky.defs
    assert tricky.aliases == (("Pool", "a"), ("Pool", "b"))  # not `m = Pool\r`, as before


def test_the_index_finds_what_a_plain_search_of_the_texts_finds(texts: dict[str, str]) -> None:
    index = SnapshotIndex({**texts, "pkg/bases.py": BASES})
    calls: dict[str, list[tuple[str, int]]] = {}
    for path, text in index.texts.items():
        for m in re.finditer(r"(?<![\w])(\w+)\(", text):
            calls.setdefault(m.group(1), []).append((path, m.start(1)))
    assert len(calls) > 1000
    for name, spots in calls.items():
        assert index.calls(name) == spots, name
    # `super().__init__(` calls by the bases their class statement names, as a search per class
    owners = {*index.classes, "Base", "Mixin", "Other", "MyBase", "Meta"}
    checked = 0
    for owner in sorted(owners):
        expected = []
        for path, at in calls.get("__init__", []):
            text = index.texts[path]
            if not re.search(r"super\((\w+, *self)?\)\.$", text[max(0, at - 60) : at]):
                continue
            head = text.rfind("\nclass ", 0, at)
            line = text[head : text.find("\n", head + 1)] if head >= 0 else ""
            if owner in re.findall(r"(\w+)\s*[,)]", line.partition("(")[2]):
                expected.append((path, at))
        assert index.super_calls(owner, limit=1000) == expected, owner
        checked += bool(expected)
    assert checked >= 6  # Base, Mixin, Other, MyBase, and classes of the project
    # a class assigned to a name, and the calls of that name in its module
    aliases: dict[str, list[tuple[str, str]]] = {}
    for path, text in index.texts.items():
        for m in re.finditer(r"^[ \t]*(\w+)[ \t]*=[ \t]*(?:\w+\.)*([A-Z]\w*)[ \t]*$", text, re.M):
            aliases.setdefault(m.group(2), []).append((path, m.group(1)))
    assert dict(index.aliases) == aliases
    assert index.alias_calls("Base") == [("pkg/bases.py", BASES.index("pool_cls(1)"))]


def test_origins_from_a_store_equal_a_cold_trace(
    texts: dict[str, str], sites: list[Site], tmp_path: Path
) -> None:
    cold = snapshot_origins(texts, sites, [], VOCAB)
    assert sum(o is not None for o in cold) > 100
    assert {o.kind for o in cold if o is not None} >= {"internal", "unknown"}
    kept.forget()
    made: list[int] = []

    def make_facts(given: list[str]) -> list[tuple[ModuleFacts, bytes]]:
        made.append(len(given))
        return facts_of_texts(given)

    # the facts of every file made at once (as on the parse processes), then traced
    assert snapshot_origins(texts, sites, [], VOCAB, make_facts=make_facts) == cold
    assert made and made[0] > 200
    kept.forget()
    with OriginStore(tmp_path) as store:
        assert snapshot_origins(texts, sites, [], VOCAB, store=store) == cold
    kept.forget()  # a new process: nothing in memory, the store on disk

    def unread() -> dict[str, str]:
        raise AssertionError("every origin is in the store: the texts are not needed")

    digests = {p: kept.text_digest(t) for p, t in texts.items()}
    with OriginStore(tmp_path) as store:
        again = snapshot_origins(unread, sites, [], VOCAB, digests=digests, store=store)
    assert again == cold


def test_a_change_to_the_rules_a_file_or_the_configuration_traces_again(
    texts: dict[str, str], sites: list[Site], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with OriginStore(tmp_path) as store:
        cold = snapshot_origins(texts, sites, [], VOCAB, store=store)
    read: list[str] = []

    def counted(given: dict[str, str], why: str):  # type: ignore[no-untyped-def]
        def read_texts() -> dict[str, str]:
            read.append(why)
            return given

        return read_texts

    def again(given: dict[str, str], why: str, vocabulary: Vocabulary = VOCAB) -> list[object]:
        kept.forget()
        digests = {p: kept.text_digest(t) for p, t in given.items()}
        with OriginStore(tmp_path) as store:
            return list(
                snapshot_origins(
                    counted(given, why), sites, [], vocabulary, digests=digests, store=store
                )
            )

    assert again(texts, "nothing changed") == cold
    with monkeypatch.context() as m:
        m.setattr(kept, "ORIGINS_CODE", b"other rules")
        assert again(texts, "the rules") == cold
    path = next(s.path for s in sites if s.kind != "import")
    changed = {**texts, path: texts[path] + "\n# one more line\n"}
    assert again(changed, "a file") == cold  # a comment at the end changes no origin
    assert again(texts, "the configuration", Vocabulary(env_helpers=("envs",))) is not None
    assert read == ["the rules", "a file", "the configuration"]


def test_a_broken_store_file_is_not_used(
    texts: dict[str, str], sites: list[Site], tmp_path: Path
) -> None:
    (tmp_path / FILE_NAME).write_bytes(b"not a database" * 100)
    cold = snapshot_origins(texts, sites[:50], [], VOCAB)
    kept.forget()
    with OriginStore(tmp_path) as store:
        assert snapshot_origins(texts, sites[:50], [], VOCAB, store=store) == cold
