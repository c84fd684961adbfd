"""Real posted errors of every other class (RuntimeError, asserts with and without a message,
NotImplementedError, KeyError from `load_weights`, ImportError, sglang's own classes), matched on
the shared sglang knowledge base (0.5.18, 0.5.19, 0.5.20, 0.5.23).

The texts are `tests/data/match-dev/cases-other.jsonl`: copied verbatim from public sglang issue
threads, each checked against the wheels (see that folder's README). A case counts as found when
the first match's message holds the expected words (the raise may have moved to another file
since the poster's release) or, for a message-less site (an assert, a bare raise, a missing key),
when it is raised in a file of the case's file name. Cases whose site none of the four releases
holds are left out.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from errkb.core.db import make_engine
from errkb.core.models import Error, Occurrence, Snapshot
from errkb.service.match.matcher import match_text
from errkb.service.match.queries import load_index

pytestmark = pytest.mark.sglang

CASES = Path(__file__).resolve().parents[1] / "data" / "match-dev" / "cases-other.jsonl"
# Measured on 2026-12-06: 26 of the 28 held cases. The two missed are a KeyError whose file
# moved after the poster's release (the four releases hold the subscript only in another file,
# in a function of another name), and a KVTransferError whose text is a literal handed to
# `record_failure` and raised later from what it stored. Found since that day: a message retyped
# in other case and words ("SGlang only supports sm 75 and above"), and the KVTransferError
# whose text is the raise's fallback literal (`failure_reason or "..."`).
FLOOR = 0.9
STRUCTURAL = ("assert ", "raise ", "param = ")


def _cases() -> list[dict[str, Any]]:
    return [json.loads(line) for line in CASES.read_text().splitlines() if line.strip()]


@pytest.fixture(scope="module")
def kb(sglang_kb_url: str) -> tuple[Any, ...]:
    engine = make_engine(sglang_kb_url)
    try:
        index = load_index(engine)
        with engine.connect() as conn:
            messages = dict(conn.execute(select(Error.id, Error.message)).all())
            checks = dict(conn.execute(select(Error.id, Error.check_text)).all())
            paths: dict[str, set[str]] = {}
            for error_id, path in conn.execute(select(Occurrence.error_id, Occurrence.path)):
                paths.setdefault(error_id, set()).add(path)
            labels = set(conn.execute(select(Snapshot.label)).scalars())
    finally:
        engine.dispose()
    return index, messages, paths, labels, checks


def _found(case: dict[str, Any], kb: Any) -> tuple[bool, str]:
    index, messages, paths, _, checks = kb
    found = match_text(index, case["posted_text"], limit=3)
    if not found:
        return False, "no match"
    top = found[0].entry.id
    fragment = case["expected_fragment"]
    if fragment.startswith(STRUCTURAL):  # no message: the site is told by its file, or for
        name = case["source_path"].rsplit("/", 1)[-1]  # an assert by its check (files move)
        right = any(p.rsplit("/", 1)[-1] == name for p in paths.get(top, set())) or (
            fragment.startswith("assert ") and _same(checks.get(top) or "", fragment[7:])
        )
    else:  # the raise may have moved to another file since the poster's release
        right = fragment in messages[top]
    return right, f"{found[0].score:.2f} {found[0].entry.exception}: {messages[top][:80]!r}"


def _same(check: str, source: str) -> bool:
    """The stored check and the assert's source, compared without spaces or quotes."""

    def bare(text: str) -> str:
        return "".join(ch for ch in text if not ch.isspace() and ch not in "'\"")

    return bool(check) and bare(check) == bare(source)


def test_real_posted_errors_of_other_classes_find_their_entry_first(kb: Any) -> None:
    labels = kb[3]
    held = [
        c
        for c in _cases()
        if c["expect"] == "match" and set(c.get("releases_with_message") or []) & labels
    ]
    results = [(c, *_found(c, kb)) for c in held]
    missed = [f"{c['id']} ({c['exception']}): {why}" for c, right, why in results if not right]
    share = 1 - len(missed) / len(held)
    print(f"\n{len(held) - len(missed)} of {len(held)} found first; missed:\n" + "\n".join(missed))
    assert len(held) >= 25
    assert share >= FLOOR, missed


@pytest.mark.parametrize(
    "case_id",
    [
        "bare-assert-unified-swa-hicache-loadback",  # a bare assert under its frame
        "notimplemented-bare-expert-distribution-gatherer",  # bare raise, a later traceback
        "capture-cuda-graph-failed-oom-deepep",  # a message cut inside its value
        "bare-assert-chunked-req-prose",  # an assert retold in prose, with its file
        "keyerror-gemma3-modelopt-k-scale-prose",  # a KeyError with the loader named in prose
        "keyerror-qwen3-eagle3-midlayer",  # a KeyError from params_dict[name] under its frame
    ],
)
def test_kinds_of_evidence(case_id: str, kb: Any) -> None:
    case = next(c for c in _cases() if c["id"] == case_id)
    if not set(case.get("releases_with_message") or []) & kb[3]:
        pytest.skip("no held release has this site")
    right, why = _found(case, kb)
    assert right, why


def test_other_projects_errors_are_not_confident_sglang_matches(kb: Any) -> None:
    index, messages = kb[0], kb[1]
    traps = [c for c in _cases() if c["expect"] == "no-sglang-match"]
    confident = []
    for case in traps:
        for m in match_text(index, case["posted_text"], limit=3):
            if m.score >= 0.8:
                confident.append((case["id"], m.score, messages[m.entry.id][:60]))
    # One trap is the very text sglang raises ("DeepEP is not installed"), printed by Megatron
    # with no path at all: nothing in it tells the two apart.
    assert len(confident) <= 1, confident
