"""Tracebacks with no message line, built from stored sglang raise sites across the pinned
releases: the frame alone finds the error (top-1) and the releases that raise on that line."""

from __future__ import annotations

import random
from collections import defaultdict

import pytest
from sqlalchemy import select

from errkb.core.db import make_engine
from errkb.core.models import Occurrence, Snapshot
from errkb.service.match.matcher import match_text
from errkb.service.match.queries import load_index

pytestmark = pytest.mark.sglang

SP = "/usr/local/lib/python3.11/site-packages"


def _traceback(module: str, line: int, function: str) -> str:
    return (
        "Traceback (most recent call last):\n"
        f'  File "{SP}/sglang/launch_server.py", line 11, in <module>\n'
        "    launch_server(server_args)\n"
        f'  File "{SP}/{module}", line {line}, in {function}\n'
        "    raise ValueError(\n"
    )


def test_frames_without_messages_find_their_error_and_releases(sglang_kb_url: str) -> None:
    engine = make_engine(sglang_kb_url)
    try:
        index = load_index(engine)
        with engine.connect() as conn:
            rows = conn.execute(
                select(
                    Occurrence.error_id,
                    Occurrence.path,
                    Occurrence.line,
                    Occurrence.end_line,
                    Occurrence.qualname,
                    Snapshot.label,
                ).join(Snapshot, Snapshot.id == Occurrence.snapshot_id)
            ).all()
    finally:
        engine.dispose()
    indexed = {e.id for e in index.entries}
    owners: dict[tuple[str, int], set[str]] = defaultdict(set)
    for r in rows:
        for line in range(r.line, max(r.end_line, r.line) + 1):
            owners[(r.path, line)].add(r.error_id)
    # Raise lines only one error has (any other line cannot tell errors apart), whose
    # releases differ: some lines moved between releases, so the range is a real narrowing.
    sites = sorted(
        {
            (r.error_id, r.path, r.line, r.qualname.rsplit(".", 1)[-1])
            for r in rows
            if owners[(r.path, r.line)] == {r.error_id} and r.error_id in indexed
        }
    )
    picked = random.Random(14).sample(sites, 150)
    labels = {r.label for r in rows}
    narrowed = 0
    for error_id, path, line, function in picked:
        expected = {
            r.label
            for r in rows
            if r.error_id == error_id
            and r.path == path
            and r.line <= line <= max(r.end_line, r.line)
            and r.qualname.rsplit(".", 1)[-1] == function
        }
        text = _traceback(path.removeprefix("python/"), line, function)
        top = match_text(index, text, limit=1)
        assert top and top[0].entry.id == error_id, text
        assert set(top[0].snapshots) == expected, text
        # At least the frame's own score (more when words of the frame are in the message).
        assert top[0].site_line == line and top[0].score >= 0.55
        narrowed += expected != labels
    assert narrowed >= 30  # the releases really are told apart, not all given every time
