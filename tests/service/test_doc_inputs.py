"""Incremental entry docs: a doc is rebuilt when, and only when, one of its inputs changes.

A small project in three releases, ingested by the real pipeline on SQLite and PostgreSQL. After
every build each stored doc must equal the entry built now (nothing stale is kept), and the
docs rebuilt must be exactly the ones whose inputs moved: a new occurrence in a new release, a
related error that changed, a new error whose message joins a doc's similar errors, the
knowledge code's version, the settings.
"""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

import pytest
from sqlalchemy import delete, select, update

from errkb.core.db import make_engine, session_factory, upgrade
from errkb.core.dictionaries import unpack_stored
from errkb.core.models import EntryDoc, Error, Meta
from errkb.core.records import Segment, Template, error_id
from errkb.core.settings import Settings
from errkb.ingest.pins import RepoPin
from errkb.ingest.pipeline import Job, ingest_snapshot
from errkb.ingest.sources.folder import FolderSource
from errkb.service.docstore import inputs as doc_inputs
from errkb.service.docstore.plan import plan_docs
from errkb.service.entries import docs
from errkb.service.entries.docs import entry_json, materialize_entries, settings_variant
from errkb.service.entries.served import served_entry_json
from errkb.service.queries import kb_key

REPO = RepoPin(name="acme/tiles", web_url="https://example.org/acme/tiles")

TILES = """
def place(width, height):
    if width < 0:
        raise ValueError("negative width for the tile layout")
    if height < 0:
        raise ValueError("negative height for the tile layout")
"""
OLD = """
def legacy(flag, queue):
    if flag:
        raise ValueError("the old check refuses this flag combination")
    if queue:
        raise ValueError("draining the legacy queue failed")
"""
NEW = """
def modern(flag):
    if flag:
        raise ValueError("the old check still refuses this flag combination")
"""
VERSIONS = {
    1: {"tiles/a.py": TILES + OLD},
    2: {"tiles/a.py": TILES},
    3: {"tiles/a.py": TILES, "tiles/c.py": NEW},
    4: {"tiles/a.py": TILES, "tiles/c.py": "# The modern checks.\n" + NEW},
}


def _id(message: str) -> str:
    return error_id(REPO.name, "ValueError", Template((Segment("text", message),), "literal"))


WIDTH = _id("negative width for the tile layout")
HEIGHT = _id("negative height for the tile layout")
OLD_CHECK = _id("the old check refuses this flag combination")
QUEUE = _id("draining the legacy queue failed")
NEW_CHECK = _id("the old check still refuses this flag combination")


def _ingest(url: str, root: Path, version: int) -> None:
    folder = root / f"v{version}"
    for rel, text in VERSIONS[version].items():
        path = folder / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip())
        stamp = 1_700_000_000 + version * 86_400  # each release sorts after the one before
        os.utime(path, (stamp, stamp))
    engine = make_engine(url)
    try:
        upgrade(engine)
        source = FolderSource(folder, f"v{version}")
        ingest_snapshot(source, REPO, REPO.extract_config(2_000_000), Job(engine, workers=1))
    finally:
        engine.dispose()


def _build(url: str, settings: Settings | None = None) -> set[str]:
    """Plan, then build; the ids the plan rebuilt (checked against what the build wrote)."""
    settings = settings or Settings(database_url=url)
    engine = make_engine(url)
    with session_factory(engine)() as session:
        plan = plan_docs(session, settings_variant(settings))
    engine.dispose()
    planned = set(plan.rebuild) | set(plan.later)
    done = materialize_entries(settings, processes=1)
    assert done.entries == len(planned) and not done.abandoned and not done.deferred
    assert _assert_nothing_stale(url, settings) == set()
    return planned


def _build_deferring(url: str) -> tuple[set[str], set[str]]:
    """A build that leaves the docs changed only by their version lists: (built, left)."""
    settings = Settings(database_url=url)
    engine = make_engine(url)
    with session_factory(engine)() as session:
        plan = plan_docs(session, settings_variant(settings))
    engine.dispose()
    done = materialize_entries(settings, processes=1, defer=True)
    assert (done.entries, done.deferred) == (len(plan.rebuild), len(plan.later))
    left = _assert_nothing_stale(url, settings)
    assert left == set(plan.later)
    return set(plan.rebuild), left


def _assert_nothing_stale(url: str, settings: Settings) -> set[str]:
    """Every current doc equals the entry as built now; the ids of the docs not current."""
    engine = make_engine(url)
    key = kb_key(engine)
    with session_factory(engine)() as session:
        rows = session.query(EntryDoc).all()
        assert rows
        for row in rows:
            if row.content_key == key:
                fresh = entry_json(session, row.error_id, settings)
                assert unpack_stored(session, row.body) == fresh, row.error_id
    engine.dispose()
    return {r.error_id for r in rows if r.content_key != key}


def _related_of(url: str) -> dict[str, set[str]]:
    engine = make_engine(url)
    with session_factory(engine)() as session:
        rows = session.query(EntryDoc.error_id, EntryDoc.related).all()
    engine.dispose()
    return {i: set(doc_inputs.related_ids(r)) for i, r in rows}


