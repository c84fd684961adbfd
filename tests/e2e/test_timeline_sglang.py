"""The exact timeline and site history of the reference error, from real releases ingested by the
real pipeline (the extended base: 0.5.10, 0.5.17, 0.5.18, 0.5.19, 0.5.20, 0.5.23): absent from
0.5.17, introduced in 0.5.18, moved from line 406 to 451 in 0.5.19, removed in 0.5.20."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session

from errkb.core.db import make_engine, session_factory
from errkb.core.models import Snapshot
from errkb.core.records import Segment, Template, error_id
from errkb.service.entries.build import build_entry
from errkb.service.entries.occurrences import occurrence_page

pytestmark = pytest.mark.sglang

RELEASES = ("0.5.10", "0.5.17", "0.5.18", "0.5.19", "0.5.20", "0.5.23")
REFERENCE = (
    "--enable-unified-memory with PD disaggregation does not support hybrid-SWA models yet "
    "(no whole-envelope transfer scheme for the SWA sub-pool). Drop --enable-unified-memory "
    "or run without PD."
)
REFERENCE_ID = error_id(
    "sgl-project/sglang", "ValueError", Template((Segment("text", REFERENCE),), "literal")
)
PATH = "python/sglang/srt/mem_cache/kv_cache_configurator.py"


@pytest.fixture(scope="module")
def session(sglang_kb_extended_url: str) -> Iterator[Session]:
    engine = make_engine(sglang_kb_extended_url)
    with session_factory(engine)() as s:
        yield s
    engine.dispose()


def test_reference_timeline_is_exact(session: Session) -> None:
    held = session.scalars(select(Snapshot.label).order_by(Snapshot.sort_key)).all()
    assert held == list(RELEASES)  # in release order, though 0.5.10 and 0.5.17 came in last
    entry = build_entry(session, REFERENCE_ID)
    tl = entry.timeline
    assert [(r.from_snapshot, r.to_snapshot, r.present) for r in tl.ranges] == [
        ("0.5.17", "0.5.17", False),
        ("0.5.18", "0.5.19", True),
        ("0.5.20", "0.5.20", False),
    ]
    assert (tl.introduced_in, tl.removed_in, tl.absent_before) == ("0.5.18", "0.5.20", "0.5.17")
    assert tl.present_in == ["0.5.18", "0.5.19"]
    assert "not raised since 0.5.20" in tl.summary
    upgrade = [s for s in entry.explanation.solutions if s.kind == "upgrade"]
    assert [s.snapshot for s in upgrade] == ["0.5.20"]


def test_reference_site_history_has_its_line_move(session: Session) -> None:
    entry = build_entry(session, REFERENCE_ID)
    assert len(entry.sites) == 1
    site = entry.sites[0]
    assert (site.path, site.function) == (PATH, "KVCacheConfigurator._init_pools")
    assert (site.first_snapshot, site.last_snapshot, site.snapshots) == ("0.5.18", "0.5.19", 2)
    assert [(r.line, r.from_snapshot, r.to_snapshot) for r in site.lines] == [
        (406, "0.5.18", "0.5.18"),
        (451, "0.5.19", "0.5.19"),
    ]
    # The newest code version is the occurrence shown in full, not repeated among the site's
    # versions; the code is numbered as in the newest snapshot that has it.
    assert all(v.to_snapshot != "0.5.19" for v in site.versions)
    assert entry.occurrences_total == 2 and [o.line for o in entry.occurrences] == [451]
    (newest,) = entry.occurrences
    assert (newest.snapshot, newest.snippet.raise_start) == ("0.5.19", 451)
    assert any("hybrid-SWA" in line for line in newest.snippet.lines)
    assert newest.url is not None and f"/{PATH}#L451-L" in newest.url


def test_every_occurrence_is_paged_newest_first(session: Session) -> None:
    first = occurrence_page(session, REFERENCE_ID, cursor=None, limit=1)
    assert (first.total, [o.snapshot for o in first.items]) == (2, ["0.5.19"])
    assert first.next_cursor is not None
    second = occurrence_page(session, REFERENCE_ID, cursor=first.next_cursor, limit=1)
    assert [(o.snapshot, o.line) for o in second.items] == [("0.5.18", 406)]
    assert second.next_cursor is None and second.items[0].snippet.raise_start == 406


def test_a_check_moved_and_reworded_is_not_fixed_by_an_upgrade(session: Session) -> None:
    """0.5.19 moved `check_server_args` to arg_groups/validation_hook.py, and the assert's message
    gained a placeholder: a new id, but the same check. The old id is not raised since 0.5.19,
    yet upgrading does not remove the check, so no upgrade is offered."""
    from errkb.core.models import Error

    ids = session.scalars(
        select(Error.id).where(Error.message.startswith("pp_max_micro_batch_size must be a"))
    ).all()
    entries = {i: build_entry(session, i) for i in ids}
    (old,) = [e for e in entries.values() if e.timeline.removed_in == "0.5.19"]
    (new,) = [e for e in entries.values() if e.timeline.introduced_in == "0.5.19"]
    assert old.timeline.carried_on_by == new.id
    assert new.timeline.carried_from == old.id
    assert "still there" in old.timeline.summary
    assert not [s for s in old.explanation.solutions if s.kind == "upgrade"]
    assert not [s for s in new.explanation.solutions if s.kind == "downgrade"]
