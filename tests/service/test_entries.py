"""build_entry on a small two-version project ingested by the real pipeline (both backends)."""

from __future__ import annotations

import shlex
from collections.abc import Iterator
from pathlib import Path

import pytest
from knowledge_repo import MAMBA_MESSAGE, SWA_MESSAGE, ingest_small_repo, literal_id
from sqlalchemy import Engine, event, select
from sqlalchemy.orm import Session

from errkb.core.db import session_factory
from errkb.core.errors import NotFound
from errkb.core.models import Error
from errkb.service.entries.build import build_entry


@pytest.fixture
def session(engine: Engine, db_url: str, tmp_path: Path) -> Iterator[Session]:
    ingest_small_repo(db_url, tmp_path)
    with session_factory(engine)() as s:
        yield s


def _by_message(session: Session, start: str) -> str:
    ids = [e.id for e in session.scalars(select(Error)) if e.message.startswith(start)]
    assert len(ids) == 1, start
    return ids[0]


def test_gone_error_entry_has_flags_fixes_timeline_and_siblings(session: Session) -> None:
    entry = build_entry(session, literal_id(SWA_MESSAGE))
    assert entry.snapshot == "v1" and entry.message == SWA_MESSAGE
    flags = {f.flag: f for f in entry.flags}
    eum = flags["--enable-unified-memory"]
    assert eum.sides == ["message", "condition"] and eum.polarity == "on"
    assert (eum.default, eum.help) == ("False", "Use one memory pool for every cache.")
    assert eum.defined_at == "srv/server_args.py:6"
    dm = flags["--disaggregation-mode"]
    assert (dm.sides, dm.polarity, dm.value) == (["condition"], "ne", "'null'")
    assert dm.choices == ["null", "prefill", "decode"]

    sols = entry.explanation.solutions
    assert sols[0].kind == "advice" and sols[0].provenance == ["derived:message"]
    assert any(s.flag == "--enable-unified-memory" and s.text.startswith("Remove") for s in sols)
    assert any(s.command == "--disaggregation-mode null" for s in sols)
    assert any(s.kind == "upgrade" and s.snapshot == "v2" for s in sols)
    fix = entry.explanation.example_fix
    assert fix is not None
    before, after = shlex.split(fix.before), shlex.split(fix.after)
    assert "--enable-unified-memory" in before and "--disaggregation-mode" in before
    assert before[before.index("--disaggregation-mode") + 1] != "null"
    # after: unified memory off, or PD off -- either falsifies the guard
    assert "--enable-unified-memory" not in after or (
        after[after.index("--disaggregation-mode") + 1] == "null"
    )

    tl = entry.timeline
    assert (tl.first_seen, tl.last_seen, tl.gone_in) == ("v1", "v1", "v2")
    assert [(r.from_snapshot, r.to_snapshot, r.present) for r in tl.ranges] == [
        ("v1", "v1", True),
        ("v2", "v2", False),
    ]
    assert "not raised since v2" in tl.summary and tl.provenance == ["derived:history"]

    related = {r.id: r.reason for r in entry.related}
    siblings = {literal_id(MAMBA_MESSAGE), _by_message(session, "--enable-unified-memory only")}
    assert all(related.get(i) == "same function" for i in siblings)
    assert entry.id not in related and len(entry.related) <= 8
    assert all(r.url == f"/errors/{r.id}" for r in entry.related)

    occ = entry.occurrences[0]
    assert (occ.snapshot, occ.path, occ.function) == ("v1", "srv/pools.py", "Pools.init_pools")
    assert occ.conditions[-1].resolved == {
        "pd_enabled": "server_args.disaggregation_mode != 'null'"
    }
    assert occ.snippet.raise_start == occ.line
    assert [p.snapshot for p in entry.provenance] == ["v1"]
    assert entry.json_url == f"/api/errors/{entry.id}" and entry.page_url == f"/errors/{entry.id}"
    for field in (entry.explanation.what_it_means, entry.explanation.trigger):
        assert field.text and field.provenance


def test_moved_error_and_snapshot_choice(session: Session) -> None:
    tp = _by_message(session, "tp_size ")
    entry = build_entry(session, tp)
    assert entry.snapshot == "v2" and entry.occurrences[0].path == "srv/checks.py"
    assert [c.kind for c in entry.timeline.changes] == ["moved"]
    assert entry.timeline.gone_in is None
    # The moved error is two site histories: the new file's first, each with its one snapshot.
    assert [(s.path, s.first_snapshot, s.last_snapshot) for s in entry.sites] == [
        ("srv/checks.py", "v2", "v2"),
        ("srv/pools.py", "v1", "v1"),
    ]
    assert [o.snapshot for o in entry.occurrences] == ["v2"] and entry.occurrences_total == 2
    old = build_entry(session, tp, snapshot="v1")
    assert old.snapshot == "v1" and [o.snapshot for o in old.occurrences] == ["v1"]
    assert old.occurrences[0].path == "srv/pools.py"
    assert any(s.command == "--tp-size 1" for s in entry.explanation.solutions)


def test_unguarded_error_without_flags_is_honest(session: Session) -> None:
    entry = build_entry(session, _by_message(session, "Unsupported layout"))
    assert entry.flags == [] and entry.explanation.example_fix is None
    sols = entry.explanation.solutions
    # no guard and no input traced: the report, without restating the check as a fix and
    # without claiming that no input is tested
    assert [s.kind for s in sols] == ["report"]
    assert entry.explanation.who_hits_it and entry.explanation.who_hits_it.kind == "unknown"
    assert not any("Nothing in the code names a fix" in s.text for s in sols)
    assert "no flag" not in sols[0].text


def test_unknown_id_and_snapshot_are_not_found(session: Session) -> None:
    with pytest.raises(NotFound, match="no error with id"):
        build_entry(session, "0" * 16)
    with pytest.raises(NotFound, match=r"not raised in snapshot 'v2' \(raised in: v1\)"):
        build_entry(session, literal_id(SWA_MESSAGE), snapshot="v2")


def test_entry_is_built_in_a_handful_of_queries(session: Session, engine: Engine) -> None:
    statements: list[str] = []

    def count(*args: object) -> None:
        statements.append(str(args[2]))

    event.listen(engine, "before_cursor_execute", count)
    try:
        build_entry(session, literal_id(SWA_MESSAGE))
    finally:
        event.remove(engine, "before_cursor_execute", count)
    print(f"\nbuild_entry ran {len(statements)} statements")
    # 12, plus one for an error gone in a later snapshot: who carries its check on (lineage)
    assert 5 <= len(statements) <= 13