def test_a_build_with_nothing_changed_plans_nothing(
    db_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _ingest(db_url, tmp_path, 1)
    settings = Settings(database_url=db_url)
    assert materialize_entries(settings, processes=1).entries == 4

    def no_planning(*_: object, **__: object) -> None:
        raise AssertionError("planned again")

    with monkeypatch.context() as m:  # the same key, code and settings, every doc still there
        m.setattr(docs, "plan_docs", no_planning)
        again = materialize_entries(settings, processes=1)
    assert (again.entries, again.kept, again.skipped) == (0, 4, True)

    # A doc gone (by hand) is noticed, and built again.
    engine = make_engine(db_url)
    with engine.begin() as conn:
        conn.execute(delete(EntryDoc).where(EntryDoc.error_id == WIDTH))
    engine.dispose()
    assert materialize_entries(settings, processes=1).entries >= 1  # (and its word neighbour)
    assert _assert_nothing_stale(db_url, settings) == set()
    # Other settings, new rules or a new release: planned, and rebuilt as they need.
    other = Settings(database_url=db_url, public_url="https://errors.example.org")
    assert materialize_entries(other, processes=1).entries == 4
    monkeypatch.setattr(doc_inputs, "knowledge_version", lambda: "rules changed")
    assert materialize_entries(other, processes=1).entries == 4
    _ingest(db_url, tmp_path, 2)
    assert materialize_entries(other, processes=1).entries > 0


def test_a_doc_is_rebuilt_when_and_only_when_its_inputs_change(
    db_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _ingest(db_url, tmp_path, 1)
    _ingest(db_url, tmp_path, 2)
    assert _build(db_url) == {WIDTH, HEIGHT, OLD_CHECK, QUEUE}
    assert _build(db_url) == set()  # nothing changed: nothing rebuilt

    # A new release: the errors it raises get a new occurrence; the error it adds, whose words
    # the old check's message shares, joins that doc's similar errors. The queue error, gone
    # since v2, changes in nothing.
    _ingest(db_url, tmp_path, 3)
    assert _build(db_url) == {WIDTH, HEIGHT, NEW_CHECK, OLD_CHECK}
    assert NEW_CHECK in _related_of(db_url)[OLD_CHECK]
    assert _build(db_url) == set()

    # A related error changes (its title): its own doc and the docs naming it, no others.
    related = _related_of(db_url)
    naming = {i for i, ids in related.items() if WIDTH in ids}
    assert naming and NEW_CHECK not in naming  # another file, other words: not related
    engine = make_engine(db_url)
    with engine.begin() as conn:  # in one commit with a new generation, as every writer does
        conn.execute(update(Error).where(Error.id == WIDTH).values(title="Width below zero"))
        generation = conn.execute(select(Meta.value).where(Meta.key == "generation")).scalar()
        conn.execute(
            update(Meta).where(Meta.key == "generation").values(value=str(int(generation) + 1))
        )
    engine.dispose()
    assert _build(db_url) == {WIDTH} | naming

    # New rules (the knowledge code's version) or other settings: every doc, once.
    every = {WIDTH, HEIGHT, NEW_CHECK, OLD_CHECK, QUEUE}
    monkeypatch.setattr(doc_inputs, "knowledge_version", lambda: "rules changed")
    assert _build(db_url) == every
    assert _build(db_url) == set()
    other = Settings(database_url=db_url, public_url="https://errors.example.org")
    assert _build(db_url, other) == every
    assert _build(db_url, other) == set()


def test_a_deferring_build_leaves_only_the_docs_one_version_longer(
    db_url: str, tmp_path: Path
) -> None:
    """`errkb ingest` builds at once the docs whose content a new release changed, and leaves
    those it only lengthens by one version (never served meanwhile: built on request)."""
    _ingest(db_url, tmp_path, 1)
    _ingest(db_url, tmp_path, 2)
    assert _build_deferring(db_url) == ({WIDTH, HEIGHT, OLD_CHECK, QUEUE}, set())
    engine = make_engine(db_url)
    with engine.begin() as conn:  # docs built before the stable hash was stored (0014)
        conn.execute(update(EntryDoc).values(stable=None))
        conn.execute(delete(Meta).where(Meta.key == docs.LAST_BUILD))  # so the next one plans
    engine.dispose()
    assert _build(db_url) == set()  # kept, and their stable hash filled in

    # v3 raises the width and height errors as v2 did: their docs only gain a version. The new
    # error is built now; the doc whose similar errors it joins is out of date, for later; the
    # queue's doc, gone since v2, stays current.
    _ingest(db_url, tmp_path, 3)
    assert _build_deferring(db_url) == ({NEW_CHECK}, {WIDTH, HEIGHT, OLD_CHECK})
    engine = make_engine(db_url)
    with session_factory(engine)() as session:  # a deferred doc is built on its request
        key = kb_key(engine)
        served = served_entry_json(session, WIDTH, key, Settings(database_url=db_url))
        assert served == entry_json(session, WIDTH, Settings(database_url=db_url))
        assert session.get(EntryDoc, WIDTH).content_key == key  # and stored
    engine.dispose()
    assert _build(db_url) == {HEIGHT, OLD_CHECK}  # what a full build (`errkb docs`) has left
    assert NEW_CHECK in _related_of(db_url)[OLD_CHECK]

    # v4 moves the new check down a line: that doc's content changed, the others only gained
    # a version.
    _ingest(db_url, tmp_path, 4)
    assert _build_deferring(db_url) == ({NEW_CHECK}, {WIDTH, HEIGHT})
    assert _build(db_url) == {WIDTH, HEIGHT}
    assert _build_deferring(db_url) == (set(), set())
