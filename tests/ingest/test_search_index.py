"""The search index kept incrementally, snapshot by snapshot, equals a full rebuild (SQLite and
PostgreSQL): same documents and keys, same full-text postings, same ranks and search pages.

A git history of small real commits exercises each way a snapshot changes documents: new errors
sorting first, last, in the middle and tied on the folded message; an existing error raised from
a new file, from a new function, or guarded by a new flag; errors only in older snapshots; and a
snapshot with no new error at all.
"""

from __future__ import annotations

import unicodedata
from pathlib import Path
from typing import Any

import pytest
from gitrepo import commit, new_repo
from sqlalchemy import Connection, Engine, select, text
from sqlalchemy.orm import Session

from errkb.core.search import update as search_update
from errkb.core.search.index import refresh_search_index, search_docs
from errkb.core.search.terms import MAX_TOKEN, terms
from errkb.ingest import snapshot_writer
from errkb.ingest.pins import RepoPin
from errkb.ingest.pipeline import Job, ingest_snapshot
from errkb.ingest.sources.git import GitSource
from errkb.service.search.queries import search_errors

CLI_HEAD = """import argparse

parser = argparse.ArgumentParser()
parser.add_argument("--tp-size", type=int, default=1)
parser.add_argument("--enable-beta", action="store_true")

"""
CLI_1 = (
    CLI_HEAD
    + """
def validate(args):
    if args.tp_size > 4:
        raise ValueError("mode x is bad")
    raise ValueError("Zulu requires a model")
"""
)
CLI_2 = (
    CLI_HEAD
    + """
def validate(args):
    if args.tp_size > 4:
        raise ValueError("mode x is bad")
    if args.enable_beta:
        raise ValueError("Zulu requires a model")
    raise ValueError("Mode X is bad")
"""
)
A_1 = """def alpha(x):
    if x < 0:
        raise ValueError(f"alpha must be positive, got {x}")


def delta():
    raise ValueError("Delta is not supported")
"""
A_2 = """class Checker:
    def alpha(self, x):
        raise ValueError(f"alpha must be positive, got {x}")


def delta():
    raise ValueError("Delta is not supported")


def aardvark():
    raise ValueError("Aardvark comes first")


def middle():
    raise ValueError("charlie sits in the middle")
"""
B = 'def delta_again():\n    raise ValueError("Delta is not supported")\n'
OLD = 'def gone():\n    raise ValueError("gone after the first commit")\n'
LAST = 'raise ValueError("zzz comes last")\n'

HISTORY: list[dict[str, str | None]] = [
    {"pkg/cli.py": CLI_1, "pkg/a.py": A_1, "pkg/old.py": OLD},
    {"pkg/cli.py": CLI_2, "pkg/a.py": A_2, "pkg/b.py": B, "pkg/old.py": None, "pkg/z.py": LAST},
    {"pkg/b.py": None, "pkg/moved/b.py": B},  # no new error: only a new path for one
    # pkg/b.py back: a place the snapshot before lacks but an older one has, so nothing is new
    {"pkg/b.py": B},
]
# Documents each snapshot writes: its new errors, plus errors it gives a new path, function or
# flag (alpha: Checker.alpha; delta: pkg/b.py; zulu: --enable-beta; delta: pkg/moved/b.py).
WRITTEN = [5, 4 + 3, 1, 0]
QUERIES = ["", "alpha", "mode", "delta", "pkg b", "enable beta", "validate", "zzz", "tp size"]
TERMS = ["delta", "mode", "pkg", "alpha OR zulu"]


def _ingest_history(engine: Engine, tmp_path: Path) -> list[dict[str, Any]]:
    """Ingest each commit; after each, the index as kept and as a full rebuild would make it."""
    repo = new_repo(tmp_path / "proj")
    shas = [commit(repo, f"c{i}", files, day=i) for i, files in enumerate(HISTORY)]
    repo.close()
    pin = RepoPin(name="tests/index")
    states = []
    for sha in shas:
        with GitSource(str(tmp_path / "proj"), sha, cache_dir=tmp_path / "cache") as source:
            summary = ingest_snapshot(source, pin, pin.extract_config(100_000), Job(engine, 1))
        assert summary.status == "ingested"
        with engine.connect() as conn:
            kept = _index_state(conn)
            assert refresh_search_index(conn) == len(kept["docs"])
            states.append({"kept": kept, "rebuilt": _index_state(conn)})
            conn.rollback()
    return states


