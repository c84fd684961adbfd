"""A fixed random sample of 30 entries of the default pins, read for the prose defects that
`knowledge_checks.defects` counts (unresolved placeholders, broken phrases, code in "what it
means", generic "a model this code supports" sentences). The seed is fixed, and every failure
names it, so a failing entry can be found again.
"""

from __future__ import annotations

import random
from collections.abc import Iterator

import pytest
from knowledge_checks import DEFECTS, defects
from sqlalchemy import select
from sqlalchemy.orm import Session

from errkb.core.db import make_engine, session_factory
from errkb.core.models import Error
from errkb.service.entries.build import build_entry

pytestmark = pytest.mark.sglang

SEED = 20261204
SAMPLE = 30


@pytest.fixture(scope="module")
def session(sglang_kb_url: str) -> Iterator[Session]:
    engine = make_engine(sglang_kb_url)
    with session_factory(engine)() as s:
        yield s
    engine.dispose()


def sample_ids(session: Session) -> list[str]:
    """The same 30 error ids on every run of the same knowledge base."""
    ids = sorted(session.scalars(select(Error.id)))
    return random.Random(SEED).sample(ids, SAMPLE)


def test_the_sample_is_fixed(session: Session) -> None:
    assert sample_ids(session) == sample_ids(session)
    assert len(set(sample_ids(session))) == SAMPLE


@pytest.mark.parametrize("index", range(SAMPLE))
def test_sampled_entry_has_none_of_the_counted_defects(session: Session, index: int) -> None:
    error_id = sample_ids(session)[index]
    ex = build_entry(session, error_id).explanation
    found = defects(ex)
    assert set(found) <= set(DEFECTS)
    assert not found, (
        f"seed {SEED}, entry {index} ({error_id}): {found}\nwhat it means: {ex.what_it_means.text}"
    )