def _index_state(conn: Connection) -> dict[str, Any]:
    """Everything a reader of the index can observe, keyed by error id (not by row id)."""
    d = search_docs.c
    columns = (d.sort_key, d.error_id, d.message_terms, d.meta_terms, d.flag_key)
    state: dict[str, Any] = {"docs": conn.execute(select(*columns).order_by(d.sort_key)).all()}
    if conn.dialect.name == "sqlite":
        conn.execute(
            text(
                "CREATE VIRTUAL TABLE IF NOT EXISTS temp.search_vocab "
                "USING fts5vocab(main, search_fts, instance)"
            )
        )
        postings = "SELECT v.term, d.error_id, v.col, v.offset FROM temp.search_vocab v "
        state["postings"] = sorted(
            conn.execute(text(postings + "JOIN search_docs d ON d.id = v.doc")).all()
        )
        ranked = (
            "SELECT d.error_id, bm25(search_fts) FROM search_fts "
            "JOIN search_docs d ON d.id = search_fts.rowid WHERE search_fts MATCH :q"
        )
        state["bm25"] = [sorted(conn.execute(text(ranked), {"q": q}).all()) for q in TERMS]
    else:
        state["postings"] = sorted(
            conn.execute(text("SELECT error_id, tsv::text FROM search_docs"))
        )
    session = Session(bind=conn)
    state["pages"] = [_pages(session, q) for q in QUERIES]
    return state


def _pages(session: Session, q: str) -> list[tuple[int, list[str], str | None]]:
    """Every page of a search, two hits at a time: totals, ids and cursors."""
    pages, cursor = [], None
    while True:
        page = search_errors(session, q=q, limit=2, cursor=cursor)
        pages.append((page.total, [h.id for h in page.items], page.next_cursor))
        cursor = page.next_cursor
        if cursor is None:
            return pages


def test_kept_index_equals_a_rebuild_after_each_snapshot(
    engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_rebuild(*_: Any) -> int:
        raise AssertionError("the store fell back to a full rebuild")

    written: list[int] = []
    update = search_update.update_search_index

    def counted(*args: Any) -> int:
        written.append(update(*args))
        return written[-1]

    with monkeypatch.context() as patch:
        patch.setattr(search_update, "refresh_search_index", no_rebuild)
        patch.setattr(snapshot_writer, "update_search_index", counted)
        states = _ingest_history(engine, tmp_path)

    for i, state in enumerate(states):
        assert state["kept"] == state["rebuilt"], f"snapshot {i}: kept index != rebuild"
    assert written == WRITTEN  # only what each snapshot changed
    last = states[-1]["kept"]
    keys = [(row.sort_key, row.error_id) for row in last["docs"]]
    assert [k for k, _ in keys] == list(range(9))
    first, *_, final = last["docs"]
    assert first.message_terms.startswith("aardvark") and final.message_terms.startswith("zzz")
    delta = next(r for r in last["docs"] if r.message_terms == "delta is not supported")
    assert "pkg moved b py" in delta.meta_terms and "delta again" in delta.meta_terms
    zulu = next(r for r in last["docs"] if r.message_terms.startswith("zulu"))
    assert zulu.flag_key == "|--enable-beta|"
    assert any(last["postings"]) and all(any(r) for r in last.get("bm25", [[1]]))


def test_an_index_out_of_step_is_rebuilt(engine: Engine, tmp_path: Path) -> None:
    """Documents missing (an index older than its errors) make the store rebuild it whole."""
    repo = new_repo(tmp_path / "proj")
    shas = [commit(repo, f"c{i}", files, day=i) for i, files in enumerate(HISTORY[:2])]
    repo.close()
    pin = RepoPin(name="tests/index")

    def ingest(sha: str) -> None:
        with GitSource(str(tmp_path / "proj"), sha, cache_dir=tmp_path / "cache") as source:
            ingest_snapshot(source, pin, pin.extract_config(100_000), Job(engine, 1))

    ingest(shas[0])
    with engine.begin() as conn:
        conn.execute(search_docs.delete().where(search_docs.c.sort_key == 0))
        if conn.dialect.name == "sqlite":
            conn.execute(text("INSERT INTO search_fts(search_fts) VALUES ('rebuild')"))
    ingest(shas[1])
    with engine.connect() as conn:
        kept = _index_state(conn)
        refresh_search_index(conn)
        assert kept == _index_state(conn)
        assert len(kept["docs"]) == 9


def _terms_by_character(text: str) -> list[str]:
    """The tokenizer's definition, one character at a time (the fast path must equal it)."""
    words: list[str] = []
    current: list[str] = []
    for ch in unicodedata.normalize("NFKD", text):
        if ch.isascii() and ch.isalnum():
            current.append(ch.lower())
        elif current:
            words.append("".join(current)[:MAX_TOKEN])
            current = []
    if current:
        words.append("".join(current)[:MAX_TOKEN])
    return words


def test_terms_equal_their_per_character_definition() -> None:
    samples = [
        "",
        "Café résumé naïve: ＦＵＬＬ ｗｉｄｔｈ ½ ﬁle ²",
        "tp_size must divide --tp-size (got {tp_size!r})",
        "x" * 70 + " " + "é" * 70,
        "\x00\x1c\x1f\t\n\u00a0\u2028\u3000",
    ]
    samples += ["a" + chr(c) + "B" for c in range(0x30000) if not 0xD800 <= c < 0xE000]
    samples += ["a" + chr(c) for c in (0xD800, 0xDFFF, 0x10FFFF)]  # lone surrogates, the last
    for sample in samples:
        assert terms(sample) == _terms_by_character(sample), repr(sample)
